"""`get_state_history`'s snapshots, built straight from each checkpoint's record and state.

A checkpoint with no pending writes (most of a thread) is shown without the `Restored` in
between: what `state_snapshot` would read from it is read from the record itself, and the
parts that are the same for every checkpoint of the thread (the config's keys, the fields
shown, which nodes are subgraphs) are worked out once. A checkpoint with pending writes, or
a thread with branch semantics, goes the general way (`Thread.history`, `state_snapshot`).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from nbgraph.blueprint.subgraphs import subgraph_of
from nbgraph.engine.core.collector import collector_paused
from nbgraph.engine.persistence.chain import pull_task_ids, task_ids
from nbgraph.engine.persistence.persist import Thread
from nbgraph.engine.persistence.snapshots import (
    PendingTask,
    Snapshots,
    state_snapshot,
    tasks_from,
)
from nbgraph.isolation import ATOMS, isolate
from nbgraph.primitives import START, StateSnapshot

_new = tuple.__new__  # (a NamedTuple made from its fields' tuple, without its `__new__`)

__all__ = ["BLOCK", "WithStates", "blocks", "history_snapshots", "paged"]

WithStates = Callable[[Thread, StateSnapshot, bool], StateSnapshot]
"""`with_states(thread, snapshot, recurse)`: the snapshot with its subgraph tasks' states
(`engine.nested.states.with_subgraph_states`, handed in by `CompiledGraph`)."""


def history_snapshots(thread: Thread, with_states: WithStates) -> Iterator[StateSnapshot]:
    """Every checkpoint of `thread` as `get_state_history` shows it, newest first; a snapshot
    with subgraph tasks goes through `with_states` (the nested runs' part)."""
    spec = thread.spec
    newest = thread.saver.get(thread.thread_id) if spec.semantics != "branches" else None
    if newest is None:
        for restored in thread.history():
            snapshot = state_snapshot(spec, thread, restored, owned=True)
            yield with_states(thread, snapshot, False)
        return
    latest = newest.checkpoint_id
    show = _Shown(thread, with_states)
    for record, values, writes, done in thread.history_parts(newest, shared=True):
        if writes is not None and not writes:  # nothing pending: straight from the record
            yield show.snapshot(record, values, done)
            continue
        restored = thread._restored(record, values, record.checkpoint_id == latest, None, writes)
        for task_id, saved in done.items():
            restored.done.setdefault(task_id, saved)
        snapshot = state_snapshot(spec, thread, restored, owned=True, snapshots=show.snapshots)
        yield with_states(thread, snapshot, False)


class _Shown:
    """What a thread's history snapshots straight from the records share, worked out once."""

    def __init__(self, thread: Thread, with_states: WithStates) -> None:
        self.spec, self.thread, self.with_states = thread.spec, thread, with_states
        self.snapshots = Snapshots(thread)
        self.transient = [
            (name, field.transient)
            for name, field in self.spec.fields.items()
            if field.transient is not None
        ]
        self.plain: dict[str, bool] = {}  # node name: not a subgraph
        self.pulled: dict[tuple[str, ...], Any] = {}  # a `pull`'s keys: what `_loop` says

    def snapshot(
        self, record: Any, values: dict[str, Any], done: dict[str, dict[str, Any]]
    ) -> StateSnapshot:
        """`record`'s snapshot (it has no pending writes); `values` its state (owned),
        `done` what its tasks wrote (from the checkpoint they made)."""
        for name, transient in self.transient:  # never saved: rebuilt fresh
            values[name] = transient()
        control = record.payload["next"]
        pull = control["pull"]
        looped = len(control) == 1 and pull  # (nodes pulled, nothing else: a loop's checkpoint)
        if looped:
            key = tuple(pull)
            loop = self.pulled.get(key)
            if loop is None:
                loop = self.pulled[key] = self._loop(key)
            names, lone, plain = loop
            if lone is not None:  # (one node: its task made here, as `tasks_from` makes it)
                task_id = f"{record.step + 1}:0:{names[0]}"
                saved = done.get(task_id)
                result = None
                if saved is not None:  # (each field's first write, as `tasks_from` takes;
                    result = {}  # copied: the record's payload is shared, `history_parts`)
                    for field, value in saved["writes"]:
                        if field not in result:
                            result[field] = value if type(value) in ATOMS else isolate(value)
                name, path = lone
                tasks: tuple[Any, ...] = (
                    _new(PendingTask, (task_id, name, path, None, (), None, result)),
                )
                snapshot = self.snapshots.of(record, values, names, tasks)
                return snapshot if plain else self.with_states(self.thread, snapshot, False)
            ids = pull_task_ids(names, record.step + 1)
        else:
            ids = task_ids(control, record.step + 1, self.spec)
        tasks = tasks_from(control, ids, done) if ids else ()
        if not looped:  # (the names in the tasks' order: Sends first)
            names = tuple([task.name for task in tasks])
        snapshot = self.snapshots.of(record, values, names, tasks)
        for task in tasks:
            if not self._plain(task.name):
                return self.with_states(self.thread, snapshot, False)
        return snapshot

    def _plain(self, name: str) -> bool:
        """Whether node `name` is not a subgraph."""
        is_plain = self.plain.get(name)
        if is_plain is None:
            is_plain = self.plain[name] = subgraph_of(self.spec, name) is None
        return is_plain

    def _loop(self, key: tuple[str, ...]) -> tuple[tuple[str, ...], Any, bool]:
        """What a loop's checkpoints pulling nodes `key` share: the nodes' names in order,
        for one node (not START) its task's name and path (else None), and whether none of
        them is a subgraph."""
        names = tuple(sorted(key))
        lone = None
        if len(names) == 1 and names[0] != START:
            lone = (names[0], ("__pregel_pull", names[0]))
        return names, lone, all(self._plain(name) for name in names)


BLOCK = 256  # the most snapshots built at once, the collector paused


def blocks(
    snapshots: Iterator[StateSnapshot],
    filter: Mapping[str, Any] | None = None,
    before: Mapping[str, Any] | None = None,
    limit: int | None = None,
) -> Iterator[list[StateSnapshot]]:
    """`snapshots` (paged by `filter`, `before`, `limit`, as `paged` does) in lists, each
    made with the cyclic garbage collector paused: 1, 2, 4, ... up to `BLOCK` at a time (a
    reader who stops early had at most twice what it read made).

    Every snapshot holds its own copy of each list (no snapshot sees another's changes), so
    a thread's history holds about n²/2 list items; with the collector on, its young
    collections walked the lists made so far again and again (`benchmarks/README.md`,
    "Timings behind the code"). Made in a block, then moved to the oldest generation at once
    (`gc.freeze()`/`gc.unfreeze()`, when nothing else is frozen), each is walked once more
    at most, as any old object. Only nbgraph's code runs in this thread while the collector is
    paused (a block: a few milliseconds); the pause is the process's, as `gc.disable` is.
    """
    if filter or before or limit is not None:
        snapshots = paged(snapshots, filter, before, limit)
    size = 1
    while True:
        with collector_paused():
            block = list(itertools.islice(snapshots, size))
        if block:
            yield block
        if len(block) < size:
            return
        size = min(2 * size, BLOCK)


def paged(
    snapshots: Iterable[StateSnapshot],
    filter: Mapping[str, Any] | None = None,
    before: Mapping[str, Any] | None = None,
    limit: int | None = None,
) -> Iterator[StateSnapshot]:
    """`snapshots` (newest first) as LangGraph's `get_state_history(config, filter=, before=,
    limit=)` pages them: only those whose metadata has every item of `filter`, only those
    older than `before`'s checkpoint (none if it is not one of them), at most `limit` of them.
    Lazy: a snapshot past the page is never made."""
    before_id = ((before or {}).get("configurable") or {}).get("checkpoint_id")
    if limit is not None and limit <= 0:
        return
    count = 0
    for snapshot in snapshots:
        if before_id is not None:  # (newest first: those after `before`'s are older)
            if snapshot.config["configurable"]["checkpoint_id"] == before_id:
                before_id = None
            continue
        if filter and any(
            (snapshot.metadata or {}).get(key, _ABSENT) != value for key, value in filter.items()
        ):
            continue
        yield snapshot
        count += 1
        if limit is not None and count >= limit:
            return


_ABSENT = object()
