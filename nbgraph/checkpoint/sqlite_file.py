"""An SQLite checkpoint file: its schema, checking a file before it is opened, opening it
(read-only when this process may not write it), and checking the rows read from it."""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from nbgraph.checkpoint.base import check_thread_id
from nbgraph.errors import CheckpointFileError, InvalidArgumentError

__all__ = [
    "FORMAT",
    "SCHEMA",
    "SCHEMA_VERSION",
    "check_connection",
    "check_row",
    "check_text_thread_id",
    "connect",
    "connection_file",
    "database_path",
    "inspect_file",
    "readonly_uri",
    "row_seq",
    "row_text",
    "writable",
]

FORMAT = "nbgraph.checkpoints"
SCHEMA_VERSION = 1

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS nbgraph_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE IF NOT EXISTS checkpoints (
        thread_id TEXT NOT NULL,
        checkpoint_id TEXT NOT NULL,
        parent_id TEXT,
        step INTEGER NOT NULL,
        source TEXT NOT NULL,
        created_at REAL NOT NULL,
        seq INTEGER NOT NULL UNIQUE,
        payload TEXT NOT NULL,
        snapshot TEXT,
        PRIMARY KEY (thread_id, checkpoint_id)
    )""",
    "CREATE INDEX IF NOT EXISTS checkpoints_by_thread ON checkpoints (thread_id, seq)",
    """CREATE TABLE IF NOT EXISTS writes (
        thread_id TEXT NOT NULL,
        checkpoint_id TEXT NOT NULL,
        task_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        payload TEXT NOT NULL,
        PRIMARY KEY (thread_id, checkpoint_id, seq)
    )""",
    """CREATE TABLE IF NOT EXISTS claims (
        thread_id TEXT PRIMARY KEY,
        owner TEXT NOT NULL,
        claimed_at REAL NOT NULL
    )""",
)
_TABLES = ("nbgraph_meta", "checkpoints", "writes", "claims")
_COLUMNS = {
    "nbgraph_meta": ("key", "value"),
    "checkpoints": ("thread_id", "checkpoint_id", "parent_id", "step", "source", "created_at",
                    "seq", "payload", "snapshot"),
    "writes": ("thread_id", "checkpoint_id", "task_id", "seq", "payload"),
    "claims": ("thread_id", "owner", "claimed_at"),
}  # fmt: skip
"""The columns each table must have (the file's tables may have more)."""


def connect(target: str, uri: bool = False) -> sqlite3.Connection:
    return sqlite3.connect(
        target, timeout=30.0, isolation_level=None, check_same_thread=False, uri=uri
    )


def database_path(path: Any) -> str:
    """`path` as the file name to open; refuse what sqlite3 would quietly take for a
    temporary database (`""`), and what is not a path at all."""
    if isinstance(path, str | bytes | os.PathLike):
        name = os.fsdecode(path)
        if name.strip():
            return name
    raise InvalidArgumentError(
        f"SqliteSaver needs a file path, an open sqlite3.Connection, or ':memory:' for a "
        f"database that lives as long as the saver; got {path!r}. (An empty path would keep "
        "the checkpoints in a temporary database that vanishes when the saver closes.)"
    )


def writable(path: str) -> bool:
    """Whether this process may write the file and create its `-wal`/`-shm` files."""
    folder = os.path.dirname(os.path.abspath(path))
    return os.access(path, os.W_OK) and os.access(folder, os.W_OK | os.X_OK)


def readonly_uri(path: str) -> str:
    """A URI opening the file read-only; `immutable` when it is in WAL mode and no one has
    it open (no `-wal` file): a read-only connection would create `-wal` and `-shm` files it
    could not remove (or fail, in a folder it may not write). Such a reader does not see
    what a writer opening the file later commits: reopen it to see that."""
    with open(path, "rb") as file:
        wal_mode = file.read(20)[18:20] == b"\x02\x02"
    immutable = wal_mode and not os.path.exists(path + "-wal")
    return Path(path).absolute().as_uri() + ("?mode=ro&immutable=1" if immutable else "?mode=ro")


_ROW_TYPES = (
    str,
    str,
    (str, type(None)),
    int,
    str,
    (float, int),
    (str, bytes),
    (str, bytes, type(None)),
)
_ROW_NAMES = (
    "thread_id",
    "checkpoint_id",
    "parent_id",
    "step",
    "source",
    "created_at",
    "payload",
    "snapshot",
)


def is_time(value: float) -> bool:
    """Whether `value` is a time `datetime.fromtimestamp` can show (years 1 to 9999)."""
    return -62_135_596_800 < value < 253_402_300_800  # (nan is neither)


def check_row(row: tuple[Any, ...], where: str) -> None:
    """Raise `CheckpointFileError` naming `where` and each column of a `checkpoints` row
    whose type is not what nbgraph writes."""
    wrong = [
        f"{name} is {value!r}"
        for name, kind, value in zip(_ROW_NAMES, _ROW_TYPES, row, strict=True)
        if not isinstance(value, kind) or isinstance(value, bool)
    ]
    created = row[_ROW_NAMES.index("created_at")]
    if not wrong and not is_time(created):
        wrong.append(f"created_at is {created!r}, not a time between the years 1 and 9999")
    for name in ("checkpoint_id", "parent_id"):
        if row[_ROW_NAMES.index(name)] == "":
            wrong.append(f"{name} is '' (an id is never empty)")
    if wrong:
        raise CheckpointFileError(f"The row of {where} is malformed: {'; '.join(wrong)}.")


def row_text(value: Any, what: str) -> str:
    if type(value) is not str:
        raise CheckpointFileError(f"{what} should be text, found {value!r}.")
    return value


def row_seq(value: Any, what: str) -> int:
    """A write's `seq` column: an integer (the order writes arrived in)."""
    if type(value) is not int:
        raise CheckpointFileError(f"{what} should be an integer, found {value!r:.60}.")
    return value


# --- opening a file -------------------------------------------------------------------------

_SQLITE_MAGIC = b"SQLite format 3\x00"


def inspect_file(path: str, where: str) -> bool:
    """Whether the file is blank (missing, empty, or SQLite without tables); else check it.

    Only reads the file, so a failed open changes nothing, and leaves no `-wal` or `-shm`
    file behind: a database in WAL mode that no one has open (it has no `-wal` file) is read
    as immutable, since a read-only connection would create both files and could not remove
    them.

    Raises:
        CheckpointFileError: not SQLite, another application's database, or a schema this
            nbgraph cannot read.
    """
    if not os.path.exists(path):
        return True
    if os.path.isdir(path):
        raise CheckpointFileError(f"{where} is a directory; expected an nbgraph checkpoint file.")
    expected = f"expected an nbgraph checkpoint database (SQLite, format {FORMAT!r})"
    try:
        with open(path, "rb") as file:
            header = file.read(100)
    except OSError as error:
        raise CheckpointFileError(f"{where} could not be read ({error}); {expected}.") from None
    if not header:
        return True
    if not header.startswith(_SQLITE_MAGIC):
        raise CheckpointFileError(
            f"{where} is not an SQLite database (it does not start with 'SQLite format 3'); "
            f"{expected}."
        )
    wal_mode = header[18:20] == b"\x02\x02"
    immutable = wal_mode and not os.path.exists(path + "-wal")
    uri = Path(path).absolute().as_uri() + ("?mode=ro&immutable=1" if immutable else "?mode=ro")
    try:
        conn = sqlite3.connect(uri, uri=True, timeout=30.0, isolation_level=None)
        try:
            query = "SELECT name FROM sqlite_master WHERE type = 'table'"
            tables = {name for (name,) in conn.execute(query)}
            if tables:
                _check_meta(conn, tables, where, expected)
        finally:
            conn.close()
    except (sqlite3.DatabaseError, UnicodeDecodeError) as error:
        raise CheckpointFileError(
            f"{where} cannot be read as SQLite ({error}); {expected}."
        ) from None
    return not tables


@contextlib.contextmanager
def reading(where: str, action: str = "read") -> Iterator[None]:
    """Reading rows (or writing them: `action`): a damaged file's errors (a malformed page,
    text that is not UTF-8) as `CheckpointFileError` naming `where`; a busy or locked
    database's errors as they are."""
    try:
        yield
    except UnicodeDecodeError as error:
        raise CheckpointFileError(
            f"The checkpoints in {where} cannot be {action}: a row holds text that is not UTF-8 "
            f"({error.reason}); the file is damaged."
        ) from None
    except sqlite3.DatabaseError as error:
        if isinstance(error, sqlite3.OperationalError | sqlite3.IntegrityError) and (
            "decode" not in str(error)
        ):
            raise  # busy, locked, out of disk, a key taken: not a damaged file
        raise CheckpointFileError(
            f"The checkpoints in {where} cannot be {action} ({str(error)[:200]}); the file is "
            "damaged."
        ) from None


def check_connection(conn: sqlite3.Connection, where: str) -> bool:
    """Whether an open connection's database is blank (no tables); else check it is nbgraph's.

    Raises:
        CheckpointFileError: another application's database, or a schema this nbgraph
            cannot read.
    """
    expected = f"expected an nbgraph checkpoint database (SQLite, format {FORMAT!r})"
    try:
        query = "SELECT name FROM sqlite_master WHERE type = 'table'"
        tables = {name for (name,) in conn.execute(query)}
        if tables:
            _check_meta(conn, tables, where, expected)
    except (sqlite3.DatabaseError, UnicodeDecodeError) as error:
        raise CheckpointFileError(f"{where} cannot be read ({error}); {expected}.") from None
    return not tables


def connection_file(conn: sqlite3.Connection) -> str:
    """The file of a connection's main database, or `":memory:"` for one in memory."""
    for _, name, file in conn.execute("PRAGMA database_list"):
        if name == "main":
            return file or ":memory:"
    return ":memory:"


def _check_meta(conn: sqlite3.Connection, tables: set[str], where: str, expected: str) -> None:
    if "nbgraph_meta" not in tables:
        names = ", ".join(sorted(tables))
        raise CheckpointFileError(
            f"{where} is an SQLite database of another application (its tables: {names}); "
            f"{expected}, which has a table nbgraph_meta."
        )
    try:
        meta = dict(conn.execute("SELECT key, value FROM nbgraph_meta").fetchall())
    except (sqlite3.DatabaseError, ValueError, TypeError) as error:
        raise CheckpointFileError(
            f"{where} has an nbgraph_meta table that cannot be read ({error}); {expected}."
        ) from None
    if meta.get("format") != FORMAT:
        raise CheckpointFileError(
            f"{where} is not an nbgraph checkpoint database: its nbgraph_meta table has format "
            f"{meta.get('format')!r}; expected {FORMAT!r}."
        )
    version = meta.get("schema_version")
    try:
        number = int(version)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        number = 0
    if number < 1:
        raise CheckpointFileError(
            f"{where} has no valid schema_version (found {version!r}); expected an integer from "
            f"1 to {SCHEMA_VERSION}."
        )
    if number > SCHEMA_VERSION:
        raise CheckpointFileError(
            f"{where} holds checkpoints in schema version {number}, from a newer nbgraph; this "
            f"nbgraph reads versions up to {SCHEMA_VERSION}. Upgrade nbgraph to open it."
        )
    missing = [name for name in _TABLES if name not in tables]
    if missing:
        raise CheckpointFileError(
            f"{where} is an incomplete nbgraph checkpoint database: the tables "
            f"{', '.join(missing)} are missing."
        )
    for table, columns in _COLUMNS.items():
        found = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
        lacking = [name for name in columns if name not in found]
        if lacking:
            raise CheckpointFileError(
                f"{where} is an incomplete nbgraph checkpoint database: its {table} table has "
                f"no column {', '.join(lacking)}; expected {', '.join(columns)}."
            )


def check_text_thread_id(thread_id: Any) -> None:
    """`check_thread_id`, and one more rule of SQLite: text is stored as UTF-8, which cannot
    hold a lone surrogate (half of an emoji cut from a stream), so such a thread id is
    refused by name before SQLite fails on it.

    Raises:
        ValueError: not a non-empty str.
        InvalidArgumentError: a str SQLite cannot store.
    """
    check_thread_id(thread_id)
    if thread_id.isascii():
        return
    try:
        thread_id.encode("utf-8")
    except UnicodeEncodeError as error:
        bad = thread_id[error.start]
        raise InvalidArgumentError(
            f"SqliteSaver cannot store thread id {thread_id!r}: it holds a lone surrogate "
            f"({bad!r} at index {error.start}), which UTF-8 cannot encode. Use another "
            "thread id (MemorySaver keeps any str)."
        ) from None
