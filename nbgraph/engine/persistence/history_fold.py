"""A thread's history rebuilt oldest first: each state its parent's plus its delta.

`Thread.history` yields the newest checkpoint from its nearest snapshot alone (reading one
state reads only its chain), then reads the rest of the thread at once: its checkpoints in
one read and, when the saver can, every pending write in one more. When the
checkpoints form one line (each the parent of the next, the usual thread), `_linear_states`
folds the deltas forward from each snapshot and yields the states newest first, holding a
bounded number of them; a thread with forks falls back to `HistoryWalk`, checkpoint by
checkpoint.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator
from typing import Any

from nbgraph.blueprint import GraphSpec
from nbgraph.engine.core.runlog import initial_values
from nbgraph.engine.persistence.chain import HistoryWalk, parent_chain
from nbgraph.isolation import ATOMS, isolate

__all__ = ["HELD_ITEMS", "MIN_BLOCK", "Fold", "history_states", "is_line"]

Fold = Callable[[GraphSpec, dict, Any, int], dict]
"""`apply_delta(spec, values, payload, step)`: one checkpoint's delta applied in place."""

MIN_BLOCK = 32  # a segment this short is rebuilt in one pass, every state held
HELD_ITEMS = 1_000_000  # nor one whose states hold fewer items than this in all (~8 MB)


def history_states(
    thread: Any,
    newest: Any,
    ids: Callable[[str], Iterator[str]],
    fold: Fold,
    shared: bool = False,
) -> Iterator[tuple[Any, dict[str, Any], Any]]:
    """`(record, values, writes)` of every checkpoint, newest first: `writes` the saver's
    pending writes of that checkpoint (`()`: none), or None when they are to be read one
    by one.

    The newest costs about what `get_state` costs: its chain back to a snapshot, read a
    page of the newest checkpoints at a time (`_newest_line`), and folded (the chain's other
    states are kept for what follows). Then the rest of the thread is read at once.

    Args:
        thread: the `Thread` read (its saver already checks what it returns).
        newest: the newest checkpoint's record.
        ids: `Thread._ids_from`: the newest id, then the other ids newest first.
        fold: `apply_delta`.
        shared: read the line's records through the saver's `shared_slice` (decoded once,
            shared between histories: folded by `_shared_fold`, which copies what enters a
            state). The records' payloads are then read only: the caller must copy what it
            shows of them (a task's result).
    """
    walk_fold = fold
    reader = "history_slice"
    if shared:
        reader, fold = "shared_slice", _shared_fold(thread.spec, fold)
    records = _newest_line(thread.saver, thread.thread_id, newest, reader)  # newest first
    sliced = records is not None
    if records is None:  # (not the thread's newest rows: forks, or a saver without slices)
        chain = parent_chain(thread.saver, newest, lambda r: r.snapshot is not None)
    else:
        chain = records[: next(i for i, r in enumerate(records, 1) if _ends_chain(r))]
    chain.reverse()  # oldest first: a line from a snapshot (or the thread's first)
    states = _linear_states(thread.spec, chain, fold)
    yield (*next(states), None)
    latest = newest.checkpoint_id
    if records is None:
        records = thread.saver.history(thread.thread_id)
    else:  # (the rest of the thread, read once: what is read already is not read again)
        records += getattr(thread.saver, reader)(thread.thread_id, len(records))
    if records[:1] and records[0].checkpoint_id == latest and is_line(records):
        writes = _thread_writes(thread)
        older = records[len(chain) :]
        older.reverse()
        for record, values in itertools.chain(states, _linear_states(thread.spec, older, fold)):
            yield record, values, None if writes is None else writes.get(record.checkpoint_id, ())
        return
    if sliced:  # (read afresh: the chain's snapshot was folded in place)
        records = thread.saver.history(thread.thread_id)
    walk = HistoryWalk(thread, walk_fold)  # forks: state by state (fresh records)
    walk.records.update((record.checkpoint_id, record) for record in records)
    walk.first, walk.loaded = False, True
    for checkpoint_id in ids(latest):
        if checkpoint_id != latest:
            yield (*walk.state_of(checkpoint_id), None)


FIRST_PAGE = 16  # the newest checkpoints read at once first; then 32, 64, ...


def _ends_chain(record: Any) -> bool:
    return record.snapshot is not None or record.parent_id is None


def _newest_line(
    saver: Any, thread_id: str, newest: Any, method: str = "history_slice"
) -> list[Any] | None:
    """The thread's newest checkpoints, newest first, read a page at a time (16, 32, ...)
    until one of them is a snapshot or the thread's first: `newest`'s chain in a few reads
    (a page each, not a read a checkpoint), and what the last page read past it. None when
    those rows are not `newest` and its parents in line (forks, or checkpoints added
    meanwhile), or the saver cannot read a slice of a thread (`method`: its reader)."""
    reader = getattr(saver, method, None)
    if reader is None:
        return None
    records: list[Any] = []
    size = FIRST_PAGE
    while True:
        page = reader(thread_id, len(records), len(records) + size)
        if not page:
            return None
        expected = records[-1].parent_id if records else newest.checkpoint_id
        if page[0].checkpoint_id != expected:
            return None
        for child, parent in itertools.pairwise(page):
            if _ends_chain(child):  # (past it: checked with the rest, `is_line`)
                return records + page
            if child.parent_id != parent.checkpoint_id:
                return None
        records += page
        if _ends_chain(records[-1]):
            return records
        if len(page) < size:
            return None
        size *= 2


def is_line(records: list[Any]) -> bool:
    """Whether `records` (newest first) are one line: each the parent of the one before,
    the last (the thread's first) without a parent."""
    for child, parent in itertools.pairwise(records):
        if child.parent_id != parent.checkpoint_id:
            return False
    return bool(records) and records[-1].parent_id is None


def _thread_writes(thread: Any) -> dict[str, list[Any]] | None:
    """Every pending write of the thread by checkpoint id, if the saver reads them at once
    (its `thread_writes`); None: read them checkpoint by checkpoint."""
    reader = getattr(thread.saver, "thread_writes", None)
    return None if reader is None else reader(thread.thread_id)


def _linear_states(
    spec: GraphSpec, records: list[Any], fold: Fold
) -> Iterator[tuple[Any, dict[str, Any]]]:
    """`(record, state)` of each of `records` (a line, oldest first), newest first; each
    state a copy nobody else holds.

    The line is cut at its snapshots; each segment is folded forward from its snapshot,
    every state held, when they are small (`HELD_ITEMS`). A longer segment (L checkpoints)
    is cut again into blocks of about sqrt(L): a first pass keeps each block's first state,
    then each block is folded again from it, newest block first, so each delta is applied
    about twice and about 2 sqrt(L) states are held.
    """
    return itertools.chain.from_iterable(_blocks(spec, records, fold))  # (no frame an item)


def _blocks(
    spec: GraphSpec, records: list[Any], fold: Fold
) -> Iterator[Iterator[tuple[Any, dict[str, Any]]]]:
    """`_linear_states`' states, a block at a time (newest block first)."""
    if not records:
        return
    starts = [i for i, record in enumerate(records) if record.snapshot is not None]
    if not starts or starts[0] != 0:
        starts.insert(0, 0)
    ends = [*starts[1:], len(records)]
    for start, end in reversed(list(zip(starts, ends, strict=True))):
        yield from _segment(spec, records, start, end, fold)


def _base(spec: GraphSpec, record: Any, fold: Fold) -> dict[str, Any]:
    """The state at a segment's first checkpoint (its snapshot copied: it may be shared)."""
    if record.snapshot is not None:
        return _copy(record.snapshot)
    return fold(spec, initial_values(spec), record.payload, record.step)


def _shared_fold(spec: GraphSpec, fold: Fold) -> Fold:
    """`fold` for shared records, whose payloads must stay as they are.

    The fold changes in place only what the state owns: its `in_place` reducers' lists and
    dicts (started fresh, from a copied snapshot, or from a copied first write), never a
    written value (a field without a reducer takes it whole, and is copied when a snapshot
    shows it; pinned and reset values are copied as they are taken; a `Mutation` is kept as
    the value after it). Only a user's reducer may change or keep what it is handed (its
    field's values are kept after each step, but not by a thread written with another
    reducer): a payload that hands one anything but atoms is folded from a deep copy.
    """
    risky = frozenset(
        name
        for name, field in spec.fields.items()
        if field.reducer is not None and not _keeps_no_write(field.reducer.fn)
    )
    if not risky:
        return fold

    def folded(spec: GraphSpec, values: dict, payload: Any, step: int) -> dict:
        kept = payload.get("kept") or _NO_KEPT
        afters = payload.get("afters") or _NO_KEPT
        written = [w for task in payload["tasks"] for w in task["writes"]]
        written += [w[1:] for w in payload.get("merged", ())]
        for key, value in written:
            if key in risky and type(value) not in ATOMS and key not in kept and key not in afters:
                return fold(spec, values, isolate(payload), step)
        return fold(spec, values, payload, step)

    return folded


_NO_KEPT: dict[str, Any] = {}  # (read only)


_OWN_MODULES = ("nbgraph.", "operator", "_operator")  # (reducers that keep no written value)


def _keeps_no_write(fn: Any) -> bool:
    """Whether reducer function `fn` is nbgraph's or `operator`'s: it neither changes the
    written value nor keeps it inside what it returns (a user's reducer might: `old + [new]`)."""
    module = getattr(fn, "__module__", None) or ""
    return module.startswith(_OWN_MODULES)


def _items(value: Any) -> int:
    kind = type(value)
    return len(value) if kind is list or kind is dict or kind is tuple or kind is set else 1


_GROWN = frozenset({list, tuple, *ATOMS})  # what `append` adds without changing old items


class _Copier:
    """Copies a segment's working states (`isolate`, field by field), and remembers, for a
    list of atoms in a field whose reducer appends (`Reducer.appends`), how much of that
    list (the same object: `append` extends it in place) was checked: while
    the fold only appends to that list (plain steps writing lists or atoms to it), the
    next copy checks only the items added since.

    Anything else (a step with resets or pinned values, an `Overwrite`, a `Mutation`, a new
    list) forgets what was checked.
    """

    def __init__(self, spec: GraphSpec) -> None:
        self.appending = {
            name
            for name, field in spec.fields.items()
            if field.reducer is not None and field.reducer.appends
        }
        self.checked: dict[str, tuple[list, int]] = {}  # field: (its list, items checked)

    def folded(self, payload: dict[str, Any]) -> None:
        """Called after each delta is applied: forget what it may have changed in place."""
        checked = self.checked
        if not checked:
            return
        if len(payload) != 2 or "next" not in payload:  # (not `apply_delta`'s plain step)
            checked.clear()
            return
        for task in payload["tasks"]:
            for key, value in task["writes"]:
                if key in checked and type(value) not in _GROWN:
                    del checked[key]

    def copy(self, values: dict[str, Any]) -> dict[str, Any]:
        appending, checked = self.appending, self.checked
        copied = {}
        for key, value in values.items():
            kind = type(value)
            if kind in ATOMS:
                copied[key] = value
                continue
            if kind is list and key in appending:
                seen = checked.get(key)
                start = seen[1] if seen is not None and seen[0] is value else 0
                size = len(value)
                if start == size - 1 and type(value[start]) in ATOMS:  # (one item appended)
                    checked[key] = (value, size)
                    copied[key] = value[:]
                    continue
                if start <= size and (start == size or set(map(type, value[start:])) <= ATOMS):
                    checked[key] = (value, size)
                    copied[key] = value[:]
                    continue
                checked.pop(key, None)
            copied[key] = isolate(value)
        return copied


def _copy(values: dict[str, Any]) -> dict[str, Any]:
    return {key: isolate(value) for key, value in values.items()}


def _segment(
    spec: GraphSpec, records: list[Any], start: int, end: int, fold: Fold
) -> Iterator[Iterator[tuple[Any, dict[str, Any]]]]:
    values = _base(spec, records[start], fold)
    copier = _Copier(spec)
    every = max(MIN_BLOCK, math.isqrt(end - start))
    if (end - start) * (1 + sum(map(_items, values.values()))) <= HELD_ITEMS:
        every = end - start  # (about: a state grows less than its size between snapshots)
    last = start + (end - 1 - start) // every * every  # the last block's first position
    bases: list[tuple[int, dict[str, Any]]] = []
    held: list[dict[str, Any]] = []
    for i in range(start, end):
        if i > start:
            record = records[i]
            values = fold(spec, values, record.payload, record.step)
            copier.folded(record.payload)
        if i >= last:
            held.append(copier.copy(values))
        elif (i - start) % every == 0:
            bases.append((i, _copy(values)))
    yield _newest_first(records, last, held)
    while bases:
        first, values = bases.pop()
        held = []
        for i in range(first, first + every):
            if i > first:
                record = records[i]
                values = fold(spec, values, record.payload, record.step)
                copier.folded(record.payload)
            held.append(copier.copy(values))
        yield _newest_first(records, first, held)


def _newest_first(
    records: list[Any], first: int, held: list[dict[str, Any]]
) -> Iterator[tuple[Any, dict[str, Any]]]:
    """`(record, state)` of a block, newest first (`held[i]` is `records[first + i]`'s)."""
    return zip(reversed(records[first : first + len(held)]), reversed(held), strict=True)
