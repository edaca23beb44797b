"""A compiled graph as plain JSON data and back, so a run file or a thread's first checkpoint
can be read in another process.

A loaded graph has no functions: its nodes, routers, merges and filters are stand-ins that say
so when called. Also here: the data's shape, and the check that a graph given with `graph=` is
the one recorded."""

from __future__ import annotations

import contextlib
import copy
import dataclasses
from collections.abc import Iterator
from typing import Any

from nbgraph.blueprint import Branch, GraphSpec, NodeSpec, WaitingEdge
from nbgraph.codec.shapes import ANY, BOOL, NAMES, STR, Is, ListOf, MapOf, Obj, Pair
from nbgraph.codec.values import (
    BUILTIN_TYPES,
    UnavailableFunctionError,
    UnloadedModel,
    Unrepresentable,
    decode_value,
    encode_value,
    find_class,
    qualified_name,
)
from nbgraph.errors import GraphMismatchError
from nbgraph.reducers import (
    Reducer,
    for_files,
    function_from_ref,
    function_ref,
    get_reducer,
    is_registered,
    reducer_from_callable,
)
from nbgraph.schema import FieldSpec, SchemaInfo

__all__ = [
    "GRAPH",
    "check_graph",
    "describe_graph",
    "graph_from_description",
    "graph_name_problems",
    "graph_problems",
]


class _Unavailable:
    """Stands in for a function of a loaded run; calling it raises a clear error."""

    def __init__(self, what: str, name: str) -> None:
        self.what, self.__name__, self.__qualname__ = what, name, name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise UnavailableFunctionError(
            f"This run was loaded from a file or a checkpointer without its graph; its node "
            f"functions are not available ({self.what} cannot be called). Pass the compiled "
            "graph to use them: Run.load(path, graph=app) or "
            "Run.from_checkpointer(saver, thread_id, graph=app)."
        )

    def __repr__(self) -> str:
        return f"<unavailable {self.what}>"


def _encode_field(spec: FieldSpec) -> dict[str, Any]:
    reducer = spec.reducer
    initial = None
    if spec.initial is not None:
        with contextlib.suppress(Exception):
            empty = spec.initial()
            loaded = isinstance(empty, (Unrepresentable, UnloadedModel))  # kept as it was
            kind = empty.class_name if loaded else _type_text(type(empty))
            initial = {"type": kind, "value": encode_value(empty)}
    registered = reducer is not None and is_registered(reducer)
    ref = function_ref(reducer.fn) if reducer is not None and not registered else None
    return {
        "name": spec.name,
        "type": _type_text(spec.type),
        "reducer": reducer.name if reducer else None,
        "registered": registered,
        **({"function": ref} if ref else {}),
        "ephemeral": spec.ephemeral,
        "managed": spec.managed,
        "private": spec.private,
        "initial": initial,
    }


def _decode_field(data: dict[str, Any]) -> FieldSpec:
    name, reducer_name = data["name"], data["reducer"]
    reducer = None
    if reducer_name is not None:
        reducer = get_reducer(reducer_name) if data["registered"] else None
        found = function_from_ref(data["function"]) if data.get("function") else None
        if found is not None:  # a well-known function: the very one (`operator.add`)
            reducer = reducer_from_callable(found, reducer_name)
        if reducer is None:
            stub = _Unavailable(f"reducer {reducer_name!r} of field {name!r}", reducer_name)
            reducer = Reducer(reducer_name, stub)
        else:  # (bounded as docs/VALUES.md says: "What loading a file may cost")
            reducer = for_files(reducer, name)
    initial = data["initial"]
    if initial is not None:
        value = decode_value(initial["value"])
        builtin = BUILTIN_TYPES.get(initial["type"])
        initial = builtin if builtin is not None else (lambda: _fresh(value))
    kind = data["type"]
    kind = BUILTIN_TYPES.get(kind) or (Any if kind == "typing.Any" else kind)
    return FieldSpec(
        name,
        kind,
        reducer,
        ephemeral=bool(data["ephemeral"]),
        managed=bool(data["managed"]),
        private=bool(data["private"]),
        initial=initial,
    )


def _type_text(tp: Any) -> str:
    if isinstance(tp, type):
        return tp.__name__ if tp.__module__ == "builtins" else qualified_name(tp)
    return tp if isinstance(tp, str) else repr(tp)


def _encode_schema(info: SchemaInfo) -> dict[str, Any]:
    cls = info.cls
    name = qualified_name(cls) if isinstance(cls, type) else repr(cls)
    return {"class": name, "kind": info.kind, "fields": list(info.fields)}


def _decode_schema(
    data: dict[str, Any], fields: dict[str, FieldSpec], private: bool = False
) -> SchemaInfo:
    name = data["class"]
    cls = find_class(name)
    if cls is None:  # a stand-in with the same name, for display
        module, _, qualname = name.partition(":")
        short = qualname.rsplit(".", 1)[-1] or name
        cls = type(short, (), {"__module__": module, "__qualname__": qualname or name})
    own = {
        n: dataclasses.replace(fields[n], private=True) if private else fields[n]
        for n in data["fields"]
    }
    return SchemaInfo(cls, data["kind"], own)


def _encode_graph(graph: GraphSpec) -> dict[str, Any]:
    return {
        "fields": [_encode_field(spec) for spec in graph.fields.values()],
        "state": _encode_schema(graph.state),
        "input": _encode_schema(graph.input),
        "output": _encode_schema(graph.output),
        "nodes": [_encode_node(node) for node in graph.nodes.values()],
        "edges": {source: list(targets) for source, targets in graph.edges.items()},
        "waiting": [{"sources": list(w.sources), "target": w.target} for w in graph.waiting],
        "branches": [
            _encode_branch(branch) for branches in graph.branches.values() for branch in branches
        ],
        "filters": [list(pair) for pair in graph.filters],
        "state_merger": graph.state_merger is not None,
        "open_schema": graph.open_schema,
        "interrupt_before": list(graph.interrupt_before),
        "interrupt_after": list(graph.interrupt_after),
        "semantics": graph.semantics,
        "end_merge": _merge_text(graph.end_merge),
    }


def _merge_text(merge: Any) -> str | None:
    """A node's (or END's) merge as text: `"delta"`, `"fold"`, or a strategy's name."""
    if merge is None or isinstance(merge, str):
        return merge
    return getattr(merge, "__name__", type(merge).__name__)


def _decode_merge(text: Any, what: str) -> Any:
    if text is None or text is False or text in ("delta", "fold"):
        return text or None
    return _Unavailable(what, "merge" if text is True else str(text))


def describe_graph(graph: GraphSpec) -> dict[str, Any]:
    """A compiled graph as plain JSON data (no functions): what a run file or a thread's
    first checkpoint keeps so the record can be read in another process."""
    return _encode_graph(graph)


def graph_from_description(data: dict[str, Any]) -> GraphSpec:
    """A `GraphSpec` back from `describe_graph` (its functions are stubs that say so)."""
    return _decode_graph(data)


def check_graph(description: dict[str, Any], graph: GraphSpec, where: str) -> None:
    """Refuse `graph` (given with `graph=`) unless it has the recorded fields, reducers,
    nodes and edges.

    Raises:
        GraphMismatchError: naming each difference and `where` the record came from.
    """
    given = _encode_graph(graph)
    problems = []
    for what, key in (("field", "fields"), ("node", "nodes")):
        recorded = {item["name"]: item for item in description[key]}
        ours = {item["name"]: item for item in given[key]}
        if set(recorded) - set(ours):
            problems.append(f"{what}s {sorted(set(recorded) - set(ours))} are missing")
        if set(ours) - set(recorded):
            problems.append(f"{what}s {sorted(set(ours) - set(recorded))} were not recorded")
    recorded_fields = {item["name"]: item["reducer"] for item in description["fields"]}
    for item in given["fields"]:
        old = recorded_fields.get(item["name"], item["reducer"])
        if old != item["reducer"]:
            problems.append(
                f"field {item['name']!r} has reducer {item['reducer']!r}, recorded {old!r}"
            )
    if description["edges"] != given["edges"]:
        problems.append(f"its edges {given['edges']} are not the recorded {description['edges']}")
    if problems:
        raise GraphMismatchError(
            f"graph= is not the graph {where} recorded: " + "; ".join(problems) + "."
        )


def _encode_node(node: NodeSpec) -> dict[str, Any]:
    return {
        "name": node.name,
        "defer": node.defer,
        "merge": _merge_text(node.merge),
        "destinations": None if node.destinations is None else list(node.destinations),
        "input": None if node.input is None else _encode_schema(node.input),
        "is_async": node.is_async,
        "takes_config": node.takes_config,
    }


def _encode_branch(branch: Branch) -> dict[str, Any]:
    path_map = branch.path_map
    return {
        "source": branch.source,
        "router": branch.name,
        "path_map": None
        if path_map is None
        else [[encode_value(key), target] for key, target in path_map.items()],
        "is_async": branch.is_async,
        "takes_config": branch.takes_config,
    }


def _decode_graph(data: dict[str, Any]) -> GraphSpec:
    fields = {spec.name: spec for spec in map(_decode_field, data["fields"])}
    nodes = {item["name"]: _decode_node(item, fields) for item in data["nodes"]}
    branches: dict[str, list[Branch]] = {}
    for branch in map(_decode_branch, data["branches"]):
        branches.setdefault(branch.source, []).append(branch)
    waiting = tuple(WaitingEdge(tuple(w["sources"]), w["target"]) for w in data["waiting"])
    merger = _Unavailable("state_merger", "state_merger") if data["state_merger"] else None
    return GraphSpec(
        state=_decode_schema(data["state"], fields),
        input=_decode_schema(data["input"], fields),
        output=_decode_schema(data["output"], fields),
        fields=fields,
        nodes=nodes,
        edges={source: tuple(targets) for source, targets in data["edges"].items()},
        waiting=waiting,
        branches={source: tuple(items) for source, items in branches.items()},
        filters={
            (s, t): _Unavailable(f"state_filter of edge {s!r} -> {t!r}", "state_filter")
            for s, t in data["filters"]
        },
        state_merger=merger,
        open_schema=bool(data["open_schema"]),
        interrupt_before=tuple(data["interrupt_before"]),
        interrupt_after=tuple(data["interrupt_after"]),
        semantics=data.get("semantics", "supersteps"),
        end_merge=_decode_merge(data.get("end_merge"), "END's merge") or "delta",
    )


def _decode_node(item: dict[str, Any], fields: dict[str, FieldSpec]) -> NodeSpec:
    name, schema = item["name"], item["input"]
    return NodeSpec(
        name,
        _Unavailable(f"node {name!r}", name),
        is_async=bool(item["is_async"]),
        takes_config=bool(item["takes_config"]),
        input=None if schema is None else _decode_schema(schema, fields, private=True),
        defer=bool(item["defer"]),
        merge=_decode_merge(item["merge"], f"merge of node {name!r}"),
        destinations=None if item["destinations"] is None else tuple(item["destinations"]),
    )


def _decode_branch(item: dict[str, Any]) -> Branch:
    source, router, pairs = item["source"], item["router"], item["path_map"]
    stub = _Unavailable(f"router {router!r} after {source!r}", router)
    path_map = None if pairs is None else {decode_value(k): t for k, t in pairs}
    return Branch(source, stub, path_map, bool(item["is_async"]), bool(item["takes_config"]))


def _fresh(value: Any) -> Any:
    """An independent copy of a loaded field's initial value (kept as is if it cannot be)."""
    try:
        return copy.deepcopy(value)
    except Exception:
        return value


# --- its shape ------------------------------------------------------------------------------

_SCHEMA_INFO = Obj({"class": STR, "kind": STR, "fields": NAMES})
_FIELD = Obj(
    {"name": STR, "type": STR, "reducer": Is(str, None), "registered": BOOL, "ephemeral": BOOL,
     "managed": BOOL, "private": BOOL,
     "initial": Obj({"type": STR, "value": ANY}, nullable=True)},
)  # fmt: skip
_NODE = Obj(
    {"name": STR, "defer": BOOL, "merge": Is(str, bool, None),
     "destinations": ListOf(STR, nullable=True), "input": Obj(_SCHEMA_INFO.required, nullable=True),
     "is_async": BOOL, "takes_config": BOOL},
)  # fmt: skip
_BRANCH = Obj(
    {"source": STR, "router": STR, "path_map": ListOf(Pair(ANY, STR), nullable=True),
     "is_async": BOOL, "takes_config": BOOL},
)  # fmt: skip
GRAPH = Obj(
    {"fields": ListOf(_FIELD), "state": _SCHEMA_INFO, "input": _SCHEMA_INFO, "output": _SCHEMA_INFO,
     "nodes": ListOf(_NODE), "edges": MapOf(NAMES),
     "waiting": ListOf(Obj({"sources": NAMES, "target": STR})), "branches": ListOf(_BRANCH),
     "filters": ListOf(Pair(STR, STR)), "state_merger": BOOL, "open_schema": BOOL,
     "interrupt_before": NAMES, "interrupt_after": NAMES},
    {"semantics": Is(str, choices=("supersteps", "branches")), "end_merge": Is(str, None)},
)  # fmt: skip
"""The shape of `describe_graph`'s data."""


def graph_problems(description: Any, what: str) -> Iterator[str]:
    """What is wrong with a graph description (`describe_graph`'s), each naming its path
    from `what`; a checkpoint thread's first checkpoint holds one too."""
    problems = list(GRAPH.problems(description, what))
    yield from problems
    if not problems:
        yield from graph_name_problems(description)


def graph_name_problems(graph: dict[str, Any]) -> Iterator[str]:
    """Where a well-shaped description's names disagree (two nodes named alike, an edge to a
    node it lacks)."""
    nodes = [node["name"] for node in graph["nodes"]]
    fields = [field["name"] for field in graph["fields"]]
    for what, names in (("node", nodes), ("field", fields)):
        doubled = sorted({name for name in names if names.count(name) > 1})
        if doubled:
            yield f"the graph has two {what}s named {doubled[0]!r}"
    schemas = [graph["state"], graph["input"], graph["output"]]
    schemas += [node["input"] for node in graph["nodes"] if node["input"] is not None]
    for schema in schemas:
        unknown = [name for name in schema["fields"] if name not in fields]
        if unknown:
            yield f"the schema {schema['class']!r} names {unknown[0]!r}, not a field of the graph"
    known = {*nodes, "__start__", "__end__"}
    for source, targets in graph["edges"].items():
        for name in (source, *targets):
            if name not in known:
                yield f"an edge of the graph names {name!r}, which is not one of its nodes"
    for edge in graph["waiting"]:
        if not edge["sources"]:
            yield f"a waiting edge to {edge['target']!r} waits for no node (expected one or more)"
        for name in (*edge["sources"], edge["target"]):
            if name not in known:
                yield f"a waiting edge names {name!r}, which is not one of the graph's nodes"
    for branch in graph["branches"]:
        if branch["source"] not in known:
            yield f"a router follows {branch['source']!r}, which is not one of the graph's nodes"
