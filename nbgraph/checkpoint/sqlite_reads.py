"""`SqliteSaver`'s bulk reads: a thread's checkpoint rows decoded in one pass, and its
pending writes in one query (its history reads them all at once instead of one query a
checkpoint)."""

from __future__ import annotations

from typing import Any

from nbgraph.checkpoint.base import CheckpointRecord, PendingWrite, record_of_fields
from nbgraph.checkpoint.decoded import Check, Decoded
from nbgraph.checkpoint.payloads import load_payload
from nbgraph.checkpoint.sqlite_file import check_text_thread_id, reading, row_seq, row_text
from nbgraph.codec import nesting
from nbgraph.codec.classes import named_classes

__all__ = ["COLUMNS", "history_slice", "records_of", "shared_slice", "thread_writes"]

COLUMNS = "thread_id, checkpoint_id, parent_id, step, source, created_at, payload, snapshot"
"""A checkpoint row's columns, in the order `records_of` reads them."""


def history_slice(
    saver: Any, thread_id: str, columns: str, start: int, stop: int | None = None
) -> list[CheckpointRecord]:
    """`saver.history(thread_id)[start:stop]` (newest first) in one query reading only
    those rows (`columns`: the saver's checkpoint columns)."""
    with saver._lock, reading(saver._where):
        rows = _slice_rows(saver, thread_id, columns, start, stop)
    return records_of(saver, rows)


def _slice_rows(saver: Any, thread_id: str, columns: str, start: int, stop: int | None) -> list:
    """The rows of `history(thread_id)[start:stop]`, newest first (the caller holds the lock)."""
    check_text_thread_id(thread_id)
    start = max(0, start)
    count = -1 if stop is None else max(0, stop - start)  # (-1: no limit)
    query = (
        f"SELECT {columns} FROM checkpoints WHERE thread_id = ? ORDER BY seq DESC LIMIT ? OFFSET ?"
    )
    return saver._connection().execute(query, (thread_id, count, start)).fetchall()


def shared_slice(
    saver: Any, thread_id: str, start: int, stop: int | None, check: Check
) -> list[CheckpointRecord]:
    """`SqliteSaver.shared_slice`: `history_slice`'s records, each decoded (and `check`ed)
    once and kept in the saver's `_decoded` (`checkpoint.decoded`): the same objects again
    while the row reads the same. Shared: their payloads and snapshots must never change."""
    with saver._lock, reading(saver._where):
        rows = _slice_rows(saver, thread_id, COLUMNS, start, stop)
        cache = saver.__dict__.get("_decoded")
        if cache is None:  # (made on first use, under the saver's lock)
            cache = saver._decoded = Decoded()
    found = cache.threads.get(thread_id, {})
    records = []
    for row in rows:
        kept = found.get(row[1])
        if kept is not None and kept[0] == row:
            records.append(kept[1])
            continue
        record = _plain_record(row)  # (no tags: no classes to name)
        if record is None:  # (tagged or odd: read afresh each time, as `_record` reads it)
            with named_classes(saver.models):
                records.append(check(saver._record(row)))
            continue
        check(record)
        cache.keep(thread_id, row[1], row, record, len(row[6]) + len(row[7] or ""))
        records.append(record)
    return records


def thread_writes(saver: Any, thread_id: str) -> dict[str, list[PendingWrite]]:
    """Every checkpoint's pending writes in the thread, by checkpoint id, each list in
    order of arrival (what `saver.pending_writes` gives for each checkpoint)."""
    check_text_thread_id(thread_id)
    query = (
        "SELECT checkpoint_id, task_id, seq, payload FROM writes WHERE thread_id = ? "
        "ORDER BY checkpoint_id, seq"
    )
    with saver._lock, reading(saver._where):
        rows = saver._connection().execute(query, (thread_id,)).fetchall()
    found: dict[str, list[PendingWrite]] = {}
    with named_classes(saver.models):
        for checkpoint_id, task_id, seq, text in rows:
            where = f"checkpoint {checkpoint_id!r} of thread {thread_id!r} in {saver._where}"
            write = PendingWrite(
                row_text(task_id, f"A write's task id for {where}"),
                row_seq(seq, f"The seq of a write of task {task_id!r} to {where}"),
                load_payload(text, f"Write {seq} of task {task_id!r} to {where}"),
            )
            found.setdefault(checkpoint_id, []).append(write)
    return found


def records_of(saver: Any, rows: list[tuple[Any, ...]]) -> list[CheckpointRecord]:
    """`checkpoints` rows as records, as `saver._record` makes each (a row that is not
    plainly well formed goes through it, for its checks and their messages)."""
    records = []
    with named_classes(saver.models):
        for row in rows:
            record = _plain_record(row)
            records.append(saver._record(row) if record is None else record)
    return records


_TAG, _ESCAPE = '"$type"', "\\u"  # (as `load_payload` reads them: a tag may need decoding)
_DIGITS = bytes.maketrans(b"123456789", b"000000000")
_LONG_NUMBER = b"0" * 19  # (19 digits in a row: maybe an int past 64 bits)


def _loads(text: str) -> Any:
    """`nesting.loads(text)`, by the faster `orjson.loads` where that reads the same data:
    not for text with 19 digits in a row (an int past 64 bits, which orjson reads as a
    float), nor for what orjson refuses and json may read (NaN, 1e400, deep nesting), which
    json reads or refuses saying why (`benchmarks/README.md`, "Timings behind the code")."""
    fast = nesting.orjson()
    if fast is not None:
        data = text.encode("utf-8", "surrogatepass")
        if _LONG_NUMBER not in data.translate(_DIGITS):
            try:
                return fast.loads(data)
            except ValueError:  # (orjson.JSONDecodeError)
                pass
    return nesting.loads(text)


def _plain_record(row: tuple[Any, ...]) -> CheckpointRecord | None:
    """The record of a well-typed row whose texts are JSON without tags; None: else."""
    thread_id, checkpoint_id, parent_id, step, source, created_at, payload, snapshot = row
    if not (
        type(thread_id) is str
        and type(checkpoint_id) is str
        and checkpoint_id
        and (parent_id is None or (type(parent_id) is str and parent_id))
        and type(step) is int
        and type(source) is str
        and type(created_at) is float
        and -62_135_596_800 < created_at < 253_402_300_800  # (`is_time`, inline)
        and type(payload) is str
        and _TAG not in payload
        and _ESCAPE not in payload
        and (snapshot is None or (type(snapshot) is str and _TAG not in snapshot))
        and (snapshot is None or _ESCAPE not in snapshot)
    ):
        return None
    try:
        data = _loads(payload)
        state = None if snapshot is None else _loads(snapshot)
    except Exception:  # (not JSON, too deep...: `_record` says what)
        return None
    return record_of_fields(
        (thread_id, checkpoint_id, parent_id, step, source, created_at, data, state)
    )
