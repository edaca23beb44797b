"""A compiled graph added as a node (a subgraph), run as LangGraph runs one.

The node is handed the parent's state; the subgraph's `invoke` keeps the keys its input schema
knows, runs to its end and returns its output schema's values, which come back as the node's
write through the parent's reducers (so with `operator.add` the parent appends the
subgraph's whole list, as LangGraph does).

No engine import (the engine is a layer up): a value is a compiled graph when it has an
`invoke` and its `spec` is a `GraphSpec`. The engine records the subgraph's run on the task
that called it (see `CompiledGraph._start`), whichever way it was called.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

from nbgraph.blueprint.spec import GraphSpec
from nbgraph.isolation import StateView

__all__ = [
    "SubgraphNode",
    "as_subgraph_node",
    "graph_of_node",
    "is_compiled_graph",
    "subgraph_name",
]

_MISSING = object()


def is_compiled_graph(value: Any) -> bool:
    """Whether `value` is an nbgraph compiled graph (`StateGraph(...).compile()`)."""
    return isinstance(getattr(value, "spec", None), GraphSpec) and callable(
        getattr(value, "invoke", None)
    )


def subgraph_of(spec: Any, node: str) -> Any:
    """The compiled graph added as `node` of `spec` (None: not a subgraph node)."""
    found = spec.nodes.get(node)
    app = getattr(found.fn, "app", None) if found is not None else None
    return app if is_compiled_graph(app) else None


def graph_of_node(spec: Any, node: str) -> Any:
    """The compiled graph LangGraph counts as node `node`'s subgraph (`get_subgraphs()`,
    `nodes[node].subgraphs`, `get_graph(xray=...)`): the graph added as the node, or the
    first one its function reads (a global or closure variable it names, or the graph of a
    bound method it names); a graph compiled with `checkpointer=False` is not counted.
    None: no subgraph."""
    app = subgraph_of(spec, node)
    if app is None and node in spec.nodes:
        app = _graph_read_by(spec.nodes[node].fn)
    if app is None or getattr(app, "checkpointer", None) is False:
        return None
    return app


def _graph_read_by(fn: Any) -> Any:
    """The first compiled graph among the variables `fn` reads, or None."""
    try:
        seen = inspect.getclosurevars(getattr(fn, "__wrapped__", fn))
    except (TypeError, ValueError):  # (not a Python function: a callable object, a builtin)
        return None
    names = _names_read(getattr(fn, "__code__", None))
    for name, value in [*seen.globals.items(), *seen.nonlocals.items()]:
        if name not in names:
            continue
        value = getattr(value, "__self__", value)  # (`graph.invoke` named: its graph)
        if is_compiled_graph(value):
            return value
    return None


def _names_read(code: Any) -> set[str]:
    """The names a code object reads, its nested functions' and lambdas' too."""
    if code is None:
        return set()
    names = {*code.co_names, *code.co_freevars}
    for const in code.co_consts:
        if hasattr(const, "co_names"):
            names |= _names_read(const)
    return names


def subgraph_name(app: Any) -> str:
    """The node name LangGraph gives a compiled graph added without one: its name."""
    return getattr(app, "name", None) or "LangGraph"


def _runs_async(spec: GraphSpec) -> bool:
    """Whether some node or router of `spec` (or of a subgraph inside it) must be awaited."""
    return any(node.is_async for node in spec.nodes.values()) or any(
        branch.is_async for branches in spec.branches.values() for branch in branches
    )


class SubgraphNode:
    """A compiled graph as a node function: `node(state)` is `app.invoke(state)`.

    The subgraph's run inherits the calling node's context, store, recursion limit and
    `configurable` keys (not its thread), as any graph invoked inside a node does.

    Attributes:
        app: the compiled subgraph.
    """

    def __init__(self, app: Any) -> None:
        self.app = app
        self.__name__ = subgraph_name(app)

    def __call__(self, state: Any) -> Any:
        return self.app.invoke(_subgraph_input(self.app.spec, state))

    def __repr__(self) -> str:
        return f"SubgraphNode({self.app!r})"


class _AsyncSubgraphNode(SubgraphNode):
    """A subgraph with async nodes or routers: the node awaits `app.ainvoke(state)`."""

    async def __call__(self, state: Any) -> Any:  # type: ignore[override]
        return await self.app.ainvoke(_subgraph_input(self.app.spec, state))


def _subgraph_input(spec: GraphSpec, state: Any) -> Any:
    """The parent's state as the subgraph's input: the keys its input schema knows (the
    parent's other keys are not the subgraph's, so they are left out without a warning).

    A parent state that is a pydantic model or a dataclass of another class is read by
    attribute, as LangGraph reads one: each known key the object has, except a None that
    is also the field's default and was not set explicitly.
    """
    if spec.open_schema:
        return state
    known = spec.input.fields
    if type(state) is StateView:  # the node's view of the parent's values: read as they are,
        # not copied (the subgraph's run copies each value it keeps as it takes its input)
        return {key: value for key, value in dict.items(state) if key in known}
    if isinstance(state, (dict, Mapping)):
        return {key: value for key, value in state.items() if key in known}
    if spec.input.updates_from(state) is not None or not _has_fields(state):
        return state  # (an instance of the subgraph's own input class is read as its input)
    return _attributes(state, known)


def _has_fields(state: Any) -> bool:
    """Whether `state` is a pydantic model or dataclass instance (read by attribute)."""
    return hasattr(type(state), "model_fields") or hasattr(type(state), "__dataclass_fields__")


def _attributes(state: Any, known: Any) -> dict[str, Any]:
    """The known keys `state` has as attributes (LangGraph's `get_update_as_tuples`)."""
    fields = getattr(type(state), "model_fields", None)
    explicit = getattr(state, "model_fields_set", ())
    found = {}
    for key in known:
        value = getattr(state, key, _MISSING)
        if value is _MISSING:
            continue
        if value is None and fields is not None and key not in explicit:
            info = fields.get(key)
            if info is None or info.default is None:
                continue
        found[key] = value
    return found


def as_subgraph_node(app: Any) -> SubgraphNode:
    """The node function for a compiled graph: awaited when the subgraph has async parts."""
    return _AsyncSubgraphNode(app) if _runs_async(app.spec) else SubgraphNode(app)
