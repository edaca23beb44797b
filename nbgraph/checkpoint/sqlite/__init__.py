"""`SqliteSaver`: checkpoints in an SQLite file (stdlib `sqlite3`, WAL), shared by processes.

The file holds four tables: `nbgraph_meta` (`format` = `"nbgraph.checkpoints"`,
`schema_version` = 1), `checkpoints`, `writes` (pending writes) and `claims` (thread ids
being run). Values are stored as JSON text made by `encode_value`; nothing is pickled.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
from collections.abc import Iterator
from typing import Any

from nbgraph.checkpoint.base import (
    BaseSaver,
    CheckpointRecord,
    PendingWrite,
    check_id,
    check_links,
    check_record,
    missing_checkpoint,
)
from nbgraph.checkpoint.payloads import dump_payload, load_payload
from nbgraph.checkpoint.serde.jsonplus import saver_serde
from nbgraph.checkpoint.sqlite_claims import LIVE_OWNERS, check_unclaimed, new_owner, take_claim
from nbgraph.checkpoint.sqlite_file import (
    FORMAT,
    SCHEMA,
    SCHEMA_VERSION,
    check_connection,
    check_row,
    check_text_thread_id,
    connect,
    connection_file,
    database_path,
    inspect_file,
    reading,
    readonly_uri,
    row_seq,
    row_text,
    writable,
)
from nbgraph.checkpoint.sqlite_reads import COLUMNS as _COLUMNS
from nbgraph.checkpoint.sqlite_reads import history_slice, shared_slice, thread_writes
from nbgraph.checkpoint.subthreads import split_key, sub_prefix
from nbgraph.codec.classes import check_models, named_classes
from nbgraph.errors import CheckpointFileError, NbgraphError

__all__ = ["ReadOnlyCheckpointError", "SqliteSaver"]

_LAST_SEQ = "SELECT COALESCE(MAX(seq), 0) FROM checkpoints"


class ReadOnlyCheckpointError(NbgraphError, PermissionError):
    """A saver opened read-only was asked to write (a checkpoint, pending writes, a claim)."""


class SqliteSaver(BaseSaver):
    """Keeps checkpoints in an SQLite file; each `put` survives the process once it returns.

    Several threads may share one saver, and several processes one file (WAL mode). A claim
    (see `claim`) is a row of the `claims` table, so it holds across processes too; its owner
    is stored as `"host:pid:token"`. A claim left by a killed process is taken over by the
    next claim once that process no longer exists on this host (`os.kill(pid, 0)`); one made
    on another host never is (delete its row by hand if its process is gone).

    Args:
        path: the database file, created if it does not exist or is empty; `":memory:"` for
            a database that lives as long as the saver; or, as LangGraph's `SqliteSaver(conn)`,
            an open `sqlite3.Connection` (open it with `check_same_thread=False` to run
            graphs from several threads), whose database gets nbgraph's tables if it has
            none. The saver uses that connection and leaves it open when it closes. The
            tables are nbgraph's, not LangGraph's: a file written by one library is not read
            by the other.
        fsync: also wait for the disk on every commit (survives a power cut, much slower);
            without it a commit survives a killed process or kernel.
        models: classes (pydantic models, dataclasses, Enums) the values read back may be,
            besides those of modules imported already; reading never imports a module.
        readonly: open the file only to read it (`get`, `history`, `Run.from_checkpointer`);
            writing raises `ReadOnlyCheckpointError`. By default (`None`) a file this
            process may not write (or whose folder it may not write) is opened read-only.
        serde: LangGraph's serializer argument: None or nbgraph's `JsonPlusSerializer`.

    Raises:
        CheckpointFileError: the file (named) is not an SQLite database, is another
            application's, holds a newer schema, or, read-only, does not exist. A failed
            open leaves the file as it was.
        InvalidArgumentError: `path` is empty or not a path.

    >>> from nbgraph.checkpoint import CheckpointRecord
    >>> with SqliteSaver(":memory:") as saver:
    ...     saver.put(CheckpointRecord("t1", "c1", None, 0, "input", 0.0, {"n": 1}))
    ...     [record.checkpoint_id for record in saver.history("t1")]
    ['c1']
    """

    @classmethod
    @contextlib.contextmanager
    def from_conn_string(cls, conn_string: str, **options: Any) -> Iterator[SqliteSaver]:
        """A saver on the file `conn_string` (or `":memory:"`), closed when the block ends, as
        LangGraph's: `with SqliteSaver.from_conn_string("checkpoints.db") as saver: ...`.

        `options` are `SqliteSaver`'s keyword arguments (`fsync`, `models`, `readonly`).
        """
        saver = cls(conn_string, **options)
        try:
            yield saver
        finally:
            saver.close()

    def __init__(
        self,
        path: str | os.PathLike[str] | sqlite3.Connection,
        *,
        fsync: bool = False,
        models: Any = None,
        readonly: bool | None = None,
        serde: Any = None,
    ) -> None:
        self.serde = saver_serde(serde, type(self).__name__)  # (LangGraph's `serde=`)
        self.fsync, self.readonly = fsync, bool(readonly)
        self.models = check_models(models)
        self._lock = threading.RLock()
        self._held: dict[str, str] = {}  # owner token -> thread id, for the claims of this saver
        self._known: set[tuple[str, str]] = set()  # checkpoints this saver put: no need to look
        self._conn: sqlite3.Connection | None = None
        self._owned = not isinstance(path, sqlite3.Connection)  # closed with the saver
        if not self._owned:
            self._adopt(path)  # type: ignore[arg-type]
            return
        self.path = database_path(path)
        if self.path == ":memory:":
            self._where = "the in-memory SQLite database"
            self._conn = connect(":memory:")
            self._create_schema()
            return
        self._where = f"file {self.path!r}"
        blank = inspect_file(self.path, f"File {self.path!r}")
        if readonly is None:
            self.readonly = not blank and not writable(self.path)
        if self.readonly:
            self._open_readonly(blank)
            return
        try:
            self._conn = connect(self.path)
            self._conn.execute("PRAGMA journal_mode=WAL")
            # WAL + NORMAL: every commit survives the process (a killed kernel) without waiting
            # on the disk; fsync=True also waits for it, to survive a power cut.
            self._conn.execute(f"PRAGMA synchronous={'FULL' if self.fsync else 'NORMAL'}")
            if blank:
                self._create_schema()
        except sqlite3.Error as error:
            self.close()
            raise CheckpointFileError(
                f"File {self.path!r} could not be opened as a checkpoint database ({error})."
            ) from error

    def __repr__(self) -> str:
        return f"SqliteSaver({self.path!r}{', readonly=True' if self.readonly else ''})"

    def _adopt(self, conn: sqlite3.Connection) -> None:
        """Use an open connection (LangGraph's `SqliteSaver(conn)`), adding nbgraph's tables
        to its database if it has none."""
        self.path = connection_file(conn)
        self._where = f"the database {self.path!r} of an sqlite3.Connection"
        self._conn = conn
        where = f"The database {self.path!r} of the sqlite3.Connection given to SqliteSaver"
        if check_connection(conn, where):  # blank: give it the tables
            if self.readonly:
                raise CheckpointFileError(f"{where} holds no checkpoint database to read.")
            if self.path != ":memory:":
                conn.execute("PRAGMA journal_mode=WAL")
            self._create_schema()

    def _open_readonly(self, blank: bool) -> None:
        if blank:
            raise CheckpointFileError(
                f"File {self.path!r} holds no checkpoint database to read (opened read-only)."
            )
        try:
            self._conn = connect(readonly_uri(self.path), uri=True)
        except sqlite3.Error as error:
            raise CheckpointFileError(
                f"File {self.path!r} could not be opened read-only ({error})."
            ) from error

    # --- checkpoints --------------------------------------------------------------------

    batches = True  # (durability "async": the engine hands it checkpoints in `put_batch`es)

    def put(self, record: CheckpointRecord) -> None:
        self.put_batch([("put", (record,))])

    def put_batch(self, ops: list[tuple[str, tuple]]) -> None:
        """Store checkpoints and pending writes in order, in one transaction: `("put",
        (record,))` as `put`, `("write", (thread_id, checkpoint_id, task_id, payload))` as
        `put_write`. If one holds a value that cannot be saved, those before it are stored
        and its error raised (none after it is); any other failure stores none of them."""
        encoded: list[Any] = []
        refused: Exception | None = None
        for kind, args in ops:  # (encoded before the transaction: the file is held less)
            try:
                encoded.append(
                    self._encode_record(*args) if kind == "put" else self._encode_write(*args)
                )
            except Exception as error:
                refused = error
                break
        if refused is not None and not encoded:
            raise refused
        added: list[tuple[str, str]] = []  # known while the transaction runs, kept if it commits
        try:
            with self._transaction() as conn:
                seq = None  # the last seq taken: read once a transaction (it holds the file)
                for (kind, args), text in zip(ops[: len(encoded)], encoded, strict=True):
                    if kind == "put":
                        if seq is None:
                            (seq,) = conn.execute(_LAST_SEQ).fetchone()
                        seq += 1
                        added.append(self._insert_record(conn, args[0], text, seq))
                        self._known.add(added[-1])
                    else:
                        self._insert_write(conn, *args[:3], text)
        except BaseException:
            self._known.difference_update(added)
            raise
        if refused is not None:
            raise refused

    def _encode_record(self, record: CheckpointRecord) -> tuple[str, str | None]:
        check_record(record)
        check_text_thread_id(record.thread_id)
        self._check_writable("save a checkpoint")
        what = f"Checkpoint {record.checkpoint_id!r} of thread {record.thread_id!r}"
        thread = f"SqliteSaver {self.path!r}, thread {record.thread_id!r}"
        payload = dump_payload(record.payload, f"{what} (step {record.step})", thread)
        snapshot = None
        if record.snapshot is not None:
            snapshot = dump_payload(record.snapshot, f"The state saved with {what}", thread)
        return payload, snapshot

    def _insert_record(
        self, conn: sqlite3.Connection, record: CheckpointRecord, text: tuple, seq: int
    ) -> tuple[str, str]:
        key = (record.thread_id, record.checkpoint_id)
        has = "SELECT 1 FROM checkpoints WHERE thread_id = ? AND checkpoint_id = ?"
        # a parent this saver put is there (delete_thread forgets its own); others: look
        parent_found = (
            record.parent_id is None
            or (record.thread_id, record.parent_id) in self._known
            or conn.execute(has, (record.thread_id, record.parent_id)).fetchone()
        )
        duplicate = key in self._known or (not parent_found and conn.execute(has, key).fetchone())
        # a missing parent: the file lost a checkpoint a run read from it (changed or damaged)
        error = ValueError if parent_found else CheckpointFileError
        check_links(record, duplicate=bool(duplicate), parent_found=bool(parent_found),
                    error=error, where=f" in {self._where}")  # fmt: skip
        try:
            conn.execute(
                f"INSERT INTO checkpoints ({_COLUMNS}, seq) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (*key, record.parent_id, record.step, record.source, float(record.created_at),
                 *text, seq),
            )  # fmt: skip
        except sqlite3.IntegrityError:  # the id was taken (by another saver on the file)...
            if conn.execute(has, key).fetchone() is not None:
                check_links(record, duplicate=True, parent_found=True)
            raise CheckpointFileError(f"{self._where}: its index is damaged.") from None  # ...or
        return key

    def get(self, thread_id: str, checkpoint_id: str | None = None) -> CheckpointRecord | None:
        check_text_thread_id(thread_id)
        select = f"SELECT {_COLUMNS} FROM checkpoints WHERE thread_id = ?"
        with self._lock, reading(self._where):
            if checkpoint_id is None:
                query = (f"{select} ORDER BY seq DESC LIMIT 1", (thread_id,))
            else:
                query = (f"{select} AND checkpoint_id = ?", (thread_id, checkpoint_id))
            row = self._connection().execute(*query).fetchone()
        return None if row is None else self._record(row)

    def history(self, thread_id: str) -> list[CheckpointRecord]:
        return history_slice(self, thread_id, _COLUMNS, 0)

    def history_slice(self, thread_id: str, start: int, stop: int | None = None) -> list:
        return history_slice(self, thread_id, _COLUMNS, start, stop)

    def history_ids(self, thread_id: str) -> list[str]:
        check_text_thread_id(thread_id)
        query = "SELECT checkpoint_id FROM checkpoints WHERE thread_id = ? ORDER BY seq DESC"
        with self._lock, reading(self._where):
            return [row[0] for row in self._connection().execute(query, (thread_id,))]

    def threads(self) -> list[str]:
        query = "SELECT thread_id FROM checkpoints GROUP BY thread_id ORDER BY MIN(seq)"
        with self._lock, reading(self._where):
            return [thread_id for (thread_id,) in self._connection().execute(query)]

    def _record(self, row: tuple[Any, ...]) -> CheckpointRecord:
        thread_id, checkpoint_id, parent_id, step, source, created_at, payload, snapshot = row
        where = f"checkpoint {checkpoint_id!r} of thread {thread_id!r} in {self._where}"
        check_row(row, where)
        with named_classes(self.models):
            return CheckpointRecord(
                thread_id,
                checkpoint_id,
                parent_id,
                step,
                source,
                float(created_at),
                load_payload(payload, f"The payload of {where}"),
                None if snapshot is None else load_payload(snapshot, f"The snapshot of {where}"),
            )

    # --- pending writes -----------------------------------------------------------------

    def put_write(self, thread_id: str, checkpoint_id: str, task_id: str, payload: Any) -> None:
        self.put_batch([("write", (thread_id, checkpoint_id, task_id, payload))])

    def _encode_write(self, thread_id: str, checkpoint_id: str, task_id: str, payload: Any) -> str:
        check_text_thread_id(thread_id)
        check_id("checkpoint id", checkpoint_id)
        check_id("task id", task_id)
        self._check_writable("save a task's writes")
        what = f"The writes of task {task_id!r} of thread {thread_id!r}"
        return dump_payload(payload, what, f"SqliteSaver {self.path!r}, thread {thread_id!r}")

    def _insert_write(
        self, conn: sqlite3.Connection, thread_id: str, checkpoint_id: str, task_id: str, text: str
    ) -> None:
        key = (thread_id, checkpoint_id)
        if key not in self._known:  # (a checkpoint this saver put is there)
            has = "SELECT 1 FROM checkpoints WHERE thread_id = ? AND checkpoint_id = ?"
            if conn.execute(has, key).fetchone() is None:
                raise missing_checkpoint(thread_id, checkpoint_id)
        next_seq = "SELECT COALESCE(MAX(seq), 0) + 1 FROM writes WHERE thread_id = ? AND "
        (seq,) = conn.execute(next_seq + "checkpoint_id = ?", key).fetchone()
        conn.execute("INSERT INTO writes VALUES (?, ?, ?, ?, ?)", (*key, task_id, seq, text))

    def pending_writes(self, thread_id: str, checkpoint_id: str) -> list[PendingWrite]:
        check_text_thread_id(thread_id)
        query = (
            "SELECT task_id, seq, payload FROM writes WHERE thread_id = ? AND checkpoint_id = ? "
            "ORDER BY seq"
        )
        with self._lock, reading(self._where):
            rows = self._connection().execute(query, (thread_id, checkpoint_id)).fetchall()
        where = f"checkpoint {checkpoint_id!r} of thread {thread_id!r} in {self._where}"
        with named_classes(self.models):
            return [
                PendingWrite(
                    row_text(task_id, f"A write's task id for {where}"),
                    row_seq(seq, f"The seq of a write of task {task_id!r} to {where}"),
                    load_payload(text, f"Write {seq} of task {task_id!r} to {where}"),
                )
                for task_id, seq, text in rows
            ]

    def thread_writes(self, thread_id: str) -> dict[str, list[PendingWrite]]:
        """Every checkpoint's `pending_writes` in the thread, by checkpoint id: one query."""
        return thread_writes(self, thread_id)

    def delete_thread(self, thread_id: Any) -> None:
        """Delete a thread's checkpoints and pending writes, as LangGraph's `delete_thread`
        (an unknown thread id is fine: nothing to delete).

        Raises:
            ThreadBusyError: a run (of any process) holds the thread.
        """
        thread_id = str(thread_id)
        check_text_thread_id(thread_id)
        self._check_writable("delete a thread")
        with self._transaction() as conn:
            check_unclaimed(conn, thread_id)
            subs = (thread_id, *sub_prefix(thread_id))  # (and its subgraphs' threads)
            where = "thread_id = ? OR substr(thread_id, 1, ?) = ?"
            conn.execute(f"DELETE FROM writes WHERE {where}", subs)
            conn.execute(f"DELETE FROM checkpoints WHERE {where}", subs)
        self._known = {key for key in self._known if split_key(key[0])[0] != thread_id}

    # --- claims -------------------------------------------------------------------------

    def _acquire(self, thread_id: str) -> str:
        check_text_thread_id(thread_id)
        self._check_writable("claim a thread to run it")
        owner = new_owner()
        LIVE_OWNERS.add(owner)  # before the row exists, so no saver here takes it for stale
        try:
            with self._transaction() as conn:
                take_claim(conn, thread_id, owner)
        except BaseException:
            LIVE_OWNERS.discard(owner)
            raise
        self._held[owner] = thread_id
        return owner

    def _release(self, thread_id: str, token: str) -> None:
        try:
            with self._lock:
                if self._conn is not None and self._held.pop(token, None) is not None:
                    with self._transaction() as conn:
                        delete = "DELETE FROM claims WHERE thread_id = ? AND owner = ?"
                        conn.execute(delete, (thread_id, token))
        finally:
            LIVE_OWNERS.discard(token)  # a row left behind is stale now, and taken over

    # --- the connection -----------------------------------------------------------------

    def close(self) -> None:
        """Release this saver's claims and close the database (not a connection it was
        given: that stays open); closing twice is fine."""
        with self._lock:
            if self._conn is None:
                return
            for token, thread_id in list(self._held.items()):
                with contextlib.suppress(sqlite3.Error):
                    self._release(thread_id, token)
            if self._owned:
                self._conn.close()
            self._conn = None

    def _check_writable(self, doing: str) -> None:
        if self.readonly:
            raise ReadOnlyCheckpointError(
                f"Cannot {doing}: {self._where} was opened read-only (this process may not "
                "write it, or readonly=True was passed). Copy the file somewhere writable, or "
                "open it with write access, to run on its threads."
            )

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            raise ValueError(f"{self!r} is closed.")
        return self._conn

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """A write transaction that holds the file's write lock from its start (a damaged
        file's errors as `CheckpointFileError`, as `reading` says)."""
        with self._lock, reading(self._where, "written"):
            conn = self._connection()
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise

    def _create_schema(self) -> None:
        with self._transaction() as conn:
            for statement in SCHEMA:
                conn.execute(statement)
            conn.executemany(
                "INSERT OR IGNORE INTO nbgraph_meta VALUES (?, ?)",
                [("format", FORMAT), ("schema_version", str(SCHEMA_VERSION))],
            )


SqliteSaver.lists_by_time = True  # list() of several threads: newest first across them (LangGraph)
SqliteSaver.shared_slice = shared_slice  # (`sqlite_reads`: records decoded once, shared)
