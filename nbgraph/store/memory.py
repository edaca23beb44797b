"""`InMemoryStore`: a `BaseStore` in a dict, as `langgraph.store.memory.InMemoryStore`, with
its semantic index (`index={"embed": ..., "dims": ..., "fields": [...]}`, `store.vectors`)
and the TTLs of LangGraph's stores that have them (`ttl={...}`, `put(..., ttl=)`,
`sweep_ttl`; `store.expiry`). Keys are made strings, and a namespace once read or written is
listed by `list_namespaces` even when empty, as LangGraph's store does.

>>> store = InMemoryStore()
>>> store.put(("memories", "1"), "a", {"data": "User name is Bob"})
>>> store.get(("memories", "1"), "a").value
{'data': 'User name is Bob'}
>>> [item.key for item in store.search(("memories",))]
['a']
"""

from __future__ import annotations

import concurrent.futures
import threading
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from nbgraph.store.base import NOT_PROVIDED, BaseStore, Item, SearchItem, check_namespace
from nbgraph.store.expiry import Expiry
from nbgraph.store.vectors import VectorIndex

__all__ = ["InMemoryStore", "labels_fit", "value_matches"]

_Place = tuple[tuple[str, ...], str]


class InMemoryStore(BaseStore):
    """Items kept in this process's memory, shared by every thread of every graph given it.

    Args:
        index: LangGraph's `IndexConfig`, for `search(query=...)` by meaning: `embed` (a
            function from a list of texts to their vectors, or a langchain `Embeddings`),
            `dims`, `fields` (the paths of each value to embed, default `["$"]`: the whole
            value); see `nbgraph.store.vectors`. Without it a query does not rank.
        ttl: LangGraph's `TTLConfig`: `default_ttl` (minutes an item put without `ttl=`
            lives), `refresh_on_read` (a read starts its time again), and
            `sweep_interval_minutes` (for `start_ttl_sweeper`); see `nbgraph.store.expiry`.

    >>> store = InMemoryStore(index={"embed": lambda texts: [[1.0, len(t)] for t in texts],
    ...                              "dims": 2, "fields": ["text"]})
    >>> store.put(("docs",), "short", {"text": "a"})
    >>> store.put(("docs",), "long", {"text": "a much longer text"})
    >>> [item.key for item in store.search(("docs",), query="a long one")]
    ['long', 'short']
    """

    supports_ttl = True

    def __init__(self, *, index: Any = None, ttl: Any = None) -> None:
        self._data: dict[tuple[str, ...], dict[str, Item]] = {}
        self._lock = threading.Lock()
        self._index = None if index is None else VectorIndex(index)
        self.index_config = None if self._index is None else self._index.config
        self.embeddings = None if self._index is None else self._index.embedder
        self._expiry = Expiry(ttl, self.delete)
        self.ttl_config = self._expiry.config

    def __repr__(self) -> str:
        count = sum(len(items) for items in self._data.values())
        return f"<InMemoryStore: {count} items in {len(self._data)} namespaces>"

    def get(
        self, namespace: tuple[str, ...], key: str, *, refresh_ttl: bool | None = None
    ) -> Item | None:
        namespace = check_namespace(namespace)
        with self._lock:  # (a namespace read is listed from then on, as in LangGraph's)
            item = self._data.setdefault(namespace, {}).get(str(key))
        if item is not None:
            self._expiry.refresh([(namespace, item.key)], refresh_ttl)
        return item

    # --- writing ---------------------------------------------------------------------------

    def put(
        self,
        namespace: tuple[str, ...],
        key: str,
        value: dict[str, Any],
        index: Any = None,
        *,
        ttl: Any = NOT_PROVIDED,
    ) -> None:
        put = self._put_of(namespace, key, value, index, ttl)
        if put is not None:
            texts = put[3]
            distinct = list(dict.fromkeys(text for _, text in texts))
            vectors = self._index.embedder.embed_documents(distinct) if distinct else []
            self._keep(*put, vectors)

    async def aput(
        self,
        namespace: tuple[str, ...],
        key: str,
        value: dict[str, Any],
        index: Any = None,
        *,
        ttl: Any = NOT_PROVIDED,
    ) -> None:
        """`put`, awaitable: an `async def` embedding function is awaited."""
        put = self._put_of(namespace, key, value, index, ttl)
        if put is not None:
            texts = put[3]
            distinct = list(dict.fromkeys(text for _, text in texts))
            vectors = await self._index.embedder.aembed_documents(distinct) if distinct else []
            self._keep(*put, vectors)

    def _put_of(
        self, namespace: Any, key: Any, value: Any, index: Any, ttl: Any
    ) -> tuple[Item, _Place, float | None, list[tuple[str, str]]] | None:
        """A put checked: the item, its place, its TTL and the texts to embed (None: the
        value is None, and the item was deleted)."""
        namespace = check_namespace(namespace)
        if value is None:
            self.delete(namespace, key)
            return None
        if not isinstance(value, dict):
            raise TypeError(
                f"store.put({namespace}, {key!r}, ...): the value must be a dict, "
                f"got {type(value).__name__}."
            )
        minutes = self._expiry.ttl_of(ttl)
        texts = [] if self._index is None else self._index.texts(value, index)
        now = datetime.now(UTC)
        key = str(key)
        item = Item(value=dict(value), key=key, namespace=namespace, created_at=now, updated_at=now)
        return item, (namespace, key), minutes, texts

    def _keep(
        self,
        item: Item,
        place: _Place,
        minutes: float | None,
        texts: list[tuple[str, str]],
        vectors: list,
    ) -> None:
        if texts:
            self._index.keep(place, texts, vectors)  # (checked before the item is stored)
        with self._lock:
            self._data.setdefault(item.namespace, {})[item.key] = item
        self._expiry.start(place, minutes)

    def delete(self, namespace: tuple[str, ...], key: str) -> None:
        namespace = check_namespace(namespace)
        key = str(key)
        with self._lock:  # (the namespace stays listed, as in LangGraph's)
            self._data.setdefault(namespace, {}).pop(key, None)
        if self._index is not None:
            self._index.drop((namespace, key))
        self._expiry.forget((namespace, key))

    # --- searching -------------------------------------------------------------------------

    def search(
        self,
        namespace_prefix: tuple[str, ...],
        /,
        *,
        query: str | None = None,
        filter: dict[str, Any] | None = None,
        limit: int = 10,
        offset: int = 0,
        refresh_ttl: bool | None = None,
    ) -> list[SearchItem]:
        """Items under `namespace_prefix` whose values match `filter`: with `query` and an
        index, the most similar first (`score`: cosine similarity); else in the order
        they were first put (`score` None)."""
        found = self._candidates(namespace_prefix, filter)
        ranked = query and self._index is not None
        vector = self._index.embedder.embed_query(query) if ranked else None
        return self._results(found, vector, offset, limit, refresh_ttl)

    async def asearch(
        self,
        namespace_prefix: tuple[str, ...],
        /,
        *,
        query: str | None = None,
        filter: dict[str, Any] | None = None,
        limit: int = 10,
        offset: int = 0,
        refresh_ttl: bool | None = None,
    ) -> list[SearchItem]:
        """`search`, awaitable: an `async def` embedding function is awaited."""
        found = self._candidates(namespace_prefix, filter)
        ranked = query and self._index is not None
        vector = await self._index.embedder.aembed_query(query) if ranked else None
        return self._results(found, vector, offset, limit, refresh_ttl)

    def _candidates(self, namespace_prefix: Any, filter: Any) -> list[Item]:
        prefix = check_namespace(namespace_prefix, prefix=True)
        return [
            item
            for namespace, items in list(self._data.items())
            if namespace[: len(prefix)] == prefix
            for item in list(items.values())
            if not filter or all(value_matches(item.value.get(k), v) for k, v in filter.items())
        ]

    def _results(
        self, found: list[Item], vector: Any, offset: int, limit: int, refresh: bool | None
    ) -> list[SearchItem]:
        if vector is not None and found:
            kept = self._index.rank(vector, found, offset, limit)
        else:
            kept = [(None, item) for item in found[offset : offset + limit]]
        self._expiry.refresh([(item.namespace, item.key) for _, item in kept], refresh)
        return [
            SearchItem(i.namespace, i.key, i.value, i.created_at, i.updated_at, score)
            for score, i in kept
        ]

    def list_namespaces(
        self,
        *,
        prefix: Sequence[str] | None = None,
        suffix: Sequence[str] | None = None,
        max_depth: int | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[tuple[str, ...]]:
        namespaces = [
            ns
            for ns in list(self._data)
            if (not prefix or labels_fit(ns[: len(prefix)], prefix))
            and (not suffix or (len(ns) >= len(suffix) and labels_fit(ns[-len(suffix) :], suffix)))
        ]
        if max_depth is not None:
            namespaces = list({ns[:max_depth] for ns in namespaces})
        return sorted(namespaces)[offset : offset + limit]

    # --- TTLs ------------------------------------------------------------------------------

    def sweep_ttl(self) -> int:
        """Delete the items whose TTL has passed; how many were deleted."""
        return self._expiry.sweep()

    def start_ttl_sweeper(
        self, sweep_interval_minutes: float | None = None
    ) -> concurrent.futures.Future[None]:
        """Call `sweep_ttl` every `sweep_interval_minutes` (or the config's, or 5) on a
        daemon thread until `stop_ttl_sweeper`; the future is done when it stops (at once
        for a store without `ttl=`)."""
        return self._expiry.start_sweeper(sweep_interval_minutes)

    def stop_ttl_sweeper(self, timeout: float | None = None) -> bool:
        """Stop the sweeper thread; whether it stopped within `timeout` seconds (or was not
        running)."""
        return self._expiry.stop_sweeper(timeout)


def labels_fit(labels: Sequence[str], pattern: Sequence[str]) -> bool:
    """Whether `labels` match `pattern` label by label (`"*"` matches any label)."""
    return len(labels) == len(pattern) and all(
        p in ("*", x) for x, p in zip(labels, pattern, strict=True)
    )


_OPERATORS = {
    "$eq": lambda a, b: a == b,
    "$ne": lambda a, b: a != b,
    "$gt": lambda a, b: float(a) > float(b),
    "$gte": lambda a, b: float(a) >= float(b),
    "$lt": lambda a, b: float(a) < float(b),
    "$lte": lambda a, b: float(a) <= float(b),
}


def value_matches(value: Any, wanted: Any) -> bool:
    """A `search(filter=...)` condition, as LangGraph's in-memory store reads it."""
    if isinstance(wanted, dict):
        if any(k.startswith("$") for k in wanted):
            for op, operand in wanted.items():
                if op not in _OPERATORS:
                    raise ValueError(f"Unsupported operator in store filter: {op!r}.")
                if not _OPERATORS[op](value, operand):
                    return False
            return True
        return isinstance(value, dict) and all(
            value_matches(value.get(k), v) for k, v in wanted.items()
        )
    if isinstance(wanted, (list, tuple)):
        return (
            isinstance(value, (list, tuple))
            and len(value) == len(wanted)
            and all(value_matches(a, b) for a, b in zip(value, wanted, strict=True))
        )
    return value == wanted
