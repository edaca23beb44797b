"""`MemorySaver`: checkpoints kept as JSON text in this process's memory, gone with it."""

from __future__ import annotations

import threading
from typing import Any, NamedTuple

from nbgraph.checkpoint.base import (
    BaseSaver,
    CheckpointRecord,
    PendingWrite,
    ThreadBusyError,
    check_id,
    check_links,
    check_record,
    check_thread_id,
    dump_payload,
    load_payload,
    missing_checkpoint,
)


class _Stored(NamedTuple):
    parent_id: str | None
    step: int
    source: str
    created_at: float
    payload: str
    snapshot: str | None


class MemorySaver(BaseSaver):
    """Keeps checkpoints in memory, each value as the JSON text `encode_value` makes of it.

    Safe to share between threads. Storing text rather than the objects keeps what was put
    apart from what `get` returns, exactly as a file would.

    >>> from nbgraph.checkpoint import CheckpointRecord
    >>> saver = MemorySaver()
    >>> saver.put(CheckpointRecord("t1", "c1", None, 0, "input", 0.0, {"n": (1, 2)}))
    >>> saver.get("t1").payload
    {'n': (1, 2)}
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._checkpoints: dict[str, dict[str, _Stored]] = {}  # in order of put
        self._writes: dict[tuple[str, str], list[tuple[str, str]]] = {}
        self._claimed: set[str] = set()

    def __repr__(self) -> str:
        return f"MemorySaver({len(self._checkpoints)} threads)"

    def put(self, record: CheckpointRecord) -> None:
        check_record(record)
        snapshot = None if record.snapshot is None else dump_payload(record.snapshot)
        stored = _Stored(
            record.parent_id,
            record.step,
            record.source,
            float(record.created_at),
            dump_payload(record.payload),
            snapshot,
        )
        with self._lock:
            thread = self._checkpoints.get(record.thread_id, {})
            check_links(
                record,
                duplicate=record.checkpoint_id in thread,
                parent_found=record.parent_id is None or record.parent_id in thread,
            )
            self._checkpoints.setdefault(record.thread_id, thread)[record.checkpoint_id] = stored

    def get(self, thread_id: str, checkpoint_id: str | None = None) -> CheckpointRecord | None:
        check_thread_id(thread_id)
        with self._lock:
            thread = self._checkpoints.get(thread_id)
            if not thread:
                return None
            if checkpoint_id is None:
                checkpoint_id = next(reversed(thread))
            stored = thread.get(checkpoint_id)
        return None if stored is None else _record(thread_id, checkpoint_id, stored)

    def history(self, thread_id: str) -> list[CheckpointRecord]:
        check_thread_id(thread_id)
        with self._lock:
            items = list(self._checkpoints.get(thread_id, {}).items())
        return [_record(thread_id, key, stored) for key, stored in reversed(items)]

    def put_write(self, thread_id: str, checkpoint_id: str, task_id: str, payload: Any) -> None:
        check_thread_id(thread_id)
        check_id("checkpoint id", checkpoint_id)
        check_id("task id", task_id)
        text = dump_payload(payload)
        with self._lock:
            if checkpoint_id not in self._checkpoints.get(thread_id, {}):
                raise missing_checkpoint(thread_id, checkpoint_id)
            self._writes.setdefault((thread_id, checkpoint_id), []).append((task_id, text))

    def pending_writes(self, thread_id: str, checkpoint_id: str) -> list[PendingWrite]:
        check_thread_id(thread_id)
        with self._lock:
            writes = list(self._writes.get((thread_id, checkpoint_id), ()))
        where = f"MemorySaver: a write to checkpoint {checkpoint_id!r} of thread {thread_id!r}"
        return [
            PendingWrite(task_id, seq, load_payload(text, where))
            for seq, (task_id, text) in enumerate(writes, start=1)
        ]

    def threads(self) -> list[str]:
        with self._lock:
            return list(self._checkpoints)

    def _acquire(self, thread_id: str) -> None:
        with self._lock:
            if thread_id in self._claimed:
                raise ThreadBusyError(thread_id, "another claim on this MemorySaver holds it")
            self._claimed.add(thread_id)

    def _release(self, thread_id: str, token: None) -> None:
        with self._lock:
            self._claimed.discard(thread_id)

    def close(self) -> None:
        """Nothing to release: the checkpoints stay readable until the saver is dropped."""


InMemorySaver = MemorySaver
"""LangGraph's name for `MemorySaver`."""


def _record(thread_id: str, checkpoint_id: str, stored: _Stored) -> CheckpointRecord:
    where = f"MemorySaver: checkpoint {checkpoint_id!r} of thread {thread_id!r}"
    snapshot = None if stored.snapshot is None else load_payload(stored.snapshot, where)
    return CheckpointRecord(
        thread_id,
        checkpoint_id,
        stored.parent_id,
        stored.step,
        stored.source,
        stored.created_at,
        load_payload(stored.payload, where),
        snapshot,
    )
