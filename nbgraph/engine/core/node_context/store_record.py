"""The store as a node sees it: the graph's store, with every read and write the node makes
kept in the run's log (`RunLog.store_ops`, shown as `Run.store_ops`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from nbgraph.isolation import isolate

__all__ = ["RecordingStore", "StoreOp"]


@dataclass(frozen=True, slots=True)
class StoreOp:
    """One store call a node made.

    Attributes:
        step, node: the task that made it.
        op: `"get"`, `"search"`, `"put"`, `"delete"` or `"list_namespaces"`.
        namespace: the namespace (or prefix) it named.
        key: the key (None for search and list_namespaces).
        value: what was written (put), or what was read: the item's value (get, None if
            absent), `[(key, value), ...]` (search), the namespaces (list_namespaces).
    """

    step: int
    node: str
    op: str
    namespace: tuple[str, ...]
    key: str | None
    value: Any


def _found(items: Any) -> list[tuple[Any, Any]]:
    return [(getattr(i, "key", None), isolate(getattr(i, "value", None))) for i in items or ()]


class RecordingStore:
    """A proxy of a store that records each call in `ops` (other attributes pass through).

    Args:
        store: the graph's store.
        ops: the run's list of `StoreOp`s.
        step, node: the task the calls are made for.
    """

    __slots__ = ("_node", "_ops", "_step", "_store")

    def __init__(self, store: Any, ops: list[StoreOp], step: int, node: str) -> None:
        self._store, self._ops, self._step, self._node = store, ops, step, node

    @property  # type: ignore[misc]
    def __class__(self) -> type:  # isinstance(runtime.store, InMemoryStore) holds
        return type(self._store)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def __repr__(self) -> str:
        return repr(self._store)

    def _keep(self, op: str, namespace: Any, key: Any, value: Any) -> None:
        where = tuple(namespace) if namespace is not None else ()
        self._ops.append(StoreOp(self._step, self._node, op, where, key, value))

    def get(self, namespace: Any, key: str, **kwargs: Any) -> Any:
        item = self._store.get(namespace, key, **kwargs)
        self._keep("get", namespace, key, None if item is None else isolate(item.value))
        return item

    def search(self, namespace_prefix: Any, /, **kwargs: Any) -> Any:
        items = self._store.search(namespace_prefix, **kwargs)
        self._keep("search", namespace_prefix, None, _found(items))
        return items

    def put(self, namespace: Any, key: str, value: Any, *args: Any, **kwargs: Any) -> None:
        self._store.put(namespace, key, value, *args, **kwargs)
        self._keep("put", namespace, key, isolate(value))

    def delete(self, namespace: Any, key: str) -> None:
        self._store.delete(namespace, key)
        self._keep("delete", namespace, key, None)

    def list_namespaces(self, **kwargs: Any) -> Any:
        found = self._store.list_namespaces(**kwargs)
        self._keep("list_namespaces", kwargs.get("prefix"), None, [tuple(ns) for ns in found])
        return found

    async def aget(self, namespace: Any, key: str, **kwargs: Any) -> Any:
        item = await self._store.aget(namespace, key, **kwargs)
        self._keep("get", namespace, key, None if item is None else isolate(item.value))
        return item

    async def asearch(self, namespace_prefix: Any, /, **kwargs: Any) -> Any:
        items = await self._store.asearch(namespace_prefix, **kwargs)
        self._keep("search", namespace_prefix, None, _found(items))
        return items

    async def aput(self, namespace: Any, key: str, value: Any, *args: Any, **kwargs: Any) -> None:
        await self._store.aput(namespace, key, value, *args, **kwargs)
        self._keep("put", namespace, key, isolate(value))

    async def adelete(self, namespace: Any, key: str) -> None:
        await self._store.adelete(namespace, key)
        self._keep("delete", namespace, key, None)

    def batch(self, ops: Any) -> list[Any]:
        """LangGraph's batch of ops (`BaseStore.batch`), each run (and kept) as its own call."""
        from nbgraph.store.base import BaseStore  # (a batch is rare: `import nbgraph` stays light)

        return BaseStore.batch(self, ops)  # type: ignore[arg-type]

    async def abatch(self, ops: Any) -> list[Any]:
        from nbgraph.store.base import BaseStore

        return await BaseStore.abatch(self, ops)  # type: ignore[arg-type]
