"""Chat messages: the `Message` model, reading messages from common forms, `add_messages`.

When langchain_core is installed, `add_messages` makes langchain's own message classes, as
LangGraph does (`langchain_messages`); else nbgraph's `Message`.

`Message`, `RemoveMessage` and `MessagesState` are built on first use (this module's
`__getattr__`), so importing nbgraph does not import pydantic: `merge` holds what the engine
calls on every write, `model` the pydantic model, `state` the ready-made state.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, TypeAlias

from nbgraph.messages.langchain_messages import message_kind, use_message_kind
from nbgraph.messages.merge import (
    REMOVE_ALL_MESSAGES,
    add_messages,
    add_messages_in_place,
    with_ids,
)
from nbgraph.messages.message_types import MESSAGE_TYPES

if TYPE_CHECKING:
    from nbgraph.messages.model import Message, RemoveMessage
    from nbgraph.messages.state import MessagesState

__all__ = [
    "MESSAGE_TYPES",
    "REMOVE_ALL_MESSAGES",
    "Message",
    "MessageLike",
    "MessagesState",
    "RemoveMessage",
    "add_messages",
    "add_messages_in_place",
    "message_kind",
    "use_message_kind",
    "with_ids",
]

MessageLike: TypeAlias = "Message | tuple[str, Any] | dict[str, Any] | str | Any"
"""Anything `Message.coerce` accepts."""

_LAZY = {"Message": "model", "RemoveMessage": "model", "MessagesState": "state"}
"""Name -> the submodule that builds it on first use."""


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(f"nbgraph.messages.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
