"""A run as JSON and back: `Run.to_json`, `Run.from_json`, `Run.save`, `Run.load`; never pickle.

The document is `{"format": "nbgraph.run", "version": 1, "graph": {...}, "run": {...}}`.
Values are plain JSON when they are JSON; anything else is a dict tagged by `"$type"`:
`tuple`, `set`, `frozenset`, `bytes`, `dict` (non-str keys, or a `"$type"` key of its own),
`float` (nan and infinities), `missing`, `overwrite`, `send`, `message`, `pydantic`,
`mutation`, and `repr` for everything else (read back as an `Unrepresentable`).

A loaded run reads like the original (effects, states, tree, tables), but its functions are
gone: nodes, routers, merges and filters are stand-ins that say so when called. Where
replaying a step would need a function the file cannot hold (a reducer other than nbgraph's
own, a `Mutation`, a `state_merger`) or would fold values the file keeps only as reprs, the
field's value after that step is saved in the step's `afters`, and replay takes it.
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import importlib
import json
import math
import os
import secrets
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pydantic

from nbgraph.engine.runlog import RootReset, RunLog, StepLog
from nbgraph.engine.tasks import Task
from nbgraph.engine.view import isolate
from nbgraph.errors import NbgraphError
from nbgraph.graph import Branch, GraphSpec, NodeSpec, WaitingEdge
from nbgraph.messages import Message, RemoveMessage
from nbgraph.record.effects import same
from nbgraph.reducers import Reducer, get_reducer
from nbgraph.schema import FieldSpec, SchemaInfo
from nbgraph.types import MISSING, Mutation, Overwrite, Send

if TYPE_CHECKING:
    from nbgraph.record.run import Run

FORMAT = "nbgraph.run"
FORMAT_VERSION = 1
TAG = "$type"

_BUILTIN_TYPES = {
    t.__name__: t
    for t in (list, dict, set, frozenset, tuple, int, float, str, bool, complex, bytes)
}


class RunFileError(NbgraphError, ValueError):
    """A file (or text) is not a run this nbgraph can read; the message says which and why."""


class UnavailableFunctionError(NbgraphError, RuntimeError):
    """A function of a run loaded from a file was called; files keep no functions."""


class RecordedError(Exception):
    """An exception as a saved run kept it: its type's name and its message.

    `RecordedError("ValueError", "boom")` is an instance of a subclass named `ValueError`,
    so tables show `ValueError: boom` as they did for the original run.

    >>> error = RecordedError("ValueError", "boom")
    >>> type(error).__name__, str(error), isinstance(error, RecordedError)
    ('ValueError', 'boom', True)
    """

    def __new__(cls, type_name: str, message: str) -> RecordedError:
        if cls is RecordedError:
            cls = _ERROR_CLASSES.get(type_name) or _error_class(type_name)
        return super().__new__(cls, type_name, message)

    def __init__(self, type_name: str, message: str) -> None:
        super().__init__(type_name, message)
        self.type_name, self.message = type_name, message

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return f"RecordedError({self.type_name!r}, {self.message!r})"


_ERROR_CLASSES: dict[str, type[RecordedError]] = {}


def _error_class(type_name: str) -> type[RecordedError]:
    cls = type(type_name, (RecordedError,), {"__module__": __name__, "__qualname__": type_name})
    _ERROR_CLASSES[type_name] = cls
    return cls


class Unrepresentable:
    """A value a saved run could only keep as its `repr` (and its class's name).

    Attributes:
        text: the value's repr (also this object's repr).
        class_name: its class, as `"module:QualName"`.

    >>> Unrepresentable("<Lock>", "_thread:lock")
    <Lock>
    """

    __slots__ = ("class_name", "text")

    def __init__(self, text: str, class_name: str) -> None:
        self.text, self.class_name = text, class_name

    def __repr__(self) -> str:
        return self.text

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Unrepresentable):
            return NotImplemented
        return (self.text, self.class_name) == (other.text, other.class_name)

    def __hash__(self) -> int:
        return hash((self.text, self.class_name))

    def __deepcopy__(self, memo: dict) -> Unrepresentable:
        return self


class UnloadedModel(dict):
    """A pydantic model whose class could not be imported (or refused the data): its data.

    >>> UnloadedModel("shop:Order", {"id": 3})
    UnloadedModel('shop:Order', {'id': 3})
    """

    def __init__(self, class_name: str, data: dict[str, Any]) -> None:
        super().__init__(data)
        self.class_name = class_name

    def __repr__(self) -> str:
        return f"UnloadedModel({self.class_name!r}, {dict(self)!r})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, UnloadedModel)
            and self.class_name == other.class_name
            and dict.__eq__(self, other)
        )


class RecordedMutation(Mutation):
    """A `Mutation` a saved run wrote: kept as its repr; it cannot be applied again."""

    def __init__(self, field: str, text: str, class_name: str) -> None:
        self.field, self.text, self.class_name = field, text, class_name

    def apply(self, value: Any) -> Any:
        raise UnavailableFunctionError(
            f"{self.text} cannot be applied: this run was loaded from a file, and a file keeps "
            "a Mutation only as its repr."
        )

    def __repr__(self) -> str:
        return self.text

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RecordedMutation) and (self.text, self.class_name) == (
            other.text,
            other.class_name,
        )

    def __hash__(self) -> int:
        return hash((self.text, self.class_name))


class _Unavailable:
    """Stands in for a function of a loaded run; calling it raises a clear error."""

    def __init__(self, what: str, name: str) -> None:
        self.what, self.__name__, self.__qualname__ = what, name, name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise UnavailableFunctionError(
            f"This run was loaded from a file; its node functions are not available "
            f"({self.what} cannot be called)."
        )

    def __repr__(self) -> str:
        return f"<unavailable {self.what}>"


class _Broken(Exception):
    """Inside decoding: the document has the right format but not the right shape."""


# --- values ---------------------------------------------------------------------------------


def encode_value(value: Any) -> Any:
    """`value` as JSON data: itself if it is JSON, else a dict tagged by `"$type"`.

    >>> encode_value({"n": (1, float("nan"))})
    {'n': {'$type': 'tuple', 'items': [1, {'$type': 'float', 'value': 'nan'}]}}
    >>> decode_value(encode_value({1: "a", "$type": None}))
    {1: 'a', '$type': None}
    """
    return _Encoder()(value)


class _Encoder:
    """Turns values into JSON data, noting whether one came out opaque.

    Opaque: kept as a repr, a `Mutation`, or a model whose class a loaded run cannot find;
    a reducer replaying it would not do what it did in the run.
    """

    def __init__(self) -> None:
        self.active: set[int] = set()  # containers being encoded, to catch one inside itself
        self.opaque = False

    def __call__(self, value: Any) -> Any:
        kind = type(value)
        if value is None or kind in (str, int, bool):
            return value
        if kind is float:
            return value if math.isfinite(value) else {TAG: "float", "value": repr(value)}
        if kind not in (list, tuple, set, frozenset, dict):
            return self.instance(value)
        if id(value) in self.active:
            return self.as_repr(value)
        self.active.add(id(value))
        try:
            return self.container(value)
        finally:
            self.active.discard(id(value))

    def container(self, value: Any) -> Any:
        kind = type(value)
        if kind is list:
            return [self(item) for item in value]
        if kind is dict:
            if TAG not in value and all(type(key) is str for key in value):
                return {key: self(item) for key, item in value.items()}
            return {TAG: "dict", "items": [[self(k), self(v)] for k, v in value.items()]}
        items = list(value)
        if kind is not tuple:
            with contextlib.suppress(TypeError):  # a stable order where there is one
                items = sorted(items)
        return {TAG: kind.__name__, "items": [self(item) for item in items]}

    def instance(self, value: Any) -> Any:
        kind = type(value)
        if value is MISSING:
            return {TAG: "missing"}
        if kind is bytes:
            return {TAG: "bytes", "base64": base64.b64encode(value).decode("ascii")}
        if kind is Overwrite:
            return {TAG: "overwrite", "value": self(value.value)}
        if kind is Send:
            return {TAG: "send", "node": value.node, "arg": self(value.arg)}
        if kind is RemoveMessage or (kind is Message and value.role != "remove"):
            data = {"role": value.role}
            for name, info in Message.model_fields.items():
                item = getattr(value, name)
                if name != "role" and not same(item, info.get_default(call_default_factory=True)):
                    data[name] = self(item)
            return {TAG: "message", "data": data}
        if isinstance(value, Mutation):
            self.opaque = True
            recorded = isinstance(value, RecordedMutation)
            text, name = (value.text, value.class_name) if recorded else (repr(value), _name(kind))
            return {TAG: "mutation", "field": self(value.field), "repr": text, "class": name}
        if isinstance(value, UnloadedModel):
            self.opaque = True
            return {TAG: "pydantic", "class": value.class_name, "data": dict(value)}
        if isinstance(value, pydantic.BaseModel):
            try:
                data = value.model_dump(mode="json")
            except Exception:
                return self.as_repr(value)
            self.opaque = self.opaque or _find_class(_name(kind), load=False) is not kind
            return {TAG: "pydantic", "class": _name(kind), "data": data}
        return self.as_repr(value)

    def as_repr(self, value: Any) -> dict[str, Any]:
        self.opaque = True
        if isinstance(value, Unrepresentable):
            return {TAG: "repr", "repr": value.text, "class": value.class_name}
        try:
            text = repr(value)
        except Exception as error:
            text = f"<{type(value).__name__} object: repr failed with {type(error).__name__}>"
        return {TAG: "repr", "repr": text, "class": _name(type(value))}


def _name(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def decode_value(data: Any) -> Any:
    """The value `encode_value` made `data` from (`Unrepresentable` for a kept repr)."""
    kind = type(data)
    if kind is list:
        return [decode_value(item) for item in data]
    if kind is not dict:
        return data
    tag = data.get(TAG)
    if tag is None:
        return {key: decode_value(item) for key, item in data.items()}
    if tag in ("tuple", "set", "frozenset"):
        return _BUILTIN_TYPES[tag](decode_value(item) for item in data["items"])
    if tag == "dict":
        return {decode_value(key): decode_value(item) for key, item in data["items"]}
    if tag == "float":
        return float(data["value"])
    if tag == "missing":
        return MISSING
    if tag == "bytes":
        return base64.b64decode(data["base64"])
    if tag == "overwrite":
        return Overwrite(decode_value(data["value"]))
    if tag == "send":
        return Send(data["node"], decode_value(data["arg"]))
    if tag == "message":
        fields = {key: decode_value(item) for key, item in data["data"].items()}
        cls = RemoveMessage if fields.get("role") == "remove" else Message
        return cls.model_validate(fields)
    if tag == "pydantic":
        return _model(data["class"], data["data"])
    if tag == "mutation":
        return RecordedMutation(decode_value(data["field"]), data["repr"], data["class"])
    if tag == "repr":
        return Unrepresentable(data["repr"], data["class"])
    raise _Broken(f"a value is tagged {tag!r}, which format version {FORMAT_VERSION} lacks")


def _model(class_name: str, data: Any) -> Any:
    cls = _find_class(class_name, load=True)
    if cls is not None and issubclass(cls, pydantic.BaseModel):
        with contextlib.suppress(Exception):
            return cls.model_validate(data)
    return UnloadedModel(class_name, data)


def _find_class(name: str, *, load: bool) -> type | None:
    """The class named `"module:QualName"`; `load=False` looks only in imported modules."""
    module_name, _, qualname = name.partition(":")
    if not qualname:
        return None
    module = sys.modules.get(module_name)
    if module is None and load and "<locals>" not in qualname:
        with contextlib.suppress(Exception):
            module = importlib.import_module(module_name)
    if module is None:
        return None
    found: Any = module
    for part in qualname.split("."):
        found = getattr(found, part, None)
    return found if isinstance(found, type) else None


# --- the graph ------------------------------------------------------------------------------


def _registered(reducer: Reducer) -> bool:
    """Whether `reducer` is the one registered under its name (`operator.add`'s "add" is not)."""
    registered = get_reducer(reducer.name)
    return registered is not None and registered.fn is reducer.fn


def _portable(reducer: Reducer) -> bool:
    """Whether a loaded run surely finds this reducer again: one of nbgraph's own, by name."""
    module = getattr(reducer.fn, "__module__", None) or ""
    return _registered(reducer) and module.startswith("nbgraph.")


def _encode_field(spec: FieldSpec) -> dict[str, Any]:
    reducer = spec.reducer
    initial = None
    if spec.initial is not None:
        with contextlib.suppress(Exception):
            empty = spec.initial()
            loaded = isinstance(empty, (Unrepresentable, UnloadedModel))  # kept as it was
            kind = empty.class_name if loaded else _type_text(type(empty))
            initial = {"type": kind, "value": encode_value(empty)}
    return {
        "name": spec.name,
        "type": _type_text(spec.type),
        "reducer": reducer.name if reducer else None,
        "registered": reducer is not None and _registered(reducer),
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
        if reducer is None:
            stub = _Unavailable(f"reducer {reducer_name!r} of field {name!r}", reducer_name)
            reducer = Reducer(reducer_name, stub)
    initial = data["initial"]
    if initial is not None:
        value = decode_value(initial["value"])
        builtin = _BUILTIN_TYPES.get(initial["type"])
        initial = builtin if builtin is not None else (lambda: isolate(value))
    kind = data["type"]
    kind = _BUILTIN_TYPES.get(kind) or (Any if kind == "typing.Any" else kind)
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
        return tp.__name__ if tp.__module__ == "builtins" else _name(tp)
    return tp if isinstance(tp, str) else repr(tp)


def _encode_schema(info: SchemaInfo) -> dict[str, Any]:
    cls = info.cls
    name = _name(cls) if isinstance(cls, type) else repr(cls)
    return {"class": name, "kind": info.kind, "fields": list(info.fields)}


def _decode_schema(
    data: dict[str, Any], fields: dict[str, FieldSpec], private: bool = False
) -> SchemaInfo:
    name = data["class"]
    cls = _find_class(name, load=False)
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
        "nodes": [
            {
                "name": node.name,
                "defer": node.defer,
                "merge": node.merge is not None,
                "destinations": None if node.destinations is None else list(node.destinations),
                "input": None if node.input is None else _encode_schema(node.input),
                "is_async": node.is_async,
                "takes_config": node.takes_config,
            }
            for node in graph.nodes.values()
        ],
        "edges": {source: list(targets) for source, targets in graph.edges.items()},
        "waiting": [{"sources": list(w.sources), "target": w.target} for w in graph.waiting],
        "branches": [
            {
                "source": branch.source,
                "router": branch.name,
                "path_map": None
                if branch.path_map is None
                else [[encode_value(key), target] for key, target in branch.path_map.items()],
                "is_async": branch.is_async,
                "takes_config": branch.takes_config,
            }
            for branches in graph.branches.values()
            for branch in branches
        ],
        "filters": [list(pair) for pair in graph.filters],
        "state_merger": graph.state_merger is not None,
        "open_schema": graph.open_schema,
        "interrupt_before": list(graph.interrupt_before),
        "interrupt_after": list(graph.interrupt_after),
    }


def _decode_graph(data: dict[str, Any]) -> GraphSpec:
    fields = {spec.name: spec for spec in map(_decode_field, data["fields"])}
    nodes = {}
    for item in data["nodes"]:
        name = item["name"]
        merge = _Unavailable(f"merge of node {name!r}", "merge") if item["merge"] else None
        schema = item["input"]
        nodes[name] = NodeSpec(
            name,
            _Unavailable(f"node {name!r}", name),
            is_async=bool(item["is_async"]),
            takes_config=bool(item["takes_config"]),
            input=None if schema is None else _decode_schema(schema, fields, private=True),
            defer=bool(item["defer"]),
            merge=merge,
            destinations=None if item["destinations"] is None else tuple(item["destinations"]),
        )
    branches: dict[str, list[Branch]] = {}
    for item in data["branches"]:
        source, router = item["source"], item["router"]
        stub = _Unavailable(f"router {router!r} after {source!r}", router)
        pairs = item["path_map"]
        path_map = None if pairs is None else {decode_value(k): t for k, t in pairs}
        branch = Branch(source, stub, path_map, bool(item["is_async"]), bool(item["takes_config"]))
        branches.setdefault(source, []).append(branch)
    waiting = tuple(WaitingEdge(tuple(w["sources"]), w["target"]) for w in data["waiting"])
    waits_by_source: dict[str, list[int]] = {}
    for index, edge in enumerate(waiting):
        for source in edge.sources:
            waits_by_source.setdefault(source, []).append(index)
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
        waits_by_source={source: tuple(ids) for source, ids in waits_by_source.items()},
    )


# --- the run --------------------------------------------------------------------------------


def _encode_error(error: BaseException | None) -> dict[str, Any] | None:
    if error is None:
        return None
    data: dict[str, Any] = {"type": type(error).__name__, "message": str(error)}
    notes = getattr(error, "__notes__", None)
    if notes:
        data["notes"] = [str(note) for note in notes]
    return data


def _decode_error(data: dict[str, Any] | None) -> RecordedError | None:
    if data is None:
        return None
    error = RecordedError(data["type"], data["message"])
    for note in data.get("notes", ()):
        error.add_note(note)
    return error


def _encode_task(task: Task, watch: _Encoder) -> dict[str, Any]:
    data: dict[str, Any] = {
        "step": task.step,
        "index": task.index,
        "node": task.node,
        "kind": task.kind,
        "triggers": list(task.triggers),
        "writes": [[encode_value(key), watch(value)] for key, value in task.writes],
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
        data["error"] = _encode_error(task.error)
    return data


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
        error=_decode_error(data.get("error")),
        started=float(data["started"]),
        ended=float(data["ended"]),
    )


def _encode_steps(run: Run) -> list[dict[str, Any]]:
    """Every step of the run, with `afters` where a loaded run could not replay it."""
    watch = _Encoder()  # encodes what reaches the state, noting anything opaque
    steps = []
    for step in run.log.steps:
        resets = [
            {
                "node": reset.node,
                "reason": reset.reason,
                "sources": list(reset.sources),
                "dropped": [encode_value(name) for name in reset.dropped],
                "values": watch(reset.values),
            }
            for reset in step.resets
        ]
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
    if watch.opaque or _has_unreplayable_parts(run):
        for data, afters in zip(steps, _afters(run), strict=True):
            data["afters"] = None if afters is None else encode_value(afters)
    return steps


def _decode_step(data: dict[str, Any], graph: GraphSpec) -> StepLog:
    number = data["step"]
    resets = [
        RootReset(
            number,
            item["node"],
            item["reason"],
            tuple(item["sources"]),
            tuple(decode_value(name) for name in item["dropped"]),
            _mapping(decode_value(item["values"]), "a reset's values"),
        )
        for item in data["resets"]
    ]
    merged = [(w, decode_value(f), decode_value(v)) for w, f, v in data["merged"]]
    afters = data["afters"]
    return StepLog(
        number,
        [_decode_task(task) for task in data["tasks"]],
        graph.fields,
        written=tuple(decode_value(name) for name in data["written"]),
        resets=resets or (),
        cleared=tuple(decode_value(name) for name in data["cleared"]),
        merged=merged or (),
        applied=bool(data["applied"]),
        afters=None if afters is None else _mapping(decode_value(afters), "a step's afters"),
    )


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
        or any(_opaque(_initial(spec)) for spec in fields if spec.initial is not None)
    )


def _afters(run: Run) -> list[dict[Any, Any] | None]:
    """Per step, the values after it of the fields a loaded run could not fold again.

    A field is pinned at a step when its reducer is not one of nbgraph's own, when a
    `Mutation` or a `state_merger` wrote it, or when its writes, or its value before (for a
    reducer that folds into it), come back from the file as something else (a repr, say).
    """
    fields = run.graph.fields
    merged = {step.step: {name for _, name, _ in step.merged} for step in run.log.steps}
    opaque = {n for n, spec in fields.items() if spec.initial and _opaque(_initial(spec))}
    afters: dict[int, dict[Any, Any]] = {}
    for effect in run.effect_list:
        name = effect.field
        if effect.dropped_key or not effect.applied:
            continue
        if effect.root_reset or not effect.writes:  # a reset's new value, or a clear
            (opaque.add if _opaque(effect.after) else opaque.discard)(name)
            continue
        spec = fields.get(name)
        reducer = spec.reducer if spec is not None else None
        writes = [value for _, value in effect.writes]
        mutated = any(isinstance(value, Mutation) for value in writes)
        replaced = not mutated and (reducer is None or Overwrite in map(type, writes))
        if (
            mutated
            or name in merged[effect.step]
            or (reducer is not None and not _portable(reducer))
            or (name in opaque and not replaced)
            or any(_opaque(value) for value in writes)
        ):
            afters.setdefault(effect.step, {})[name] = effect.after
            (opaque.add if _opaque(effect.after) else opaque.discard)(name)
        else:  # folded from plain values by one of nbgraph's reducers: plain too
            opaque.discard(name)
    return [afters.get(step.step) for step in run.log.steps]


def _initial(spec: FieldSpec) -> Any:
    try:
        return spec.initial()  # type: ignore[misc]
    except Exception:
        return MISSING


def _opaque(value: Any) -> bool:
    """Whether `value` comes back from a file as something a reducer would treat otherwise."""
    encoder = _Encoder()
    encoder(value)
    return encoder.opaque


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
    return {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "graph": _encode_graph(log.graph),
        "run": {
            "status": log.status,
            "error": _encode_error(log.error),
            "input": encode_value(log.input),
            "config": config if config is not MISSING else {},
            "warnings": list(log.warnings),
            "final": encode_value(log.final),
            "steps": _encode_steps(run),
        },
    }


def run_to_json(run: Run) -> str:
    """The run as indented JSON text."""
    return _dumps(run_document(run), ascii_only=False)


def _dumps(document: dict[str, Any], *, ascii_only: bool) -> str:
    return json.dumps(document, indent=1, ensure_ascii=ascii_only, allow_nan=False)


def log_from_json(text: str, *, where: str = "The text") -> RunLog:
    """Read a run log from JSON text written by `run_to_json`.

    Args:
        text: the JSON text.
        where: how error messages name the text's source (a file, say).

    Raises:
        RunFileError: the text is not JSON, not an nbgraph run, from a newer format
            version, or incomplete (naming `where` and what was expected).
    """
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        ends = error.pos >= len(text.rstrip()) or error.msg.startswith("Unterminated")
        why = "it is empty" if not text.strip() else "it ends early: truncated?" if ends else ""
        raise RunFileError(
            f"{where} is not valid JSON ({error.msg} at line {error.lineno}, column "
            f"{error.colno}{'; ' + why if why else ''}); expected an nbgraph run saved by "
            "Run.save()."
        ) from None
    _check_header(document, where)
    try:
        return _decode_log(document)
    except _Broken as error:
        raise RunFileError(f"{where} is not a complete nbgraph run: {error}.") from None
    except KeyError as error:
        raise RunFileError(
            f"{where} is not a complete nbgraph run: the entry {error.args[0]!r} is missing."
        ) from error
    except (TypeError, ValueError, AttributeError, IndexError) as error:
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


def _decode_log(document: dict[str, Any]) -> RunLog:
    graph = _decode_graph(document["graph"])
    data = document["run"]
    config = data["config"]
    return RunLog(
        graph,
        decode_value(data["input"]),
        _mapping(config, "the config"),
        steps=[_decode_step(step, graph) for step in data["steps"]],
        status=data["status"],
        error=_decode_error(data["error"]),
        warnings=[str(message) for message in data["warnings"]],
        final=_mapping(decode_value(data["final"]), "the final values"),
    )


# --- files ----------------------------------------------------------------------------------


def save_run(run: Run, path: str | os.PathLike[str]) -> Path:
    """Write the run to `path` as UTF-8 JSON, atomically: a reader sees the old file or the new.

    The text goes to a temporary file in the same folder, which then replaces `path`.
    """
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


def load_log(path: str | os.PathLike[str]) -> RunLog:
    """Read a run log from a file `save_run` wrote; the file is only read.

    Raises:
        FileNotFoundError: there is no such file.
        RunFileError: the file is not UTF-8 JSON, not an nbgraph run, from a newer format
            version, or incomplete (the message names the file).
    """
    source = Path(path)
    raw = source.read_bytes()
    where = f"File {str(source)!r}"
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise RunFileError(
            f"{where} is not an nbgraph run: it is not UTF-8 text ({error.reason} at byte "
            f"{error.start}); expected JSON saved by Run.save()."
        ) from None
    return log_from_json(text, where=where)
