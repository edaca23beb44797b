"""Values as JSON data and back: plain JSON as itself, anything else a dict tagged by `"$type"`.

The tags are `int` (over 4,000 digits, as hex), `tuple`, `set`, `frozenset`, `bytes`,
`bytearray`, `complex`, `dict` (non-str keys, or a `"$type"` key of its own), `float` (nan
and infinities), `datetime`, `date`, `time`, `timedelta`, `decimal`, `uuid`, `missing`,
`overwrite`, `send`, `message`, `lc_message` (langchain_core's message classes,
`nbgraph.codec.lc_messages`), `numpy` (arrays and scalars of plain dtypes,
`nbgraph.codec.arrays`), `pydantic`, `dataclass`, `enum`, `mutation`, and `repr` for
everything else (read back as an `Unrepresentable`). Exceptions are kept as their type's name
and message, and read back as a `RecordedError`. `docs/VALUES.md` lists what comes back
exactly.

Reading never imports a module: a model, dataclass or Enum comes back as its class only if
the caller named it or its module is imported already (`nbgraph.codec.classes`), else as a
placeholder (`UnloadedModel`, `UnloadedEnum`) that shows the data. Values nested up to
`MAX_DEPTH` deep are kept; deeper ones raise `ValueTooDeepError` naming where.
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import datetime
import decimal
import enum
import math
import uuid
from typing import TYPE_CHECKING, Any

from nbgraph import messages
from nbgraph.codec.arrays import NUMPY_TAG, numpy_data
from nbgraph.codec.classes import imported_class, pydantic_base, qualified_name, resolve_class
from nbgraph.codec.decoding import BUILTIN_TYPES, TAG, decode_value
from nbgraph.codec.lc_messages import is_lc_message, lc_message_data
from nbgraph.codec.nesting import MAX_DEPTH, ValueTooDeepError, deep_stack
from nbgraph.codec.placeholders import (
    RecordedError,
    RecordedMutation,
    UnavailableFunctionError,
    UnknownTagError,
    UnloadedEnum,
    UnloadedModel,
    Unrepresentable,
)
from nbgraph.primitives import MISSING, Mutation, Overwrite, Send

if TYPE_CHECKING:
    import pydantic

__all__ = [
    "BUILTIN_TYPES",
    "TAG",
    "RecordedError",
    "RecordedMutation",
    "UnavailableFunctionError",
    "UnknownTagError",
    "UnloadedEnum",
    "UnloadedModel",
    "Unrepresentable",
    "ValueEncoder",
    "ValueTooDeepError",
    "decode_error",
    "decode_value",
    "encode_error",
    "encode_value",
    "find_class",
    "is_opaque",
    "qualified_name",
    "same",
]

# --- values ---------------------------------------------------------------------------------


def same(a: Any, b: Any) -> bool:
    """Whether two recorded values are equal (values whose `==` misbehaves count as different)."""
    if a is b:
        return True
    try:
        return bool(a == b)
    except Exception:
        return False


def encode_value(value: Any) -> Any:
    """`value` as JSON data: itself if it is JSON, else a dict tagged by `"$type"`.

    Raises:
        ValueTooDeepError: `value` nests containers more than `MAX_DEPTH` deep.

    >>> encode_value({"n": (1, float("nan"))})
    {'n': {'$type': 'tuple', 'items': [1, {'$type': 'float', 'value': 'nan'}]}}
    >>> decode_value(encode_value({1: "a", "$type": None}))
    {1: 'a', '$type': None}
    """
    try:
        return _plain(value)  # most payloads are plain JSON already: walk them once, fast
    except (_NotPlain, RecursionError):
        return ValueEncoder()(value)


class _NotPlain(Exception):
    pass


class _TooDeep(Exception):
    pass


def _plain(value: Any) -> Any:
    """A copy of `value` if it is plain JSON data (str-keyed dicts without `"$type"`, lists,
    str, int, bool, None, finite floats), else `_NotPlain`."""
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return value
    if kind is int:
        if -_LONG_INT < value < _LONG_INT:
            return value
        raise _NotPlain
    if kind is list:
        return [_plain(item) for item in value]
    if kind is dict:
        if TAG in value:
            raise _NotPlain
        copied = {}
        for key, item in value.items():
            if type(key) is not str:
                raise _NotPlain
            copied[key] = _plain(item)
        return copied
    if kind is float and math.isfinite(value):
        return value
    raise _NotPlain


_LONG_INT = 10**4000
"""Ints this long or longer are tagged `int` (as hex): Python writes and reads at most 4,300
digits as decimal text (`sys.get_int_max_str_digits`)."""

_ISO_TYPES = {datetime.datetime: "datetime", datetime.date: "date", datetime.time: "time"}
_TEXT_TYPES = {decimal.Decimal: "decimal", uuid.UUID: "uuid", complex: "complex"}


class ValueEncoder:
    """Turns values into JSON data, noting whether one came out opaque.

    Opaque: kept as a repr, a `Mutation`, or a model, dataclass or Enum whose class a loaded
    run cannot find; a reducer replaying it would not do what it did in the run. Lost: a
    value (not a placeholder read back) kept only as its repr.

    Raises:
        ValueTooDeepError: a value nests containers more than `MAX_DEPTH` deep.
    """

    def __init__(self) -> None:
        self.active: set[int] = set()  # containers being encoded, to catch one inside itself
        self.opaque = False
        self.lost = False  # a value kept only as its repr (a placeholder read back is not)

    def __call__(self, value: Any) -> Any:
        try:
            try:
                return self.encode(value, 0)
            except RecursionError:  # a deep value: again, with room for it
                self.active.clear()  # the unwinding may have left some behind
                with deep_stack():
                    return self.encode(value, 0)
        except _TooDeep:
            raise ValueTooDeepError(_deep_path(value)) from None

    def encode(self, value: Any, depth: int) -> Any:
        """`value`, `depth` containers down, as JSON data."""
        kind = type(value)
        if value is None or kind is str or kind is bool:
            return value
        if kind is int:
            if -_LONG_INT < value < _LONG_INT:
                return value
            return {TAG: "int", "hex": hex(value)}  # (JSON text cannot hold its digits)
        if kind is float:
            return value if math.isfinite(value) else {TAG: "float", "value": repr(value)}
        if depth >= MAX_DEPTH:
            raise _TooDeep
        if kind not in (list, tuple, set, frozenset, dict):
            return self.instance(value, depth + 1)
        if id(value) in self.active:
            return self.as_repr(value)
        self.active.add(id(value))
        try:
            return self.container(value, depth + 1)
        finally:
            self.active.discard(id(value))

    def container(self, value: Any, depth: int) -> Any:
        kind = type(value)
        encode = self.encode
        if kind is list:
            return [encode(item, depth) for item in value]
        if kind is dict:
            if TAG not in value and all(type(key) is str for key in value):
                return {key: encode(item, depth) for key, item in value.items()}
            items = [[encode(k, depth), encode(v, depth)] for k, v in value.items()]
            return {TAG: "dict", "items": items}
        items = list(value)
        if kind is not tuple:
            with contextlib.suppress(Exception):  # a stable order where there is one
                items = sorted(items)
        return {TAG: kind.__name__, "items": [encode(item, depth) for item in items]}

    def instance(self, value: Any, depth: int) -> Any:
        kind = type(value)
        if value is MISSING:
            return {TAG: "missing"}
        if kind is bytes or kind is bytearray:
            return {TAG: kind.__name__, "base64": base64.b64encode(value).decode("ascii")}
        if kind in _ISO_TYPES:
            return {TAG: _ISO_TYPES[kind], "value": value.isoformat()}
        if kind in _TEXT_TYPES:
            return {TAG: _TEXT_TYPES[kind], "value": str(value)}
        if kind is datetime.timedelta:
            return {TAG: "timedelta", "value": [value.days, value.seconds, value.microseconds]}
        if kind is Overwrite:
            return {TAG: "overwrite", "value": self.encode(value.value, depth)}
        if kind is Send:
            return {TAG: "send", "node": value.node, "arg": self.encode(value.arg, depth)}
        if kind in messages.MESSAGE_TYPES and (
            value.role != "remove" or kind is messages.RemoveMessage
        ):
            return {TAG: "message", "data": self.message_data(value, depth)}
        if is_lc_message(kind):
            return lc_message_data(value, lambda item: self.encode(item, depth))
        if isinstance(value, enum.Enum):
            self.note_class(kind, "enum")
            member = self.encode(value.value, depth)
            return {TAG: "enum", "class": qualified_name(kind), "value": member}
        if isinstance(value, Mutation):
            self.opaque = True
            if isinstance(value, RecordedMutation):
                text, name = value.text, value.class_name
            else:
                text, name = repr(value), qualified_name(kind)
            field = self.encode(value.field, depth)
            return {TAG: "mutation", "field": field, "repr": text, "class": name}
        if isinstance(value, UnloadedModel):
            self.opaque = True
            if value.kind == NUMPY_TAG:  # (numpy was not imported where it was read)
                return {TAG: NUMPY_TAG, **value}
            if value.kind == "pydantic":  # the model's own JSON data, kept as read
                return {TAG: "pydantic", "class": value.class_name, "data": dict(value)}
            data = {key: self.encode(item, depth) for key, item in value.items()}
            return {TAG: value.kind, "class": value.class_name, "data": data}
        if isinstance(value, UnloadedEnum):
            self.opaque = True
            member = self.encode(value.value, depth)
            return {TAG: "enum", "class": value.class_name, "value": member}
        if isinstance(value, pydantic_base()):
            return self.model(value)
        if dataclasses.is_dataclass(value):
            return self.dataclass(value, depth)
        array = numpy_data(value)
        return self.as_repr(value) if array is None else array

    def message_data(self, value: messages.Message, depth: int) -> dict[str, Any]:
        data: dict[str, Any] = {"role": value.role}
        for name, info in messages.Message.model_fields.items():
            item = getattr(value, name)
            if name != "role" and not same(item, info.get_default(call_default_factory=True)):
                data[name] = self.encode(item, depth)
        return data

    def model(self, value: pydantic.BaseModel) -> Any:
        try:
            data = value.model_dump(mode="json")
        except Exception:
            return self.as_repr(value)
        self.note_class(type(value), "pydantic")
        return {TAG: "pydantic", "class": qualified_name(type(value)), "data": data}

    def dataclass(self, value: Any, depth: int) -> Any:
        try:
            items = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
        except Exception:  # a field never set (init=False, no default)
            return self.as_repr(value)
        self.note_class(type(value), "dataclass")
        data = {name: self.encode(item, depth) for name, item in items.items()}
        return {TAG: "dataclass", "class": qualified_name(type(value)), "data": data}

    def note_class(self, cls: type, kind: str) -> None:
        """A loaded run finds `cls` again only if it is importable by name: else opaque."""
        self.opaque = self.opaque or resolve_class(qualified_name(cls), kind) is not cls

    def as_repr(self, value: Any) -> dict[str, Any]:
        self.opaque = True
        if isinstance(value, Unrepresentable):
            return {TAG: "repr", "repr": value.text, "class": value.class_name}
        self.lost = True
        try:
            text = repr(value)
            if type(text) is not str:
                raise TypeError("__repr__ returned a non-str")
        except Exception as error:
            text = f"<{type(value).__name__} object: repr failed with {type(error).__name__}>"
        return {TAG: "repr", "repr": text, "class": qualified_name(type(value))}


def _deep_path(value: Any) -> list[Any]:
    """A path of keys and indices into `value` that reaches deeper than `MAX_DEPTH`."""
    stack: list[tuple[Any, list[Any]]] = [(value, [])]
    while stack:
        node, path = stack.pop()
        kind = type(node)
        if len(path) >= MAX_DEPTH and kind not in (str, int, float, bool, type(None)):
            return path
        if kind is dict:
            children = list(node.items())
        elif kind in (list, tuple):
            children = list(enumerate(node))
        elif kind in (set, frozenset):
            children = [("<item>", item) for item in node]
        elif dataclasses.is_dataclass(node) and not isinstance(node, type):
            children = [(f.name, getattr(node, f.name, None)) for f in dataclasses.fields(node)]
        elif isinstance(node, (Overwrite, pydantic_base())):
            children = list(vars(node).items())
        else:
            continue
        stack.extend((child, [*path, key]) for key, child in children)
    return []


def find_class(name: str) -> type | None:
    """The class named `"module:QualName"` if its module is imported already, else `None`.

    Never imports a module: see `nbgraph.codec.classes`.
    """
    return imported_class(name) if type(name) is str else None


def is_opaque(value: Any) -> bool:
    """Whether `value` comes back from a file as something a reducer would treat otherwise."""
    encoder = ValueEncoder()
    encoder(value)
    return encoder.opaque


# --- errors ---------------------------------------------------------------------------------


def encode_error(error: BaseException | None) -> dict[str, Any] | None:
    """An exception as JSON data: its type's name, its message, and its notes if any."""
    if error is None:
        return None
    data: dict[str, Any] = {"type": type(error).__name__, "message": str(error)}
    notes = getattr(error, "__notes__", None)
    if notes:
        data["notes"] = [str(note) for note in notes]
    return data


def decode_error(data: dict[str, Any] | None) -> RecordedError | None:
    """The `RecordedError` `encode_error` made `data` from, notes included."""
    if data is None:
        return None
    error = RecordedError(data["type"], data["message"])
    for note in data.get("notes", ()):
        error.add_note(note)
    return error
