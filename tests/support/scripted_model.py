"""A scripted chat model for agents: langchain_core's `GenericFakeChatModel` that answers
with the messages it was given, in order, and accepts `bind_tools` (an agent binds its tools
before its first call; the script already says which tools the model calls)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage


def tool_call(name: str, args: dict[str, Any], call_id: str) -> dict[str, Any]:
    """A tool call as a model writes it in an `AIMessage`."""
    return {"name": name, "args": args, "id": call_id, "type": "tool_call"}


def calls(*items: dict[str, Any], text: str = "", id: str | None = None) -> AIMessage:
    """The model's turn that calls `items` (made by `tool_call`)."""
    return AIMessage(text, tool_calls=list(items), id=id)


class ScriptedChatModel(GenericFakeChatModel):
    """Answers each call with the next message of `script`; binding tools changes nothing.

    >>> model = ScriptedChatModel.of(["hi", "bye"])
    >>> model.bind_tools([]).invoke("x").content, model.invoke("y").content
    ('hi', 'bye')
    """

    @classmethod
    def of(cls, script: Sequence[AIMessage | str]) -> ScriptedChatModel:
        """A model that answers with `script`'s messages (a string is an `AIMessage`)."""
        turns = [AIMessage(m) if isinstance(m, str) else m for m in script]
        return cls(messages=iter(turns))

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChatModel:
        """The model itself: the script says what it calls."""
        return self
