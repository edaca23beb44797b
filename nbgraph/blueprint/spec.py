"""The frozen graph: `GraphSpec` and its parts, what the builder hands the engine and the
drawings once every check has passed.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from nbgraph.schema import FieldSpec, SchemaInfo

__all__ = ["Branch", "GraphSpec", "NodeSpec", "WaitingEdge"]


@dataclass(frozen=True, slots=True)
class NodeSpec:
    """A node as the engine runs it."""

    name: str
    fn: Callable[..., Any]
    is_async: bool = False
    takes_config: bool = False
    input: SchemaInfo | None = None
    defer: bool = False
    merge: Callable[[list[Any]], Any] | str | None = None
    destinations: tuple[str, ...] | None = None
    retry: tuple[Any, ...] = ()  # RetryPolicy each: the first whose retry_on matches applies
    cache: Any = None  # a CachePolicy: reuse its writes for an input it has seen
    afn: Callable[..., Any] | None = None  # its async form, run instead in an async run
    metadata: Mapping[str, Any] | None = None  # `add_node(metadata=...)`: in its config, drawn


@dataclass(frozen=True, slots=True)
class Branch:
    """A conditional edge: `router(state)` picks where `source` goes next."""

    source: str
    router: Callable[..., Any]
    path_map: Mapping[Hashable, str] | None = None
    is_async: bool = False
    takes_config: bool = False
    input: SchemaInfo | None = None

    @property
    def name(self) -> str:
        return getattr(self.router, "__name__", type(self.router).__name__)


@dataclass(frozen=True, slots=True)
class WaitingEdge:
    """`add_edge([a, b], c)`: `c` runs once all sources have run since it last ran."""

    sources: tuple[str, ...]
    target: str


@dataclass(frozen=True)
class GraphSpec:
    """A checked graph, frozen: what `compile()` hands the engine and the drawings."""

    state: SchemaInfo
    input: SchemaInfo
    output: SchemaInfo
    fields: dict[str, FieldSpec]
    nodes: dict[str, NodeSpec]
    edges: dict[str, tuple[str, ...]]
    waiting: tuple[WaitingEdge, ...]
    branches: dict[str, tuple[Branch, ...]]
    filters: dict[tuple[str, str], Callable[[Any], Any]]
    state_merger: Callable[[dict, list[dict]], dict] | None = None
    open_schema: bool = False
    interrupt_before: tuple[str, ...] = ()
    interrupt_after: tuple[str, ...] = ()
    semantics: str = "supersteps"
    end_merge: Callable[[list[Any]], Any] | str = "delta"
    cache: Any = None  # `compile(cache=...)`: where nodes with a cache_policy keep writes

    @cached_property
    def waits_by_source(self) -> dict[str, tuple[int, ...]]:
        """Per source node, the indices of the waiting edges it is one of the sources of."""
        found: dict[str, list[int]] = {}
        for index, edge in enumerate(self.waiting):
            for source in edge.sources:
                found.setdefault(source, []).append(index)
        return {source: tuple(ids) for source, ids in found.items()}

    @cached_property
    def ephemeral(self) -> tuple[str, ...]:
        """Fields that live one superstep (one task, in a branch lineage)."""
        return tuple(name for name, f in self.fields.items() if f.ephemeral)

    @cached_property
    def beyond_state(self) -> frozenset[str]:
        """Fields the state schema does not declare (input, output or node-private keys):
        a node or router that reads the state schema does not see them, as in LangGraph."""
        if self.open_schema:
            return frozenset()
        return frozenset(self.fields) - frozenset(self.state.fields)

    @cached_property
    def unprepared(self) -> frozenset[str]:
        """Fields that keep a write as it is, only isolated: declared, not managed, and
        without a reducer `prepare` (the engine's short path for a node's dict output)."""
        return frozenset(
            name
            for name, f in self.fields.items()
            if not f.managed and (f.reducer is None or f.reducer.prepare is None)
        )

    @cached_property
    def transient(self) -> frozenset[str]:
        """Fields marked `Transient`: never written to a checkpoint."""
        return frozenset(name for name, f in self.fields.items() if f.transient is not None)
