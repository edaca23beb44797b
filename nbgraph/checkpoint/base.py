"""What a saver stores (checkpoint records, pending writes) and what every saver offers."""

from __future__ import annotations

import abc
import contextlib
import functools
from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple, TypedDict

from nbgraph.checkpoint.tuples import CheckpointTuple, checkpoint_tuple, list_checkpoints
from nbgraph.errors import NbgraphError

__all__ = [
    "BaseCheckpointSaver",
    "BaseSaver",
    "Checkpoint",
    "CheckpointMetadata",
    "CheckpointRecord",
    "CheckpointTuple",
    "PendingWrite",
    "ThreadBusyError",
    "check_id",
    "check_links",
    "check_record",
    "check_thread_id",
    "get_checkpoint_id",
    "missing_checkpoint",
    "record_of_fields",
]

_SOURCES = ("input", "loop", "update", "fork")
"""Where a checkpoint came from: a run's input, a superstep, `update_state`, or a fork."""


class ThreadBusyError(NbgraphError, RuntimeError):
    """A thread id is claimed by another run (in this process or, for SQLite, another one).

    Attributes:
        thread_id: the thread id that is busy.
    """

    def __init__(self, thread_id: str, holder: str) -> None:
        super().__init__(
            f"Thread {thread_id!r} is already running ({holder}); two runs on one thread id "
            "would interleave their checkpoints. Wait for that run to finish, or use another "
            "thread id."
        )
        self.thread_id = thread_id


class CheckpointRecord(NamedTuple):
    """One checkpoint of a thread, as a saver stores it (immutable; a named tuple, since
    the engine makes one every checkpointed step).

    Attributes:
        thread_id: the thread it belongs to.
        checkpoint_id: unique within the thread.
        parent_id: the checkpoint it follows in the same thread; `None` for a thread's first.
        step: the superstep number.
        source: one of `_SOURCES`: `"input"`, `"loop"`, `"update"` or `"fork"`.
        created_at: when it was made, as `time.time()`.
        payload: what the engine keeps of this step: any value `encode_value` takes.
        snapshot: the full state, if the engine stores one here; `None` means not stored.
    """

    thread_id: str
    checkpoint_id: str
    parent_id: str | None
    step: int
    source: str
    created_at: float
    payload: Any
    snapshot: Any = None


record_of_fields = functools.partial(tuple.__new__, CheckpointRecord)
"""`record_of_fields((thread_id, checkpoint_id, ..., snapshot))`: a `CheckpointRecord` of all
eight fields, made without a Python call (a saver makes one per checkpoint it reads)."""


@dataclass(frozen=True)
class PendingWrite:
    """A finished task's writes, saved as the task finished, before its step's checkpoint.

    Attributes:
        task_id: the task that wrote them.
        seq: order of arrival among the writes saved against one checkpoint, from 1.
        payload: the writes, any value `encode_value` takes.
    """

    task_id: str
    seq: int
    payload: Any


_DONE = object()


class BaseSaver(abc.ABC):
    """Stores the checkpoints and pending writes of threads; see `MemorySaver`, `SqliteSaver`.

    Values go in and come out through JSON (`encode_value`), so what `get` returns never
    shares objects with what was put, and nothing is pickled.
    """

    @abc.abstractmethod
    def put(self, record: CheckpointRecord) -> None:
        """Store `record`, durable once this returns.

        Raises:
            ValueError: the record is malformed, its `checkpoint_id` is already in its thread,
                or its `parent_id` is not.
        """

    @abc.abstractmethod
    def get(self, thread_id: str, checkpoint_id: str | None = None) -> CheckpointRecord | None:
        """The checkpoint `checkpoint_id` of a thread, or its latest put; `None` if none."""

    @abc.abstractmethod
    def history(self, thread_id: str) -> list[CheckpointRecord]:
        """Every checkpoint of a thread, newest (latest put) first; `[]` for an unknown thread."""

    def history_slice(
        self, thread_id: str, start: int, stop: int | None = None
    ) -> list[CheckpointRecord]:
        """`history(thread_id)[start:stop]` (newest first), reading only those checkpoints
        (savers override it; the history's reader reads a thread's newest ones first)."""
        return self.history(thread_id)[start:stop]

    def history_ids(self, thread_id: str) -> list[str]:
        """The checkpoint ids of a thread, newest (latest put) first: `history` without
        reading the checkpoints (savers override it to skip decoding them)."""
        return [record.checkpoint_id for record in self.history(thread_id)]

    @abc.abstractmethod
    def put_write(self, thread_id: str, checkpoint_id: str, task_id: str, payload: Any) -> None:
        """Append a finished task's writes against the checkpoint its step started from.

        Raises:
            ValueError: a malformed id, or no such checkpoint in the thread.
        """

    @abc.abstractmethod
    def pending_writes(self, thread_id: str, checkpoint_id: str) -> list[PendingWrite]:
        """The writes saved against a checkpoint, in order of arrival."""

    @abc.abstractmethod
    def threads(self) -> list[str]:
        """The thread ids that have checkpoints, in the order of their first checkpoint (a
        subgraph's thread is listed by its key, `checkpoint.subthreads.sub_key`)."""

    @abc.abstractmethod
    def delete_thread(self, thread_id: Any) -> None:
        """Delete a thread's checkpoints and pending writes (LangGraph's saver method); the
        thread id is taken as `str(thread_id)`, as the engine does with a config's.

        Raises:
            ThreadBusyError: a run holds the thread.
        """

    @contextlib.contextmanager
    def claim(self, thread_id: str) -> Iterator[None]:
        """Hold a thread id for one run: a second claim of it raises until this one exits.

        Claims are not re-entrant: claiming a thread id this very code already holds raises
        too. The claim is released on exit, exception or not.

        Raises:
            ThreadBusyError: the thread id is claimed already.

        >>> from nbgraph.checkpoint import MemorySaver
        >>> saver = MemorySaver()
        >>> with saver.claim("t1"):  # doctest: +IGNORE_EXCEPTION_DETAIL
        ...     with saver.claim("t1"):
        ...         pass
        Traceback (most recent call last):
        ThreadBusyError: Thread 't1' is already running ...
        """
        check_thread_id(thread_id)
        token = self._acquire(thread_id)
        try:
            yield
        finally:
            self._release(thread_id, token)

    @abc.abstractmethod
    def _acquire(self, thread_id: str) -> Any:
        """Claim `thread_id` or raise `ThreadBusyError`; returns what `_release` needs."""

    @abc.abstractmethod
    def _release(self, thread_id: str, token: Any) -> None:
        """Give back a claim `_acquire` made."""

    @abc.abstractmethod
    def close(self) -> None:
        """Release what the saver holds (files, claims); it is not used afterwards."""

    def __enter__(self) -> BaseSaver:
        return self

    def list(
        self,
        config: Mapping[str, Any] | None,
        *,
        filter: Mapping[str, Any] | None = None,
        before: Mapping[str, Any] | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """The checkpoints of `config`'s thread (of every thread if None), newest first, as
        LangGraph's `CheckpointTuple`s (see `nbgraph.checkpoint.tuples`): only `config`'s
        `checkpoint_id` if it names one, only those older than `before`'s, only those whose
        metadata has every item of `filter`, at most `limit`."""
        return list_checkpoints(self, config, filter=filter, before=before, limit=limit)

    def get_tuple(self, config: Mapping[str, Any]) -> CheckpointTuple | None:
        """The checkpoint `config` names (its thread's latest without a `checkpoint_id`, of
        its `checkpoint_ns` or `""`) as LangGraph's `CheckpointTuple`, or None."""
        return checkpoint_tuple(self, config)

    # --- LangGraph's awaitable methods: the synchronous ones, run by `_awaited` -------------

    async def _awaited(self, call: Any, *args: Any) -> Any:
        """How an awaitable method runs its synchronous form: here on the calling thread; a
        saver whose calls wait on a disk runs them on a worker thread."""
        return call(*args)

    async def aget_tuple(self, config: Mapping[str, Any]) -> CheckpointTuple | None:
        """`get_tuple`, awaitable (LangGraph's saver method)."""
        return await self._awaited(self.get_tuple, config)

    async def alist(
        self,
        config: Mapping[str, Any] | None,
        *,
        filter: Mapping[str, Any] | None = None,
        before: Mapping[str, Any] | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        """`list`, as an async iterator (LangGraph's saver method; each tuple read by
        `_awaited`)."""
        found = iter(self.list(config, filter=filter, before=before, limit=limit))
        while (item := await self._awaited(next, found, _DONE)) is not _DONE:
            yield item

    async def adelete_thread(self, thread_id: Any) -> None:
        """`delete_thread`, awaitable (LangGraph's saver method)."""
        await self._awaited(self.delete_thread, thread_id)

    def __exit__(self, *exc_info: object) -> None:
        self.close()


# --- checks shared by the savers ------------------------------------------------------------


def check_thread_id(thread_id: Any) -> None:
    """Raise `ValueError` naming `thread_id` unless it is a non-empty `str`."""
    if not isinstance(thread_id, str) or not thread_id:
        raise ValueError(f"A thread id must be a non-empty str; got {thread_id!r}.")


def check_id(what: str, value: Any) -> None:
    """Raise `ValueError` naming `what` unless `value` is a non-empty `str`."""
    if not isinstance(value, str) or not value:
        raise ValueError(f"A {what} must be a non-empty str; got {value!r}.")


def check_record(record: Any) -> None:
    """Raise one `ValueError` listing every field of `record` that a saver cannot store."""
    if (  # the engine's records, every step: exact types, checked at once
        type(record) is CheckpointRecord
        and type(record.thread_id) is str
        and type(record.checkpoint_id) is str
        and record.thread_id
        and record.checkpoint_id
        and (record.parent_id is None or (type(record.parent_id) is str and record.parent_id))
        and type(record.step) is int
        and type(record.created_at) is float
        and record.source in _SOURCES
    ):
        return
    if not isinstance(record, CheckpointRecord):
        raise ValueError(f"A saver stores CheckpointRecord objects; got {type(record).__name__}.")
    check_thread_id(record.thread_id)
    problems = []
    if not isinstance(record.checkpoint_id, str) or not record.checkpoint_id:
        problems.append(f"checkpoint_id must be a non-empty str, got {record.checkpoint_id!r}")
    if record.parent_id is not None and (
        not isinstance(record.parent_id, str) or not record.parent_id
    ):
        problems.append(f"parent_id must be None or a non-empty str, got {record.parent_id!r}")
    if type(record.step) is not int:
        problems.append(f"step must be an int, got {record.step!r}")
    if record.source not in _SOURCES:
        expected = ", ".join(repr(s) for s in _SOURCES)
        problems.append(f"source must be one of {expected}, got {record.source!r}")
    if type(record.created_at) not in (int, float):
        problems.append(f"created_at must be a float (time.time()), got {record.created_at!r}")
    if problems:
        raise ValueError(
            f"Checkpoint {record.checkpoint_id!r} of thread {record.thread_id!r} cannot be "
            f"stored: {'; '.join(problems)}."
        )


def check_links(
    record: CheckpointRecord,
    *,
    duplicate: bool,
    parent_found: bool,
    error: type[ValueError] = ValueError,
    where: str = "",
) -> None:
    """Raise one `error` (a `ValueError`) if the id is taken in the thread or the parent is
    missing; `where` names the file, for a saver that keeps one."""
    problems = []
    if duplicate:
        problems.append(f"the thread already has a checkpoint {record.checkpoint_id!r}")
    if not parent_found:
        problems.append(f"its parent {record.parent_id!r} is not a checkpoint of that thread")
    if problems:
        raise error(
            f"Checkpoint {record.checkpoint_id!r} of thread {record.thread_id!r} cannot be "
            f"stored{where}: {'; '.join(problems)}."
        )


def missing_checkpoint(thread_id: str, checkpoint_id: str) -> ValueError:
    """The error for writes saved against a checkpoint the thread does not have."""
    return ValueError(
        f"Thread {thread_id!r} has no checkpoint {checkpoint_id!r} to save writes against; "
        "put the checkpoint first."
    )


BaseCheckpointSaver = BaseSaver
"""LangGraph's name of the savers' base class (`langgraph.checkpoint.base`): an annotation or
an `isinstance` check written for LangGraph's works on nbgraph's savers. Its abstract methods
are nbgraph's (`put(record)`, `get`, ...), not LangGraph's channel-versioned ones, so a saver
written against LangGraph's protocol is not one of these (docs/langgraph.md)."""


class Checkpoint(TypedDict, total=False):
    """A checkpoint as `saver.list()`'s `CheckpointTuple.checkpoint` shows it (LangGraph's
    `Checkpoint`; nbgraph's has no channel versions)."""

    v: int
    id: str
    ts: str
    channel_values: dict[str, Any]
    channel_versions: dict[str, Any]
    versions_seen: dict[str, dict[str, Any]]
    updated_channels: list[str] | None


class CheckpointMetadata(TypedDict, total=False):
    """A checkpoint's metadata: where it came from (`"input"`, `"loop"`, `"update"`,
    `"fork"`), its step, and its parents' checkpoint ids by namespace."""

    source: str
    step: int
    parents: dict[str, str]
    run_id: str


def get_checkpoint_id(config: Mapping[str, Any]) -> str | None:
    """The checkpoint id a config names (`configurable.checkpoint_id`), or None.

    >>> get_checkpoint_id({"configurable": {"thread_id": "1", "checkpoint_id": "c"}})
    'c'
    """
    configurable = config.get("configurable") or {}
    return configurable.get("checkpoint_id") or configurable.get("thread_ts")
