"""Restoring a thread: its state at a checkpoint rebuilt from the nearest snapshot and the
deltas after it, what ran and was asked there, and its history read lazily.

The parts of it a `Thread` (`engine.persistence.persist`) reads back with: `Restored`, a
checkpoint's delta applied (`apply_delta`), a branch run's lineages restored, a task back
from its data; `Thread.restore`/`history` put them together.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from nbgraph.blueprint import GraphSpec
from nbgraph.engine.core.pinned import pinned_map
from nbgraph.engine.core.retrying import attempts_from_data
from nbgraph.engine.core.tasks import Task
from nbgraph.engine.core.writes import (
    PLAIN_WRITES,
    applied_writes,
    apply_writes,
    clear_ephemeral,
    group_task_writes,
    group_writes,
)
from nbgraph.engine.lineages.checkpoints import live_points, merged_values, rebuild
from nbgraph.engine.persistence.checkpoint_shape import replayed_from_a_file
from nbgraph.errors import CheckpointFileError, NbgraphError
from nbgraph.isolation import isolate
from nbgraph.primitives import MISSING, Interrupt

__all__ = [
    "LINEAGES",
    "Restored",
    "apply_delta",
    "restore_branches",
    "restore_lineages",
    "task_from_data",
]

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
    asked: dict[str, list[Interrupt]] = field(default_factory=dict)  # ever asked at this
    # checkpoint, answered or not (get_state of the latest shows those still waiting: paused)
    moved: dict[str, str] = field(default_factory=dict)  # task ids a resuming goto changed
    parents: dict[str, str] = field(default_factory=dict)  # a subgraph's: its parents' ids
    base: dict[str, Any] | None = None  # with `updates`: the values before them


def restore_branches(
    spec: GraphSpec, chain: list[Any], snapshot: dict[str, Any] | None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A branch thread at `chain[0]`: its lineage points by id, and its merged values.

    Raises:
        CheckpointFileError: the saved points do not fit together (damaged or edited).
    """
    record = chain[0]
    try:
        lineages = restore_lineages(spec, chain, snapshot)
        live = live_points(record.payload["next"], lineages)
        return lineages, merged_values(spec, live, record.step)
    except NbgraphError:
        raise
    except Exception as error:
        raise CheckpointFileError(
            f"The lineage points saved up to checkpoint {record.checkpoint_id!r} of thread "
            f"{record.thread_id!r} cannot be read again ({type(error).__name__}: "
            f"{str(error)[:200]}): the checkpoint file is damaged, or it was not written by a "
            'graph compiled with semantics="branches".'
        ) from error


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
            writes = tasks[0]["writes"]
            if not _folded_plainly(spec.fields, values, writes):
                apply_writes(spec.fields, values, writes, step, tasks[0]["node"])
            return values
        grouped: dict[str, list[tuple[str, Any]]] = {}
        for task in tasks:
            writes = task["writes"]
            if task.get("kind") == "call":  # (a `@task` call's result: see `applied_writes`)
                writes = [w for w in writes if w[0] in spec.fields]
            group_task_writes(grouped, task["node"], writes)
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


def _folded_plainly(fields: Any, values: dict, writes: list[Any]) -> bool:
    """Applies a lone task's `writes` as `apply_writes` does and says True, when each is a
    plain value written to a distinct field the state holds already (a loop step's usual
    writes); else False, nothing applied. (A history folds one of these a checkpoint.)"""
    count = len(writes)
    if count == 2:
        if writes[0][0] == writes[1][0]:
            return False
    elif count > 2 and len(dict(writes)) != count:
        return False
    for name, new in writes:
        if type(new) not in PLAIN_WRITES or name not in fields or name not in values:
            return False
        if values[name] is MISSING:
            return False
    for name, new in writes:
        reducer = fields[name].reducer
        if reducer is None:
            values[name] = new
        else:
            result = (reducer.in_place or reducer.fn)(values[name], new)
            values[name] = isolate(result) if result is new else result
    return True


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
