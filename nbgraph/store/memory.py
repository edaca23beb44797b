"""`InMemoryStore`: a `BaseStore` in a dict, as `langgraph.store.memory.InMemoryStore`
without embeddings (a `query` is accepted and does not rank; `score` stays None). Keys are
made strings, and a namespace once read or written is listed by `list_namespaces` even when
empty, as LangGraph's store does.

>>> store = InMemoryStore()
>>> store.put(("memories", "1"), "a", {"data": "User name is Bob"})
>>> store.get(("memories", "1"), "a").value
{'data': 'User name is Bob'}
>>> [item.key for item in store.search(("memories",))]
['a']
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from nbgraph.store.base import BaseStore, Item, SearchItem, check_namespace

__all__ = ["InMemoryStore"]


class InMemoryStore(BaseStore):
    """Items kept in this process's memory, shared by every thread of every graph given it.

    Args:
        index: LangGraph's embedding configuration; not supported (a query does not rank).
    """

    def __init__(self, *, index: Any = None) -> None:
        if index is not None:
            raise NotImplementedError(
                "InMemoryStore(index=...): nbgraph's store does not embed or rank by "
                "similarity; search(query=...) returns items in the order they were stored."
            )
        self._data: dict[tuple[str, ...], dict[str, Item]] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        count = sum(len(items) for items in self._data.values())
        return f"<InMemoryStore: {count} items in {len(self._data)} namespaces>"

    def get(
        self, namespace: tuple[str, ...], key: str, *, refresh_ttl: bool | None = None
    ) -> Item | None:
        namespace = check_namespace(namespace)
        with self._lock:  # (a namespace read is listed from then on, as in LangGraph's)
            return self._data.setdefault(namespace, {}).get(str(key))

    def put(
        self,
        namespace: tuple[str, ...],
        key: str,
        value: dict[str, Any],
        index: Any = None,
        *,
        ttl: Any = None,
    ) -> None:
        namespace = check_namespace(namespace)
        if ttl is not None:
            raise NotImplementedError(
                "InMemoryStore.put(ttl=...): nbgraph's store keeps items until deleted."
            )
        if value is None:
            self.delete(namespace, key)
            return
        if not isinstance(value, dict):
            raise TypeError(
                f"store.put({namespace}, {key!r}, ...): the value must be a dict, "
                f"got {type(value).__name__}."
            )
        now = datetime.now(UTC)
        key = str(key)
        item = Item(value=dict(value), key=key, namespace=namespace, created_at=now, updated_at=now)
        with self._lock:
            self._data.setdefault(namespace, {})[key] = item

    def delete(self, namespace: tuple[str, ...], key: str) -> None:
        namespace = check_namespace(namespace)
        with self._lock:  # (the namespace stays listed, as in LangGraph's)
            self._data.setdefault(namespace, {}).pop(str(key), None)

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
        prefix = check_namespace(namespace_prefix, prefix=True)
        found = [
            item
            for namespace, items in list(self._data.items())
            if namespace[: len(prefix)] == prefix
            for item in list(items.values())
            if not filter or all(_matches(item.value.get(k), v) for k, v in filter.items())
        ]
        return [
            SearchItem(i.namespace, i.key, i.value, i.created_at, i.updated_at)
            for i in found[offset : offset + limit]
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
            if (not prefix or _fits(ns[: len(prefix)], prefix))
            and (not suffix or (len(ns) >= len(suffix) and _fits(ns[-len(suffix) :], suffix)))
        ]
        if max_depth is not None:
            namespaces = list({ns[:max_depth] for ns in namespaces})
        return sorted(namespaces)[offset : offset + limit]


def _fits(labels: Sequence[str], pattern: Sequence[str]) -> bool:
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


def _matches(value: Any, wanted: Any) -> bool:
    """A `search(filter=...)` condition, as LangGraph's in-memory store reads it."""
    if isinstance(wanted, dict):
        if any(k.startswith("$") for k in wanted):
            for op, operand in wanted.items():
                if op not in _OPERATORS:
                    raise ValueError(f"Unsupported operator in store filter: {op!r}.")
                if not _OPERATORS[op](value, operand):
                    return False
            return True
        return isinstance(value, dict) and all(_matches(value.get(k), v) for k, v in wanted.items())
    if isinstance(wanted, (list, tuple)):
        return (
            isinstance(value, (list, tuple))
            and len(value) == len(wanted)
            and all(_matches(a, b) for a, b in zip(value, wanted, strict=True))
        )
    return value == wanted
