"""A run as a versioned JSON document and back: `Run.to_json`, `from_json`, `save`, `load`.

The document is `{"format": "nbgraph.run", "version": 1, "graph": {...}, "run": {...}}`, its
values encoded by `nbgraph.record.values`; never pickle.

A loaded run reads like the original (effects, states, tree, tables), but its functions are
gone unless the caller passes the graph (`graph=app`): nodes, routers, merges and filters are
stand-ins that say so when called. Reducers any process has (nbgraph's own by name, the
`operator` module's by `"function"`) are found again. Where replaying a step would need a
function the file cannot hold (a `Mutation`, a `state_merger`) or would fold values the file
keeps only as reprs, the field's value after that step is saved in the step's `afters`, and
replay takes it; for a reducer that may be missing where the file is read (a lambda, the
user's own function or registered name) it is saved in the step's `kept` instead, as what it
added when it only grew (`nbgraph.engine.pinned`), and `graph=` replays the real function.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import os
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, NamedTuple

from nbgraph.engine.pinned import growth, pinned_data, pinned_map
from nbgraph.engine.runlog import (
    Join,
    RunLog,
    StepLog,
    join_data,
    join_from_data,
    reset_data,
    reset_from_data,
)
from nbgraph.engine.tasks import Task
from nbgraph.engine.view import isolate
from nbgraph.errors import GraphMismatchError, NbgraphError
from nbgraph.graph import Branch, GraphSpec, NodeSpec, WaitingEdge
from nbgraph.record import nesting
from nbgraph.record.classes import check_models, named_classes
from nbgraph.record.log_shape import LogShapeError, check_document
from nbgraph.record.nesting import ValueTooDeepError
from nbgraph.record.values import (
    BUILTIN_TYPES,
    UnavailableFunctionError,
    UnknownTagError,
    UnloadedModel,
    Unrepresentable,
    ValueEncoder,
    decode_error,
    decode_value,
    encode_error,
    encode_value,
    find_class,
    is_opaque,
    qualified_name,
)
from nbgraph.record.values import RecordedError as RecordedError  # re-exported
from nbgraph.record.values import RecordedMutation as RecordedMutation  # re-exported
from nbgraph.record.values import UnloadedEnum as UnloadedEnum  # re-exported
from nbgraph.reducers import (
    Reducer,
    callable_anywhere,
    function_from_ref,
    function_ref,
    get_reducer,
)
from nbgraph.schema import FieldSpec, SchemaInfo
from nbgraph.types import MISSING, Mutation, Overwrite

if TYPE_CHECKING:
    from pathlib import Path

    from nbgraph.record.run import Run

FORMAT = "nbgraph.run"
FORMAT_VERSION = 1


class RunFileError(NbgraphError, ValueError):
    """A file (or text) is not a run this nbgraph can read; the message says which and why."""


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


class _Broken(Exception):
    """Inside decoding: the document has the right format but not the right shape."""


# --- the graph ------------------------------------------------------------------------------


def _registered(reducer: Reducer) -> bool:
    """Whether `reducer` is the one registered under its name (`operator.add`'s "add" is not)."""
    registered = get_reducer(reducer.name)
    return registered is not None and registered.fn is reducer.fn


def _portable(reducer: Reducer) -> bool:
    """Whether a loaded run surely finds this reducer again: one of nbgraph's own, by name,
    or a well-known function such as `operator.add`."""
    return callable_anywhere(reducer)


def _encode_field(spec: FieldSpec) -> dict[str, Any]:
    reducer = spec.reducer
    initial = None
    if spec.initial is not None:
        with contextlib.suppress(Exception):
            empty = spec.initial()
            loaded = isinstance(empty, (Unrepresentable, UnloadedModel))  # kept as it was
            kind = empty.class_name if loaded else _type_text(type(empty))
            initial = {"type": kind, "value": encode_value(empty)}
    registered = reducer is not None and _registered(reducer)
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
            reducer = Reducer(reducer_name, found)
        if reducer is None:
            stub = _Unavailable(f"reducer {reducer_name!r} of field {name!r}", reducer_name)
            reducer = Reducer(reducer_name, stub)
    initial = data["initial"]
    if initial is not None:
        value = decode_value(initial["value"])
        builtin = BUILTIN_TYPES.get(initial["type"])
        initial = builtin if builtin is not None else (lambda: isolate(value))
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
    cls = find_class(name, load=False)
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
        waits_by_source=_waits_by_source(waiting),
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


def _waits_by_source(waiting: tuple[WaitingEdge, ...]) -> dict[str, tuple[int, ...]]:
    """Per source node, the indices of the waiting edges it is one of the sources of."""
    found: dict[str, list[int]] = {}
    for index, edge in enumerate(waiting):
        for source in edge.sources:
            found.setdefault(source, []).append(index)
    return {source: tuple(ids) for source, ids in found.items()}


# --- the run --------------------------------------------------------------------------------


def _encode_task(task: Task, watch: ValueEncoder) -> dict[str, Any]:
    data: dict[str, Any] = {
        "step": task.step,
        "index": task.index,
        "node": task.node,
        "kind": task.kind,
        "triggers": list(task.triggers),
        "writes": [
            [encode_value(key), _write(task, key, value, watch)] for key, value in task.writes
        ],
        "started": task.started,
        "ended": task.ended,
    }
    if task.arg is not MISSING:
        data["arg"] = encode_value(task.arg)
    if task.routes:
        data["routes"] = [encode_value(route) for route in task.routes]
    if task.dropped:
        data["dropped"] = [[encode_value(k), encode_value(v), why] for k, v, why in task.dropped]
    if task.error is not None:
        data["error"] = encode_error(task.error)
    if task.parent:
        data["parent"] = task.parent
    return data


def _write(task: Task, field: Any, value: Any, watch: ValueEncoder) -> Any:
    try:
        return watch(value)
    except ValueTooDeepError as error:
        raise error.within(
            f"The value node {task.node!r} wrote to field {field!r} at step {task.step}"
        ) from None


def _decode_task(data: dict[str, Any]) -> Task:
    routes = [decode_value(route) for route in data.get("routes", ())]
    return Task(
        step=data["step"],
        index=data["index"],
        node=data["node"],
        kind=data["kind"],
        arg=decode_value(data["arg"]) if "arg" in data else MISSING,
        triggers=tuple(data["triggers"]),
        writes=[(decode_value(k), decode_value(v)) for k, v in data["writes"]],
        routes=routes or (),
        dropped=tuple((decode_value(k), decode_value(v), w) for k, v, w in data.get("dropped", ())),
        error=decode_error(data.get("error")),
        started=float(data["started"]),
        ended=float(data["ended"]),
        parent=str(data.get("parent", "")),
    )


def _encode_steps(run: Run) -> list[dict[str, Any]]:
    """Every step of the run, with `afters` where a loaded run could not replay it."""
    watch = ValueEncoder()  # encodes what reaches the state, noting anything opaque
    steps = []
    for step in run.log.steps:
        resets = [reset_data(reset, watch, encode_value) for reset in step.resets]
        steps.append(
            {
                "step": step.step,
                "applied": step.applied,
                "written": [encode_value(name) for name in step.written],
                "cleared": [encode_value(name) for name in step.cleared],
                "merged": [[w, encode_value(f), watch(v)] for w, f, v in step.merged],
                "resets": resets,
                "afters": None,
                "tasks": [_encode_task(task, watch) for task in step.tasks],
            }
        )
        if step.joins or step.heads:
            steps[-1]["joins"] = [join_data(join, watch, encode_value) for join in step.joins]
            steps[-1]["heads"] = list(step.heads)
    if watch.opaque or _has_unreplayable_parts(run):
        pinned = _point_afters(run) if run.log.semantics == "branches" else _afters(run)
        for data, afters in zip(steps, pinned, strict=True):
            kept = {k: v.pinned for k, v in (afters or {}).items() if type(v) is _Kept}
            whole = {k: v for k, v in (afters or {}).items() if type(v) is not _Kept}
            data["afters"] = encode_value(whole) if whole else None
            if kept:  # an append-like field keeps what it added: the file stays linear
                data["kept"] = {k: _kept_data(v) for k, v in kept.items()}
    return steps


def _kept_data(pinned: Any) -> list[Any]:
    kind, part = pinned_data(pinned)
    return [kind, encode_value(part)]


def _point_afters(run: Run) -> list[dict[str, dict[Any, Any]] | None]:
    """A branch run's `afters`: per step, per lineage point (a task, a join), the values
    after it of the fields it wrote or merged — replay takes them instead of folding."""
    fields = run.graph.fields
    by_step: dict[int, dict[str, dict[Any, Any]]] = {}
    for effect in run.effect_list:
        if effect.dropped_key or not effect.applied or not effect.point:
            continue
        if effect.point.startswith("reset:") or effect.reducer == "cleared":
            continue
        spec = fields.get(effect.field)
        reducer = spec.reducer if spec is not None else None
        plain = reducer is None and not any(is_opaque(v) for _, v in effect.writes)
        if plain and not effect.point.startswith("join:"):
            continue
        by_step.setdefault(effect.step, {}).setdefault(effect.point, {})[effect.field] = (
            effect.after
        )
    for step in run.log.steps:  # where lineages are apart, the state "after the step" too
        if step.applied and len(step.heads) > 1:
            by_step.setdefault(step.step, {})["heads"] = run.timeline.after(step.step)
    return [by_step.get(step.step) for step in run.log.steps]


def _decode_step(data: dict[str, Any], graph: GraphSpec, functions: bool) -> StepLog:
    number = data["step"]
    resets = [
        reset_from_data(number, item, _decoded_state, decode_value) for item in data["resets"]
    ]
    merged = [(w, decode_value(f), decode_value(v)) for w, f, v in data["merged"]]
    afters = data["afters"]
    afters = None if afters is None else _mapping(decode_value(afters), "a step's afters")
    kept = data.get("kept")
    if kept and not functions:  # without graph=, the values its reducers made
        decoded = {
            k: [kind, decode_value(part)] for k, (kind, part) in _mapping(kept, "kept").items()
        }
        afters = {**(afters or {}), **pinned_map(decoded, f"step {number}'s kept values")}
    return StepLog(
        number,
        [_decode_task(task) for task in data["tasks"]],
        graph.fields,
        written=tuple(decode_value(name) for name in data["written"]),
        resets=resets or (),
        cleared=tuple(decode_value(name) for name in data["cleared"]),
        merged=merged or (),
        applied=bool(data["applied"]),
        afters=afters,
        joins=[_decode_join(join) for join in data.get("joins", ())] or (),
        heads=tuple(data.get("heads", ())),
    )


def _decoded_state(value: Any) -> dict[str, Any]:
    return _mapping(decode_value(value), "a reset's or join's values")


def _decode_join(data: dict[str, Any]) -> Join:
    return join_from_data(data, _decoded_state, decode_value)


def _mapping(value: Any, what: str) -> dict[str, Any]:
    if type(value) is not dict:
        raise _Broken(f"{what} should be a JSON object, found {type(value).__name__}")
    return value


def _has_unreplayable_parts(run: Run) -> bool:
    """Whether some step may need `afters` even though every written value encodes plainly."""
    fields = run.graph.fields.values()
    return (
        any(step.merged for step in run.log.steps)
        or any(spec.reducer is not None and not _portable(spec.reducer) for spec in fields)
        or any(is_opaque(_initial(spec)) for spec in fields if spec.initial is not None)
    )


class _Kept(NamedTuple):
    """A field's value after a step, pinned only because its reducer may be missing where
    the file is read (a `Grown` when it only grew); `graph=` on load uses the function."""

    pinned: Any


def _afters(run: Run) -> list[dict[Any, Any] | None]:
    """Per step, the values after it of the fields a loaded run could not fold again.

    A field is pinned at a step when its reducer is not one nbgraph finds again (its own,
    or `operator`'s), when a `Mutation` or a `state_merger` wrote it, or when its writes, or
    its value before (for a reducer that folds into it), come back from the file as
    something else (a repr, say). Pinned for its reducer alone, it is `_Kept`.
    """
    fields = run.graph.fields
    merged = {step.step: {name for _, name, _ in step.merged} for step in run.log.steps}
    opaque = {n for n, spec in fields.items() if spec.initial and is_opaque(_initial(spec))}
    afters: dict[int, dict[Any, Any]] = {}
    for effect in run.effect_list:
        name = effect.field
        if effect.dropped_key or not effect.applied:
            continue
        if effect.root_reset or not effect.writes:  # a reset's new value, or a clear
            (opaque.add if is_opaque(effect.after) else opaque.discard)(name)
            continue
        spec = fields.get(name)
        reducer = spec.reducer if spec is not None else None
        writes = [value for _, value in effect.writes]
        mutated = any(isinstance(value, Mutation) for value in writes)
        replaced = not mutated and (reducer is None or Overwrite in map(type, writes))
        needed = (
            mutated
            or name in merged[effect.step]
            or (name in opaque and not replaced)
            or any(is_opaque(value) for value in writes)
        )
        if needed or (reducer is not None and not _portable(reducer)):
            after_opaque = is_opaque(effect.after)
            pinned = effect.after
            if not needed and not after_opaque:  # only its reducer is missing: kept
                pinned = _Kept(growth(effect.before, effect.after) or effect.after)
            afters.setdefault(effect.step, {})[name] = pinned
            (opaque.add if after_opaque else opaque.discard)(name)
        else:  # folded from plain values by one of nbgraph's reducers: plain too
            opaque.discard(name)
    return [afters.get(step.step) for step in run.log.steps]


def _initial(spec: FieldSpec) -> Any:
    try:
        return spec.initial()  # type: ignore[misc]
    except Exception:
        return MISSING


def _plain_json(value: Any) -> Any:
    """`value` with what is not plain JSON left out (dict entries dropped), or MISSING."""
    kind = type(value)
    if value is None or kind in (str, int, bool) or (kind is float and math.isfinite(value)):
        return value
    if kind in (list, tuple):
        items = [_plain_json(item) for item in value]
        return MISSING if any(item is MISSING for item in items) else items
    if kind is dict:
        kept = {k: _plain_json(v) for k, v in value.items() if type(k) is str}
        return {k: v for k, v in kept.items() if v is not MISSING}
    return MISSING


def run_document(run: Run) -> dict[str, Any]:
    """The JSON document of a run (what `Run.to_json` writes)."""
    log = run.log
    config = _plain_json(log.config)
    steps = _encode_steps(run)  # first: a value too deep is named by its field and step
    return {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "graph": _encode_graph(log.graph),
        "run": {
            "status": log.status,
            "error": encode_error(log.error),
            "input": encode_value(log.input),
            "config": config if config is not MISSING else {},
            "warnings": list(log.warnings),
            "final": encode_value(log.final),
            "steps": steps,
            "semantics": log.semantics,
            "end": None if log.end is None else join_data(log.end, encode_value, encode_value),
        },
    }


def run_to_json(run: Run) -> str:
    """The run as indented JSON text."""
    return _dumps(run_document(run), ascii_only=False)


def _dumps(document: dict[str, Any], *, ascii_only: bool) -> str:
    return nesting.dumps(document, indent=1, ensure_ascii=ascii_only, allow_nan=False)


def log_from_json(
    text: str,
    *,
    where: str = "The text",
    models: Iterable[type] | None = None,
    graph: GraphSpec | None = None,
) -> RunLog:
    """Read a run log from JSON text written by `run_to_json`.

    Reading never imports a module: a value saved as a pydantic model, dataclass or Enum
    member comes back as its class if `models` names it or its module is imported already,
    else as a placeholder showing its data (see `nbgraph.record.classes`).

    Args:
        text: the JSON text.
        where: how error messages name the text's source (a file, say).
        models: classes (pydantic models, dataclasses, Enums) values may come back as.
        graph: the compiled graph's spec, if at hand: its functions replace the stand-ins.

    Raises:
        RunFileError: the text is not JSON, not an nbgraph run, from a newer format
            version, or incomplete (naming `where` and what was expected).
        ModelsArgumentError: `models` holds something else than such classes.
        GraphMismatchError: `graph` is not the graph the run recorded.
    """
    check_models(models)
    try:
        document = nesting.loads(text)
    except ValueTooDeepError as error:
        raise RunFileError(f"{where} is not an nbgraph run: {error}") from None
    except json.JSONDecodeError as error:
        ends = error.pos >= len(text.rstrip()) or error.msg.startswith("Unterminated")
        why = "it is empty" if not text.strip() else "it ends early: truncated?" if ends else ""
        raise RunFileError(
            f"{where} is not valid JSON ({error.msg} at line {error.lineno}, column "
            f"{error.colno}{'; ' + why if why else ''}); expected an nbgraph run saved by "
            "Run.save()."
        ) from None
    except ValueError as error:  # e.g. a number with more digits than int() takes
        raise RunFileError(
            f"{where} is not an nbgraph run: {error}; expected JSON saved by Run.save()."
        ) from None
    _check_header(document, where)
    try:
        check_document(document)
        with named_classes(models):
            return _decode_log(document, graph, where)
    except GraphMismatchError:
        raise
    except LogShapeError as error:
        raise RunFileError(f"{where} is not a complete nbgraph run: {error}") from None
    except _Broken as error:
        raise RunFileError(f"{where} is not a complete nbgraph run: {error}.") from None
    except UnknownTagError as error:
        raise RunFileError(
            f"{where} is not a complete nbgraph run: a value is tagged {error.tag!r}, which "
            f"format version {FORMAT_VERSION} lacks."
        ) from None
    except KeyError as error:
        raise RunFileError(
            f"{where} is not a complete nbgraph run: the entry {error.args[0]!r} is missing."
        ) from error
    except (TypeError, ValueError, AttributeError, IndexError, OverflowError) as error:
        raise RunFileError(
            f"{where} is not a complete nbgraph run: {type(error).__name__}: {error}."
        ) from error


def _check_header(document: Any, where: str) -> None:
    if type(document) is not dict or document.get("format") != FORMAT:
        if type(document) is not dict:
            found = f"a JSON {type(document).__name__}"
        elif "format" in document:
            found = f'"format": {json.dumps(document["format"])}'
        else:
            found = 'no "format" entry'
        raise RunFileError(
            f'{where} is not an nbgraph run: expected a JSON object with "format": "{FORMAT}", '
            f"found {found}."
        )
    version = document.get("version")
    if type(version) is not int or version < 1:
        raise RunFileError(
            f"{where} has no valid format version (found {json.dumps(version)}); expected an "
            f"integer from 1 to {FORMAT_VERSION}."
        )
    if version > FORMAT_VERSION:
        raise RunFileError(
            f"{where} holds a run in format version {version}, from a newer nbgraph; this "
            f"nbgraph reads versions up to {FORMAT_VERSION}. Upgrade nbgraph to load it."
        )


def _decode_log(document: dict[str, Any], given: GraphSpec | None, where: str) -> RunLog:
    graph = _decode_graph(document["graph"])
    if given is not None:
        check_graph(document["graph"], given, where[:1].lower() + where[1:])
        graph = given
    data = document["run"]
    config = data["config"]
    return RunLog(
        graph,
        decode_value(data["input"]),
        _mapping(config, "the config"),
        steps=[_decode_step(step, graph, given is not None) for step in data["steps"]],
        status=data["status"],
        error=decode_error(data["error"]),
        warnings=[str(message) for message in data["warnings"]],
        final=_mapping(decode_value(data["final"]), "the final values"),
        semantics=str(data.get("semantics", "supersteps")),
        end=None if data.get("end") is None else _decode_join(data["end"]),
    )


# --- files ----------------------------------------------------------------------------------


def save_run(run: Run, path: str | os.PathLike[str]) -> Path:
    """Write the run to `path` as UTF-8 JSON, atomically: a reader sees the old file or the new.

    The text goes to a temporary file in the same folder, which then replaces `path`.
    """
    import secrets  # here, with pathlib: `import nbgraph` needs neither
    from pathlib import Path

    target = Path(path)
    document = run_document(run)
    try:
        data = _dumps(document, ascii_only=False).encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: let JSON escape it instead
        data = _dumps(document, ascii_only=True).encode("ascii")
    temporary = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    return target


def load_log(
    path: str | os.PathLike[str],
    models: Iterable[type] | None = None,
    graph: GraphSpec | None = None,
) -> RunLog:
    """Read a run log from a file `save_run` wrote; the file is only read, and no module is
    imported because it names one (`models`, `graph`: as for `log_from_json`).

    Raises:
        FileNotFoundError: there is no such file.
        RunFileError: the file is not UTF-8 JSON, not an nbgraph run, from a newer format
            version, or incomplete (the message names the file).
    """
    from pathlib import Path

    source = Path(path)
    raw = source.read_bytes()
    where = file_label(source)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise RunFileError(
            f"{where} is not an nbgraph run: it is not UTF-8 text ({error.reason} at byte "
            f"{error.start}); expected JSON saved by Run.save()."
        ) from None
    return log_from_json(text, where=where, models=models, graph=graph)


def file_label(path: str | os.PathLike[str]) -> str:
    """How error messages name a run file."""
    from pathlib import Path

    return f"File {str(Path(path))!r}"


def checked_run(cls: type[Run], log: RunLog, where: str = "The text") -> Run:
    """`cls(log)` once its record is known to replay: every step's effects, the state tree
    and the output are worked out now (the tables and views reuse them), so a file whose
    parts disagree is refused at load time rather than failing later in a view.

    Raises:
        RunFileError: replaying the record fails, naming `where` and why.
    """
    try:
        run = cls(log)
        run.effect_list  # noqa: B018 - replays every step through the reducers
        run.tree  # noqa: B018
        run.output  # noqa: B018
        if log.semantics == "branches":  # each step's heads are lineage points of the run
            for step in log.steps:
                for head in step.heads:
                    run.timeline.lineages.point(head)  # type: ignore[attr-defined]
    except (RecursionError, MemoryError) as error:
        raise RunFileError(f"{where} holds a run too large to read ({error}).") from None
    except Exception as error:
        raise RunFileError(
            f"{where} is not a consistent nbgraph run: its steps cannot be replayed "
            f"({type(error).__name__}: {str(error).rstrip('.')})."
        ) from error
    return run
