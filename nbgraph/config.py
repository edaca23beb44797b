"""LangGraph's `langgraph.config`: what code running inside a node asks of its run.

`get_config()` (the node's config), `get_store()` (the graph's store) and
`get_stream_writer()` (the writer of `stream_mode="custom"`), as LangGraph's: outside a run
they raise `RuntimeError`.
"""

from nbgraph.engine.node_api import get_config, get_store, get_stream_writer

__all__ = ["get_config", "get_store", "get_stream_writer"]
