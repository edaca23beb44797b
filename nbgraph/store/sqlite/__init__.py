"""`SqliteStore`: a `BaseStore` in an SQLite file, as `langgraph.store.sqlite.SqliteStore`.

The same API as `InMemoryStore` (put, get, search with filters and a semantic index,
delete, list_namespaces, TTLs), with the items in a file that outlives the process and is
shared by the processes that open it. As LangGraph's: `SqliteStore(conn)` takes an open
`sqlite3.Connection`, `SqliteStore.from_conn_string(path)` opens one for a `with` block,
`setup()` makes the tables (called on first use too), and a search without a query gives the
most recently written items first. An item's TTL is kept in the file: it expires that many
minutes after it was written (or last read, with `refresh_on_read`), and `sweep_ttl()`
deletes the expired ones (until then they read as any other, as in LangGraph's).

Values are written through nbgraph's codec (`nbgraph.checkpoint.payloads`: tagged JSON, never
pickle). The tables are nbgraph's (`nbgraph_store`, `nbgraph_store_vectors`): a file written
by LangGraph's `SqliteStore` is not read by this one, nor the other way round.

>>> with SqliteStore.from_conn_string(":memory:") as store:
...     store.put(("memories", "1"), "a", {"data": "User name is Bob"})
...     store.get(("memories", "1"), "a").value
{'data': 'User name is Bob'}
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import json
import os
import re
import sqlite3
import threading
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from datetime import UTC, datetime
from typing import Any

from nbgraph.checkpoint.payloads import dump_payload, load_payload
from nbgraph.errors import InvalidArgumentError
from nbgraph.store.base import NOT_PROVIDED, BaseStore, Item, SearchItem, check_namespace
from nbgraph.store.expiry import Expiry
from nbgraph.store.memory import labels_fit
from nbgraph.store.vectors import VectorIndex

__all__ = ["AsyncSqliteStore", "SqliteStore"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS nbgraph_store (
    prefix TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    expires_at REAL,
    ttl_minutes REAL,
    seq INTEGER NOT NULL,
    PRIMARY KEY (prefix, key)
);
CREATE INDEX IF NOT EXISTS nbgraph_store_expires ON nbgraph_store (expires_at)
    WHERE expires_at IS NOT NULL;
CREATE TABLE IF NOT EXISTS nbgraph_store_vectors (
    prefix TEXT NOT NULL,
    key TEXT NOT NULL,
    field TEXT NOT NULL,
    vector TEXT NOT NULL,
    PRIMARY KEY (prefix, key, field)
);
"""

_COLUMNS = "prefix, key, value, created_at, updated_at"


def _text(namespace: tuple[str, ...]) -> str:
    """A namespace as the file keeps it: its labels joined by '.' (a label has none)."""
    return ".".join(namespace)


def _under(prefix: tuple[str, ...]) -> tuple[str, list[Any]]:
    """The SQL condition (and its parameters) of the namespaces under `prefix`."""
    if not prefix:
        return "1", []
    text = _text(prefix)
    return "(prefix = ? OR substr(prefix, 1, ?) = ?)", [text, len(text) + 1, text + "."]


class SqliteStore(BaseStore):
    """Items kept in an SQLite database, shared by every thread and process that opens it.

    Args:
        conn: an open `sqlite3.Connection` (opened with `check_same_thread=False` to be used
            from several threads; its transactions are the store's), or a path (`":memory:"`
            for a database that lives as long as the store).
        index: LangGraph's `IndexConfig`, as `InMemoryStore`'s (`embed`, `dims`, `fields`):
            each item's vectors are kept in the file.
        ttl: LangGraph's `TTLConfig`, as `InMemoryStore`'s (`default_ttl` minutes,
            `refresh_on_read`, `sweep_interval_minutes`).
        deserializer: LangGraph's reader of a stored value; values here are read by nbgraph's
            codec, so only None is taken.

    Raises:
        InvalidArgumentError: `conn` is neither a connection nor a path, or `deserializer`
            is given; `index`/`ttl` as `InMemoryStore`'s.
    """

    supports_ttl = True

    def __init__(
        self, conn: Any, *, index: Any = None, ttl: Any = None, deserializer: Any = None
    ) -> None:
        if deserializer is not None:
            raise InvalidArgumentError(
                f"SqliteStore(deserializer={deserializer!r}): values are read by nbgraph's "
                "codec (tagged JSON, docs/VALUES.md); expected deserializer=None."
            )
        self._owned = not isinstance(conn, sqlite3.Connection)
        if self._owned:
            conn = _connect(conn)
        self.conn: sqlite3.Connection = conn
        self.lock = threading.RLock()
        self.is_setup = False
        self._index = None if index is None else VectorIndex(index, type(self).__name__)
        self.index_config = None if self._index is None else self._index.config
        self.embeddings = None if self._index is None else self._index.embedder
        self._expiry = Expiry(ttl, self.delete, sweep=self.sweep_ttl, owner=type(self).__name__)
        self.ttl_config = self._expiry.config

    @classmethod
    @contextlib.contextmanager
    def from_conn_string(
        cls, conn_string: str, *, index: Any = None, ttl: Any = None
    ) -> Iterator[SqliteStore]:
        """A store on the file `conn_string` (or `":memory:"`), closed when the block ends:
        `with SqliteStore.from_conn_string("store.db") as store: ...`."""
        store = cls(_connect(conn_string), index=index, ttl=ttl)
        store._owned = True
        try:
            yield store
        finally:
            store.close()

    def __repr__(self) -> str:
        return f"<SqliteStore on {self.conn!r}>"

    def close(self) -> None:
        """Stop the TTL sweeper, and close the connection if the store opened it."""
        self.stop_ttl_sweeper()
        if self._owned:
            self.conn.close()

    def setup(self) -> None:
        """Make the store's tables if the database has none (idempotent; the first
        operation calls it)."""
        with self.lock:
            if not self.is_setup:
                self.conn.executescript(_SCHEMA)
                self.conn.commit()
                self.is_setup = True

    @contextlib.contextmanager
    def _cursor(self) -> Iterator[sqlite3.Cursor]:
        """A cursor inside one transaction, committed when the block ends (rolled back if
        it raises)."""
        self.setup()
        with self.lock:
            cur = self.conn.cursor()
            if not self.conn.in_transaction:
                cur.execute("BEGIN IMMEDIATE")
            try:
                yield cur
            except BaseException:
                self.conn.rollback()
                raise
            else:
                self.conn.commit()
            finally:
                cur.close()

    # --- reading ---------------------------------------------------------------------------

    def get(
        self, namespace: tuple[str, ...], key: str, *, refresh_ttl: bool | None = None
    ) -> Item | None:
        namespace = check_namespace(namespace)
        with self._cursor() as cur:
            row = cur.execute(
                f"SELECT {_COLUMNS} FROM nbgraph_store WHERE prefix = ? AND key = ?",
                (_text(namespace), str(key)),
            ).fetchone()
            if row is not None:
                self._refresh(cur, [row[:2]], refresh_ttl)
        return None if row is None else _item(row)

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
        index, the most similar first (`score`: cosine similarity); else the most recently
        written first, to the second, in the order written within one (`score` None)."""
        ranked = query and self._index is not None
        vector = self._index.embedder.embed_query(query) if ranked else None
        return self._search(namespace_prefix, filter, vector, limit, offset, refresh_ttl)

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
        ranked = query and self._index is not None
        vector = await self._index.embedder.aembed_query(query) if ranked else None
        return self._search(namespace_prefix, filter, vector, limit, offset, refresh_ttl)

    def _search(
        self, prefix: Any, filter: Any, vector: Any, limit: int, offset: int, refresh: Any
    ) -> list[SearchItem]:
        condition, params = _under(check_namespace(prefix, prefix=True))
        wanted, values = _filter_sql(filter or {})
        with self._cursor() as cur:
            rows = cur.execute(
                f"SELECT {_COLUMNS} FROM nbgraph_store WHERE {' AND '.join([condition, *wanted])} "
                "ORDER BY updated_at DESC, seq",
                [*params, *values],
            ).fetchall()
            found = list(map(_item, rows))
            if vector is not None and found:
                self._index.vectors = self._vectors_of(cur, condition, params)
                kept = self._index.rank(vector, found, offset, limit)
            else:
                kept = [(None, item) for item in found[offset : offset + limit]]
            self._refresh(cur, [(_text(i.namespace), i.key) for _, i in kept], refresh)
        return [
            SearchItem(i.namespace, i.key, i.value, i.created_at, i.updated_at, score)
            for score, i in kept
        ]

    def _vectors_of(self, cur: sqlite3.Cursor, condition: str, params: list[Any]) -> dict:
        """The stored vectors of the items under a prefix, as `VectorIndex` keeps them."""
        vectors: dict[tuple[tuple[str, ...], str], dict[str, list[float]]] = {}
        for prefix, key, field, vector in cur.execute(
            f"SELECT prefix, key, field, vector FROM nbgraph_store_vectors WHERE {condition}",
            params,
        ):
            vectors.setdefault((tuple(prefix.split(".")), key), {})[field] = json.loads(vector)
        return vectors

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
        with self._cursor() as cur:
            rows = cur.execute("SELECT DISTINCT prefix FROM nbgraph_store").fetchall()
        namespaces = [
            ns
            for ns in (tuple(row[0].split(".")) for row in rows)
            if (not prefix or labels_fit(ns[: len(prefix)], prefix))
            and (not suffix or (len(ns) >= len(suffix) and labels_fit(ns[-len(suffix) :], suffix)))
        ]
        if max_depth is not None:
            namespaces = list({ns[:max_depth] for ns in namespaces})
        return sorted(namespaces)[offset : offset + limit]

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
            distinct = list(dict.fromkeys(text for _, text in put[-1]))
            vectors = self._index.embedder.embed_documents(distinct) if distinct else []
            self._write(*put, vectors)

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
            distinct = list(dict.fromkeys(text for _, text in put[-1]))
            vectors = await self._index.embedder.aembed_documents(distinct) if distinct else []
            self._write(*put, vectors)

    def _put_of(self, namespace: Any, key: Any, value: Any, index: Any, ttl: Any) -> Any:
        """A put checked: `(namespace, key, value, ttl minutes, texts to embed)`, or None
        when the value is None (the item was deleted)."""
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
        return namespace, str(key), dict(value), minutes, texts

    def _write(
        self,
        namespace: tuple[str, ...],
        key: str,
        value: dict[str, Any],
        minutes: float | None,
        texts: list[tuple[str, str]],
        vectors: list,
    ) -> None:
        where, kept = (namespace, key), {}
        if texts:  # (checked before the item is stored: one vector per text)
            with self.lock:
                self._index.keep(where, texts, vectors)
                kept = self._index.vectors.pop(where, {})
        payload = dump_payload(value, f"The store's value at {namespace}, {key!r}")
        now = datetime.now(UTC).strftime(
            "%Y-%m-%d %H:%M:%S"
        )  # (naive UTC to the second, as LangGraph's)
        expires = None if minutes is None else time.time() + minutes * 60
        with self._cursor() as cur:
            seq = cur.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM nbgraph_store").fetchone()
            cur.execute(
                "INSERT OR REPLACE INTO nbgraph_store VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (_text(namespace), key, payload, now, now, expires, minutes, seq[0]),
            )
            cur.executemany(
                "INSERT OR REPLACE INTO nbgraph_store_vectors VALUES (?, ?, ?, ?)",
                [(_text(namespace), key, f, json.dumps(v)) for f, v in kept.items()],
            )

    def delete(self, namespace: tuple[str, ...], key: str) -> None:
        params = (_text(check_namespace(namespace)), str(key))
        with self._cursor() as cur:
            cur.execute("DELETE FROM nbgraph_store WHERE prefix = ? AND key = ?", params)
            cur.execute("DELETE FROM nbgraph_store_vectors WHERE prefix = ? AND key = ?", params)

    # --- TTLs ------------------------------------------------------------------------------

    def _refresh(self, cur: sqlite3.Cursor, places: list[Any], asked: bool | None) -> None:
        """Items were read: their time starts again if the store refreshes on read and the
        read did not say `refresh_ttl=False`."""
        if not (self.ttl_config or {}).get("refresh_on_read", False) or asked is False:
            return
        cur.executemany(
            "UPDATE nbgraph_store SET expires_at = ? + ttl_minutes * 60 "
            "WHERE prefix = ? AND key = ? AND ttl_minutes IS NOT NULL",
            [(time.time(), prefix, key) for prefix, key in places],
        )

    def sweep_ttl(self) -> int:
        """Delete the items whose TTL has passed; how many were deleted."""
        with self._cursor() as cur:
            expired = cur.execute(
                "SELECT prefix, key FROM nbgraph_store "
                "WHERE expires_at IS NOT NULL AND expires_at < ?",
                (time.time(),),
            ).fetchall()
            cur.executemany("DELETE FROM nbgraph_store WHERE prefix = ? AND key = ?", expired)
            cur.executemany(
                "DELETE FROM nbgraph_store_vectors WHERE prefix = ? AND key = ?", expired
            )
        return len(expired)

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


class AsyncSqliteStore(SqliteStore):
    """`SqliteStore` opened in an `async with` block, as LangGraph's `AsyncSqliteStore`:
    `async with AsyncSqliteStore.from_conn_string("store.db") as store: await store.aput(...)`.
    Its awaitable methods are `SqliteStore`'s (each a short local transaction, run on the
    calling thread), so a file written by one reads with the other."""

    @classmethod
    @contextlib.asynccontextmanager
    async def from_conn_string(  # type: ignore[override]
        cls, conn_string: str, *, index: Any = None, ttl: Any = None
    ) -> AsyncIterator[AsyncSqliteStore]:
        store = cls(_connect(conn_string), index=index, ttl=ttl)
        store._owned = True
        try:
            yield store
        finally:
            store.close()


_FILTER_KEY = re.compile(r"^[a-zA-Z0-9_.-]+$")
_COMPARISONS = {"$eq": "=", "$ne": "!=", "$gt": ">", "$gte": ">=", "$lt": "<", "$lte": "<="}


def _filter_sql(filter: dict[str, Any]) -> tuple[list[str], list[Any]]:
    """`search(filter=...)` as SQL conditions on the stored JSON, as LangGraph's SQLite store
    reads it: a key is a path (`"a.b"`); a value is matched for equality, or a dict of
    operators (`$eq`, `$ne`, `$gt`, `$gte`, `$lt`, `$lte`); a number compared as a number.

    Raises:
        ValueError: a key with other characters than letters, digits, `_`, `.`, `-`; a dict
            value with a key that is not an operator (LangGraph's messages).
    """
    conditions: list[str] = []
    params: list[Any] = []
    for key, wanted in filter.items():
        if not isinstance(key, str) or not _FILTER_KEY.match(key):
            raise ValueError(
                f"Invalid filter key: '{key}'. Filter keys must contain only alphanumeric "
                "characters, underscores, dots, and hyphens."
            )
        pairs = wanted.items() if isinstance(wanted, dict) else [("$eq", wanted)]
        for op, operand in pairs:
            if op not in _COMPARISONS:
                raise ValueError(f"Unsupported operator: {op}")
            condition, param = _comparison(f"json_extract(value, '$.{key}')", op, operand)
            conditions.append(condition)
            params.extend(param)
    return conditions, params


def _comparison(field: str, op: str, operand: Any) -> tuple[str, list[Any]]:
    sign = _COMPARISONS[op]
    if operand is None and op in ("$eq", "$ne"):
        return f"{field} IS {'NOT ' if op == '$ne' else ''}NULL", []
    if isinstance(operand, bool):  # (JSON's true and false read as 1 and 0)
        return f"{field} {sign} {int(operand)}", []
    if isinstance(operand, int | float):
        cast = field if op in ("$eq", "$ne") else f"CAST({field} AS REAL)"
        return f"{cast} {sign} ?", [float(operand)]
    if isinstance(operand, str):
        return f"{field} {sign} ?", [operand]
    return f"{field} {sign} ?", [json.dumps(operand, separators=(",", ":"))]


def _connect(path: Any) -> sqlite3.Connection:
    if not isinstance(path, str | os.PathLike) or not str(path):
        raise InvalidArgumentError(
            f"SqliteStore needs an sqlite3.Connection, a file path or ':memory:'; got {path!r}."
        )
    return sqlite3.connect(str(path), check_same_thread=False)


def _item(row: Sequence[Any]) -> Item:
    prefix, key, payload, created, updated = row
    value = load_payload(payload, f"The store's value at {prefix!r}, {key!r}")
    return Item(
        value=value,
        key=key,
        namespace=tuple(prefix.split(".")),
        created_at=created,
        updated_at=updated,
    )
