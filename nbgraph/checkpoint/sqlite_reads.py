"""`SqliteSaver`'s bulk reads: a thread's pending writes in one query (its history reads
them all at once instead of one query a checkpoint)."""

from __future__ import annotations

from typing import Any

from nbgraph.checkpoint.base import PendingWrite, check_thread_id, load_payload
from nbgraph.checkpoint.sqlite_file import row_text
from nbgraph.codec.classes import named_classes


def thread_writes(saver: Any, thread_id: str) -> dict[str, list[PendingWrite]]:
    """Every checkpoint's pending writes in the thread, by checkpoint id, each list in
    order of arrival (what `saver.pending_writes` gives for each checkpoint)."""
    check_thread_id(thread_id)
    query = (
        "SELECT checkpoint_id, task_id, seq, payload FROM writes WHERE thread_id = ? "
        "ORDER BY checkpoint_id, seq"
    )
    with saver._lock:
        rows = saver._connection().execute(query, (thread_id,)).fetchall()
    found: dict[str, list[PendingWrite]] = {}
    with named_classes(saver.models):
        for checkpoint_id, task_id, seq, text in rows:
            where = f"checkpoint {checkpoint_id!r} of thread {thread_id!r} in {saver._where}"
            write = PendingWrite(
                row_text(task_id, f"A write's task id for {where}"),
                seq,
                load_payload(text, f"Write {seq} of task {task_id!r} to {where}"),
            )
            found.setdefault(checkpoint_id, []).append(write)
    return found
