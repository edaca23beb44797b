"""Long-term memory shared across threads: `BaseStore` and `InMemoryStore`, as `langgraph.store`
has them.

With LangGraph's semantic index and TTLs; a store is given to `compile(store=...)` and reached
from nodes as `runtime.store` or a `store` parameter."""

from nbgraph.store.base import BaseStore, InvalidNamespaceError, Item, SearchItem
from nbgraph.store.memory import InMemoryStore

__all__ = ["BaseStore", "InMemoryStore", "InvalidNamespaceError", "Item", "SearchItem"]
