"""`update_state` in an imported LangGraph thread: the step an `update` checkpoint makes.

LangGraph files an update's writes on the checkpoint it builds on, under a task id of its
own, but only while the thread has not moved past that checkpoint: an update of a past
checkpoint (a fork) keeps no writes at all, and two updates of one checkpoint keep the
first one's. So the writes found are checked against the values of the checkpoint the
update made; where they do not give them, the writes are read from the values (what a
list field gained, else the new value) and a warning in `run.warnings` says so. Its node
(`as_node`) is not recorded either: it is read from the edges its writes start, or from
the nodes the new checkpoint runs next.
"""

from __future__ import annotations

from typing import Any

from nbgraph.engine.facts import Task, field_spec, reduce_field
from nbgraph.isolation import isolate
from nbgraph.primitives import MISSING, Overwrite
from nbgraph.record.langgraph.tasks import ERROR, INTERRUPT, NULL_TASK, Triggers, make_task

__all__ = ["update_tasks"]


def update_tasks(
    step: int,
    here: Any,
    child: Any,
    values: dict[str, Any],
    spec: Any,
    triggers: Triggers,
    last_node: str | None,
) -> tuple[list[tuple[Task, list[tuple[str, Any]]]], list[str]]:
    """The task(s) of the update that made `child` from `here` (`values` are `here`'s).

    Returns the tasks with their raw channel writes, and warnings for what the history
    could not tell.
    """
    planned = {t.id for t in here.snapshot.tasks}
    ran = [
        (task_id, raw)
        for task_id, raw in here.writes.items()
        if task_id != NULL_TASK and not any(c in (ERROR, INTERRUPT) for c, _ in raw)
    ]
    for group in ([p for p in ran if p[0] not in planned], ran):
        made = [_update(step, i, raw, spec, child, last_node) for i, (_, raw) in enumerate(group)]
        if made and _gives(spec, values, [t for t, _ in made], child):
            return made, []
    return _from_values(step, values, spec, child, triggers, last_node)


def _update(
    step: int, index: int, raw: list[tuple[str, Any]], spec: Any, child: Any, last: str | None
) -> tuple[Task, list[tuple[str, Any]]]:
    task = make_task(step, index, None, raw, spec, False, name=_as_node(raw, spec, child, last))
    task.kind = "update"
    return task, raw


def _as_node(raw: list[tuple[str, Any]], spec: Any, child: Any, last: str | None) -> str:
    """The node an update wrote as: the source a waiting edge records, the node whose
    edges lead to what it starts (or to what the new checkpoint runs next), else the last
    node that ran (LangGraph's own choice when `as_node` is not given)."""
    for channel, value in raw:
        if channel.startswith("join:") and isinstance(value, str):
            return value
    targets = {c.removeprefix("branch:to:") for c, _ in raw if c.startswith("branch:to:")}
    targets = targets or set(child.snapshot.next or ())
    if targets:
        sources = [s for s, ends in spec.edges.items() if set(ends) == targets]
        if len(sources) == 1:
            return sources[0]
    return last or "__update__"


def _gives(spec: Any, values: dict[str, Any], tasks: list[Task], child: Any) -> bool:
    """Whether folding the tasks' writes into `values` gives the child's values."""
    shown = child.snapshot.values
    if not isinstance(shown, dict):
        return True
    after = dict(values)
    for task in tasks:
        for name, value in task.writes:
            old = after.get(name, MISSING)
            old = old if old is MISSING else isolate(old)  # a reducer may grow it in place
            after[name] = reduce_field(field_spec(spec.fields, name), old, [(task.node, value)], 0)
    try:
        return all(after.get(k, MISSING) == v for k, v in shown.items() if k in spec.fields)
    except Exception:
        return False


def _from_values(
    step: int, values: dict[str, Any], spec: Any, child: Any, triggers: Triggers,
    last: str | None,
) -> tuple[list[tuple[Task, list[tuple[str, Any]]]], list[str]]:  # fmt: skip
    """An update whose writes LangGraph did not keep, read from the values it made."""
    shown = child.snapshot.values if isinstance(child.snapshot.values, dict) else {}
    writes = []
    for name, after in shown.items():
        before = values.get(name, MISSING)
        if name in spec.fields and (before is MISSING or _differs(before, after)):
            writes.append((name, _write(spec.fields[name], before, after)))
    task = make_task(step, 0, None, [], spec, False, name=_as_node([], spec, child, last))
    task.kind, task.writes = "update", writes
    for target in child.snapshot.next or ():
        triggers.start(target, task.node, step)
    note = (
        f"step {step}: LangGraph kept no writes for this update_state (it keeps none for an "
        f"update of a past checkpoint); its writes ({[n for n, _ in writes]}) are read from "
        f"the values it made, and its node is taken to be {task.node!r}."
    )
    return [(task, [])], [note]


def _write(spec: Any, before: Any, after: Any) -> Any:
    """The write that takes a field from `before` to `after`: what a list gained through
    its reducer, else the new value (past the reducer, if it has one)."""
    if spec.reducer is None or before is MISSING:
        return isolate(after)
    grown = isinstance(before, list) and isinstance(after, list) and after[: len(before)] == before
    if grown:
        return isolate(after[len(before) :])
    return Overwrite(isolate(after))


def _differs(a: Any, b: Any) -> bool:
    try:
        return bool(a != b)
    except Exception:
        return True
