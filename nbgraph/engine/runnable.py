"""The habits a LangChain `Runnable` has, on a compiled graph: batches, configs, async thread
methods, chains, schemas and events.

That is `batch` and `abatch`, `with_config`, the async forms of the thread methods
(`aget_state`, `aupdate_state`, `aget_state_history`), `graph | runnable` chains, `get_name`,
the input and output schemas (`graph.jsonschema`), `nodes`, `get_subgraphs`, and
`astream_events` (`engine.streaming.events`).

`RunnableHabits` is a mixin of the engine's `CompiledGraph`: each habit is a thin loop over
`invoke`, `ainvoke` and the thread methods, which stay the one path a run takes.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import functools
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Any

from nbgraph.blueprint import jsonschema
from nbgraph.blueprint.subgraphs import graph_of_node, subgraph_of
from nbgraph.checkpoint.base import BaseSaver
from nbgraph.errors import InvalidArgumentError
from nbgraph.primitives import START

__all__ = ["NodeView", "RunnableHabits", "config_list", "merge_configs", "refuse_non_saver"]

_DONE = object()  # (the end of a history, as `next` gives it on a worker thread)


def merge_configs(*configs: Mapping[str, Any] | None) -> dict[str, Any]:
    """Configs merged as LangChain merges them: later keys win, except `configurable` and
    `metadata` (dicts, merged key by key) and `tags` (the sorted union).

    >>> merge_configs({"tags": ["b"], "configurable": {"a": 1}}, {"tags": ["a"]})
    {'tags': ['a', 'b'], 'configurable': {'a': 1}}
    """
    merged: dict[str, Any] = {}
    for config in configs:
        for key, value in (config or {}).items():
            if key in ("configurable", "metadata") and isinstance(value, Mapping):
                merged[key] = {**merged.get(key, {}), **value}
            elif key == "tags" and value is not None:
                merged[key] = sorted({*merged.get(key, []), *value})
            else:
                merged[key] = value
    return merged


def config_list(configs: Any, count: int) -> list[dict[str, Any] | None]:
    """One config per input: a list as given (same length), or a single config repeated."""
    if isinstance(configs, Sequence) and not isinstance(configs, (str, Mapping)):
        if len(configs) != count:
            raise InvalidArgumentError(
                f"config must be a list of the same length as inputs, but got {len(configs)} "
                f"configs for {count} inputs"
            )
        return list(configs)
    return [configs] * count


def refuse_non_saver(checkpointer: Any) -> None:
    """`compile(checkpointer=x)`: x must be a saver, True, False or None (a `TypeError`
    otherwise, as LangGraph raises)."""
    if checkpointer is None or isinstance(checkpointer, (bool, BaseSaver)):
        return
    if all(callable(getattr(checkpointer, m, None)) for m in ("put", "get", "claim")):
        return  # (a saver written without the base class)
    raise TypeError(
        "Invalid checkpointer provided. Expected an nbgraph saver (`MemorySaver`, "
        "`InMemorySaver`, `SqliteSaver`, any `nbgraph.checkpoint.BaseSaver`), `True`, "
        f"`False`, or `None`. Received {type(checkpointer).__name__}."
    )


class NodeView:
    """A node as `graph.nodes[name]` shows it: what LangGraph's node objects are read for.

    Attributes:
        name: the node's name.
        bound: what was added as the node: its function, Runnable or compiled graph.
        subgraphs: the compiled graph added as the node, in a list, or an empty list.
        metadata: the node's `add_node(metadata=...)`, or None.
    """

    __slots__ = ("bound", "metadata", "name", "subgraphs")

    def __init__(self, name: str, bound: Any, subgraph: Any = None, metadata: Any = None):
        self.name, self.bound, self.metadata = name, bound, metadata
        self.subgraphs = [] if subgraph is None else [subgraph]

    def __repr__(self) -> str:
        return f"<node {self.name!r}>"


class RunnableHabits:
    """`batch`, `abatch`, `with_config`, async thread methods, `|`, names, schemas, nodes,
    subgraphs and events, for `CompiledGraph`."""

    _bound_config: dict[str, Any] | None = None

    def _with_bound(self, config: Any) -> Any:
        """The config a call runs with: `with_config`'s, then the call's own on top (a
        config that is not a mapping is passed on as it is, for `run_config` to refuse)."""
        if self._bound_config is None or not isinstance(config, Mapping | None):
            return config
        return merge_configs(self._bound_config, config)

    def with_config(self, config: Mapping[str, Any] | None = None, **kwargs: Any) -> Any:
        """A copy of this graph whose calls run with `config` (and `kwargs`, e.g.
        `run_name=`) merged under each call's own config.

        >>> # graph.with_config(configurable={"thread_id": "t"}).invoke(...)
        """
        if config is not None and not isinstance(config, Mapping):
            from nbgraph.errors import wrong_argument

            raise wrong_argument("with_config(config)", "a config dict or None", config)
        bound = copy.copy(self)
        bound._bound_config = merge_configs(self._bound_config, config, kwargs)
        return bound

    def batch(
        self,
        inputs: Sequence[Any],
        config: Any = None,
        *,
        return_exceptions: bool = False,
        **kwargs: Any,
    ) -> list[Any]:
        """`invoke` each input, on threads; the outputs in input order.

        Args:
            inputs: the inputs, one run each.
            config: one config for every run, or a list of them (one per input).
            return_exceptions: put a run's exception in its place instead of raising it.
            **kwargs: passed to each `invoke`.

        Raises:
            InvalidArgumentError: a config list whose length is not the number of inputs.
            Exception: the first failed run's exception (in input order), unless
                `return_exceptions`.
        """
        if not inputs:
            return []
        one, workers = self._batch_runs(inputs, config, return_exceptions, kwargs)
        if len(inputs) == 1:
            return [one(0)[1]]
        with ThreadPoolExecutor(max_workers=workers) as pool:
            return [output for _, output in pool.map(one, range(len(inputs)))]

    def _batch_runs(
        self, inputs: Sequence[Any], config: Any, return_exceptions: bool, kwargs: dict
    ) -> tuple[Callable[[int], tuple[int, Any]], int | None]:
        """`batch`'s and `batch_as_completed`'s run of one input, by index (`(index,
        output)`, the exception as output with `return_exceptions`), and the pool's size
        (the configs' `max_concurrency`)."""
        configs = config_list(config, len(inputs))
        workers = next((c.get("max_concurrency") for c in configs if c), None)

        def one(index: int) -> tuple[int, Any]:
            try:
                return index, self.invoke(inputs[index], configs[index], **kwargs)  # type: ignore[attr-defined]
            except Exception as e:
                if return_exceptions:
                    return index, e
                raise

        return one, workers

    async def abatch(
        self,
        inputs: Sequence[Any],
        config: Any = None,
        *,
        return_exceptions: bool = False,
        **kwargs: Any,
    ) -> list[Any]:
        """`ainvoke` each input, concurrently on the event loop; the outputs in input order.

        Same arguments as `batch`.
        """
        if not inputs:
            return []
        configs = config_list(config, len(inputs))
        limit = next((c.get("max_concurrency") for c in configs if c), None)
        gate = asyncio.Semaphore(limit) if limit else None

        async def one(graph_input: Any, one_config: Any) -> Any:
            if gate is None:
                return await self.ainvoke(graph_input, one_config, **kwargs)  # type: ignore[attr-defined]
            async with gate:
                return await self.ainvoke(graph_input, one_config, **kwargs)  # type: ignore[attr-defined]

        runs = [one(i, c) for i, c in zip(inputs, configs, strict=True)]
        return await asyncio.gather(*runs, return_exceptions=return_exceptions)

    async def aget_state(self, config: dict[str, Any], *, subgraphs: bool = False) -> Any:
        """`get_state`, awaitable (run on a worker thread: savers may block)."""
        read = functools.partial(self.get_state, subgraphs=subgraphs)  # type: ignore[attr-defined]
        return await asyncio.to_thread(read, config)

    async def aupdate_state(
        self, config: dict[str, Any], values: Any, as_node: str | None = None
    ) -> dict[str, Any]:
        """`update_state`, awaitable."""
        return await asyncio.to_thread(self.update_state, config, values, as_node)  # type: ignore[attr-defined]

    async def aget_state_history(self, config: dict[str, Any], **page: Any) -> AsyncIterator[Any]:
        """`get_state_history` (and its `filter`, `before`, `limit`), as an async iterator
        (newest first): each snapshot made on a worker thread as it is asked for, so the
        newest comes at once, however long the thread."""
        snapshots = self.get_state_history(config, **page)  # type: ignore[attr-defined]
        try:
            while True:
                snapshot = await asyncio.to_thread(next, snapshots, _DONE)
                if snapshot is _DONE:
                    return
                yield snapshot
        finally:
            snapshots.close()

    # --- names, schemas, nodes ----------------------------------------------------------------

    def get_name(self, suffix: str | None = None, *, name: str | None = None) -> str:
        """The graph's name (`compile(name=...)`, "LangGraph" by default), as a Runnable's:
        with a `suffix`, `LangGraphInput` or `my_graph_input`."""
        own = name or getattr(self, "name", None) or type(self).__name__
        if not suffix:
            return own
        return own + suffix.title() if own[0].isupper() else f"{own}_{suffix.lower()}"

    def get_input_schema(self, config: Any = None) -> Any:
        """The input as a pydantic model (the state's own, if it is one)."""
        return _schema_of(self, jsonschema.input_model)

    def get_output_schema(self, config: Any = None) -> Any:
        """The output as a pydantic model: its fields, each defaulting to None."""
        return _schema_of(self, jsonschema.output_model)

    def get_input_jsonschema(self, config: Any = None) -> dict[str, Any]:
        """The input schema's JSON schema, as LangGraph's."""
        return _schema_of(self, jsonschema.input_jsonschema)

    def get_output_jsonschema(self, config: Any = None) -> dict[str, Any]:
        """The output schema's JSON schema, as LangGraph's."""
        return _schema_of(self, jsonschema.output_jsonschema)

    def get_context_jsonschema(self) -> dict[str, Any] | None:
        """The JSON schema of the graph's `context_schema`, or None without one."""
        return jsonschema.context_jsonschema(_context_schema(self))

    @property
    def nodes(self) -> dict[str, NodeView]:
        """The graph's nodes by name, `__start__` first, as LangGraph lists them."""
        return _node_views(self)

    def get_subgraphs(
        self, *, namespace: str | None = None, recurse: bool = False
    ) -> Iterator[tuple[str, Any]]:
        """`(namespace, graph)` for each compiled graph added as a node (deeper ones too,
        `outer|inner`, with `recurse`); with `namespace`, only the one there (a nested one
        needs `recurse`)."""
        spec = _spec(self)
        for name in spec.nodes:
            if namespace is not None and namespace != name and not namespace.startswith(f"{name}|"):
                continue
            inner = graph_of_node(spec, name)
            if inner is None:
                continue
            if name == namespace:
                yield name, inner
                return
            if namespace is None:
                yield name, inner
            if recurse:
                rest = None if namespace is None else namespace[len(name) + 1 :]
                for path, deeper in inner.get_subgraphs(namespace=rest, recurse=True):
                    yield f"{name}|{path}", deeper

    async def aget_subgraphs(
        self, *, namespace: str | None = None, recurse: bool = False
    ) -> AsyncIterator[tuple[str, Any]]:
        """`get_subgraphs`, as an async iterator."""
        for pair in self.get_subgraphs(namespace=namespace, recurse=recurse):
            yield pair

    def batch_as_completed(
        self,
        inputs: Sequence[Any],
        config: Any = None,
        *,
        return_exceptions: bool = False,
        **kwargs: Any,
    ) -> Iterator[tuple[int, Any]]:
        """`batch`, yielding `(index, output)` as each run finishes (a LangChain Runnable's).

        Same arguments as `batch`.
        """
        if not inputs:
            return
        one, workers = self._batch_runs(inputs, config, return_exceptions, kwargs)
        if len(inputs) == 1:
            yield one(0)
            return
        with ThreadPoolExecutor(max_workers=workers) as pool:
            futures = [pool.submit(one, index) for index in range(len(inputs))]
            try:
                for future in as_completed(futures):
                    yield future.result()
            finally:  # (the caller stopped early, or a run failed: the rest are not waited on)
                for future in futures:
                    future.cancel()

    async def abatch_as_completed(
        self,
        inputs: Sequence[Any],
        config: Any = None,
        *,
        return_exceptions: bool = False,
        **kwargs: Any,
    ) -> AsyncIterator[tuple[int, Any]]:
        """`abatch`, yielding `(index, output)` as each run finishes.

        Same arguments as `batch`.
        """
        if not inputs:
            return
        configs = config_list(config, len(inputs))
        limit = next((c.get("max_concurrency") for c in configs if c), None)
        gate = asyncio.Semaphore(limit) if limit else contextlib.nullcontext()

        async def one(index: int) -> tuple[int, Any]:
            async with gate:
                try:
                    return index, await self.ainvoke(inputs[index], configs[index], **kwargs)  # type: ignore[attr-defined]
                except Exception as e:
                    if return_exceptions:
                        return index, e
                    raise

        runs = [asyncio.ensure_future(one(index)) for index in range(len(inputs))]
        try:
            for run in asyncio.as_completed(runs):
                yield await run
        finally:
            for run in runs:
                run.cancel()

    def transform(self, input: Iterator[Any], config: Any = None, **kwargs: Any) -> Iterator[Any]:
        """A LangChain Runnable's `transform`: the input chunks added up (a later one
        replaces what cannot be added), then `stream` over the whole input."""
        yield from self.stream(_added_up(input), config, **kwargs)  # type: ignore[attr-defined]

    async def atransform(
        self, input: AsyncIterator[Any], config: Any = None, **kwargs: Any
    ) -> AsyncIterator[Any]:
        """`transform` over an async iterator of input chunks, with `astream`."""
        whole = _added_up([chunk async for chunk in input])
        async for chunk in self.astream(whole, config, **kwargs):  # type: ignore[attr-defined]
            yield chunk

    # --- LangChain's composition: the graph seen as a LangChain Runnable ---------------------

    def with_retry(self, **kwargs: Any) -> Any:
        """LangChain's `with_retry` (`stop_after_attempt=`, ...) over this graph's runs."""
        return _as_runnable(self).with_retry(**kwargs)

    def with_fallbacks(self, fallbacks: Sequence[Any], **kwargs: Any) -> Any:
        """LangChain's `with_fallbacks`: the fallbacks run when this graph's run fails."""
        return _as_runnable(self).with_fallbacks([_lc(f) for f in fallbacks], **kwargs)

    def with_listeners(self, **listeners: Any) -> Any:
        """LangChain's `with_listeners(on_start=, on_end=, on_error=)`: each gets the run."""
        return _as_runnable(self).with_listeners(**listeners)

    def with_alisteners(self, **listeners: Any) -> Any:
        """LangChain's `with_alisteners`: async listeners of the graph's run."""
        return _as_runnable(self).with_alisteners(**listeners)

    def with_types(self, **types: Any) -> Any:
        """LangChain's `with_types(input_type=, output_type=)`."""
        return _as_runnable(self).with_types(**types)

    def bind(self, **kwargs: Any) -> Any:
        """LangChain's `bind`: each run called with these keyword arguments too."""
        return _as_runnable(self).bind(**kwargs)

    def pick(self, keys: str | list[str]) -> Any:
        """LangChain's `pick`: the output's `keys` (one key: its value)."""
        return _as_runnable(self).pick(keys)

    def assign(self, **kwargs: Any) -> Any:
        """LangChain's `assign`: the output with keys computed from it added."""
        return _as_runnable(self).assign(**kwargs)

    def pipe(self, *others: Any, name: str | None = None) -> Any:
        """LangChain's `pipe`: `graph | others[0] | ...`."""
        return _as_runnable(self).pipe(*map(_lc, others), name=name)

    def map(self) -> Any:
        """LangChain's `map`: a Runnable that runs the graph on each input of a list."""
        return _as_runnable(self).map()

    def as_tool(self, *args: Any, **kwargs: Any) -> Any:
        """LangChain's `as_tool`: the graph as a tool a model can call."""
        return _as_runnable(self).as_tool(*args, **kwargs)

    # --- events -------------------------------------------------------------------------------

    def stream_events(self, input: Any, config: Any = None, *, version: str = "v2", **kw: Any):
        """Not on the sync path, as in LangGraph: use `astream_events`.

        Raises:
            NotImplementedError: always (LangGraph's `version="v3"` protocol is not
                nbgraph's either).
        """
        raise NotImplementedError(
            f"stream_events(version={version!r}) is not supported. Use astream_events() for "
            "v1/v2 (nbgraph has no version='v3' streaming protocol)."
        )

    def astream_events(
        self, input: Any, config: Any = None, *, version: str = "v2", **kwargs: Any
    ) -> AsyncIterator[dict[str, Any]]:
        """LangChain's `astream_events` (version "v2"): `on_chain_start/stream/end` for the
        graph and each node, and the events of the chat models, tools and custom events
        called inside the nodes, with LangGraph's metadata (`langgraph_node`, ...).
        Needs langchain_core (`pip install nbgraph[langchain]`).

        Raises:
            NotImplementedError: a version other than "v2" (or "v1", taken as LangChain's).
        """
        from nbgraph.engine.streaming.events import astream_events

        return astream_events(self, input, config, version, kwargs)

    def astream_log(self, input: Any, config: Any = None, **kwargs: Any) -> AsyncIterator[Any]:
        """LangChain's `astream_log`: `RunLogPatch`es of this graph's run (`diff=False`:
        whole `RunLog`s), filtered by `include_names=`, `include_types=`, ... as LangChain's.
        Needs langchain_core."""
        from nbgraph.engine.streaming.events import astream_log

        return astream_log(self, input, config, kwargs)

    def __or__(self, other: Any) -> Any:
        """`graph | runnable`: a LangChain `RunnableSequence` (needs langchain_core)."""
        return _as_runnable(self) | other

    def __ror__(self, other: Any) -> Any:
        """`runnable | graph`."""
        return other | _as_runnable(self)


def _spec(graph: Any) -> Any:
    """The graph's frozen spec (`CompiledGraph.spec`)."""
    return graph.spec


def _context_schema(graph: Any) -> Any:
    """The graph's `context_schema` (`CompiledGraph.context_schema`)."""
    return graph.context_schema


def _schema_of(graph: Any, schema: Any) -> Any:
    """One of `graph.jsonschema`'s schemas of the graph, named after it."""
    return schema(graph.spec, graph.get_name())


def _node_views(graph: Any) -> dict[str, NodeView]:
    """`graph.nodes`: `__start__`, then each node as it was added."""
    spec = graph.spec
    views = {START: NodeView(START, None)}
    for name, node in spec.nodes.items():
        added = subgraph_of(spec, name)
        bound = added if added is not None else getattr(node.fn, "runnable", node.fn)
        views[name] = NodeView(name, bound, graph_of_node(spec, name), node.metadata)
    return views


def _as_runnable(graph: Any) -> Any:
    """The graph as a LangChain `RunnableLambda` over its `invoke` and `ainvoke`."""
    try:
        from langchain_core.runnables import RunnableLambda
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError(
            "graph | runnable chains need langchain_core: pip install nbgraph[langchain]"
        ) from e

    def invoke(graph_input: Any, config: Any = None, **kwargs: Any) -> Any:
        return graph.invoke(graph_input, _own_keys(config), **kwargs)

    async def ainvoke(graph_input: Any, config: Any = None, **kwargs: Any) -> Any:
        return await graph.ainvoke(graph_input, _own_keys(config), **kwargs)

    return RunnableLambda(invoke, afunc=ainvoke, name=graph.name or "LangGraph")


def _lc(other: Any) -> Any:
    """`other` as LangChain takes it: an nbgraph graph as a LangChain Runnable."""
    return _as_runnable(other) if isinstance(other, RunnableHabits) else other


def _added_up(chunks: Any) -> Any:
    """Input chunks added up as LangChain's `transform` adds them (`a + b`; a chunk that
    cannot be added replaces the total)."""
    total: Any = None
    for index, chunk in enumerate(chunks):
        if index == 0:
            total = chunk
            continue
        try:
            total = total + chunk
        except TypeError:
            total = chunk
    return total


def _own_keys(config: Any) -> dict[str, Any] | None:
    """A LangChain config as a graph config: callbacks and run bookkeeping left out."""
    if not config:
        return None
    keep = ("tags", "metadata", "configurable", "recursion_limit", "max_concurrency", "run_name")
    return {key: value for key, value in config.items() if key in keep and value}
