"""`IndexedStore`: what the stores with a semantic index and TTLs (`InMemoryStore`,
`SqliteStore`) do alike, once.

That is a put checked and embedded (sync or awaited), a search's query embedded and its
candidates ranked, `list_namespaces`' patterns, the TTL sweeper. Each store keeps only where its
items live (`_write`, `_search`, `_namespaces`, `get`, `delete`)."""

from __future__ import annotations

import concurrent.futures
from abc import abstractmethod
from collections.abc import Sequence
from typing import Any, NamedTuple

from nbgraph.store.base import (
    NOT_PROVIDED,
    BaseStore,
    Item,
    SearchItem,
    SearchOp,
    check_namespace,
)
from nbgraph.store.expiry import Expiry
from nbgraph.store.vectors import VectorIndex

__all__ = ["IndexedStore", "PendingPut", "labels_fit", "search_items"]


class PendingPut(NamedTuple):
    """A put checked, before its texts are embedded: where, what, its TTL (minutes, None:
    never expires) and the `(field, text)`s its index embeds."""

    namespace: tuple[str, ...]
    key: str
    value: dict[str, Any]
    minutes: float | None
    texts: list[tuple[str, str]]


class IndexedStore(BaseStore):
    """A `BaseStore` with LangGraph's `index=` and `ttl=` (checked here, as `IndexConfig` and
    `TTLConfig`); subclasses say where items live.

    Raises:
        InvalidArgumentError: `index` or `ttl` is not LangGraph's config (naming the store).
    """

    supports_ttl = True

    def __init__(self, *, index: Any = None, ttl: Any = None) -> None:
        owner = type(self).__name__
        self._index = None if index is None else VectorIndex(index, owner)
        self.index_config = None if self._index is None else self._index.config
        self.embeddings = None if self._index is None else self._index.embedder
        self._expiry = Expiry(ttl, self.delete, sweep=self.sweep_ttl, owner=owner)
        self.ttl_config = self._expiry.config

    # --- what each store says: where its items live ----------------------------------------

    @abstractmethod
    def _write(self, put: PendingPut, vectors: list) -> None:
        """Keep a checked put and its texts' vectors (one per distinct text)."""

    @abstractmethod
    def _search(self, op: SearchOp, vector: Any) -> list[SearchItem]:
        """A search with its query embedded (`vector`, None: not ranked)."""

    @abstractmethod
    def _namespaces(self) -> list[tuple[str, ...]]:
        """Every namespace the store lists."""

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
        put = self._put_of(namespace, key, value, index, ttl=ttl)
        if put is not None:
            distinct = list(dict.fromkeys(text for _, text in put.texts))
            vectors = self._index.embedder.embed_documents(distinct) if distinct else []
            self._write(put, vectors)

    async def aput(
        self, namespace: tuple[str, ...], key: str, value: dict[str, Any], *args: Any, **kwargs: Any
    ) -> None:
        """`put`, awaitable: an `async def` embedding function is awaited."""
        put = self._put_of(namespace, key, value, *args, **kwargs)
        if put is not None:
            distinct = list(dict.fromkeys(text for _, text in put.texts))
            vectors = await self._index.embedder.aembed_documents(distinct) if distinct else []
            self._write(put, vectors)

    def _put_of(
        self, namespace: Any, key: Any, value: Any, index: Any = None, *, ttl: Any = NOT_PROVIDED
    ) -> PendingPut | None:
        """A put checked (None: the value is None, and the item was deleted)."""
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
        return PendingPut(namespace, str(key), dict(value), minutes, texts)

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
        index, the most similar first (`score`: cosine similarity); else in the store's
        order (`score` None; see the store's class)."""
        ranked = query and self._index is not None
        vector = self._index.embedder.embed_query(query) if ranked else None
        op = SearchOp(namespace_prefix, filter, limit, offset, query, refresh_ttl)
        return self._search(op, vector)

    async def asearch(
        self, namespace_prefix: tuple[str, ...], /, *, query: str | None = None, **options: Any
    ) -> list[SearchItem]:
        """`search`, awaitable: an `async def` embedding function is awaited."""
        ranked = query and self._index is not None
        vector = await self._index.embedder.aembed_query(query) if ranked else None
        return self._search(SearchOp(namespace_prefix, query=query, **options), vector)

    def _ranked(
        self, found: list[Item], vector: Any, offset: int, limit: int
    ) -> list[tuple[float | None, Item]]:
        """`(score, item)` of the page `offset`, `limit` of the candidates: the most similar
        to `vector` first, or (None: no query) in their order."""
        if vector is not None and found:
            return self._index.rank(vector, found, offset, limit)
        return [(None, item) for item in found[offset : offset + limit]]

    def list_namespaces(
        self,
        *,
        prefix: Sequence[str] | None = None,
        suffix: Sequence[str] | None = None,
        max_depth: int | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[tuple[str, ...]]:
        """The namespaces that hold items, sorted, filtered by prefix/suffix (`"*"` matches
        any label), cut to `max_depth` labels."""
        namespaces = [
            ns
            for ns in self._namespaces()
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


def search_items(kept: list[tuple[float | None, Item]]) -> list[SearchItem]:
    """The `SearchItem`s of ranked `(score, item)`s."""
    return [
        SearchItem(i.namespace, i.key, i.value, i.created_at, i.updated_at, score)
        for score, i in kept
    ]


def labels_fit(labels: Sequence[str], pattern: Sequence[str]) -> bool:
    """Whether `labels` match `pattern` label by label (`"*"` matches any label)."""
    return len(labels) == len(pattern) and all(
        p in ("*", x) for x, p in zip(labels, pattern, strict=True)
    )
