"""The graph layer, the blueprint a `StateGraph` compiles from: the builder (`GraphBuilder`, the
checks half of `nbgraph.StateGraph`) and the frozen `GraphSpec` it hands the engine and the
drawings. (`nbgraph.graph` is LangGraph's public `langgraph.graph`, mirrored.)
"""

from nbgraph.blueprint.builder import GraphBuilder
from nbgraph.blueprint.spec import Branch, GraphSpec, NodeSpec, WaitingEdge

__all__ = ["Branch", "GraphBuilder", "GraphSpec", "NodeSpec", "WaitingEdge"]
