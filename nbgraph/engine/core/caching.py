"""The node cache: `compile(cache=InMemoryCache())` and `add_node(..., cache_policy=...)`.

At the start of a step, a task of a node with a cache policy looks its input's key up in the
graph's cache; on a hit it takes the writes and routes kept there and its node is not called
(the task is marked `from_cache`, and streamed as LangGraph streams it, with
`"__metadata__": {"cached": True}`). A task that finished without an error or an interrupt
keeps its writes and routes in the cache for the policy's `ttl`.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from nbgraph.isolation import isolate

if TYPE_CHECKING:
    from nbgraph.blueprint import GraphSpec
    from nbgraph.engine.core.tasks import Task

__all__ = [
    "FullKey",
    "InMemoryCache",
    "Namespace",
    "check_cache",
    "clear_node_cache",
    "keep_in_cache",
    "serve_call_from_cache",
    "serve_from_cache",
]

Namespace = tuple[str, ...]
FullKey = tuple[Namespace, str]
_WRITES = "__pregel_ns_writes"  # the namespace LangGraph keeps node writes under


class InMemoryCache:
    """A cache in this process's memory, with LangGraph's `BaseCache` methods.

    Values are copied in and out, so a node's later changes never reach a cached value.

    >>> cache = InMemoryCache()
    >>> cache.set({(("ns",), "k"): ([1], None)})
    >>> cache.get([(("ns",), "k")])
    {(('ns',), 'k'): [1]}
    """

    def __init__(self) -> None:
        self._entries: dict[Namespace, dict[str, tuple[Any, float | None]]] = {}
        self._lock = threading.RLock()

    def __repr__(self) -> str:
        count = sum(map(len, self._entries.values()))
        return f"InMemoryCache({count} {'entry' if count == 1 else 'entries'})"

    def get(self, keys: Sequence[FullKey]) -> dict[FullKey, Any]:
        """The live values kept under these keys (expired ones are dropped)."""
        now = time.time()
        found: dict[FullKey, Any] = {}
        with self._lock:
            for ns, key in keys:
                entry = self._entries.get(tuple(ns), {}).get(key)
                if entry is None:
                    continue
                value, expiry = entry
                if expiry is None or now < expiry:
                    found[(tuple(ns), key)] = isolate(value)
                else:
                    del self._entries[tuple(ns)][key]
        return found

    def set(self, pairs: Mapping[FullKey, tuple[Any, float | None]]) -> None:
        """Keep each value under its key for `ttl` seconds (None: until cleared)."""
        now = time.time()
        with self._lock:
            for (ns, key), (value, ttl) in pairs.items():
                expiry = None if ttl is None else now + ttl
                self._entries.setdefault(tuple(ns), {})[key] = (isolate(value), expiry)

    def clear(self, namespaces: Sequence[Namespace] | None = None) -> None:
        """Drop the entries of these namespaces (all of them if None)."""
        with self._lock:
            if namespaces is None:
                self._entries.clear()
            for ns in namespaces or ():
                self._entries.pop(tuple(ns), None)

    async def aget(self, keys: Sequence[FullKey]) -> dict[FullKey, Any]:
        """`get`, awaitable."""
        return self.get(keys)

    async def aset(self, pairs: Mapping[FullKey, tuple[Any, float | None]]) -> None:
        """`set`, awaitable."""
        self.set(pairs)

    async def aclear(self, namespaces: Sequence[Namespace] | None = None) -> None:
        """`clear`, awaitable."""
        self.clear(namespaces)


def check_cache(cache: Any) -> list[str]:
    """What is wrong with `compile(cache=...)`: it needs `get`, `set` and `clear`."""
    if cache is None:
        return []
    missing = [name for name in ("get", "set", "clear") if not callable(getattr(cache, name, 0))]
    if missing:
        return [
            f"compile(cache={cache!r}): expected a cache such as InMemoryCache(), with "
            f"get/set/clear methods; it has no {', '.join(missing)}."
        ]
    return []


def _namespace(fn: Any, name: str) -> Namespace:
    """The cache namespace of the writes of a node or `@task` `name` running `fn`: its name
    and its function's module and qualified name (as LangGraph's), so graphs sharing a cache
    keep apart."""
    qualname = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None)
    module = getattr(fn, "__module__", None)
    return (_WRITES, f"{module}.{qualname}" if qualname and module else "__dynamic__", name)


def _node_namespace(spec: GraphSpec, node: str) -> Namespace:
    return _namespace(spec.nodes[node].fn, node)


def _key(namespace: Namespace, raw: Any, task: Task) -> FullKey:
    """A task's key in the cache: what its policy's `key_func` returned (`raw`), hashed."""
    raw = raw.encode() if isinstance(raw, str) else raw
    if not isinstance(raw, (bytes, bytearray, memoryview)):
        raise TypeError(
            f"The CachePolicy.key_func of {_what(task)} returned {raw!r} "
            f"({type(raw).__name__}) at step {task.step}; expected str or bytes."
        )
    return namespace, hashlib.sha256(raw).hexdigest()


def clear_node_cache(spec: GraphSpec, nodes: Sequence[str] | None = None) -> None:
    """Drop the cached writes of these nodes (all of them if None), as LangGraph's
    `clear_cache`.

    Raises:
        ValueError: the graph was compiled without `cache=`.
    """
    if spec.cache is None:
        raise ValueError(
            "No cache is set for this graph: compile it with cache=InMemoryCache() to cache "
            "nodes that have a cache_policy."
        )
    names = [name for name in (nodes or spec.nodes) if name in spec.nodes]
    spec.cache.clear([_node_namespace(spec, name) for name in names])


def serve_from_cache(spec: GraphSpec, tasks: list[Task], inputs: Any) -> None:
    """Look the cached nodes' tasks up; a hit takes its writes and routes from the cache.

    `inputs(task)` is what the task's node would be called with (its key's source).
    """
    keyed: dict[FullKey, Task] = {}
    for task in tasks:
        policy = spec.nodes[task.node].cache
        if policy is None or task.cached:
            continue
        try:
            raw = policy.key_func(inputs(task))
        except Exception as error:
            error.add_note(
                f"nbgraph: while making the cache key of node {task.node!r} at step "
                f"{task.step} (its CachePolicy.key_func)"
            )
            raise
        task.cache_key = _key(_node_namespace(spec, task.node), raw, task)
        keyed.setdefault(task.cache_key, task)
    _serve(spec.cache, keyed)


def serve_call_from_cache(cache: Any, task: Task, call: Any) -> None:
    """`serve_from_cache` for a `@task` call (`engine.core.calls.Call`) with a cache policy:
    its key made from the call's arguments; a hit takes the result kept for them."""
    policy = call.cache
    task.cache_key = _key(
        _namespace(call.user_fn, task.node), policy.key_func(*call.args, **call.kwargs), task
    )
    _serve(cache, {task.cache_key: task})


def _what(task: Task) -> str:
    return f"task {task.node!r}" if task.kind == "call" else f"node {task.node!r}"


def _serve(cache: Any, keyed: dict[FullKey, Task]) -> None:
    """The tasks of `keyed` whose keys the cache holds take their writes and routes from it."""
    if not keyed:
        return
    for key, (writes, routes) in cache.get(list(keyed)).items():
        task = keyed[key]
        task.writes = [tuple(write) for write in writes]
        task.routes = list(routes)
        task.cached = task.from_cache = True
        task.started = task.ended = time.time()


def keep_in_cache(spec: GraphSpec, task: Task) -> None:
    """Keep a finished task's writes and routes under its key (even none: LangGraph keeps
    those too), unless it failed, was interrupted or was served from the cache. A `@task`
    call's policy is its `Call`'s, a node's its `NodeSpec`'s."""
    if task.cache_key is None or task.cached or task.error is not None or task.interrupts:
        return
    policy = task.arg.cache if task.kind == "call" else spec.nodes[task.node].cache
    spec.cache.set({task.cache_key: ((list(task.writes), list(task.routes)), policy.ttl)})
