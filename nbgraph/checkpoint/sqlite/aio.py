"""LangGraph's `langgraph.checkpoint.sqlite.aio`: `AsyncSqliteSaver`, the async SQLite saver
on `SqliteSaver`'s file (`nbgraph.checkpoint.sqlite_async`, where it lives)."""

from nbgraph.checkpoint.sqlite_async import AsyncSqliteSaver

__all__ = ["AsyncSqliteSaver"]
