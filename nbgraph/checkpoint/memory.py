"""`MemorySaver`: checkpoints kept in this process's memory as private copies, gone with it."""

from __future__ import annotations

import pickle
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
    missing_checkpoint,
    record_of_fields,
)
from nbgraph.checkpoint.decoded import Check, Decoded
from nbgraph.checkpoint.serde.jsonplus import saver_serde
from nbgraph.checkpoint.subthreads import with_sub_keys
from nbgraph.codec.nesting import deep_stack
from nbgraph.isolation import isolate
from nbgraph.primitives import MISSING

__all__ = ["InMemorySaver", "MemorySaver"]


class _Stored(NamedTuple):
    parent_id: str | None
    step: int
    source: str
    created_at: float
    payload: Any
    snapshot: Any


class MemorySaver(BaseSaver):
    """Keeps checkpoints in memory as private copies of what was put.

    Safe to share between threads. Each value is copied when it is put and again when it is
    read, so what was put, what is stored and what `get` returns never share a mutable
    object — as with a file, without the cost of JSON: exact plain data (builtin atoms and
    containers) is kept as pickle bytes (made and read at C speed, never from a file),
    other objects (numpy arrays, models...) as private copies (`_clone`).
    Values come back as they were put (a `SqliteSaver` keeps JSON, and a repr of what JSON
    cannot hold).

    >>> from nbgraph.checkpoint import CheckpointRecord
    >>> saver = MemorySaver()
    >>> saver.put(CheckpointRecord("t1", "c1", None, 0, "input", 0.0, {"n": (1, 2)}))
    >>> saver.get("t1").payload
    {'n': (1, 2)}
    """

    def __init__(self, *, serde: Any = None) -> None:
        self.serde = saver_serde(serde, type(self).__name__)  # (LangGraph's `serde=`)
        self._lock = threading.Lock()
        self._checkpoints: dict[str, dict[str, _Stored]] = {}  # in order of put
        self._writes: dict[tuple[str, str], list[tuple[str, str]]] = {}
        self._claimed: set[str] = set()
        self._decoded = Decoded()  # (`shared_slice`'s records)

    def __repr__(self) -> str:
        return f"MemorySaver({len(self._checkpoints)} threads)"

    def put(self, record: CheckpointRecord) -> None:
        check_record(record)
        stored = _Stored(
            record.parent_id,
            record.step,
            record.source,
            float(record.created_at),
            _keep(record.payload),
            None if record.snapshot is None else _keep(record.snapshot),
        )
        checkpoint_id, parent_id = record.checkpoint_id, record.parent_id
        with self._lock:
            thread = self._checkpoints.get(record.thread_id)
            if thread is None or checkpoint_id in thread or parent_id not in thread:
                thread = {} if thread is None else thread  # (a thread's first, or a refusal)
                check_links(
                    record,
                    duplicate=checkpoint_id in thread,
                    parent_found=parent_id is None or parent_id in thread,
                )
                self._checkpoints[record.thread_id] = thread
            thread[checkpoint_id] = stored

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

    def history_slice(
        self, thread_id: str, start: int, stop: int | None = None
    ) -> list[CheckpointRecord]:
        check_thread_id(thread_id)
        with self._lock:
            items = list(self._checkpoints.get(thread_id, {}).items())
        items.reverse()
        return [_record(thread_id, key, stored) for key, stored in items[start:stop]]

    def shared_slice(
        self, thread_id: str, start: int, stop: int | None, check: Check
    ) -> list[CheckpointRecord]:
        """`history_slice`'s records, each unpickled (and `check`ed) once and kept
        (`checkpoint.decoded`): the same objects again while the checkpoint is stored as it
        was. Shared: their payloads and snapshots must never be changed."""
        check_thread_id(thread_id)
        with self._lock:
            items = list(self._checkpoints.get(thread_id, {}).items())
        items.reverse()
        cache = self._decoded
        found = cache.threads.get(thread_id, {})
        records = []
        for key, stored in items[start:stop]:
            kept = found.get(key)
            if kept is not None and kept[0] is stored:
                records.append(kept[1])
                continue
            record = _record(thread_id, key, stored)
            check(record)
            payload, snapshot = stored.payload, stored.snapshot
            if type(payload) is bytes and (snapshot is None or type(snapshot) is bytes):
                size = len(payload) + (0 if snapshot is None else len(snapshot))
                cache.keep(thread_id, key, stored, record, size)  # (plain data only)
            records.append(record)
        return records

    def history_ids(self, thread_id: str) -> list[str]:
        check_thread_id(thread_id)
        with self._lock:
            return list(reversed(self._checkpoints.get(thread_id, {})))

    def put_write(self, thread_id: str, checkpoint_id: str, task_id: str, payload: Any) -> None:
        check_thread_id(thread_id)
        check_id("checkpoint id", checkpoint_id)
        check_id("task id", task_id)
        kept = _keep(payload)
        with self._lock:
            if checkpoint_id not in self._checkpoints.get(thread_id, {}):
                raise missing_checkpoint(thread_id, checkpoint_id)
            self._writes.setdefault((thread_id, checkpoint_id), []).append((task_id, kept))

    def pending_writes(self, thread_id: str, checkpoint_id: str) -> list[PendingWrite]:
        check_thread_id(thread_id)
        with self._lock:
            writes = list(self._writes.get((thread_id, checkpoint_id), ()))
        return [
            PendingWrite(task_id, seq, _give(kept))
            for seq, (task_id, kept) in enumerate(writes, start=1)
        ]

    def thread_writes(self, thread_id: str) -> dict[str, list[PendingWrite]]:
        """Every checkpoint's `pending_writes` in the thread, by checkpoint id (those with any)."""
        check_thread_id(thread_id)
        with self._lock:
            found = [(key[1], list(w)) for key, w in self._writes.items() if key[0] == thread_id]
        return {
            checkpoint_id: [
                PendingWrite(task_id, seq, _give(kept))
                for seq, (task_id, kept) in enumerate(writes, start=1)
            ]
            for checkpoint_id, writes in found
        }

    def threads(self) -> list[str]:
        with self._lock:
            return list(self._checkpoints)

    def delete_thread(self, thread_id: Any) -> None:
        """Delete a thread's checkpoints and pending writes, as LangGraph's `delete_thread`
        (an unknown thread id is fine: nothing to delete).

        Raises:
            ThreadBusyError: a run holds the thread.
        """
        thread_id = str(thread_id)
        check_thread_id(thread_id)
        with self._lock:
            if thread_id in self._claimed:
                raise ThreadBusyError(thread_id, "a run on this MemorySaver holds it")
            gone = set(with_sub_keys(self._checkpoints, thread_id))  # (and its subgraphs')
            for name in gone:
                self._checkpoints.pop(name, None)
            for key in [key for key in self._writes if key[0] in gone]:
                del self._writes[key]
        self._decoded.forget()

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
    parent_id, step, source, created_at, payload, snapshot = stored
    return record_of_fields(
        (
            thread_id,
            checkpoint_id,
            parent_id,
            step,
            source,
            created_at,
            pickle.loads(payload) if type(payload) is bytes else _give(payload),  # (`_give`'s)
            None if snapshot is None else _give(snapshot),
        )
    )


class _Objects(NamedTuple):
    """A stored value that is not exact plain data (models, messages...): a private copy."""

    value: Any


def _keep(value: Any) -> Any:
    """What the saver stores for `value`: pickle bytes when it is exact plain data (a
    C-speed copy that keeps tuples, sets and non-str keys), else a private copy of the objects.
    """
    try:
        return _pickled(value)
    except (_NotPlain, pickle.PicklingError, RecursionError):  # (deep: copied, with room)
        pass
    try:
        return _Objects(_clone(value))
    except RecursionError:  # a deeply nested value: again, with room for it
        with deep_stack():
            return _Objects(_clone(value))


class _NotPlain(Exception):
    """A value holds an object that is not exact plain data."""


class _PlainPickler(pickle.Pickler):
    """Pickles exact plain data only, at C speed: the C pickler writes None, bools and exact
    int, float, str, bytes, list, tuple, dict, set and frozenset itself, and asks
    `reducer_override` about every other object (subclasses, numpy arrays and scalars,
    `bytearray` under protocol 4, classes...), which refuses it.

    Plainness is not checked in Python first: a pickle of plain data holds no reference to
    a class or function, so reading it back calls no code (the bytes never leave the saver).
    """

    def reducer_override(self, obj: Any) -> Any:
        raise _NotPlain


_PICKLERS = threading.local()  # each thread's pickler and its output, reused


def _pickled(value: Any) -> bytes:
    """`value` pickled, if it is exact plain data.

    Raises:
        _NotPlain: it holds any other object (`pickle.PicklingError`: a `PickleBuffer`).
        RecursionError: it nests deeper than the stack.

    >>> pickle.loads(_pickled({"a": [1, (2.0, "x")], 3: {None}}))
    {'a': [1, (2.0, 'x')], 3: {None}}
    >>> type(_keep([bytearray(b"x")])).__name__  # (not plain: copied as objects)
    '_Objects'
    """
    made = getattr(_PICKLERS, "made", None)
    if made is None:
        out: list[bytes] = []
        made = _PlainPickler(_Sink(out.append), 4), out
    _PICKLERS.made = None  # (taken while in use)
    pickler, out = made
    try:
        pickler.dump(value)
        return b"".join(out)
    finally:
        out.clear()
        pickler.clear_memo()
        _PICKLERS.made = made


class _Sink(NamedTuple):
    """The file a pickler writes to: `write` appends to a list."""

    write: Any


def _give(stored: Any) -> Any:
    """A fresh copy of a stored value, for a reader to own."""
    if stored is None:  # (a checkpoint without a snapshot)
        return None
    if type(stored) is bytes:
        return pickle.loads(stored)
    try:
        return _clone(stored.value)
    except RecursionError:
        with deep_stack():
            return _clone(stored.value)


_ATOMS = frozenset({int, float, str, bool, type(None), bytes, complex, type(MISSING)})


def _clone(value: Any) -> Any:
    """A copy of `value` that shares no mutable object with it (atoms are shared).

    Plain containers are copied here, level by level, which is faster than
    `copy.deepcopy`; anything else goes through `isolate` (deepcopy, or the value itself
    when it cannot be copied).

    >>> data = {"log": [1, (2, [3])]}
    >>> copied = _clone(data)
    >>> copied == data, copied["log"][1][1] is data["log"][1][1]
    (True, False)
    """
    kind = type(value)
    if kind in _ATOMS:
        return value
    if kind is dict:
        return {key: _clone(item) for key, item in value.items()}
    if kind is list or kind is tuple:
        for item in value:
            if type(item) not in _ATOMS:
                copied = [_clone(item) for item in value]
                return copied if kind is list else tuple(copied)
        return value[:] if kind is list else value
    return isolate(value)
