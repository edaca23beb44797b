"""LangGraph's `langgraph.graph.message`: the `messages` reducer and the state built on it.

`add_messages` (merge by id, `RemoveMessage` deletes, `REMOVE_ALL_MESSAGES` clears),
`MessagesState` (a state of one `messages` field), `MessageGraph` (LangGraph's older
builder whose whole state is that list) and `push_message` (a node streams a message at once;
it loads langchain_core, so on first use).
"""

from typing import TYPE_CHECKING, Any

from nbgraph.messages import REMOVE_ALL_MESSAGES, MessagesState, add_messages
from nbgraph.notebook.graph import MessageGraph

if TYPE_CHECKING:
    from nbgraph.engine.streaming.push import push_message

__all__ = ["REMOVE_ALL_MESSAGES", "MessageGraph", "MessagesState", "add_messages", "push_message"]


def __getattr__(name: str) -> Any:
    if name == "push_message":  # (its module imports langchain_core: loaded when asked)
        from nbgraph.engine.streaming.push import push_message

        return push_message
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
