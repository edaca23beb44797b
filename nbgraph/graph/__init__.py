"""LangGraph's `langgraph.graph`, spelled the same: the builder and the names beside it.

`from langgraph.graph import StateGraph, START, END, MessagesState, add_messages` becomes
`from nbgraph.graph import ...`. The builder is the notebook layer's `StateGraph`; this package
only gives it LangGraph's address (the langgraph mirror, docs/ARCHITECTURE.md).
"""

from nbgraph.graph.message import MessageGraph, MessagesState, add_messages
from nbgraph.notebook.graph import StateGraph
from nbgraph.primitives import END, START

__all__ = ["END", "START", "MessageGraph", "MessagesState", "StateGraph", "add_messages"]
