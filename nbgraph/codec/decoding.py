"""Values back from the JSON data `nbgraph.codec.values.encode_value` made: each `"$type"`
tag read back, classes resolved without importing anything (`nbgraph.codec.classes`)."""

from __future__ import annotations

import base64
import dataclasses
import datetime
import decimal
import uuid
from typing import Any

from nbgraph import messages
from nbgraph.codec.arrays import NUMPY_TAG, decode_numpy
from nbgraph.codec.classes import resolve_class
from nbgraph.codec.lc_messages import LC_TAG, decode_lc_message
from nbgraph.codec.nesting import deep_stack
from nbgraph.codec.placeholders import (
    RecordedMutation,
    UnknownTagError,
    UnloadedEnum,
    UnloadedModel,
    Unrepresentable,
)
from nbgraph.primitives import MISSING, Overwrite, Send

__all__ = ["BUILTIN_TYPES", "TAG", "decode_value"]

TAG = "$type"

BUILTIN_TYPES = {
    t.__name__: t
    for t in (list, dict, set, frozenset, tuple, int, float, str, bool, complex, bytes)
}
"""The builtin types by name: the tags of builtin containers, and a field's type as saved."""


def _decimal(text: str) -> decimal.Decimal:
    """The Decimal `text` spells; a ValueError (not `decimal.InvalidOperation`) if none."""
    try:
        return decimal.Decimal(text)
    except decimal.InvalidOperation:
        raise ValueError(f"a 'decimal' value should be a number's text, found {text!r}") from None


_FROM_TEXT: dict[str, Any] = {
    "datetime": datetime.datetime.fromisoformat,
    "date": datetime.date.fromisoformat,
    "time": datetime.time.fromisoformat,
    "decimal": _decimal,
    "uuid": uuid.UUID,
    "complex": complex,
}


def decode_value(data: Any) -> Any:
    """The value `encode_value` made `data` from (`Unrepresentable` for a kept repr).

    Raises:
        UnknownTagError: a `"$type"` tag this nbgraph does not know.
        ValueError, TypeError, KeyError: `data` is not what `encode_value` makes.
    """
    try:
        return _decode(data)
    except RecursionError:
        pass
    with deep_stack():
        return _decode(data)


def _decode(data: Any) -> Any:
    kind = type(data)
    if kind is list:
        return [_decode(item) for item in data]
    if kind is not dict:
        return data
    tag = data.get(TAG)
    if tag is None:
        return {key: _decode(item) for key, item in data.items()}
    if type(tag) is not str:
        raise UnknownTagError(tag)
    if tag in ("tuple", "set", "frozenset"):
        return BUILTIN_TYPES[tag](_decode(item) for item in _list(data, "items"))
    if tag == "dict":
        return {_decode(key): _decode(item) for key, item in _list(data, "items")}
    if tag == "float":
        return float(_text(data, "value"))
    if tag == "int":
        return int(_text(data, "hex"), 16)
    if tag in _FROM_TEXT:
        return _FROM_TEXT[tag](_text(data, "value"))
    if tag == "timedelta":
        days, seconds, micros = (int(part) for part in _list(data, "value"))
        return datetime.timedelta(days, seconds, micros)
    if tag == "missing":
        return MISSING
    if tag in ("bytes", "bytearray"):
        raw = base64.b64decode(_text(data, "base64"), validate=True)
        return raw if tag == "bytes" else bytearray(raw)
    return _decode_object(tag, data)


def _decode_object(tag: str, data: dict[str, Any]) -> Any:
    if tag == "overwrite":
        return Overwrite(_decode(data["value"]))
    if tag == "send":
        return Send(_text(data, "node"), _decode(data["arg"]))
    if tag == "message":
        fields = {key: _decode(item) for key, item in _dict(data, "data").items()}
        cls = messages.RemoveMessage if fields.get("role") == "remove" else messages.Message
        return cls.model_validate(fields)
    if tag == LC_TAG:
        fields = {key: _decode(item) for key, item in _dict(data, "data").items()}
        return decode_lc_message(_text(data, "class"), fields)
    if tag == "pydantic":
        return _model(_text(data, "class"), _dict(data, "data"))
    if tag == "dataclass":
        fields = {key: _decode(item) for key, item in _dict(data, "data").items()}
        return _dataclass(_text(data, "class"), fields)
    if tag == "enum":
        return _enum_member(_text(data, "class"), _decode(data["value"]))
    if tag == "mutation":
        return RecordedMutation(_decode(data["field"]), _text(data, "repr"), _text(data, "class"))
    if tag == NUMPY_TAG:
        return decode_numpy(data)
    if tag == "repr":
        return Unrepresentable(_text(data, "repr"), _text(data, "class"))
    raise UnknownTagError(tag)


def _text(data: dict[str, Any], key: str) -> str:
    value = data[key]
    if type(value) is not str:
        raise TypeError(f"a {data[TAG]!r} value's {key!r} should be a str, found {value!r}")
    return value


def _list(data: dict[str, Any], key: str) -> list[Any]:
    value = data[key]
    if type(value) is not list:
        raise TypeError(f"a {data[TAG]!r} value's {key!r} should be a list, found {value!r}")
    return value


def _dict(data: dict[str, Any], key: str) -> dict[str, Any]:
    value = data[key]
    if type(value) is not dict:
        raise TypeError(f"a {data[TAG]!r} value's {key!r} should be an object, found {value!r}")
    return value


_REFUSED = (Exception, SystemExit)  # what a class refusing the data may raise: a placeholder


def _model(class_name: str, data: dict[str, Any]) -> Any:
    cls = resolve_class(class_name, "pydantic")
    if cls is not None:
        try:
            return cls.model_validate(data)  # type: ignore[attr-defined]
        except _REFUSED:
            pass
    return UnloadedModel(class_name, data)


def _dataclass(class_name: str, fields: dict[str, Any]) -> Any:
    """The dataclass instance with these field values, set as they were (its `__init__` and
    `__post_init__` do not run again); a placeholder if the class is not at hand or has
    other fields."""
    cls = resolve_class(class_name, "dataclass")
    if cls is not None and {f.name for f in dataclasses.fields(cls)} == set(fields):
        try:
            instance = cls.__new__(cls)
            for name, value in fields.items():
                object.__setattr__(instance, name, value)
            return instance
        except _REFUSED:
            pass
    return UnloadedModel(class_name, fields, kind="dataclass")


def _enum_member(class_name: str, value: Any) -> Any:
    cls = resolve_class(class_name, "enum")
    if cls is not None:
        try:
            return cls(value)
        except _REFUSED:
            pass
    return UnloadedEnum(class_name, value)
