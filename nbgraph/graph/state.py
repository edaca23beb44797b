"""LangGraph's `langgraph.graph.state`: `StateGraph` and what its `compile()` returns."""

from nbgraph.notebook.app import CompiledStateGraph
from nbgraph.notebook.graph import StateGraph

__all__ = ["CompiledStateGraph", "StateGraph"]
