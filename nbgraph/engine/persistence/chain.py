"""Walking a thread's checkpoints: parent chains (refusing links that loop or break), the
newest-first history walk, and what a checkpoint's next tasks are."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from nbgraph.blueprint import GraphSpec
from nbgraph.engine.core.runlog import initial_values
from nbgraph.engine.core.tasks import Task
from nbgraph.engine.core.writes import applied_writes, apply_step
from nbgraph.engine.lineages.next_tasks import branch_pull_names
from nbgraph.errors import CheckpointFileError
from nbgraph.isolation import isolate

if TYPE_CHECKING:
    from nbgraph.engine.persistence.persist import Thread
    from nbgraph.engine.persistence.restoring import Restored

__all__ = [
    "HistoryWalk",
    "next_task_ids",
    "parent_chain",
    "pull_task_ids",
    "task_ids",
    "with_finished",
]


class HistoryWalk:
    """Rebuilds states newest first for `Thread.history`, keeping few of them at a time:
    the first alone from its nearest snapshot; for the rest, the thread's deltas are read
    in one go (as records, not states) and states are kept ahead sparingly."""

    def __init__(self, thread: Thread, apply_delta: Callable[..., dict[str, Any]]) -> None:
        """`apply_delta(spec, values, payload, step)`: one checkpoint's delta applied."""
        self.thread, self.spec, self.apply_delta = thread, thread.spec, apply_delta
        self.records: dict[str, Any] = {}  # read once each: a checkpoint's own delta
        self.states: dict[str, dict[str, Any]] = {}  # rebuilt ahead, until yielded
        self.first = True
        self.loaded = False

    def get(self, thread_id: str, checkpoint_id: str) -> Any:
        record = self.records.get(checkpoint_id)
        if record is None:
            record = self.thread.saver.get(thread_id, checkpoint_id)
            if record is not None and not self.first:  # (`next()` alone keeps nothing)
                self.records[checkpoint_id] = record
        return record

    def state_of(self, checkpoint_id: str) -> tuple[Any, dict[str, Any]]:
        """The checkpoint's record and its state (the walk forgets both), a state nobody
        else holds: a rebuilt one is copied, since its fields hold the very objects its
        checkpoint's writes hold (which its parent's snapshot shows as a task's result)."""
        if not self.first and not self.loaded:  # walking on: read the rest in one go
            thread = self.thread
            self.records.update(
                (r.checkpoint_id, r) for r in thread.saver.history(thread.thread_id)
            )
            self.loaded = True
        values = self.states.pop(checkpoint_id, None)
        record = self.records.pop(checkpoint_id, None)
        if record is None:
            record = self.thread.saver.get(self.thread.thread_id, checkpoint_id)
        if values is None:
            values = {k: isolate(v) for k, v in self._rebuild(record).items()}
        self.records.pop(checkpoint_id, None)
        return record, values

    def _rebuild(self, record: Any) -> dict[str, Any]:
        kept = self.states

        def based(r: Any) -> bool:
            return r.snapshot is not None or (r is not record and r.checkpoint_id in kept)

        light = self.first  # `next()` alone: hold ids only, read each delta again below
        chain = parent_chain(self, record, based, light=light)
        chain.reverse()  # oldest first
        ahead = [] if light else chain[:-1]
        base = chain[0]
        if base is not record and base.checkpoint_id in kept:
            values = {k: isolate(v) for k, v in kept[base.checkpoint_id].items()}
        elif base.snapshot is not None:
            values = {k: isolate(v) for k, v in base.snapshot.items()}
        else:  # a thread's first checkpoint, written without a snapshot
            values = self.apply_delta(self.spec, initial_values(self.spec), base.payload, base.step)
        every = max(1, math.isqrt(len(ahead)))
        for position, older in enumerate(chain[1:], start=1):
            if older.payload is None:  # (a light chain's)
                older = self.get(older.thread_id, older.checkpoint_id)
            values = self.apply_delta(self.spec, values, older.payload, older.step)
            if (
                older is not record
                and (position % every == 0 or len(chain) - 1 - position <= every)
                and ahead
            ):
                kept[older.checkpoint_id] = {k: isolate(v) for k, v in values.items()}
        self.first = False
        return values


def parent_chain(
    saver: Any, record: Any, stop: Callable[[Any], bool] | None = None, light: bool = False
) -> list:
    """`record` and its ancestors, newest first, up to the first that `stop` accepts (or the
    thread's first checkpoint); `light`: the ones between hold no payload (read them again).

    Raises:
        CheckpointFileError: the parent links loop, or name a checkpoint the thread lacks
            (a corrupted or crafted checkpoint database), naming the saver and checkpoint.
    """
    chain, seen = [record], {record.checkpoint_id}
    while chain[-1].parent_id is not None and (stop is None or not stop(chain[-1])):
        child, parent_id = chain[-1], chain[-1].parent_id
        parent = None if parent_id in seen else saver.get(record.thread_id, parent_id)
        if parent is None:
            why = "is not in the thread"
            if parent_id in seen:
                why = "is already on the chain (the links loop)"
            raise CheckpointFileError(
                f"{_saver_name(saver)}: checkpoint {child.checkpoint_id!r} of thread "
                f"{record.thread_id!r} has parent {parent_id!r}, which {why}; expected each "
                "checkpoint's parents to lead back to the thread's first checkpoint."
            )
        seen.add(parent_id)
        if light and len(chain) > 1:
            chain[-1] = chain[-1]._replace(payload=None, snapshot=None)
        chain.append(parent)
    return chain


def _saver_name(saver: Any) -> str:
    """The saver for an error message: its file when it has one."""
    path = getattr(saver, "path", None)
    return f"{type(saver).__name__} file {path!r}" if path else type(saver).__name__


def next_task_ids(restored: Restored, spec: Any = None) -> list[tuple[str, str]]:
    """`(task id, node)` of the tasks that run from a checkpoint, in write order (the ids
    `RunLoop.next_tasks` gives them; with `spec`, a branch checkpoint's one per lineage;
    a task a resuming goto moved, by its new id)."""
    ids = task_ids(restored.control, restored.step + 1, spec)
    if restored.moved:
        ids = [(restored.moved.get(task_id, task_id), node) for task_id, node in ids]
    return ids


def task_ids(control: dict[str, Any], step: int, spec: Any = None) -> list[tuple[str, str]]:
    """`next_task_ids` from a checkpoint's control (`next`) and the next step's number."""
    pull = control["pull"] or (control.get("deferred") or {})
    pulled = branch_pull_names(spec, control) or sorted(pull)
    return pull_task_ids(pulled + [node for _, node, _ in control.get("push", ())], step)


def pull_task_ids(names: Sequence[str], step: int) -> list[tuple[str, str]]:
    """`(task id, node)` of the tasks of `step` that run `names`, in write order."""
    if len(names) == 1:  # (a loop's checkpoint)
        return [(f"{step}:0:{names[0]}", names[0])]
    return [(f"{step}:{index}:{name}", name) for index, name in enumerate(names)]


def with_finished(
    spec: GraphSpec, restored: Restored, finished: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A checkpoint's values with its finished tasks' saved writes applied (LangGraph's
    `get_state` after a step in which one task failed and its siblings finished);
    `finished`: those tasks' entries (default: all the checkpoint's)."""
    tasks = []
    for task_id, done in (restored.finished if finished is None else finished).items():
        step, index, node = task_id.split(":", 2)
        writes = [tuple(w) for w in done["writes"]]
        tasks.append(Task(int(step), int(index), node, "edge", writes=writes))
    tasks.sort(key=lambda task: task.index)
    values = {k: isolate(v) for k, v in restored.values.items()}
    apply_step(spec.fields, values, applied_writes(spec.fields, tasks, []), restored.step + 1)
    return values
