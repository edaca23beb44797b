"""Messages as langchain_core's own classes, made as LangGraph's `add_messages` makes them.

When `langchain_core` is installed, `add_messages` (and the engine's `with_ids`) turn
tuples, dicts, strings and message chunks into `HumanMessage`/`AIMessage`/`SystemMessage`/
`ToolMessage`/... with langchain's own `convert_to_messages`, give each message without an id
a uuid4 (on a copy: the value passed in is not changed), and merge by id as LangGraph does.
An nbgraph `Message` passed in is kept as it is; a list mixing both kinds merges by id.

Whether langchain is used is decided on first use (`message_kind()`), so importing nbgraph
never imports langchain_core; `use_message_kind()` sets it explicitly.
"""

from __future__ import annotations

from typing import Any, Literal

from nbgraph.errors import InvalidUpdateError, NbgraphError
from nbgraph.messages.ids import new_message_id
from nbgraph.primitives import MISSING

__all__ = [
    "LANGCHAIN_MESSAGE_CLASSES",
    "SHARED_TYPES",
    "Kind",
    "MessageTypeError",
    "is_remove",
    "langchain_classes",
    "lc_add_messages",
    "lc_as_messages",
    "lc_with_id",
    "message_kind",
    "unknown_removal",
    "use_message_kind",
]

LANGCHAIN_MESSAGE_CLASSES = (
    "AIMessage",
    "HumanMessage",
    "SystemMessage",
    "ToolMessage",
    "ChatMessage",
    "FunctionMessage",
    "RemoveMessage",
    "AIMessageChunk",
    "HumanMessageChunk",
    "SystemMessageChunk",
    "ToolMessageChunk",
    "ChatMessageChunk",
    "FunctionMessageChunk",
)
"""The langchain_core.messages classes a run file or saver may name (and so rebuild)."""


class MessageTypeError(NbgraphError, TypeError, NotImplementedError):
    """A value `add_messages` cannot read as a message. A `TypeError`, and a
    `NotImplementedError` as LangGraph's (langchain's "Unsupported message type")."""


Kind = Literal["auto", "langchain", "nbgraph"]

_setting: Kind = "auto"
_resolved: str | None = None
_lc: Any = None
"""`langchain_core.messages`, once `message_kind()` found it."""
_plain_types: frozenset[type] = frozenset()
"""The langchain message classes a write may hold as they are (not chunks)."""

SHARED_TYPES: set[type] = set()
"""The langchain message classes the engine hands to nodes without copying them, as
LangGraph does (filled when langchain_core is first used): copying every message of a long
history on every read would cost more than the whole step. A node that changes one in place
changes it in the state; return a new message with the same id instead (docs/SEMANTICS.md)."""


def use_message_kind(kind: Kind) -> Kind:
    """Choose the class of messages `add_messages` makes; returns the previous choice.

    "auto" (the default): langchain_core's classes if langchain_core can be imported, else
    nbgraph's `Message`. "langchain": langchain_core's (an ImportError if it is missing).
    "nbgraph": nbgraph's `Message` even when langchain_core is installed.

    >>> previous = use_message_kind("nbgraph")
    >>> message_kind()
    'nbgraph'
    >>> _ = use_message_kind(previous)
    """
    global _setting, _resolved
    if kind not in ("auto", "langchain", "nbgraph"):
        raise ValueError(f"message kind must be 'auto', 'langchain' or 'nbgraph', got {kind!r}")
    previous, _setting, _resolved = _setting, kind, None
    return previous


def message_kind() -> str:
    """ "langchain" or "nbgraph": the class of messages `add_messages` makes now."""
    global _resolved
    if _resolved is None:
        if _setting == "nbgraph":
            _resolved = "nbgraph"
        else:
            try:
                _load()
                _resolved = "langchain"
            except ImportError:
                if _setting == "langchain":
                    raise
                _resolved = "nbgraph"
    return _resolved


def _load() -> Any:
    global _lc, _plain_types
    if _lc is None:
        import langchain_core.messages as lc

        found = [getattr(lc, name) for name in lc.__all__ if name.endswith("Message")]
        _plain_types = frozenset(
            cls
            for cls in found
            if isinstance(cls, type)
            and issubclass(cls, lc.BaseMessage)
            and not issubclass(cls, lc.BaseMessageChunk)
        )
        SHARED_TYPES.update(_plain_types)
        _lc = lc
    return _lc


def langchain_classes() -> dict[str, type]:
    """The allow-listed langchain message classes by name (imports langchain_core)."""
    lc = _load()
    return {name: getattr(lc, name) for name in LANGCHAIN_MESSAGE_CLASSES}


def is_remove(message: Any) -> bool:
    """Whether `message` is a remove instruction (langchain's or nbgraph's `RemoveMessage`)."""
    if type(message) in _plain_types:  # (langchain's own classes: their `type` says; no
        return message.type == "remove"  # `role` looked up, which pydantic answers by raising)
    return getattr(message, "type", None) == "remove" or getattr(message, "role", None) == "remove"


def _convert(item: Any) -> Any:
    """One message-like value as a langchain message (an nbgraph `Message` kept as is)."""
    if type(item) in _plain_types:
        return item
    if getattr(type(item), "__module__", "") == "nbgraph.messages":  # nbgraph's Message
        return item
    lc = _lc
    if isinstance(item, lc.BaseMessageChunk):
        return lc.message_chunk_to_message(item)
    if isinstance(item, lc.BaseMessage):
        return item
    if not isinstance(item, (str, tuple, list, dict)):
        raise MessageTypeError(
            f"cannot read a message from {type(item).__module__}.{type(item).__qualname__} "
            f"{_short(item)}: expected a langchain_core message, an nbgraph Message, a "
            "(role, content) tuple, a dict with 'role' (or 'type') and 'content', or a str"
        )
    try:
        return lc.message_chunk_to_message(lc.convert_to_messages([item])[0])
    except (NotImplementedError, ValueError, TypeError, KeyError) as exc:
        raise MessageTypeError(f"cannot read a message from {_short(item)}: {exc}") from None


def _short(item: Any) -> str:
    try:
        text = repr(item)
    except Exception:
        text = f"<{type(item).__name__}>"
    return text if len(text) <= 80 else text[:79] + "…"


def lc_as_messages(value: Any, side: str) -> list[Any]:
    """`value` (MISSING, None, one message-like or a list of them) as a list of messages."""
    if value is MISSING or value is None:
        return []
    if not isinstance(value, list):
        try:
            return [_convert(value)]
        except TypeError as exc:
            raise MessageTypeError(f"add_messages: {side}: {exc}") from None
    if set(map(type, value)) <= _plain_types:  # (its own items, read as they are)
        return value
    converted = []
    for index, item in enumerate(value):
        try:
            converted.append(_convert(item))
        except TypeError as exc:
            raise MessageTypeError(f"add_messages: {side}[{index}]: {exc}") from None
    return converted


def lc_with_id(message: Any) -> Any:
    """`message` itself if it has an id, else a copy with a fresh uuid4 (as LangGraph's)."""
    if message.id is not None:
        return message
    if is_remove(message):
        raise InvalidUpdateError(
            f"add_messages: {message!r} has no id: expected the id of the message to remove "
            "(or REMOVE_ALL_MESSAGES)"
        )
    if type(message) in _plain_types:  # (langchain's own classes: what `model_copy(update=)`
        copied = message.__copy__()  # does for a declared field, without its look-ups)
        copied.__dict__["id"] = new_message_id()
        copied.__pydantic_fields_set__.add("id")
        return copied
    return message.model_copy(update={"id": new_message_id()})


def lc_add_messages(left: list[Any], right: list[Any], remove_all: str) -> list[Any]:
    """LangGraph's merge of two lists of messages that all have ids.

    A remove-all in `right` keeps only what follows it; a message whose id is there replaces
    it in place; a remove deletes (a later message with that id in `right` undoes it); any
    other message is appended.
    """
    for index in range(len(right) - 1, -1, -1):
        if right[index].id == remove_all and is_remove(right[index]):
            return right[index + 1 :]
    merged = left.copy()
    position = {m.id: i for i, m in enumerate(merged)}
    to_remove: set[str] = set()
    for message in right:
        existing = position.get(message.id)
        if existing is not None:
            if is_remove(message):
                to_remove.add(message.id)
            else:
                to_remove.discard(message.id)
                merged[existing] = message
        elif is_remove(message):
            raise unknown_removal(message.id, len(left))
        else:
            position[message.id] = len(merged)
            merged.append(message)
    if to_remove:
        merged = [m for m in merged if m.id not in to_remove]
    return merged


def unknown_removal(message_id: Any, count: int) -> InvalidUpdateError:
    """The error of a `RemoveMessage` whose id no message has: LangGraph's words first
    (a program may match them), then what was expected."""
    return InvalidUpdateError(
        f"Attempting to delete a message with an ID that doesn't exist ('{message_id}'): "
        f"add_messages expected the id of one of the {count} current messages or of one "
        "earlier in this update."
    )
