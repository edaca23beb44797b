"""Comparing messages of two runs by what they say, with their ids reported apart.

Two runs of one program give their messages fresh ids (`add_messages` makes a uuid for each
message without one), so comparing message lists with `==` finds every message different.
Here a message is compared by its role (LangChain's `type`), content, name and tool calls
(each call's name and arguments); its id, the id of the call a tool message answers and the
ids of its tool calls are only ids. Works for nbgraph `Message`s, LangChain messages and
anything else `Message.coerce` reads with a `.type` and `.content`.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from nbgraph import messages
from nbgraph.record.cells import ListPrefix
from nbgraph.record.effects import same

__all__ = ["IDS_ONLY", "ValueDifference", "compare_values", "differs_for_good", "is_message"]

IDS_ONLY = "only message ids differ"
"""The note of a comparison row whose messages say the same but carry other ids."""


class ValueDifference(NamedTuple):
    """How two values of one field differ.

    Attributes:
        said: they differ in what they say (for messages: role, content, name, tool calls).
        ids: for messages that say the same, `(these ids, those ids)` of the ones whose ids
            differ; None when nothing differs but ids, or when `said`.
    """

    said: bool
    ids: tuple[list[Any], list[Any]] | None = None


def compare_values(left: Any, right: Any) -> ValueDifference | None:
    """How `left` and `right` differ, or None if they are equal.

    >>> from nbgraph.messages import Message
    >>> a = [Message(role="user", content="hi", id="1")]
    >>> b = [Message(role="user", content="hi", id="2")]
    >>> compare_values(a, b)
    ValueDifference(said=False, ids=(['1'], ['2']))
    >>> compare_values(a, [Message(role="user", content="bye", id="1")]).said
    True
    """
    if same(left, right):
        return None
    pairs = _message_pairs(left, right)
    if pairs is None or any(_said(a) != _said(b) for a, b in pairs):
        return ValueDifference(True)
    these, those = [], []
    for a, b in pairs:
        if _message_ids(a) != _message_ids(b):
            these.append(_shown_ids(a))
            those.append(_shown_ids(b))
    if not these:  # they say the same and carry the same ids: only fields we ignore differ
        return ValueDifference(True)
    return ValueDifference(False, (these, those))


def differs_for_good(left: list, right: list) -> bool:
    """Whether two equally long lists have a pair of items that differ in what they say
    (messages saying otherwise, or other items unequal): a difference that items appended
    to both lists cannot undo, as `compare_values` reads them.

    >>> from nbgraph.messages import Message
    >>> differs_for_good([1, 2], [1, 3]), differs_for_good([1, 2], [1, 2])
    (True, False)
    >>> a, b = Message(role="user", content="hi", id="1"), Message(role="user", content="hi")
    >>> differs_for_good([a], [b])  # (only ids: more messages may change what the row shows)
    False
    """
    pairs = _message_pairs(left, right)
    return pairs is None or any(_said(a) != _said(b) for a, b in pairs)


def is_message(value: Any) -> bool:
    """Whether `value` is a message: an nbgraph `Message` or a LangChain-like message."""
    if isinstance(value, tuple(messages.MESSAGE_TYPES)):  # empty until a Message is built
        return True
    module = type(value).__module__ or ""
    return module.startswith("langchain") and hasattr(value, "type") and hasattr(value, "content")


def _said(message: Any) -> tuple[Any, ...]:
    """What a message says: (role, content, name, tool calls without their ids)."""
    read = messages.Message.coerce(message)
    calls = [
        {k: v for k, v in call.items() if k != "id"} if isinstance(call, dict) else call
        for call in read.tool_calls
    ]
    return (read.role, read.content, read.name, calls)


def _message_ids(message: Any) -> tuple[Any, ...]:
    """A message's ids: its own, the call it answers, and its tool calls' ids."""
    read = messages.Message.coerce(message)
    calls = tuple(call.get("id") if isinstance(call, dict) else None for call in read.tool_calls)
    return (read.id, read.tool_call_id, calls)


def _shown_ids(message: Any) -> Any:
    own, answers, calls = _message_ids(message)
    if answers is None and not calls:
        return own
    return {"id": own, "tool_call_id": answers, "tool_call_ids": list(calls)}


def _message_pairs(left: Any, right: Any) -> list[tuple[Any, Any]] | None:
    """The messages of two values side by side, or None unless both are messages or
    equally long sequences whose items are equal or messages."""
    if is_message(left) and is_message(right):
        return [(left, right)]
    if not (_is_sequence(left) and _is_sequence(right)) or len(left) != len(right):
        return None
    pairs = []
    for a, b in zip(left, right, strict=True):
        if is_message(a) and is_message(b):
            pairs.append((a, b))
        elif not same(a, b):
            return None
    return pairs


def _is_sequence(value: Any) -> bool:
    return isinstance(value, (list, tuple, ListPrefix))
