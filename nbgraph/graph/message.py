"""LangGraph's `langgraph.graph.message`: the `messages` reducer and the state built on it.

`add_messages` (merge by id, `RemoveMessage` deletes, `REMOVE_ALL_MESSAGES` clears),
`MessagesState` (a state of one `messages` field) and `MessageGraph` (LangGraph's older
builder whose whole state is that list).
"""

from typing import Annotated, Any

from nbgraph.messages import REMOVE_ALL_MESSAGES, MessagesState, add_messages
from nbgraph.notebook.graph import StateGraph

__all__ = ["REMOVE_ALL_MESSAGES", "MessageGraph", "MessagesState", "add_messages"]


def MessageGraph(**kwargs: Any) -> StateGraph:
    """A graph whose whole state is a list of messages merged by `add_messages` (LangGraph's
    `MessageGraph`, deprecated there for `StateGraph(MessagesState)`): each node takes the
    list and returns messages to add. Made as the `StateGraph` of that state.
    """
    return StateGraph(Annotated[list, add_messages], **kwargs)
