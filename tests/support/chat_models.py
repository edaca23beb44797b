"""A scripted langchain chat model for agent tests: the same fake on LangGraph's side and
nbgraph's, no network.

`ScriptedChatModel(replies=[...])` answers each call with the next scripted reply (an
`AIMessage`, or a str made one) and keeps what it was asked (`seen`: the messages of each
call, as `(type, content)` pairs). `bind_tools` binds the tools' OpenAI schemas as LangGraph's
`create_react_agent` expects of a real chat model (a `RunnableBinding` with `tools`), and
records their names (`bound`); `with_structured_output(schema)` answers with the next scripted
structured reply (`structured`), made an instance of a pydantic `schema`. The lists are shared
by every binding of one model, so a program reads them after the run.
"""

from collections.abc import Sequence
from typing import Any

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import RunnableLambda
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import BaseModel, Field

__all__ = ["ScriptedChatModel", "tool_call"]


def tool_call(name: str, args: dict[str, Any], call_id: str) -> dict[str, Any]:
    """One tool call as a chat model writes it in an `AIMessage`."""
    return {"name": name, "args": args, "id": call_id, "type": "tool_call"}


class ScriptedChatModel(BaseChatModel):
    """A chat model that answers from a script (see the module's doc)."""

    replies: list[Any] = Field(default_factory=list)
    structured: list[Any] = Field(default_factory=list)
    seen: list[list[tuple[str, Any]]] = Field(default_factory=list)
    bound: list[list[str]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        self.seen.append([(m.type, m.content) for m in messages])
        if not self.replies:
            raise RuntimeError("ScriptedChatModel: the script has no reply left")
        reply = self.replies.pop(0)
        message = AIMessage(reply) if isinstance(reply, str) else reply.model_copy(deep=True)
        return ChatResult(generations=[ChatGeneration(message=message)])

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        schemas = [convert_to_openai_tool(t) for t in tools]
        self.bound.append([s["function"]["name"] for s in schemas])
        return self.bind(tools=schemas, **kwargs)

    def with_structured_output(self, schema: Any, **kwargs: Any) -> Any:
        def answer(messages: Any) -> Any:
            listed = messages.to_messages() if hasattr(messages, "to_messages") else messages
            self.seen.append([(m.type, m.content) for m in listed])
            data = self.structured.pop(0)
            is_model = isinstance(schema, type) and issubclass(schema, BaseModel)
            return schema(**data) if is_model else data

        return RunnableLambda(answer, name="structured")
