"""Values as JSON data and back: plain JSON as itself, anything else a dict tagged by `"$type"`.

The tags are `tuple`, `set`, `frozenset`, `bytes`, `dict` (non-str keys, or a `"$type"` key of
its own), `float` (nan and infinities), `missing`, `overwrite`, `send`, `message`, `pydantic`,
`mutation`, and `repr` for everything else (read back as an `Unrepresentable`). Exceptions are
kept as their type's name and message, and read back as a `RecordedError`.
"""

from __future__ import annotations

import base64
import contextlib
import importlib
import math
import sys
from typing import Any

import pydantic

from nbgraph.errors import NbgraphError
from nbgraph.messages import Message, RemoveMessage
from nbgraph.record.effects import same
from nbgraph.types import MISSING, Mutation, Overwrite, Send

TAG = "$type"

BUILTIN_TYPES = {
    t.__name__: t
    for t in (list, dict, set, frozenset, tuple, int, float, str, bool, complex, bytes)
}
"""The builtin types by name: the tags of builtin containers, and a field's type as saved."""


class UnavailableFunctionError(NbgraphError, RuntimeError):
    """A function of a run loaded from a file was called; files keep no functions."""


class UnknownTagError(NbgraphError, ValueError):
    """A value is tagged by a `"$type"` this nbgraph does not know (`tag` says which)."""

    def __init__(self, tag: Any) -> None:
        super().__init__(f"a value is tagged {tag!r}, which this nbgraph does not know")
        self.tag = tag


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


# --- values ---------------------------------------------------------------------------------


def encode_value(value: Any) -> Any:
    """`value` as JSON data: itself if it is JSON, else a dict tagged by `"$type"`.

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


def _plain(value: Any) -> Any:
    """A copy of `value` if it is plain JSON data (str-keyed dicts without `"$type"`, lists,
    str, int, bool, None, finite floats), else `_NotPlain`."""
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return value
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


class ValueEncoder:
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
            if isinstance(value, RecordedMutation):
                text, name = value.text, value.class_name
            else:
                text, name = repr(value), qualified_name(kind)
            return {TAG: "mutation", "field": self(value.field), "repr": text, "class": name}
        if isinstance(value, UnloadedModel):
            self.opaque = True
            return {TAG: "pydantic", "class": value.class_name, "data": dict(value)}
        if isinstance(value, pydantic.BaseModel):
            try:
                data = value.model_dump(mode="json")
            except Exception:
                return self.as_repr(value)
            self.opaque = self.opaque or find_class(qualified_name(kind), load=False) is not kind
            return {TAG: "pydantic", "class": qualified_name(kind), "data": data}
        return self.as_repr(value)

    def as_repr(self, value: Any) -> dict[str, Any]:
        self.opaque = True
        if isinstance(value, Unrepresentable):
            return {TAG: "repr", "repr": value.text, "class": value.class_name}
        try:
            text = repr(value)
        except Exception as error:
            text = f"<{type(value).__name__} object: repr failed with {type(error).__name__}>"
        return {TAG: "repr", "repr": text, "class": qualified_name(type(value))}


def qualified_name(cls: type) -> str:
    """The class as `"module:QualName"`, the form `find_class` reads back."""
    return f"{cls.__module__}:{cls.__qualname__}"


def decode_value(data: Any) -> Any:
    """The value `encode_value` made `data` from (`Unrepresentable` for a kept repr).

    Raises:
        UnknownTagError: a `"$type"` tag this nbgraph does not know.
    """
    kind = type(data)
    if kind is list:
        return [decode_value(item) for item in data]
    if kind is not dict:
        return data
    tag = data.get(TAG)
    if tag is None:
        return {key: decode_value(item) for key, item in data.items()}
    if tag in ("tuple", "set", "frozenset"):
        return BUILTIN_TYPES[tag](decode_value(item) for item in data["items"])
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
    raise UnknownTagError(tag)


def _model(class_name: str, data: Any) -> Any:
    cls = find_class(class_name, load=True)
    if cls is not None and issubclass(cls, pydantic.BaseModel):
        with contextlib.suppress(Exception):
            return cls.model_validate(data)
    return UnloadedModel(class_name, data)


def find_class(name: str, *, load: bool) -> type | None:
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
