"""Checkpoint records decoded once per saver: kept with the stored form they came from.

A history reads every checkpoint of a thread each time it is asked for; most of them have
not changed since the last time. `Decoded` keeps each record a saver decoded (and its
reader checked) with the stored form it came from (`MemorySaver`: the pickle bytes object
itself; `SqliteSaver`: the row), and hands the same record out while the stored form is
still the same. Such a record is shared: whoever reads it must never change its payload or
snapshot (`engine.persistence.history_fold` copies what it lets into a state or a task's
result). The cache is bounded (`LIMIT` bytes of stored forms, then it starts afresh): the
records take many times their stored bytes (measured in `benchmarks/README.md`, "History:
records decoded and checked once per saver").
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

__all__ = ["LIMIT", "Check", "Decoded"]

LIMIT = 4 * 1024 * 1024  # stored bytes (pickles, JSON text) whose records are kept

Check = Callable[[Any], Any]
"""`check(record)`: raises if the record is not as the reader expects it (then it is not
kept); called once for each record decoded afresh."""


class Decoded:
    """Records by thread and checkpoint id, each with the stored form it was decoded from.

    >>> cache = Decoded()
    >>> cache.keep("t", "c1", b"stored", "record", 6)
    >>> cache.found("t", "c1", b"stored"), cache.found("t", "c1", b"other"), cache.size
    ('record', None, 6)
    >>> cache.forget()
    >>> cache.found("t", "c1", b"stored"), cache.size
    (None, 0)
    """

    __slots__ = ("_lock", "limit", "size", "threads")

    def __init__(self, limit: int = LIMIT) -> None:
        self.threads: dict[str, dict[str, tuple[Any, Any]]] = {}
        self.size = 0  # (the stored forms' bytes, about)
        self.limit = limit
        self._lock = threading.Lock()

    def found(self, thread_id: str, checkpoint_id: str, stored: Any) -> Any:
        """The record kept for this checkpoint if it was decoded from `stored` (the same
        object, or equal to it), else None."""
        kept = self.threads.get(thread_id, _EMPTY).get(checkpoint_id)
        if kept is None:
            return None
        form = kept[0]
        return kept[1] if form is stored or form == stored else None

    def keep(self, thread_id: str, checkpoint_id: str, stored: Any, record: Any, size: int) -> None:
        """Keep `record`, decoded from `stored` (`size` bytes); all is forgotten first when
        the cache would outgrow its limit."""
        with self._lock:
            if self.size + size > self.limit:
                self.threads.clear()
                self.size = 0
            if size > self.limit:
                return
            self.threads.setdefault(thread_id, {})[checkpoint_id] = (stored, record)
            self.size += size

    def forget(self) -> None:
        """Forget every record (a thread deleted, the saver closed)."""
        with self._lock:
            self.threads.clear()
            self.size = 0


_EMPTY: dict[str, tuple[Any, Any]] = {}
