"""langchain_core messages as tagged JSON data and back, restricted to its message classes.

A message is kept as `{"$type": "lc_message", "class": "AIMessage", "data": {...}}`: the
class by its bare name, which must be one of `LANGCHAIN_MESSAGE_CLASSES` (AIMessage,
HumanMessage, SystemMessage, ToolMessage, ChatMessage, FunctionMessage, RemoveMessage and
their chunks), its `type`, and every field that differs from its default, each encoded by
the value codec (so an `additional_kwargs` holding bytes or a datetime comes back as it was).

Reading builds the class from `langchain_core.messages` with the fields as keywords
(langchain's own validation); no other module is ever imported and nothing is unpickled.
Where langchain_core is missing, or the class is not on the list, the message comes back as
an `UnloadedModel` showing its data; its `type` lets `add_messages` read it as an nbgraph
`Message` there, so a run saved with langchain messages still replays without langchain_core.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from nbgraph.codec.placeholders import UnloadedModel
from nbgraph.messages.langchain_messages import LANGCHAIN_MESSAGE_CLASSES, langchain_classes

__all__ = ["LC_TAG", "decode_lc_message", "is_lc_message", "lc_message_data"]

LC_TAG = "lc_message"

_ALLOWED = frozenset(LANGCHAIN_MESSAGE_CLASSES)
_defaults: dict[type, dict[str, Any]] = {}
"""Per class: each field's default, computed once."""


def is_lc_message(kind: type) -> bool:
    """Whether `kind` is one of the allow-listed langchain_core message classes (or a
    subclass defined in langchain_core.messages), without importing langchain_core."""
    module = getattr(kind, "__module__", "") or ""
    return module.startswith("langchain_core.messages") and kind.__name__ in _ALLOWED


def _field_defaults(kind: type) -> dict[str, Any]:
    found = _defaults.get(kind)
    if found is None:
        found = {}
        for name, info in kind.model_fields.items():  # type: ignore[attr-defined]
            if not info.is_required():
                found[name] = info.get_default(call_default_factory=True)
        _defaults[kind] = found
    return found


def lc_message_data(value: Any, encode: Callable[[Any], Any]) -> dict[str, Any]:
    """`value` (an allow-listed langchain message) as tagged JSON data; `encode` encodes a
    field's value."""
    defaults = _field_defaults(type(value))
    data: dict[str, Any] = {"type": value.type}  # kept: read without langchain, it says the role
    missing = object()
    for name in type(value).model_fields:
        item = getattr(value, name)
        default = defaults.get(name, missing)
        if name == "type" or (default is not missing and _same(item, default)):
            continue
        data[name] = encode(item)
    for name, item in (value.model_extra or {}).items():
        data[name] = encode(item)
    return {"$type": LC_TAG, "class": type(value).__name__, "data": data}


def _same(a: Any, b: Any) -> bool:
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:
        return False


def decode_lc_message(name: str, fields: dict[str, Any]) -> Any:
    """The langchain message of class `name` (from the allow-list) with `fields`, or an
    `UnloadedModel` when langchain_core is not installed or `name` is not allowed."""
    if name not in _ALLOWED:
        return UnloadedModel(name, fields, kind=LC_TAG)
    try:
        cls = langchain_classes()[name]
    except ImportError:
        return UnloadedModel(name, fields, kind=LC_TAG)
    return cls(**fields)
