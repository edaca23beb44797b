"""The habits a LangChain `Runnable` has, on a compiled graph: `batch` and `abatch`,
`with_config`, the async forms of the thread methods (`aget_state`, `aupdate_state`,
`aget_state_history`), and `graph | runnable` chains.

`RunnableHabits` is a mixin of the engine's `CompiledGraph`: each habit is a thin loop over
`invoke`, `ainvoke` and the thread methods, which stay the one path a run takes.
"""

from __future__ import annotations

import asyncio
import copy
import functools
from collections.abc import AsyncIterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from nbgraph.errors import InvalidArgumentError

__all__ = ["RunnableHabits", "config_list", "merge_configs"]

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


class RunnableHabits:
    """`batch`, `abatch`, `with_config`, async thread methods and `|`, for `CompiledGraph`."""

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
        configs = config_list(config, len(inputs))
        workers = next((c.get("max_concurrency") for c in configs if c), None)

        def one(pair: tuple[Any, Any]) -> Any:
            try:
                return self.invoke(pair[0], pair[1], **kwargs)  # type: ignore[attr-defined]
            except Exception as e:
                if return_exceptions:
                    return e
                raise

        if len(inputs) == 1:
            return [one((inputs[0], configs[0]))]
        with ThreadPoolExecutor(max_workers=workers) as pool:
            return list(pool.map(one, zip(inputs, configs, strict=True)))

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

    def __or__(self, other: Any) -> Any:
        """`graph | runnable`: a LangChain `RunnableSequence` (needs langchain_core)."""
        return _as_runnable(self) | other

    def __ror__(self, other: Any) -> Any:
        """`runnable | graph`."""
        return other | _as_runnable(self)


def _as_runnable(graph: Any) -> Any:
    """The graph as a LangChain `RunnableLambda` over its `invoke` and `ainvoke`."""
    try:
        from langchain_core.runnables import RunnableLambda
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError(
            "graph | runnable chains need langchain_core: pip install nbgraph[langchain]"
        ) from e

    def invoke(graph_input: Any, config: Any = None) -> Any:
        return graph.invoke(graph_input, _own_keys(config))

    async def ainvoke(graph_input: Any, config: Any = None) -> Any:
        return await graph.ainvoke(graph_input, _own_keys(config))

    return RunnableLambda(invoke, afunc=ainvoke, name=graph.name or "LangGraph")


def _own_keys(config: Any) -> dict[str, Any] | None:
    """A LangChain config as a graph config: callbacks and run bookkeeping left out."""
    if not config:
        return None
    keep = ("tags", "metadata", "configurable", "recursion_limit", "max_concurrency", "run_name")
    return {key: value for key, value in config.items() if key in keep and value}
