"""A compiled LangGraph graph read into nbgraph's `GraphSpec`, through its public parts only;
the import's errors.

It reads `app.builder` (the `StateGraph`: schemas, nodes, edges, routers) and the graph's
channels (each field's reducer: `BinaryOperatorAggregate`'s operator, `LastValue` = overwrite,
`EphemeralValue`, `Topic`, `add_messages`, ...). langgraph itself is never imported here.

The spec has no functions: its nodes and routers are stand-ins that say the run was imported
(the record never calls them); its reducers are LangGraph's own operators, so `remerge` and
the effects replay fold writes exactly as LangGraph did.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from nbgraph.blueprint import Branch, GraphSpec, NodeSpec, WaitingEdge
from nbgraph.errors import NbgraphError
from nbgraph.reducers import Reducer, reducer_from_callable
from nbgraph.schema import FieldSpec, SchemaInfo, read_schema

__all__ = [
    "ImportedFunction",
    "LangGraphHistoryError",
    "NotALangGraphError",
    "channel_notes",
    "check_langgraph_app",
    "spec_from_langgraph",
]


class NotALangGraphError(NbgraphError, TypeError):
    """`Run.from_langgraph` or `nbgraph.trace` was given something that is not a compiled
    LangGraph graph."""


class LangGraphHistoryError(NbgraphError, ValueError):
    """A LangGraph thread's history cannot give what a run record needs (no checkpoints,
    no checkpointer, no task results): the message names what is missing and what to do."""


class ImportedFunction:
    """Stands in for a node or router of an imported LangGraph run; calling it says so."""

    def __init__(self, what: str, name: str) -> None:
        self.what, self.__name__, self.__qualname__ = what, name, name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            f"This run was imported from LangGraph; {self.what} is LangGraph's and is not "
            "called by nbgraph. Re-run the app on LangGraph (nbgraph.trace) to run it again."
        )

    def __repr__(self) -> str:
        return f"<LangGraph {self.what}>"


def check_langgraph_app(app: Any, what: str) -> None:
    """Refuse anything but a compiled LangGraph graph (a `Pregel` with its `StateGraph`).

    Raises:
        NotALangGraphError: naming the type given and what `what` expects.
    """
    kind = type(app)
    module = getattr(kind, "__module__", "") or ""
    ok = module.startswith("langgraph.") and hasattr(app, "get_state_history")
    if not ok or getattr(app, "builder", None) is None:
        hint = ""
        if module.startswith("nbgraph"):
            hint = " For an nbgraph app use app.run(...) or Run.from_checkpointer(...)."
        raise NotALangGraphError(
            f"{what} takes a compiled LangGraph graph (StateGraph(...).compile() from "
            f"langgraph), got {module}.{kind.__qualname__}.{hint}"
        )


def spec_from_langgraph(app: Any) -> GraphSpec:
    """The `GraphSpec` of a compiled LangGraph `StateGraph`: fields with LangGraph's reducers,
    nodes, edges, waiting edges, routers (their `path_map`) and breakpoints."""
    check_langgraph_app(app, "Run.from_langgraph")
    builder = app.builder
    problems: list[str] = []
    state = _schema(builder.state_schema, problems)
    input_info = state
    if builder.input_schema is not builder.state_schema:
        input_info = _schema(builder.input_schema, problems)
    output_info = state
    if builder.output_schema is not builder.state_schema:
        output_info = _schema(builder.output_schema, problems)
    fields = _fields(builder, [state, input_info, output_info])
    state, input_info, output_info = (
        _with(info, fields) for info in (state, input_info, output_info)
    )
    nodes = {name: _node(name, node, builder, fields) for name, node in builder.nodes.items()}
    edges: dict[str, list[str]] = {}
    for source, target in sorted(builder.edges):
        edges.setdefault(source, []).append(target)
    waiting = tuple(
        WaitingEdge(tuple(sources), target)
        for sources, target in sorted(builder.waiting_edges, key=repr)
    )
    return GraphSpec(
        state=state,
        input=input_info,
        output=output_info,
        fields=fields,
        nodes=nodes,
        edges={k: tuple(v) for k, v in edges.items()},
        waiting=waiting,
        branches=_branches(builder),
        filters={},
        open_schema=state.kind == "dict",
        interrupt_before=_names(getattr(app, "interrupt_before_nodes", ()), nodes),
        interrupt_after=_names(getattr(app, "interrupt_after_nodes", ()), nodes),
    )


def _schema(cls: Any, problems: list[str]) -> SchemaInfo:
    """A schema read as nbgraph reads it; one nbgraph cannot read keeps its keys only."""
    found: list[str] = []
    try:
        info = read_schema(cls, problems=found)
    except Exception:  # a schema only LangGraph understands: the channels say the rest
        info = SchemaInfo(cls, "dict", {})
    problems.extend(found)
    return info


def _fields(builder: Any, schemas: list[SchemaInfo]) -> dict[str, FieldSpec]:
    """Every state channel of the builder as a field, its reducer read from the channel."""
    declared: dict[str, FieldSpec] = {}
    for info in schemas:
        for name, spec in info.fields.items():
            declared.setdefault(name, spec)
    public = set(declared)
    managed = set(getattr(builder, "managed", {}) or {})
    fields: dict[str, FieldSpec] = {}
    for name, channel in builder.channels.items():
        base = declared.get(name) or FieldSpec(name, private=name not in public)
        fields[name] = _field(base, channel)
    for name in managed:
        fields[name] = dataclasses.replace(declared.get(name) or FieldSpec(name), managed=True)
    return fields


def _field(base: FieldSpec, channel: Any) -> FieldSpec:
    """A field as its LangGraph channel folds writes."""
    kind = type(channel).__name__
    if kind == "BinaryOperatorAggregate":
        reducer = _reducer(channel.operator)
        initial = base.initial if base.reducer is not None else _empty(channel)
        return dataclasses.replace(base, reducer=reducer, ephemeral=False, initial=initial)
    if kind == "EphemeralValue":
        return dataclasses.replace(base, reducer=None, ephemeral=True, initial=None)
    if kind == "Topic":
        accumulate = bool(getattr(channel, "accumulate", False))
        reducer = Reducer("topic", _topic_fold)
        initial = list if accumulate else None  # LangGraph shows no value for an empty one
        return dataclasses.replace(base, reducer=reducer, ephemeral=not accumulate, initial=initial)
    return dataclasses.replace(base, reducer=None, ephemeral=False, initial=None)  # LastValue


def _reducer(operator: Any) -> Reducer:
    """A channel's operator as a reducer: LangGraph's `add_messages` is named as nbgraph
    names its own (the function stays LangGraph's, so writes fold exactly as they did)."""
    module = getattr(operator, "__module__", "") or ""
    if module == "langgraph.graph.message" and operator.__name__.endswith("add_messages"):
        from nbgraph.messages import add_messages

        name = reducer_from_callable(add_messages).name
        return Reducer(name, operator, prepare=_langchain_with_ids)
    return reducer_from_callable(operator)


def _langchain_with_ids(value: Any) -> Any:
    """A messages write as nbgraph's record keeps it (`with_ids`): langchain messages, each
    with an id (a fresh one where it had none; the import then gives the ids LangGraph's
    reducer gave). A value that is not messages is kept as written."""
    from nbgraph.messages.langchain_messages import lc_as_messages, lc_with_id

    if value is None:
        return value
    try:
        return [lc_with_id(m) for m in lc_as_messages(value, "write")]
    except Exception:  # LangGraph refused it too (its history keeps the error)
        return value


_KNOWN_CHANNELS = ("BinaryOperatorAggregate", "LastValue", "EphemeralValue", "Topic")
"""The channel kinds read into a field exactly; any other is read as overwrite, with a note."""


_UNTRACKED = (
    "field {name!r} is a LangGraph UntrackedValue channel (a run-scoped value such as "
    "create_agent's run_model_call_count): LangGraph keeps neither its values nor its writes "
    "in checkpoints, so the record has none of them."
)


def channel_notes(app: Any) -> list[str]:
    """A note for each field whose channel kind the import reads as overwrite by default,
    and for each field whose values LangGraph does not keep (`UntrackedValue`)."""
    notes = []
    for name, channel in app.builder.channels.items():
        kind = type(channel).__name__
        if kind == "UntrackedValue":
            notes.append(_UNTRACKED.format(name=name))
        elif kind not in _KNOWN_CHANNELS:
            notes.append(
                f"field {name!r} is a LangGraph {kind} channel; the record folds its writes as "
                "overwrite (the values shown are LangGraph's where they differ)."
            )
    return notes


def _empty(channel: Any) -> Any:
    kind = getattr(channel, "typ", None)
    try:
        kind()
    except Exception:
        return None
    return kind


def _topic_fold(old: Any, new: Any) -> list:
    """A `Topic` channel: each write's values appended (a list write is its items)."""
    items = list(new) if isinstance(new, list) else [new]
    return [*(old or []), *items]


def _with(info: SchemaInfo, fields: dict[str, FieldSpec]) -> SchemaInfo:
    return SchemaInfo(info.cls, info.kind, {n: fields.get(n, f) for n, f in info.fields.items()})


def _node(name: str, node: Any, builder: Any, fields: dict[str, FieldSpec]) -> NodeSpec:
    schema = getattr(node, "input_schema", None)
    info = None
    if schema is not None and schema is not builder.state_schema:
        read = _schema(schema, [])
        own = {
            n: dataclasses.replace(fields.get(n, f), private=True) for n, f in read.fields.items()
        }
        info = SchemaInfo(read.cls, read.kind, own)
    ends = getattr(node, "ends", None)
    return NodeSpec(
        name,
        ImportedFunction(f"node {name!r}", name),
        input=info,
        defer=bool(getattr(node, "defer", False)),
        destinations=tuple(ends) if ends else None,
    )


def _branches(builder: Any) -> dict[str, tuple[Branch, ...]]:
    found: dict[str, tuple[Branch, ...]] = {}
    for source, named in builder.branches.items():
        items = []
        for router, spec in named.items():
            ends = getattr(spec, "ends", None)
            stub = ImportedFunction(f"router {router!r} after {source!r}", router)
            items.append(Branch(source, stub, dict(ends) if ends else None))
        found[source] = tuple(items)
    return found


def _names(given: Any, nodes: dict[str, NodeSpec]) -> tuple[str, ...]:
    if given == "*" or given == ("*",) or given == ["*"]:
        return tuple(nodes)
    return tuple(given or ())
