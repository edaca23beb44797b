"""Reading a state schema (TypedDict, pydantic model, dataclass, or dict + reducers) into fields.

A schema is read once, when the graph is compiled; every problem found is returned, not
raised, so `compile()` can report them all together.
"""

from __future__ import annotations

import dataclasses
import sys
import typing
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, get_args, get_origin

from nbgraph.primitives import (
    MISSING,
    Ephemeral,
    Transient,
    _IsLastStepMarker,
    _RemainingStepsMarker,
)
from nbgraph.reducers import (
    Reducer,
    check_reducer_callable,
    get_reducer,
    reducer_from_callable,
    registered_names,
)

__all__ = [
    "ROOT",
    "FieldSpec",
    "SchemaInfo",
    "SchemaKind",
    "generate_state_schema",
    "is_typeddict",
    "managed_value",
    "pydantic_updates",
    "read_schema",
    "schema_kind",
]

SchemaKind = typing.Literal["typeddict", "pydantic", "dataclass", "dict", "root"]

ROOT = "__root__"
"""The one field of a root-channel state (`StateGraph(Annotated[list, operator.add])`):
nodes get and return its bare value, as LangGraph's channel of that name."""

_QUALIFIER_NAMES = ("Required", "NotRequired", "ReadOnly")
_EMPTY_BUILDABLE = (list, dict, set, frozenset, tuple, int, float, str, bool, complex)


@dataclass(frozen=True, slots=True)
class FieldSpec:
    """One field of the state.

    Attributes:
        name: the key.
        type: the declared type, without its `Annotated` metadata.
        reducer: how writes combine; None means overwrite (one write per step).
        ephemeral: the value is cleared after every superstep that did not write it.
        managed: computed by the engine (`RemainingSteps`, `IsLastStep`: `managed_value`),
            never stored or written.
        private: declared only by a node's input annotation; never in the output.
        initial: builds the empty starting value of a reducer field (`list()`, `int()`).
        transient: for a `Transient` field, the factory that builds it (never saved).
    """

    name: str
    type: Any = Any
    reducer: Reducer | None = None
    ephemeral: bool = False
    managed: bool = False
    private: bool = False
    initial: Callable[[], Any] | None = None
    transient: Callable[[], Any] | None = None

    @property
    def reducer_name(self) -> str:
        """What tables call this field's reducer."""
        if self.managed:
            return "managed"
        if self.ephemeral:
            return "ephemeral"
        return self.reducer.name if self.reducer else "overwrite"


def managed_value(field: FieldSpec, remaining: int) -> int | bool:
    """What a managed field holds in a step with `remaining` supersteps left (the limit's
    count down, 1 in the last step): `RemainingSteps` the count, `IsLastStep` (the managed
    field of type `bool`) whether this step is the last.

    >>> managed_value(FieldSpec("left", int, managed=True), 3)
    3
    >>> managed_value(FieldSpec("last", bool, managed=True), 1)
    True
    """
    return remaining == 1 if field.type is bool else remaining


@dataclass(frozen=True)
class SchemaInfo:
    """A schema class read into its fields and the form nodes receive it in."""

    cls: Any
    kind: SchemaKind
    fields: dict[str, FieldSpec]

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(self.fields)

    def build(self, values: Mapping[str, Any]) -> Any:
        """The state in this schema's own form, from already-isolated `values`."""
        if self.kind == "pydantic":
            return self.cls.model_construct(**values)
        if self.kind == "dataclass":
            return _build_dataclass(self.cls, values)
        if self.kind == "root":
            return values.get(ROOT)
        return values

    def updates_from(self, obj: Any) -> list[tuple[str, Any]] | None:
        """The `(field, value)` writes in an instance of this schema, or None if not one
        (a root-channel state: any value is the root's)."""
        if self.kind == "root":
            return [(ROOT, obj)]
        if self.kind == "pydantic" and isinstance(obj, self.cls):
            return pydantic_updates(obj)
        if self.kind == "dataclass" and isinstance(obj, self.cls):
            return [(f.name, getattr(obj, f.name)) for f in dataclasses.fields(obj)]
        return None


def read_schema(
    cls: Any,
    *,
    reducers: Mapping[str, Any] | None = None,
    ephemeral: Iterable[str] = (),
    problems: list[str],
    private: bool = False,
) -> SchemaInfo:
    """Read `cls` into a `SchemaInfo`, appending every problem found to `problems`.

    Args:
        cls: a TypedDict, pydantic `BaseModel`, dataclass, or `dict` (langgraphgo's map schema).
        reducers: for a `dict` schema, `{field: reducer or registered name}`.
        ephemeral: for a `dict` schema, the fields that live one superstep.
        problems: where problems are appended (names the field and what was expected).
        private: mark every field as private (a node's own input annotation).

    >>> from typing import Annotated, TypedDict
    >>> class S(TypedDict):
    ...     log: Annotated[list, "append"]
    ...     status: str
    >>> info = read_schema(S, problems=[])
    >>> [(f.name, f.reducer_name) for f in info.fields.values()]
    [('log', 'append'), ('status', 'overwrite')]
    """
    kind = schema_kind(cls)
    if kind is None and _is_root_schema(cls):
        if reducers:
            problems.append("`reducers=` is for a plain dict schema; use Annotated[T, reducer].")
        field = _field_from_hint(ROOT, cls, problems, f"root state {cls!r}", private)
        return SchemaInfo(cls, "root", {ROOT: field})
    if kind is None:
        problems.append(
            f"State schema {cls!r} is not a TypedDict, pydantic BaseModel, dataclass or dict; "
            "declare the state as one of those."
        )
        return SchemaInfo(cls, "dict", {})
    if kind == "dict":
        fields = _dict_fields(reducers or {}, set(ephemeral), problems)
        return SchemaInfo(cls, kind, fields)
    if reducers:
        problems.append("`reducers=` is for a plain dict schema; use Annotated[T, reducer].")
    hints = _type_hints(cls, kind, problems)
    fields = {}
    for name, hint in hints.items():
        fields[name] = _field_from_hint(name, hint, problems, f"{cls.__name__}.{name}", private)
    return SchemaInfo(cls, kind, fields)


def _is_root_schema(cls: Any) -> bool:
    """Whether LangGraph reads `cls` as one root channel: a type (or typing form, such as
    `Annotated[list, operator.add]`) without field annotations, other than `dict`.

    >>> import operator
    >>> _is_root_schema(Annotated[list, operator.add]), _is_root_schema(int), _is_root_schema(dict)
    (True, True, False)
    """
    if cls is dict or not (isinstance(cls, type) or get_origin(cls) is not None):
        return False
    base = get_args(cls)[0] if get_origin(cls) is Annotated else cls
    return schema_kind(base) is None and not hasattr(base, "__annotations__")


def schema_kind(cls: Any) -> SchemaKind | None:
    """Which kind of schema `cls` is, or None if it is none of them."""
    if cls is dict:
        return "dict"
    if not isinstance(cls, type):
        return None
    if is_typeddict(cls):
        return "typeddict"
    if dataclasses.is_dataclass(cls):
        return "dataclass"
    if _is_pydantic_model(cls):
        return "pydantic"
    return None


def is_typeddict(cls: Any) -> bool:
    """Whether `cls` is a TypedDict class, from `typing` or from `typing_extensions`.

    Before Python 3.13 `typing_extensions.TypedDict` (what most of LangGraph's docs use) is
    its own class, which `typing.is_typeddict` does not recognise.

    >>> import typing_extensions
    >>> class S(typing_extensions.TypedDict):
    ...     x: int
    >>> is_typeddict(S), is_typeddict(dict)
    (True, False)
    """
    if typing.is_typeddict(cls):
        return True
    extensions = sys.modules.get("typing_extensions")  # loaded if cls could come from it
    return extensions is not None and bool(extensions.is_typeddict(cls))


def _is_pydantic_model(cls: type) -> bool:
    return any(
        base.__module__.startswith("pydantic") and base.__name__ == "BaseModel"
        for base in cls.__mro__
    )


def _type_hints(cls: type, kind: SchemaKind, problems: list[str]) -> dict[str, Any]:
    try:
        hints = typing.get_type_hints(cls, include_extras=True)
    except Exception:
        hints = _hints_one_by_one(cls, problems)
    if kind == "pydantic":
        return {name: hints.get(name, Any) for name in cls.model_fields}
    if kind == "dataclass":
        return {f.name: hints.get(f.name, Any) for f in dataclasses.fields(cls)}
    return {name: hint for name, hint in hints.items() if get_origin(hint) is not typing.ClassVar}


def _hints_one_by_one(cls: type, problems: list[str]) -> dict[str, Any]:
    """Resolve string annotations field by field, reporting the ones that cannot be."""
    hints: dict[str, Any] = {}
    for klass in reversed(cls.__mro__):
        namespace = dict(vars(sys.modules.get(klass.__module__, typing)))
        namespace.update(vars(klass))
        for name, hint in getattr(klass, "__annotations__", {}).items():
            if isinstance(hint, typing.ForwardRef):
                hint = hint.__forward_arg__
            if isinstance(hint, str):
                try:
                    hint = eval(hint, namespace)  # what typing.get_type_hints does
                except Exception as error:
                    problems.append(
                        f"Field {cls.__name__}.{name}: cannot resolve the annotation {hint!r} "
                        f"({type(error).__name__}: {error}); define the schema at module level "
                        "or drop `from __future__ import annotations` in its module."
                    )
                    hint = Any
            hints[name] = hint
    return hints


def _field_from_hint(
    name: str, hint: Any, problems: list[str], where: str, private: bool
) -> FieldSpec:
    base, metadata = _strip_required(hint), ()
    while get_origin(base) is Annotated:
        args = get_args(base)
        base, metadata = _strip_required(args[0]), (*args[1:], *metadata)
    reducer: Reducer | None = None
    ephemeral = managed = False
    transient: Callable[[], Any] | None = None
    for item in metadata:
        found: Reducer | None = None
        if item is _RemainingStepsMarker or item is _IsLastStepMarker:
            managed = True
        elif item is Ephemeral or isinstance(item, Ephemeral):
            ephemeral = True
        elif isinstance(item, Transient) or item is Transient:
            factory = getattr(item, "factory", None)
            transient = factory or empty_factory(base) or (lambda: None)
        elif isinstance(item, str):
            found = get_reducer(item)
            if found is None:
                problems.append(
                    f"Field {where}: no reducer is registered as {item!r}; registered: "
                    f"{', '.join(registered_names())} (or use @register_reducer({item!r}))."
                )
        elif callable(item) and not isinstance(item, type):
            problem = check_reducer_callable(item)
            if problem:
                problems.append(f"Field {where}: the reducer {problem}.")
            else:
                found = reducer_from_callable(item)
        if found is not None and found.name == "overwrite":
            found = None  # the named default: one write per step, as for un-annotated fields
        if found is not None:
            if reducer is not None:
                problems.append(
                    f"Field {where} has two reducers ({reducer.name!r} and {found.name!r}); "
                    "keep one."
                )
            reducer = found
    initial = empty_factory(base) if reducer is not None else None
    if transient is not None:
        initial = transient  # it lives in the running state from the start
    return FieldSpec(name, base, reducer, ephemeral, managed, private, initial, transient)


def _strip_required(tp: Any) -> Any:
    """`T` from `Required[T]`, `NotRequired[T]` or `ReadOnly[T]` (typing or typing_extensions)."""
    qualifiers = _key_qualifiers()
    while get_origin(tp) in qualifiers:
        tp = get_args(tp)[0]
    return tp


def _key_qualifiers() -> tuple[Any, ...]:
    """The TypedDict key qualifiers known to the running interpreter and its modules."""
    found = [typing.Required, typing.NotRequired, getattr(typing, "ReadOnly", None)]
    extensions = sys.modules.get("typing_extensions")
    if extensions is not None:
        found += [getattr(extensions, name, None) for name in _QUALIFIER_NAMES]
    return tuple(q for q in found if q is not None)


def empty_factory(tp: Any) -> Callable[[], Any] | None:
    """What builds an empty value of type `tp` (its class, when calling it with no arguments
    works), or None: a reducer field's starting value."""
    origin = get_origin(tp) or tp
    if origin in _EMPTY_BUILDABLE:
        return origin
    if isinstance(origin, type):
        try:
            origin()
        except Exception:
            return None
        return origin
    return None


def _dict_fields(
    reducers: Mapping[str, Any], ephemeral: set[str], problems: list[str]
) -> dict[str, FieldSpec]:
    fields: dict[str, FieldSpec] = {}
    for name, spec in reducers.items():
        metadata = (spec,) if not isinstance(spec, tuple) else spec
        hint = Annotated[(Any, *metadata)]  # type: ignore[valid-type]
        fields[name] = _field_from_hint(name, hint, problems, f"dict schema {name!r}", False)
    for name in ephemeral:
        old = fields.get(name, FieldSpec(name))
        fields[name] = dataclasses.replace(old, ephemeral=True)
    return fields


def pydantic_updates(model: Any) -> list[tuple[str, Any]]:
    """The writes a pydantic model stands for.

    Every field, except one that is None while its default is None too and that was not
    set explicitly (LangGraph's rule: untouched optional fields are not writes).
    """
    fields = type(model).model_fields
    explicit = model.model_fields_set
    updates = []
    for name, info in fields.items():
        value = getattr(model, name, MISSING)
        if value is MISSING:
            continue
        if value is None and info.default is None and name not in explicit:
            continue
        updates.append((name, value))
    return updates


def _build_dataclass(cls: type, values: Mapping[str, Any]) -> Any:
    known = {f.name for f in dataclasses.fields(cls) if f.init}
    return cls(**{k: v for k, v in values.items() if k in known})


def generate_state_schema(schema_name: str = "GeneratedState", /, **fields: Any) -> type:
    """Build a TypedDict state schema at run time (EvoFabric's `generate_state_schema`).

    Each keyword is `field=type` or `field=(type, reducer)`; a `messages` field
    (`Annotated[list[Message], "append_messages"]`) is always included. Types must be one
    of str, int, float, bool, list, tuple, dict.

    >>> S = generate_state_schema(count=(int, "add"), title=str)
    >>> sorted(S.__annotations__)
    ['count', 'messages', 'title']
    """
    from nbgraph.messages import Message

    allowed = (str, int, float, bool, list, tuple, dict)
    problems = []
    annotations: dict[str, Any] = {"messages": Annotated[list[Message], "append_messages"]}
    if "messages" in fields:
        problems.append(
            "'messages' is always included (Annotated[list[Message], 'append_messages']); "
            "do not pass it"
        )
    for field_name, spec in fields.items():
        tp, reducer = (spec if isinstance(spec, tuple) else (spec, None))[:2]
        if not field_name.isidentifier() or field_name.startswith("__"):
            problems.append(f"field name {field_name!r} is not a Python identifier")
        if tp not in allowed:
            allowed_names = ", ".join(t.__name__ for t in allowed)
            problems.append(
                f"field {field_name!r} has type {tp!r}; expected one of {allowed_names}"
            )
        annotations[field_name] = tp if reducer is None else Annotated[tp, reducer]
    if problems:
        raise ValueError("generate_state_schema: " + "; ".join(problems) + ".")
    schema = typing.TypedDict(schema_name, annotations)  # type: ignore[operator]
    field_problems: list[str] = []
    read_schema(schema, problems=field_problems)
    if field_problems:
        raise ValueError("generate_state_schema: " + "; ".join(field_problems))
    return schema
