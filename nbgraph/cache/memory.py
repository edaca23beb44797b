"""LangGraph's `langgraph.cache.memory`: `InMemoryCache`, node results kept in this process."""

from nbgraph.cache.base import BaseCache
from nbgraph.engine.core.caching import InMemoryCache

__all__ = ["BaseCache", "InMemoryCache"]
