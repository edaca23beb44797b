"""The graph layer: the builder (`GraphBuilder`, the checks half of `nbgraph.StateGraph`) and the
frozen `GraphSpec` it hands the engine and the drawings.
"""

from nbgraph.graph.builder import GraphBuilder
from nbgraph.graph.spec import Branch, GraphSpec, NodeSpec, WaitingEdge

__all__ = ["Branch", "GraphBuilder", "GraphSpec", "NodeSpec", "WaitingEdge"]
