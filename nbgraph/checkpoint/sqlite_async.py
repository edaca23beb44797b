"""`AsyncSqliteSaver`: LangGraph's async SQLite saver, on `SqliteSaver`'s file.

The file, its SQL and its checks are `SqliteSaver`'s: this saver holds one and adds
LangGraph's async surface (`from_conn_string` as an `async with`, `aget_tuple`, `alist`,
`aput`, `adelete_thread`). So a file written by one reads with the other. Each awaitable
method runs the file's own method on a worker thread, so the event loop never waits on the
disk; the engine's own calls (a run's checkpoints, `ainvoke`'s and `aget_state`'s reads)
go to the file as they do for `SqliteSaver`.

As LangGraph's, the synchronous `get_tuple`, `list` and `delete_thread` are refused with
`asyncio.InvalidStateError` on the thread of the event loop the saver was made in (call
the awaitable ones there), and run from any other thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Iterator, Mapping
from typing import Any

from nbgraph.checkpoint.base import BaseSaver, CheckpointRecord, PendingWrite
from nbgraph.checkpoint.sqlite import SqliteSaver
from nbgraph.checkpoint.tuples import CheckpointTuple, checkpoint_tuple, list_checkpoints
from nbgraph.errors import InvalidArgumentError

__all__ = ["AsyncSqliteSaver"]


class AsyncSqliteSaver(BaseSaver):
    """Checkpoints in an SQLite file (`SqliteSaver`'s), with LangGraph's async methods.

    Args:
        conn: the database file (or `":memory:"`), or an open `sqlite3.Connection`, as
            `SqliteSaver` takes them. LangGraph's takes an `aiosqlite.Connection`; nbgraph
            refuses one by name (open the file with `from_conn_string` instead).
        options: `SqliteSaver`'s keyword arguments (`fsync`, `models`, `readonly`).

    Raises:
        InvalidArgumentError: `conn` is an `aiosqlite.Connection` or not a path.

    >>> import asyncio
    >>> async def main():
    ...     async with AsyncSqliteSaver.from_conn_string(":memory:") as saver:
    ...         return [item async for item in saver.alist(None)]
    >>> asyncio.run(main())
    []
    """

    lists_by_time = True  # list() of several threads: newest first across them (LangGraph's)

    batches = True  # (durability "async": the engine hands it checkpoints in `put_batch`es)

    def __init__(self, conn: Any, **options: Any) -> None:
        if type(conn).__module__.startswith("aiosqlite"):
            raise InvalidArgumentError(
                "AsyncSqliteSaver keeps its checkpoints in SqliteSaver's file, which it opens "
                "itself; got an aiosqlite connection. Use "
                "`async with AsyncSqliteSaver.from_conn_string('checkpoints.db') as saver:`."
            )
        self.file = SqliteSaver(conn, **options)
        self.serde = self.file.serde  # (LangGraph's `serde=`, one of `options`)
        try:
            self.loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:  # (made outside a loop: its sync methods run anywhere)
            self.loop = None

    @classmethod
    @contextlib.asynccontextmanager
    async def from_conn_string(cls, conn_string: str, **options: Any) -> AsyncIterator[Any]:
        """A saver on the file `conn_string` (or `":memory:"`), closed when the block ends,
        as LangGraph's: `async with AsyncSqliteSaver.from_conn_string("cp.db") as saver:`.

        `options` are `SqliteSaver`'s keyword arguments (`fsync`, `models`, `readonly`).
        """
        if not isinstance(conn_string, str | os.PathLike):
            raise InvalidArgumentError(
                f"AsyncSqliteSaver.from_conn_string needs a file path or ':memory:'; got "
                f"{conn_string!r}."
            )
        saver = await asyncio.to_thread(cls, conn_string, **options)
        saver.loop = asyncio.get_running_loop()
        try:
            yield saver
        finally:
            await asyncio.to_thread(saver.close)

    def __repr__(self) -> str:
        return f"Async{self.file!r}"

    @property
    def path(self) -> str:
        """The database file (`":memory:"` for one in memory)."""
        return self.file.path

    # --- the saver's methods, as the file does them ----------------------------------------

    def put(self, record: CheckpointRecord) -> None:
        self.file.put(record)

    def put_batch(self, ops: list[tuple[str, tuple]]) -> None:
        """`SqliteSaver.put_batch`: checkpoints and writes in one transaction."""
        self.file.put_batch(ops)

    def get(self, thread_id: str, checkpoint_id: str | None = None) -> CheckpointRecord | None:
        return self.file.get(thread_id, checkpoint_id)

    def history(self, thread_id: str) -> list[CheckpointRecord]:
        return self.file.history(thread_id)

    def history_slice(
        self, thread_id: str, start: int, stop: int | None = None
    ) -> list[CheckpointRecord]:
        return self.file.history_slice(thread_id, start, stop)

    def history_ids(self, thread_id: str) -> list[str]:
        return self.file.history_ids(thread_id)

    def put_write(self, thread_id: str, checkpoint_id: str, task_id: str, payload: Any) -> None:
        self.file.put_write(thread_id, checkpoint_id, task_id, payload)

    def pending_writes(self, thread_id: str, checkpoint_id: str) -> list[PendingWrite]:
        return self.file.pending_writes(thread_id, checkpoint_id)

    def thread_writes(self, thread_id: str) -> dict[str, list[PendingWrite]]:
        """`SqliteSaver.thread_writes`: a thread's pending writes in one query."""
        return self.file.thread_writes(thread_id)

    def threads(self) -> list[str]:
        return self.file.threads()

    def _acquire(self, thread_id: str) -> Any:
        return self.file._acquire(thread_id)

    def _release(self, thread_id: str, token: Any) -> None:
        self.file._release(thread_id, token)

    def close(self) -> None:
        """Close the file (a connection given to it stays open); closing twice is fine."""
        self.file.close()

    # --- LangGraph's synchronous methods: refused on the loop's thread ---------------------

    def delete_thread(self, thread_id: Any) -> None:
        """`SqliteSaver.delete_thread`, from a thread other than the event loop's.

        Raises:
            asyncio.InvalidStateError: called on the event loop's thread (await
                `adelete_thread` there).
        """
        self._off_the_loop("await checkpointer.adelete_thread(...)")
        self.file.delete_thread(thread_id)

    def get_tuple(self, config: Mapping[str, Any]) -> CheckpointTuple | None:
        """The checkpoint `config` names (its thread's latest without a `checkpoint_id`) as
        LangGraph's `CheckpointTuple`, or None; from a thread other than the event loop's.

        Raises:
            asyncio.InvalidStateError: called on the event loop's thread (await
                `aget_tuple` there).
        """
        self._off_the_loop("await checkpointer.aget_tuple(...)")
        return checkpoint_tuple(self, config)

    def list(
        self,
        config: Mapping[str, Any] | None,
        *,
        filter: Mapping[str, Any] | None = None,
        before: Mapping[str, Any] | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """`BaseSaver.list`, from a thread other than the event loop's (checked when the
        first tuple is asked for, as LangGraph's).

        Raises:
            asyncio.InvalidStateError: iterated on the event loop's thread (use `alist`).
        """
        self._off_the_loop("checkpointer.alist(...)")
        yield from list_checkpoints(self, config, filter=filter, before=before, limit=limit)

    def _off_the_loop(self, instead: str) -> None:
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            return
        if running is self.loop:
            raise asyncio.InvalidStateError(
                "Synchronous calls to AsyncSqliteSaver are only allowed from a different "
                f"thread. From the event loop's thread, use the async interface: `{instead}` "
                "or `await graph.ainvoke(...)`."
            )

    # --- LangGraph's awaitable methods -----------------------------------------------------

    async def _awaited(self, call: Any, *args: Any) -> Any:
        """Each awaitable method's synchronous form runs on a worker thread (off the loop's,
        so the refusals above do not apply)."""
        return await asyncio.to_thread(call, *args)

    async def aput(self, record: CheckpointRecord) -> None:
        """`put`, awaitable (nbgraph's `CheckpointRecord`, not LangGraph's checkpoint dict)."""
        await self._awaited(self.file.put, record)

    async def aput_write(
        self, thread_id: str, checkpoint_id: str, task_id: str, payload: Any
    ) -> None:
        """`put_write`, awaitable."""
        await self._awaited(self.file.put_write, thread_id, checkpoint_id, task_id, payload)

    async def aclose(self) -> None:
        """`close`, awaitable."""
        await self._awaited(self.file.close)
