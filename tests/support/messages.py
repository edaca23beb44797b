"""langchain_core messages of every class, and a graph that keeps them: what the message
tests and the child processes they start share."""

from typing import Any

from langchain_core.messages import (
    AIMessage,
    ChatMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)

from nbgraph import END, START, MessagesState, StateGraph

CALL = {"name": "add", "args": {"a": 1, "b": [2, 3]}, "id": "call_1", "type": "tool_call"}


def rich_messages() -> list[Any]:
    """One of each class, with the fields a model or a tool fills in."""
    return [
        SystemMessage("be brief", id="s1"),
        HumanMessage([{"type": "text", "text": "add"}], name="ann", id="h1"),
        AIMessage(
            "",
            tool_calls=[CALL],
            additional_kwargs={"raw": b"\x00\x01", "n": (1, 2)},
            response_metadata={"model_name": "fake", "finish_reason": "tool_calls"},
            usage_metadata={"input_tokens": 3, "output_tokens": 4, "total_tokens": 7},
            id="a1",
        ),
        ToolMessage("3", tool_call_id="call_1", status="error", artifact={"x": 1}, id="t1"),
        ChatMessage(role="critic", content="fine", id="c1"),
    ]


def keep_all_graph(**compile_kwargs: Any) -> Any:
    """START -> chat -> END over `MessagesState`; `chat` adds the last three rich messages."""

    def chat(state: dict) -> dict:
        return {"messages": rich_messages()[2:]}

    graph = StateGraph(MessagesState).add_node("chat", chat)
    return graph.add_edge(START, "chat").add_edge("chat", END).compile(**compile_kwargs)
