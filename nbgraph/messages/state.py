"""`MessagesState`: the ready-made state of one `messages` field (LangGraph's name).

A `typing_extensions.TypedDict`, as LangGraph's is, so pydantic takes it on Python 3.11 too
(a tool's `Annotated[MessagesState, InjectedState]` parameter); its messages are taken as
they are (langchain's or nbgraph's), never converted.

No `from __future__ import annotations` here: the field's type is kept as an object, so it
reads without this module's namespace.
"""

from typing import Annotated

from pydantic import SkipValidation
from typing_extensions import TypedDict

from nbgraph.messages.merge import add_messages
from nbgraph.messages.model import Message

__all__ = ["MessagesState"]


class MessagesState(TypedDict):
    """A ready-made state with one `messages` field that appends by id (LangGraph's name)."""

    messages: Annotated[list[SkipValidation[Message]], add_messages]


MessagesState.__module__ = "nbgraph.messages"
