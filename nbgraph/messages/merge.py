"""Merging messages: `add_messages` (the reducer of a `messages` field) and `with_ids`.

The `Message` model is imported on the first call that has a message to read.
"""

from __future__ import annotations

import contextlib
import operator
from typing import TYPE_CHECKING, Any

from nbgraph.errors import InvalidUpdateError
from nbgraph.messages import langchain_messages as lc
from nbgraph.messages.ids import new_message_id
from nbgraph.messages.message_types import MESSAGE_TYPES
from nbgraph.primitives import MISSING

if TYPE_CHECKING:
    from nbgraph.messages.model import Message

__all__ = [
    "REMOVE_ALL_MESSAGES",
    "add_messages",
    "add_messages_in_place",
    "forget_messages",
    "shared_messages",
    "with_ids",
]

REMOVE_ALL_MESSAGES = "__remove_all__"
"""The id of a `RemoveMessage` that clears every message before it."""

_ID = operator.attrgetter("id")

_model: Any = None
"""`nbgraph.messages.model`, once a call has needed it."""


def _message_class() -> type[Message]:
    """The `Message` model, imported (with pydantic) on first use."""
    global _model
    if _model is None:
        from nbgraph.messages import model

        _model = model
    return _model.Message


def _as_messages(value: Any, side: str) -> list[Message]:
    """`value` (MISSING, None, one message-like or a list of them) as a list of messages:
    langchain_core's classes when langchain is used (`langchain_messages`), else `Message`s."""
    if lc.message_kind() == "langchain":
        return lc.lc_as_messages(value, side)
    if value is MISSING or value is None:
        return []
    if type(value) is list and set(map(type, value)) <= MESSAGE_TYPES:
        return value  # (`Message`s, each read as itself: its own items)
    coerce = _message_class().coerce
    if not isinstance(value, list):
        try:
            return [coerce(value)]
        except TypeError as exc:
            raise lc.MessageTypeError(f"add_messages: {side}: {exc}") from exc
    messages = []
    for index, item in enumerate(value):
        try:
            messages.append(coerce(item))
        except TypeError as exc:
            raise lc.MessageTypeError(f"add_messages: {side}[{index}]: {exc}") from exc
    return messages


def _with_id(message: Message, fresh: bool = False) -> Message:
    """`message` itself if it has an id, else a copy with a fresh one (`fresh`: a `Message`
    just read from another form, which nobody else holds: given its id in place)."""
    if message.id is not None:
        return message
    if type(message).__module__ != "nbgraph.messages":
        return lc.lc_with_id(message)
    if message.role == "remove":
        raise InvalidUpdateError(
            f"add_messages: {message!r} has no id: expected the id of the message to remove "
            f"(or REMOVE_ALL_MESSAGES)"
        )
    if fresh:  # (what model_copy(update=) would make, without copying it)
        message.__dict__["id"] = new_message_id()
        message.__pydantic_fields_set__.add("id")
        return message
    return message.model_copy(update={"id": new_message_id()})


def with_ids(value: Any) -> Any:
    """A messages write as a list of `Message`s that all have ids (MISSING/None kept).

    The engine calls it when it takes a write in, so the ids are part of the record and a
    replay of the run gives the same ids every time.

    >>> [m.id is not None for m in with_ids([("user", "hi"), ("ai", "hello")])]
    [True, True]
    """
    if value is MISSING or value is None:
        return value
    messages = _as_messages(value, "write")
    if messages is value:  # (its own items, read as they are: none of them is fresh)
        return [m if m.id is not None else _with_id(m) for m in messages]
    given = value if type(value) is list else [value]
    if len(given) != len(messages):  # (not one message per item: no item is fresh)
        given = messages
    return [_with_id(m, m is not item) for m, item in zip(messages, given, strict=True)]


def add_messages(left: Any = None, right: Any = None, *, format: str | None = None) -> Any:
    """Merge an update into a list of messages (the reducer of a `messages` field); with
    only `format=` (`"langchain-openai"`), the reducer that also formats them, as LangGraph's.

    Both sides may be MISSING, one message-like value or a list of them (None on one side
    is refused, as LangGraph's; on both, the reducer is returned); each item is read with
    `Message.coerce` and given an id if it has none. Then `left` followed by `right` is
    applied in order to an empty list:

    - `RemoveMessage(id=REMOVE_ALL_MESSAGES)` clears everything before it;
    - `RemoveMessage(id=x)` deletes the message with id x;
    - a message whose id is already there replaces it, in the same position (so of
      several messages sharing an id in one update, the last wins at the first's place);
    - any other message is appended.

    The inputs are never changed: the result is a new list, and messages that needed
    an id are copies. The result never holds two messages with the same id.

    Args:
        left: the current messages.
        right: the update.

    Raises:
        TypeError: an item is not message-like (the error says which one).
        InvalidUpdateError: a `RemoveMessage` names an id that is not there
            (a `ValueError`).

    >>> from nbgraph.messages import RemoveMessage
    >>> merged = add_messages([("user", "hi")], [("assistant", "hello")])
    >>> [m.content for m in merged], all(m.id for m in merged)
    (['hi', 'hello'], True)
    >>> [m.content for m in add_messages(merged, RemoveMessage(id=merged[0].id))]
    ['hello']
    """
    if left is None or right is None or format is not None:
        return _with_format(left, right, format)
    if lc.message_kind() == "langchain":
        return lc.lc_add_messages(
            [_with_id(m) for m in _as_messages(left, "left")],
            [_with_id(m) for m in _as_messages(right, "right")],
            REMOVE_ALL_MESSAGES,
        )
    stream = [_with_id(m) for m in _as_messages(left, "left") + _as_messages(right, "right")]
    slots: list[Message | None] = []
    position: dict[str, int] = {}
    for message in stream:
        assert message.id is not None  # _with_id saw to it
        if lc.is_remove(message):
            if message.id == REMOVE_ALL_MESSAGES:
                slots.clear()
                position.clear()
            elif message.id in position:
                slots[position.pop(message.id)] = None
            else:
                raise lc.unknown_removal(message.id, len(position))
        elif message.id in position:
            slots[position[message.id]] = message
        else:
            position[message.id] = len(slots)
            slots.append(message)
    return [m for m in slots if m is not None]


FORMATS = ("langchain-openai",)
"""The `format`s `add_messages` takes: `"langchain-openai"` (LangGraph's one)."""


def _with_format(left: Any, right: Any, format: str | None) -> Any:
    """`add_messages` called with `format`, or without a side (None), as LangGraph's: no
    side gives the reducer, one side alone is refused."""
    if left is None and right is None:  # (a reducer: LangGraph's partial, named here)
        return add_messages if format is None else _formatting(format)
    if left is None or right is None:
        raise ValueError(
            "add_messages: Must specify non-null arguments for both 'left' and 'right'. Only "
            f"received: '{'left' if left is not None else 'right'}' (a write of None to a "
            "messages field is one; write [] for no messages)."
        )
    merged = add_messages(left, right)
    return merged if format is None else formatted_messages(merged, format)


def _formatting(format: str) -> Any:
    def add_messages_formatted(left: Any, right: Any) -> list[Any]:
        return add_messages(left, right, format=format)

    add_messages_formatted.__qualname__ = f"add_messages(format={format!r})"
    return add_messages_formatted


def formatted_messages(messages: list[Any], format: str = "langchain-openai") -> list[Any]:
    """Messages with their contents in OpenAI's shapes (text, `image_url` blocks, tool
    calls), kept as langchain messages: LangGraph's `format="langchain-openai"`.

    Raises:
        ValueError: another `format` (LangGraph's text).
        ImportError: langchain_core is not installed (it does the formatting).
    """
    if format not in FORMATS:
        raise ValueError(
            f"add_messages: Unrecognized format={format!r}. Expected one of "
            f"{', '.join(map(repr, FORMATS))}, None."
        )
    from langchain_core.messages import convert_to_messages, convert_to_openai_messages

    return convert_to_messages(convert_to_openai_messages(messages))


class _Index:
    """What `add_messages_in_place` knows of a list it grew: its length then, its ids, and
    whether every message in it may be shared by a copy (`shared_messages`)."""

    __slots__ = ("count", "ids", "last", "messages", "shared")

    def __init__(self, messages: list, ids: set, shared: bool) -> None:
        self.messages, self.ids, self.shared, self.count = messages, ids, shared, len(messages)
        self.last = messages[-1] if messages else None


_INDEXES: dict[int, _Index] = {}  # by id() of the list; the last few lists grown
_KEPT_INDEXES = 8


def _index_of(messages: list) -> _Index | None:
    found = _INDEXES.get(id(messages))
    if (
        found is None
        or found.messages is not messages
        or found.count != len(messages)
        or (messages and messages[-1] is not found.last)
    ):
        return None
    return found


def shared_messages(items: list) -> bool:
    """Whether `items` is a list `add_messages_in_place` grew, unchanged since, whose
    messages are all shareable: frozen `Message`s that say so, or langchain's (shared as
    LangGraph shares them). A copy of it may share them without reading each again."""
    found = _index_of(items)
    return found is not None and found.shared


def forget_messages(value: Any) -> Any:
    """`value`, no longer known to `add_messages_in_place` (something else may change it
    in place: a `Mutation`)."""
    _INDEXES.pop(id(value), None)
    return value


def _all_shareable(messages: list) -> bool:
    for message in messages:
        kind = type(message)
        if kind not in lc.SHARED_TYPES and not (kind in MESSAGE_TYPES and message.shareable()):
            return False
    return True


def _removes(messages: list) -> bool:
    """Whether one of `messages` is a remove instruction."""
    for message in messages:  # noqa: SIM110 - a plain loop: faster than any() over a generator
        if lc.is_remove(message):
            return True
    return False


def add_messages_in_place(left: Any, right: Any) -> Any:
    """`add_messages` for the engine's own list: appends to `left` in place when nothing in
    `right` removes or replaces a message (the common case), else merges as `add_messages`.

    The ids of a list it grew are kept (for the last few lists), so the next append checks
    only the new ids: `left` must change only through this function (the engine's own
    list; a `Mutation` of it calls `forget_messages` first).

    >>> current = add_messages([], [("user", "hi")])
    >>> add_messages_in_place(current, [("assistant", "hello")]) is current
    True
    """
    if type(left) is not list or right is None:
        return add_messages(left, right)
    incoming = _as_messages(right, "right")
    for message in incoming:  # (a write the engine took in has its ids: `with_ids`)
        if message.id is None:
            incoming = [_with_id(m) for m in incoming]
            break
    index = _index_of(left)
    if index is None:
        try:
            ids = set(map(_ID, left))  # (at C speed)
        except AttributeError:  # not all messages yet: the full merge reads them
            return add_messages(left, incoming)
        if len(ids) != len(left) or None in ids:
            return add_messages(left, incoming)
        index = _Index(left, ids, _all_shareable(left))
    fresh = set(map(_ID, incoming))
    if len(fresh) != len(incoming) or not fresh.isdisjoint(index.ids) or _removes(incoming):
        forget_messages(left)
        return add_messages(left, incoming)
    left.extend(incoming)
    index.ids |= fresh
    index.shared = index.shared and _all_shareable(incoming)
    index.count, index.last = len(left), left[-1] if left else None
    _INDEXES.pop(id(left), None)
    _INDEXES[id(left)] = index  # (the newest last)
    if len(_INDEXES) > _KEPT_INDEXES:
        with contextlib.suppress(KeyError, StopIteration, RuntimeError):  # (another thread's)
            del _INDEXES[next(iter(_INDEXES))]
    return left
