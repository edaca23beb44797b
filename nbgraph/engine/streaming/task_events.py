"""`stream_mode="tasks"`: each task as it starts and as it finishes, in LangGraph's shape.

A start is `{"id", "name", "input", "triggers"}` (and `"metadata"`, the run's own metadata
and its node's `add_node(metadata=...)`, when there is some); a result is `{"id", "name",
"error", "result", "interrupts"}`, where `result` holds the task's writes to the state's
fields (`{"$writes": [...]}` for a field it wrote more than once) and `interrupts` each
`interrupt()` that paused it as `{"value", "id", "response_schema"}`. The id is the task's
LangGraph-shaped id: the one its config's `checkpoint_ns` and the namespace of the graphs it
runs (`subgraphs=True`) carry.
"""

from __future__ import annotations

from typing import Any

from nbgraph.engine.core.calls import CALLS, RETURN
from nbgraph.engine.core.node_context.injection import node_metadata, task_triggers, task_uuid
from nbgraph.engine.core.tasks import Task, node_input
from nbgraph.isolation import StateView

__all__ = ["call_finished", "call_started", "task_finished", "task_started", "user_tags"]

_INTERNAL = frozenset(
    {
        "thread_id", "checkpoint_id", "checkpoint_ns", "checkpoint_map", "langgraph_step",
        "langgraph_node", "langgraph_triggers", "langgraph_path", "langgraph_checkpoint_ns",
    }
)  # fmt: skip
"""Metadata keys LangGraph leaves out of a task's start (the task's own fields say them)."""


def user_tags(tags: Any) -> list[str]:
    """The tags a `tasks` or `messages` chunk's metadata shows: all but langchain's
    `seq:step:N` bookkeeping (a `RunnableSequence` tags each of its steps), as LangGraph."""
    return [tag for tag in tags or () if not tag.startswith("seq:step")]


def task_started(run: Any, task: Task) -> dict[str, Any]:
    """The `tasks` chunk of a task about to run."""
    spec = run.spec
    state = node_input(spec, spec.nodes[task.node], task, run.read(task), run.managed_values())
    if isinstance(state, StateView):  # copied now: the step changes the values it views
        state = state.copy()
    payload: dict[str, Any] = {
        "id": task_uuid(run, task),
        "name": task.node,
        "input": state,
        "triggers": task_triggers(spec, task),
    }
    config = run.config
    given = {**(config.get("metadata") or {}), **node_metadata(spec, task)}
    metadata = {k: v for k, v in given.items() if k not in _INTERNAL}
    tags = user_tags(config.get("tags"))
    if tags:
        metadata["tags"] = tags
    if metadata:
        payload["metadata"] = metadata
    return payload


def task_finished(
    run: Any, task: Task, writes: list[tuple[str, Any]] | None = None
) -> dict[str, Any]:
    """The `tasks` chunk of a task that ran (its writes, or `writes` as its node returned
    them; its error, its interrupts)."""
    keys = run.stream_keys
    result: dict[str, Any] = {}
    for key, value in task.writes if writes is None else writes:
        if key not in keys:
            continue
        if key in result:
            before = result[key]
            many = before["$writes"] if _many(before) else [before]
            result[key] = {"$writes": [*many, value]}
        else:
            result[key] = value
    return {
        "id": task_uuid(run, task),
        "name": task.node,
        "error": task.error,
        "result": result,
        "interrupts": [_interrupt(i) for i in task.interrupts],
    }


def _many(value: Any) -> bool:
    return type(value) is dict and isinstance(value.get("$writes"), list)


def _interrupt(interrupt: Any) -> dict[str, Any]:
    """An `Interrupt` as LangGraph's `dataclasses.asdict` of it shows it."""
    schema = getattr(interrupt, "response_schema", None)
    return {"value": interrupt.value, "id": interrupt.id, "response_schema": schema}


def call_started(run: Any, task: Task) -> dict[str, Any]:
    """The `tasks` chunk of a `@task` call: its arguments as `(args, kwargs)`, LangGraph's."""
    return {
        "id": task_uuid(run, task),
        "name": task.node,
        "input": task.arg.input,
        "triggers": ("__pregel_push",),
    }


def call_finished(run: Any, task: Task) -> dict[str, Any]:
    """The `tasks` chunk of a finished `@task` call: what it returned as `{"__return__": value}`."""
    returned = [value[0] for key, value in task.writes if key in (CALLS, RETURN)]
    return {
        "id": task_uuid(run, task),
        "name": task.node,
        "error": task.error,
        "result": {"__return__": returned[0]} if returned else {},
        "interrupts": [_interrupt(i) for i in task.interrupts],
    }
