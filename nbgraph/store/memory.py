"""`InMemoryStore`: a `BaseStore` in a dict, as `langgraph.store.memory.InMemoryStore`, with a
semantic index and TTLs.

Its semantic index: `index={"embed": ..., "dims": ..., "fields": [...]}`, `store.vectors`; the
TTLs of LangGraph's stores that have them: `ttl={...}`, `put(..., ttl=)`, `sweep_ttl`,
`store.expiry`. Keys are made strings, and a namespace once read or written is listed by
`list_namespaces` even when empty, as LangGraph's store does.

>>> store = InMemoryStore()
>>> store.put(("memories", "1"), "a", {"data": "User name is Bob"})
>>> store.get(("memories", "1"), "a").value
{'data': 'User name is Bob'}
>>> [item.key for item in store.search(("memories",))]
['a']
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from typing import Any

from nbgraph.store.base import Item, SearchItem, SearchOp, check_namespace
from nbgraph.store.indexed import IndexedStore, PendingPut, labels_fit, search_items

__all__ = ["InMemoryStore", "labels_fit", "value_matches"]


class InMemoryStore(IndexedStore):
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

    Without a query, `search` gives the items in the order they were first put.
    """

    def __init__(self, *, index: Any = None, ttl: Any = None) -> None:
        self._data: dict[tuple[str, ...], dict[str, Item]] = {}
        self._lock = threading.Lock()
        super().__init__(index=index, ttl=ttl)

    def __repr__(self) -> str:
        count = sum(len(items) for items in self._data.values())
        spaces = len(self._data)
        items = f"{count} item{'s' * (count != 1)}"
        return f"<InMemoryStore: {items} in {spaces} namespace{'s' * (spaces != 1)}>"

    def get(
        self, namespace: tuple[str, ...], key: str, *, refresh_ttl: bool | None = None
    ) -> Item | None:
        namespace = check_namespace(namespace)
        with self._lock:  # (a namespace read is listed from then on, as in LangGraph's)
            item = self._data.setdefault(namespace, {}).get(str(key))
        if item is not None:
            self._expiry.refresh([(namespace, item.key)], refresh_ttl)
        return item

    def _write(self, put: PendingPut, vectors: list) -> None:
        place = (put.namespace, put.key)
        if put.texts:
            self._index.keep(place, put.texts, vectors)  # (checked before the item is stored)
        now = datetime.now(UTC)
        item = Item(
            value=put.value, key=put.key, namespace=put.namespace, created_at=now, updated_at=now
        )
        with self._lock:
            self._data.setdefault(item.namespace, {})[item.key] = item
        self._expiry.start(place, put.minutes)

    def delete(self, namespace: tuple[str, ...], key: str) -> None:
        namespace = check_namespace(namespace)
        key = str(key)
        with self._lock:  # (the namespace stays listed, as in LangGraph's)
            self._data.setdefault(namespace, {}).pop(key, None)
        if self._index is not None:
            self._index.drop((namespace, key))
        self._expiry.forget((namespace, key))

    def _search(self, op: SearchOp, vector: Any) -> list[SearchItem]:
        """The items in the order they were first put (without a query)."""
        prefix, filter = check_namespace(op.namespace_prefix, prefix=True), op.filter
        found = [
            item
            for namespace, items in list(self._data.items())
            if namespace[: len(prefix)] == prefix
            for item in list(items.values())
            if not filter or all(value_matches(item.value.get(k), v) for k, v in filter.items())
        ]
        kept = self._ranked(found, vector, op.offset, op.limit)
        self._expiry.refresh([(item.namespace, item.key) for _, item in kept], op.refresh_ttl)
        return search_items(kept)

    def _namespaces(self) -> list[tuple[str, ...]]:
        return list(self._data)


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
