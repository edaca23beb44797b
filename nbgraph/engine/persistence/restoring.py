"""Restoring a thread: its state at a checkpoint rebuilt from the nearest snapshot and the
deltas after it, what ran and was asked there, and its history read lazily.

`Restoring` is mixed into `engine.persist.Thread` (whose `__init__` sets `saver`, `spec`,
`thread_id` and `start_id`); `engine.persist` writes what this module reads back.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from nbgraph.engine.core.pinned import pinned_map
from nbgraph.engine.core.retrying import attempts_from_data
from nbgraph.engine.core.runlog import initial_values
from nbgraph.engine.core.tasks import Task
from nbgraph.engine.core.writes import (
    applied_writes,
    apply_step,
    apply_writes,
    clear_ephemeral,
    group_task_writes,
    group_writes,
)
from nbgraph.engine.lineages.checkpoints import live_points, merged_values, rebuild
from nbgraph.engine.persistence.chain import parent_chain
from nbgraph.engine.persistence.checkpoint_shape import replayed_from_a_file
from nbgraph.engine.persistence.history_fold import history_states
from nbgraph.graph import GraphSpec
from nbgraph.isolation import isolate
from nbgraph.types import MISSING, START, Interrupt

LINEAGES = "__nbgraph_lineages__"  # a branch run's snapshot: its lineage points
_NONE: dict[str, Any] = {}  # (read only)


@dataclass
class Restored:
    """A thread's state at one checkpoint: values, what runs next, and finished tasks' writes."""

    checkpoint_id: str
    step: int
    source: str
    created_at: float
    parent_id: str | None
    values: dict[str, Any]
    control: dict[str, Any]
    finished: dict[str, dict[str, Any]] = field(default_factory=dict)
    paused: dict[str, dict[str, Any]] = field(default_factory=dict)
    tasks: list[list[str]] = field(default_factory=list)
    latest: bool = True
    lineages: dict[str, Any] | None = None  # branch runs: the restored lineage points by id
    updates: list[dict[str, Any]] = field(default_factory=list)  # resuming Commands' (in values)
    done: dict[str, dict[str, Any]] = field(default_factory=dict)  # saved writes, any checkpoint
    errors: dict[str, str] = field(default_factory=dict)  # failed tasks' errors, as reprs
    asked: dict[str, list[Interrupt]] = field(default_factory=dict)  # shown: still waiting
    # (latest) or ever asked at this checkpoint (a past one, as LangGraph's history shows)


class Restoring:
    """`Thread`'s reading side: one checkpoint's state, or every checkpoint's."""

    # --- reading -----------------------------------------------------------------------------

    def restore(
        self, checkpoint_id: str | None = None, latest_id: str | None = None
    ) -> Restored | None:
        """The thread at `checkpoint_id` (default: the run's, else the latest); None if empty.

        Args:
            checkpoint_id: the checkpoint to restore.
            latest_id: the thread's latest checkpoint id, if the caller knows it already.

        Raises:
            ValueError: a checkpoint id the thread does not have.
        """
        wanted = checkpoint_id or self.start_id
        record = self.saver.get(self.thread_id, wanted)
        if record is None:
            if wanted is not None:
                raise ValueError(
                    f"Thread {self.thread_id!r} has no checkpoint {wanted!r}; "
                    "see app.get_state_history(config) for the ones it has."
                )
            return None
        chain = parent_chain(self.saver, record, lambda r: r.snapshot is not None)
        snapshot = chain[-1].snapshot
        lineages = None
        if self.spec.semantics == "branches":
            lineages = restore_lineages(self.spec, chain, snapshot)
            live = live_points(record.payload["next"], lineages)
            values = merged_values(self.spec, live, record.step)
        else:
            values = dict(snapshot) if snapshot is not None else initial_values(self.spec)
            for older in reversed(chain if snapshot is None else chain[:-1]):
                values = apply_delta(self.spec, values, older.payload, older.step)
        if latest_id is None and wanted is not None:
            latest_id = self.saver.get(self.thread_id).checkpoint_id
        latest = wanted is None or latest_id == wanted
        return self._restored(record, values, latest, lineages)

    def history(self) -> Iterator[Restored]:
        """Every checkpoint of the thread, newest first, each with its full state, read
        lazily: the first costs one checkpoint's rebuild (from its nearest snapshot).

        Then the rest of the thread is read at once and folded forward from its snapshots,
        each delta applied about twice, about 2 sqrt(k) states held for k checkpoints
        between snapshots (`engine.history_fold`; a thread with forks: `HistoryWalk`).
        """
        newest = self.saver.get(self.thread_id)
        if newest is None:
            return
        latest = newest.checkpoint_id
        if self.spec.semantics == "branches":
            for checkpoint_id in self._ids_from(latest):
                yield self.restore(checkpoint_id, latest_id=latest)  # type: ignore[misc]
            return
        for record, values, writes, done in self.history_parts(newest):
            restored = self._restored(record, values, record.checkpoint_id == latest, None, writes)
            for task_id, saved in done.items():
                restored.done.setdefault(task_id, saved)
            yield restored

    def history_parts(
        self, newest: Any
    ) -> Iterator[tuple[Any, dict[str, Any], Any, dict[str, dict[str, Any]]]]:
        """`(record, values, writes, done)` of every checkpoint of a thread without branch
        semantics, from `newest` back: `writes` its pending writes (None: not read yet),
        `done` the writes its tasks made, read from the checkpoint they made."""
        ran: dict[str, dict[str, Any]] = {}  # by parent: what its tasks wrote (shown as results)
        for record, values, writes in history_states(self, newest, self._ids_from, apply_delta):
            done = ran.pop(record.checkpoint_id, _NONE)
            if record.source == "loop" and record.parent_id is not None:
                tasks = ran.setdefault(record.parent_id, {})
                for task in record.payload["tasks"]:
                    tasks.setdefault(task["id"], {"writes": task["writes"]})
            yield record, values, writes, done

    def _ids_from(self, latest: str) -> Iterator[str]:
        """`latest`, then the thread's other checkpoint ids newest first (listed only when
        the walk goes past the first)."""
        yield latest
        listing = getattr(self.saver, "history_ids", None)  # (a duck-typed saver may lack it)
        if listing is not None:
            ids = listing(self.thread_id)
        else:
            ids = [record.checkpoint_id for record in self.saver.history(self.thread_id)]
        yield from ids[ids.index(latest) + 1 :] if latest in ids else ids

    def _restored(
        self, record: Any, values: dict[str, Any], latest: bool, lineages: Any, writes: Any = None
    ) -> Restored:
        """`record` restored with `values`; `writes`: its pending writes, if read already."""
        for name, spec in self.spec.fields.items():
            if spec.transient is not None:  # never saved: rebuilt fresh
                values[name] = spec.transient()
        if writes is not None and not writes:  # (the history's: nothing pending here)
            return Restored(
                record.checkpoint_id,
                record.step,
                record.source,
                record.created_at,
                record.parent_id,
                values,
                record.payload["next"],
                tasks=record.payload.get("tasks", []),
                latest=latest,
                lineages=lineages,
            )
        saved: dict[str, dict[str, Any]] = {}
        errors: dict[str, str] = {}
        asked: dict[str, list[Interrupt]] = {}
        if writes is None:
            writes = self.saver.pending_writes(self.thread_id, record.checkpoint_id)
        for write in writes:
            if "error" in write.payload:  # kept apart: a resume's success does not hide it
                errors[write.task_id] = write.payload["error"]
                continue
            if "interrupts" in write.payload:  # what was asked, for the snapshot's tasks
                asked[write.task_id] = [
                    Interrupt(i["value"], i["id"]) for i in write.payload["interrupts"]
                ]
            saved[write.task_id] = write.payload  # a task's latest entry wins
        # a step that stopped part-way resumes with what its finished tasks wrote; a replay
        # of a past checkpoint runs them again
        finished = {k: v for k, v in saved.items() if "writes" in v} if latest else {}
        paused = {
            k: {**v, "interrupts": [Interrupt(i["value"], i["id"]) for i in v["interrupts"]]}
            for k, v in saved.items()
            if "interrupts" in v
        }
        updates = [v for v in saved.values() if "update" in v]
        for update in updates:  # what a resuming Command wrote while this checkpoint was head
            writes = [(START, key, value) for key, value in update["update"]]
            apply_step(self.spec.fields, values, writes, record.step)
        return Restored(
            record.checkpoint_id,
            record.step,
            record.source,
            record.created_at,
            record.parent_id,
            values,
            record.payload["next"],
            finished,
            paused,
            record.payload.get("tasks", []),
            latest,
            lineages,
            updates=updates,
            done={k: v for k, v in saved.items() if "writes" in v},
            errors=errors,
            asked={k: v for k, v in asked.items() if k in paused} if latest else asked,
        )


def restore_lineages(
    spec: GraphSpec, chain: list[Any], snapshot: dict[str, Any] | None
) -> dict[str, Any]:
    """A branch thread's lineage points at `chain[0]`: the snapshot's, then each later
    checkpoint's new points (`chain` runs newest first and ends at the snapshot)."""
    points: dict[str, Any] = {}
    if snapshot is None or LINEAGES not in snapshot:
        raise ValueError(
            "This thread's checkpoints hold no lineage snapshot: it was not written by a "
            'graph compiled with semantics="branches".'
        )
    rebuild(spec, snapshot[LINEAGES], points, chain[-1].step)
    for record in reversed(chain[:-1]):
        rebuild(spec, record.payload.get("points", ()), points, record.step)
    return points


@replayed_from_a_file
def apply_delta(spec: GraphSpec, values: dict, payload: dict[str, Any], step: int) -> dict:
    """Apply one checkpoint's delta (resets, writes, clears) to `values` (owned by the caller)."""
    if len(payload) == 2 and "next" in payload:  # a plain step: its tasks' writes, no extras
        tasks = payload["tasks"]
        if len(tasks) == 1:  # (a lone task: its writes as it made them)
            apply_writes(spec.fields, values, tasks[0]["writes"], step, tasks[0]["node"])
            return values
        grouped: dict[str, list[tuple[str, Any]]] = {}
        for task in tasks:
            group_task_writes(grouped, task["node"], task["writes"])
        apply_writes(spec.fields, values, grouped, step)
        return values
    for reset in payload.get("resets", ()):
        values = {k: isolate(v) for k, v in reset["values"].items()}
    kept = pinned_map(payload.get("kept"), f"checkpoint of step {step}")
    pinned = {**payload.get("afters", {}), **kept}  # values after the step, taken as they are
    tasks = [task_from_data(data) for data in payload["tasks"]]
    writes = applied_writes(spec.fields, tasks, [tuple(w) for w in payload.get("merged", ())])
    apply_writes(spec.fields, values, group_writes(writes), step, pinned=pinned)
    clear_ephemeral(tuple(payload.get("cleared", ())), values, ())
    return values


def task_from_data(data: dict[str, Any]) -> Task:
    """A task back from `task_data`."""
    step, index, _ = data["id"].split(":", 2)
    return Task(
        int(step),
        int(index),
        data["node"],
        data["kind"],
        arg=data.get("arg", MISSING),
        triggers=tuple(data["triggers"]),
        writes=[tuple(w) for w in data["writes"]],
        routes=list(data["routes"]) or (),
        dropped=tuple(tuple(d) for d in data.get("dropped", ())),
        started=data["started"],
        ended=data["ended"],
        parent=data.get("parent", ""),
        **attempts_from_data(data),
    )
