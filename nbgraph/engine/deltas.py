"""A checkpoint's delta as plain data: a committed step's tasks, resets and what runs next,
written by the engine and applied again when a thread is restored."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from nbgraph.engine.runlog import reset_data
from nbgraph.engine.tasks import Task
from nbgraph.engine.view import isolate
from nbgraph.engine.writes import applied_writes, apply_step, clear_ephemeral
from nbgraph.graph import GraphSpec
from nbgraph.types import MISSING, Mutation


def apply_delta(spec: GraphSpec, values: dict, payload: dict[str, Any], step: int) -> dict:
    """Apply one checkpoint's delta (resets, writes, clears) to `values` (owned by the caller)."""
    for reset in payload.get("resets", ()):
        values = {k: isolate(v) for k, v in reset["values"].items()}
    afters = payload.get("afters", {})
    tasks = [task_from_data(data) for data in payload["tasks"]]
    writes = applied_writes(spec.fields, tasks, [tuple(w) for w in payload.get("merged", ())])
    apply_step(spec.fields, values, [w for w in writes if w[1] not in afters], step)
    for name, value in afters.items():
        values[name] = isolate(value)
    clear_ephemeral(tuple(payload.get("cleared", ())), values, ())
    return values


def checkpoint_payload(run: Any, log: Any, writes: list) -> dict[str, Any]:
    """A committed step as a checkpoint's delta: resets, tasks with their writes, clears,
    and what runs next.

    A `Mutation` cannot be stored to run again, so a field it wrote is kept as its value
    after the step instead (`afters`).
    """
    skip = transient_fields(run.spec)
    mutated = {name for _, name, value in writes if isinstance(value, Mutation)} - skip
    payload: dict[str, Any] = {
        "tasks": [task_data(task, skip) for task in log.tasks],
        "next": control_of(run),
    }
    if log.resets:  # the rest only when there is something: most steps have none of it
        payload["resets"] = [reset_data(r, without(skip)) for r in log.resets]
    if log.merged:
        payload["merged"] = [list(w) for w in log.merged]
    if mutated:
        payload["afters"] = {
            name: isolate(run.values[name]) for name in mutated if name in run.values
        }
    if log.cleared:
        payload["cleared"] = list(log.cleared)
    if run.thread.head is None:  # a thread's first checkpoint describes its graph
        from nbgraph.record.serialize import describe_graph  # plain data, for other processes

        payload["graph"] = describe_graph(run.spec)
    return payload


def without(skip: frozenset[str]) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """A state minus the fields in `skip` (transient ones: never checkpointed)."""
    return lambda values: {k: v for k, v in values.items() if k not in skip}


def transient_fields(spec: GraphSpec) -> frozenset[str]:
    """Fields marked `Transient`: never written to a checkpoint."""
    return spec.transient


def task_data(task: Task, skip: frozenset[str] = frozenset()) -> dict[str, Any]:
    """A task as plain data a checkpoint can hold (writes to `skip` fields left out)."""
    data: dict[str, Any] = {
        "id": task.id,
        "node": task.node,
        "kind": task.kind,
        "triggers": list(task.triggers),
        "writes": [list(w) for w in task.writes if w[0] not in skip],
        "routes": list(task.routes),
        "started": task.started,
        "ended": task.ended,
    }
    if task.arg is not MISSING:
        data["arg"] = task.arg
    if task.dropped:
        data["dropped"] = [list(d) for d in task.dropped]
    if task.parent:
        data["parent"] = task.parent
    return data


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
    )


def control_of(run: Any) -> dict[str, Any]:
    """What runs after the step just committed, as plain data a checkpoint can hold (only
    `pull` always; the other parts when they hold something)."""
    control: dict[str, Any] = {"pull": {name: list(t) for name, t in run.pull.items()}}
    if run.push:
        control["push"] = [[sender, send.node, send.arg] for sender, send in run.push]
    if any(run.seen):
        control["seen"] = [sorted(seen) for seen in run.seen]
    if run.deferred:
        control["deferred"] = {name: list(t) for name, t in run.deferred.items()}
    if run.incoming:
        control["incoming"] = {
            name: [list(pair) for pair in states] for name, states in run.incoming.items()
        }
    return control
