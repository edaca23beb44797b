"""`MessagesState`: the ready-made state of one `messages` field (LangGraph's name).

No `from __future__ import annotations` here: the field's type is kept as an object, so it
reads without this module's namespace.
"""

from typing import Annotated, TypedDict

from nbgraph.messages.merge import add_messages
from nbgraph.messages.model import Message

__all__ = ["MessagesState"]


class MessagesState(TypedDict):
    """A ready-made state with one `messages` field that appends by id (LangGraph's name)."""

    messages: Annotated[list[Message], add_messages]


MessagesState.__module__ = "nbgraph.messages"
