"""LangGraph's `langgraph.cache.sqlite`: `SqliteCache`, node results kept in an SQLite file.

Given to `compile(cache=SqliteCache(path="cache.db"))`, a node with a `CachePolicy` is served
from the file by every process that opens it, until its entry's TTL passes. Values are written
through the cache's `serde` (nbgraph's `JsonPlusSerializer`: tagged JSON, never pickle).
The table is nbgraph's own: a file of LangGraph's `SqliteCache` is not read by this one.

>>> cache = SqliteCache(path=":memory:")
>>> cache.set({(("node",), "k"): ({"n": (1, 2)}, None)})
>>> cache.get([(("node",), "k")])
{(('node',), 'k'): {'n': (1, 2)}}
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

from nbgraph.cache.base import BaseCache
from nbgraph.checkpoint.serde.jsonplus import saver_serde
from nbgraph.engine.core.caching import FullKey, Namespace

__all__ = ["SqliteCache"]

_SCHEMA = """CREATE TABLE IF NOT EXISTS nbgraph_cache (
    ns TEXT NOT NULL, key TEXT NOT NULL, expiry REAL, kind TEXT NOT NULL, value BLOB NOT NULL,
    PRIMARY KEY (ns, key))"""


class SqliteCache(BaseCache[Any]):
    """A node cache in the SQLite file `path` (`":memory:"`: one that lives as long as the
    cache), shared by the threads and processes that open it.

    Args:
        path: the database file.
        serde: None or nbgraph's `JsonPlusSerializer` (another serializer is refused with
            `InvalidArgumentError`, as a saver's `serde=`).
    """

    def __init__(self, *, path: str, serde: Any = None) -> None:
        super().__init__(serde=saver_serde(serde, "SqliteCache"))
        self._conn = sqlite3.connect(path, check_same_thread=False)
        self._lock = threading.RLock()
        with self._lock, self._conn:
            if path != ":memory:":
                self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute(_SCHEMA)

    def __repr__(self) -> str:
        return "SqliteCache()"

    def get(self, keys: Sequence[FullKey]) -> dict[FullKey, Any]:
        """The live values kept under these keys (expired ones are deleted)."""
        found: dict[FullKey, Any] = {}
        now = time.time()
        with self._lock, self._conn:
            for ns, key in keys:
                row = self._conn.execute(
                    "SELECT expiry, kind, value FROM nbgraph_cache WHERE ns = ? AND key = ?",
                    (_text(ns), key),
                ).fetchone()
                if row is None:
                    continue
                expiry, kind, raw = row
                if expiry is not None and now >= expiry:
                    self._conn.execute(
                        "DELETE FROM nbgraph_cache WHERE ns = ? AND key = ?", (_text(ns), key)
                    )
                    continue
                found[(tuple(ns), key)] = self.serde.loads_typed((kind, raw))
        return found

    def set(self, pairs: Mapping[FullKey, tuple[Any, float | None]]) -> None:
        """Keep each value under its key for `ttl` seconds (None: until cleared)."""
        now = time.time()
        rows = []
        for (ns, key), (value, ttl) in pairs.items():
            kind, raw = self.serde.dumps_typed(value)
            rows.append((_text(ns), key, None if ttl is None else now + ttl, kind, raw))
        with self._lock, self._conn:
            self._conn.executemany(
                "INSERT OR REPLACE INTO nbgraph_cache VALUES (?, ?, ?, ?, ?)", rows
            )

    def clear(self, namespaces: Sequence[Namespace] | None = None) -> None:
        """Drop the entries of these namespaces (all of them if None)."""
        with self._lock, self._conn:
            if namespaces is None:
                self._conn.execute("DELETE FROM nbgraph_cache")
            else:
                self._conn.executemany(
                    "DELETE FROM nbgraph_cache WHERE ns = ?", [(_text(ns),) for ns in namespaces]
                )

    def close(self) -> None:
        """Close the file."""
        self._conn.close()


def _text(namespace: Sequence[str]) -> str:
    """A namespace as the file keeps it (its labels joined by NUL, which no label holds)."""
    return "\x00".join(namespace)
