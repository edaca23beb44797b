"""LangGraph's `langgraph.cache.base`: `BaseCache`, what `compile(cache=...)` takes.

A cache keeps node results under `(namespace, key)` pairs: `get(keys)` gives the ones it
has, `set({key: (value, ttl_seconds)})` keeps some, `clear(namespaces)` drops them, and the
`a`-prefixed forms await the same. nbgraph's `InMemoryCache` is one (registered here); a
class of your own that subclasses `BaseCache` is taken by `compile(cache=...)` too.
"""

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any, Generic, TypeVar

from nbgraph.engine.core.caching import FullKey, InMemoryCache, Namespace

__all__ = ["BaseCache"]

ValueT = TypeVar("ValueT")


class BaseCache(ABC, Generic[ValueT]):
    """A cache of node results, as LangGraph's `BaseCache` (without its serializer:
    nbgraph's in-memory cache keeps the values themselves)."""

    def __init__(self, *, serde: Any = None) -> None:
        self.serde = serde

    @abstractmethod
    def get(self, keys: Sequence[FullKey]) -> dict[FullKey, ValueT]:
        """The cached values of these keys (the ones present and not expired)."""

    @abstractmethod
    def set(self, pairs: Mapping[FullKey, tuple[ValueT, int | None]]) -> None:
        """Keep each value for its time to live in seconds (None: until cleared)."""

    @abstractmethod
    def clear(self, namespaces: Sequence[Namespace] | None = None) -> None:
        """Drop the values of these namespaces (all of them if None)."""

    async def aget(self, keys: Sequence[FullKey]) -> dict[FullKey, ValueT]:
        return self.get(keys)

    async def aset(self, pairs: Mapping[FullKey, tuple[ValueT, int | None]]) -> None:
        self.set(pairs)

    async def aclear(self, namespaces: Sequence[Namespace] | None = None) -> None:
        self.clear(namespaces)


BaseCache.register(InMemoryCache)
