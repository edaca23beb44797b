"""LangGraph's `langgraph.runtime`: `Runtime` (a run's context, store and stream writer) and
`get_runtime()` inside a node; `ExecutionInfo`, where a task runs."""

from nbgraph.engine.node_api import ExecutionInfo, Runtime, get_runtime

__all__ = ["ExecutionInfo", "Runtime", "get_runtime"]
