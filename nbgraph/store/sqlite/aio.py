"""LangGraph's `langgraph.store.sqlite.aio`: `AsyncSqliteStore` at its LangGraph path (it lives
in `nbgraph.store.sqlite`, beside `SqliteStore`)."""

from nbgraph.store.sqlite import AsyncSqliteStore

__all__ = ["AsyncSqliteStore"]
