"""The engine's whole interface to the record and the views: a run's facts as plain data, and
the few engine functions that read them again.

`nbgraph.record` and `nbgraph.views` import from the engine only this module
(`tests/test_layers.py` checks it).
A run's facts are a `RunLog` of `StepLog`s, each with its `Task`s (their `Attempt`s), its
`RootReset`s and its branch `Join`s, and the `StoreOp`s its nodes made. The record rebuilds
states from them with the engine's own code, never a copy of it: writes folded through the
reducers (`replay_step`, `reduce_field`, ...), a branch run's lineages merged by the engine's
rules (`delta_merge`, ...), a thread's checkpoints read as the engine wrote them, and a
recorded task's routers called as the engine calls them (`routes_again`). The drawings ask
whether a task handed a command to its parent graph (`hands_to_parent`) and how to say so
(`handed_text`).

The functions that read checkpoints or call routers load those engine modules on first use,
so `import nbgraph` stays light.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator, Sequence
from itertools import pairwise
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from nbgraph.engine.core.collector import collector_paused
from nbgraph.engine.core.columns import (
    _LISTED,
    StepColumns,
    applied_numbers,
    last_applied,
    step_numbers,
    task_nodes,
    task_total,
    task_tuples,
)
from nbgraph.engine.core.node_context.store_record import StoreOp
from nbgraph.engine.core.pinned import growth, pinned_data, pinned_map
from nbgraph.engine.core.retrying import Attempt
from nbgraph.engine.core.runlog import (
    Join,
    RootReset,
    RunLog,
    StepLog,
    initial_values,
    join_data,
    replay_step,
    reset_data,
)
from nbgraph.engine.core.tasks import Task, absorb_route, prepared, router_state
from nbgraph.engine.core.writes import (
    PLAIN_WRITES,
    applied_writes,
    apply_writes,
    clear_ephemeral,
    conflicting_writers,
    field_spec,
    group_writes,
    merge_unreduced,
    reduce_field,
)
from nbgraph.engine.lineages.checkpoints import rebuild as rebuild_lineages
from nbgraph.engine.lineages.points import (
    Lineage,
    common_base,
    delta_merge,
    grow,
    keep_live_ephemeral,
)
from nbgraph.engine.nested.edges import TO_PARENT, handed_text, hands_to_parent
from nbgraph.schema import managed_value

if TYPE_CHECKING:
    from nbgraph.blueprint import GraphSpec

__all__ = [
    "PLAIN_WRITES",
    "TASK_COLUMNS",
    "TO_PARENT",
    "Attempt",
    "Join",
    "Lineage",
    "RootReset",
    "RunLog",
    "StepColumns",
    "StepLog",
    "StoreOp",
    "Task",
    "applied_numbers",
    "applied_writes",
    "apply_delta",
    "apply_writes",
    "checked_saver",
    "clear_ephemeral",
    "collector_paused",
    "common_base",
    "common_steps",
    "conflicting_writers",
    "delta_merge",
    "field_spec",
    "flat_steps",
    "group_writes",
    "grow",
    "growth",
    "handed_text",
    "hands_to_parent",
    "initial_values",
    "join_data",
    "keep_live_ephemeral",
    "kept_steps",
    "kept_tasks",
    "last_applied",
    "merge_unreduced",
    "numbered_tasks",
    "parent_chain",
    "pinned_data",
    "pinned_map",
    "prepared",
    "rebuild_lineages",
    "reduce_field",
    "replay_step",
    "reset_data",
    "restored_values",
    "routes_again",
    "step_numbers",
    "task_columns",
    "task_from_data",
    "task_nodes",
    "task_row",
    "task_total",
    "task_tuples",
    "unapplied_positions",
]


# --- a run's steps read from their columns, no object made for a common step ----------------


def common_steps(
    steps: Sequence[StepLog], start: int = 0, stop: int | None = None
) -> Iterator[tuple[int, str | None, list | None, StepLog | None]]:
    """Per step from position `start` to `stop` (None: the last), in order: `(number, node,
    writes, None)` for a sealed flat step of one task, applied, that cleared nothing and is
    not a `@task` call (the common step of a loop: its writes as a new list of `(field,
    value)`, no `StepLog` made), else `(number, None, None, step)` with the step itself."""
    stop = len(steps) if stop is None else stop
    columns = steps.columns if isinstance(steps, StepColumns) else None
    if columns is None:
        for position in range(start, stop):
            step = steps[position]
            yield step.step, None, None, step
        return
    sealed = steps.sealed  # type: ignore[union-attr]
    rich, shapes, values = columns.rich, columns.tasks, columns.values
    # (read once, as lists: per step shape whether it is common; per task shape its node and
    # fields, None for a `@task` call; the sealed steps' entries, and the next step's first row)
    common = [applied and not cleared for _, cleared, applied in columns.step_table]
    table = [None if k[2] == "call" else (k[0], k[6]) for k in columns.task_table]
    rows = len(shapes)  # (before the entries: a step's entry is written before its rows)
    last = max(min(stop, sealed), start)
    numbers = columns.steps[4 * start : 4 * last + 2].tolist()
    if len(numbers) < 4 * (last - start) + 2:  # (no step after the last sealed one: its rows end)
        numbers += [-1, rows]
    for position in range(start, stop):
        if position >= sealed or position in rich:
            step = steps[position]
            yield step.step, None, None, step
            continue
        i = 4 * (position - start)
        number, row, at, shape = numbers[i], numbers[i + 1], numbers[i + 2], numbers[i + 3]
        if numbers[i + 5] - row == 1 and common[shape]:
            known = table[shapes[row]]
            if known is not None:
                node, names = known
                if len(names) == 1:
                    yield number, node, [(names[0], values[at])], None
                else:
                    yield (
                        number,
                        node,
                        list(zip(names, values[at : at + len(names)], strict=True)),
                        None,
                    )
                continue
        step = steps[position]
        yield step.step, None, None, step


def flat_steps(
    steps: Sequence[StepLog],
) -> Iterator[tuple[int, tuple | None, list | None, StepLog | None]]:
    """Per step, in order: `(number, (written, cleared, applied), rows, None)` for a sealed
    flat step read from the columns (no `StepLog` made), a row per task: `((node, index,
    kind, triggers, routes, returned, fields written), written values, started, ended)`,
    the first tuple shared by every row of that shape; else `(number, None, None, step)`."""
    columns = steps.columns if isinstance(steps, StepColumns) else None
    sealed = steps.sealed if columns is not None else 0  # type: ignore[union-attr]
    if columns is not None and sealed:
        rich, values, table = columns.rich, columns.values, columns.task_table
        step_table = columns.step_table
        rows = len(columns.tasks)  # (before the entries: a step's entry is written before its rows)
        numbers = columns.steps[: 4 * sealed + 2].tolist()
        if len(numbers) < 4 * sealed + 2:  # (no step after the last sealed one: its rows end)
            numbers += [-1, rows]
        shapes, times = columns.tasks[:rows].tolist(), columns.times[: 2 * rows].tolist()
        shared: dict[int, tuple] = {}
    for position in range(len(steps)):
        if position >= sealed or position in rich:
            step = steps[position]
            yield step.step, None, None, step
            continue
        i = 4 * position
        number, row, at, shape = numbers[i], numbers[i + 1], numbers[i + 2], numbers[i + 3]
        if numbers[i + 5] - row == 1:  # (one task: the common step, no loop)
            kind = shapes[row]
            key = shared.get(kind)
            if key is None:
                key = shared[kind] = _shape(table[kind])
            found = [(key, values[at : at + len(key[6])], times[2 * row], times[2 * row + 1])]
            yield number, step_table[shape], found, None
            continue
        found = []
        for task in range(row, numbers[i + 5]):
            kind = shapes[task]
            key = shared.get(kind)
            if key is None:
                key = shared[kind] = _shape(table[kind])
            count = len(key[6])
            found.append((key, values[at : at + count], times[2 * task], times[2 * task + 1]))
            at += count
        yield number, step_table[shape], found, None


def numbered_tasks(steps: Sequence[StepLog], start: int = 0) -> Iterator[tuple[int, tuple, Any]]:
    """Per task of the steps from position `start` on, in order: `(its step's number, (node,
    index, kind, triggers, routes, returned, fields written), task)`. `task` is the `Task`
    for a step kept as objects (its own `step` may differ from its step's), None for a flat
    row (no `Task` made; the middle tuple is shared by every row of that shape)."""
    columns = steps.columns if isinstance(steps, StepColumns) else None
    sealed = steps.sealed if columns is not None else 0  # type: ignore[union-attr]
    if columns is not None:
        rich, numbers, shapes, table = (
            columns.rich,
            columns.steps,
            columns.tasks,
            columns.task_table,
        )
        shared: list[tuple] = []
    for position in range(start, len(steps)):
        if position >= sealed or position in rich:
            step = steps[position]
            for task in step.tasks:
                names = tuple([name for name, _ in task.writes])
                yield step.step, (task.node, task.index, task.kind, task.triggers, task.routes,
                                  task.returned, names), task  # fmt: skip
            continue
        base = 4 * position
        number = numbers[base]
        end = numbers[base + 5] if len(numbers) > base + 5 else len(shapes)
        for row in range(numbers[base + 1], end):
            shape = shapes[row]
            if shape >= len(shared):  # (the shapes new since: routes as the task had them)
                shared.extend(_shape(key) for key in table[len(shared) : shape + 1])
            yield number, shared[shape], None


def _shape(key: tuple) -> tuple:
    """A task shape of the columns, its routes a list again where the task's were."""
    node, index, kind, triggers, routes, returned, names = key
    if routes and routes[-1] is _LISTED:
        routes = list(routes[:-1])
    return node, index, kind, triggers, routes, returned, names


def task_row(task: Task) -> tuple:
    """A task as `task_tuples` gives a step kept as objects (`task` itself last)."""
    names = tuple([name for name, _ in task.writes])
    return (task.step, task.index, task.node, task.kind, task.triggers, names, task.routes,
            task.returned, task.started, task.ended, task)  # fmt: skip


TASK_COLUMNS = ("step", "index", "node", "kind", "triggers", "names", "started", "ended", "task")


def task_columns(steps: Sequence[StepLog], start: int = 0) -> dict[str, list]:
    """`task_tuples(steps, start)` as columns (`TASK_COLUMNS`: fields written as "names";
    routes and returns left out): per task of the steps from position `start` on, in order.
    A run of flat steps is read from the arrays a column at a time; "task" is None for a
    flat row and the `Task` for a step kept as objects."""
    found: dict[str, list] = {name: [] for name in TASK_COLUMNS}
    number_col, index_col, node_col, kind_col, trigger_col, name_col, started, ended, task_col = (
        found.values()
    )  # fmt: skip
    columns = steps.columns if isinstance(steps, StepColumns) else None
    sealed = steps.sealed if columns is not None else 0  # type: ignore[union-attr]
    if columns is not None:
        rich, shapes, times, table = columns.rich, columns.tasks, columns.times, columns.task_table
        rows = len(shapes)  # (before the entries: a step's entry is written before its rows)
        entries = columns.steps[4 * start : 4 * max(sealed, start) + 2].tolist()
        firsts = entries[1::4] if len(entries) > 4 * (sealed - start) else [*entries[1::4], rows]
    position, size = start, len(steps)
    while position < size:
        if position >= sealed or position in rich:
            step = steps[position]
            for task in step.tasks:
                number_col.append(task.step), index_col.append(task.index)
                node_col.append(task.node), kind_col.append(task.kind)
                trigger_col.append(task.triggers), task_col.append(task)
                name_col.append(tuple([name for name, _ in task.writes]))
                started.append(task.started), ended.append(task.ended)
            position += 1
            continue
        end = position + 1  # (a run of flat positions: `position` to `end`)
        while end < sealed and end not in rich:
            end += 1
        low, high = firsts[position - start], firsts[end - start]
        numbers = entries[4 * (position - start) : 4 * (end - start) : 4]
        bounds = firsts[position - start : end - start + 1]
        counts = [after - first for first, after in pairwise(bounds)]  # (tasks a step)
        if counts.count(1) == len(counts):  # (one task a step: the step numbers as they are)
            number_col.extend(numbers)
        else:
            for number, count in zip(numbers, counts, strict=True):
                number_col.extend([number] * count)
        ids = shapes[low:high].tolist()
        for column, item in ((node_col, 0), (index_col, 1), (kind_col, 2), (trigger_col, 3),
                             (name_col, 6)):  # fmt: skip
            cells = [key[item] for key in table]
            column.extend([cells[shape] for shape in ids])
        both = times[2 * low : 2 * high]
        started.extend(both[0::2]), ended.extend(both[1::2])
        task_col.extend([None] * (high - low))
        position = end
    return found


def kept_steps(steps: Sequence[StepLog]) -> Iterator[StepLog]:
    """The steps kept as objects, in order: the only steps that can hold more than flat
    task rows (resets, merged writes, joins...); a flat step is never made."""
    columns = steps.columns if isinstance(steps, StepColumns) else None
    if columns is None:
        yield from steps
        return
    sealed, rich = steps.sealed, columns.rich  # type: ignore[union-attr]
    for position in sorted(p for p in rich if p < sealed):
        yield rich[position]
    for position in range(sealed, len(steps)):
        yield steps[position]


def kept_tasks(steps: Sequence[StepLog]) -> Iterator[Task]:
    """The tasks of the steps kept as objects, in step order: the only tasks that can hold
    more than a flat row (an error, subruns, attempts, interrupts...); a flat step's are
    never made."""
    columns = steps.columns if isinstance(steps, StepColumns) else None
    if columns is None:
        for step in steps:
            yield from step.tasks
        return
    sealed, rich = steps.sealed, columns.rich  # type: ignore[union-attr]
    for position in sorted(p for p in rich if p < sealed):
        yield from rich[position].tasks
    for position in range(sealed, len(steps)):
        yield from steps[position].tasks


def unapplied_positions(steps: Sequence[StepLog]) -> list[int]:
    """The positions of the steps that were not applied (a failed or paused step), in order."""
    columns = steps.columns if isinstance(steps, StepColumns) else None
    if columns is None:
        return [position for position, step in enumerate(steps) if not step.applied]
    sealed = steps.sealed  # type: ignore[union-attr]
    applied, rich = [key[2] for key in columns.step_table], columns.rich  # (read after sealed)
    found = [
        position
        for position, shape in enumerate(columns.steps[3 : 4 * sealed : 4])
        if not (applied[shape] if shape >= 0 else rich[position].applied)
    ]
    return found + [p for p in range(sealed, len(steps)) if not steps[p].applied]


# --- a thread's checkpoints, read as the engine wrote them -------------------------------------


def checked_saver(saver: Any) -> Any:
    """`saver`, with every checkpoint and pending write it returns checked (idempotent)."""
    from nbgraph.engine.persistence.checkpoint_shape import checked_saver as checked

    return checked(saver)


def parent_chain(saver: Any, record: Any) -> list[Any]:
    """`record` and its ancestors, newest first, to the thread's first checkpoint.

    Raises:
        CheckpointFileError: the parent links loop or break.
    """
    from nbgraph.engine.persistence.chain import parent_chain as chain

    return chain(saver, record)


def apply_delta(
    spec: GraphSpec, values: dict[str, Any], payload: dict[str, Any], step: int
) -> dict:
    """One checkpoint's delta (resets, writes, clears) applied to `values` (owned by the
    caller), as a resume replays it.

    Raises:
        CheckpointFileError: the saved writes no longer fold.
    """
    from nbgraph.engine.persistence.restoring import apply_delta as apply

    return apply(spec, values, payload, step)


def task_from_data(data: dict[str, Any]) -> Task:
    """A task back from a checkpoint's plain data."""
    from nbgraph.engine.persistence.restoring import task_from_data as task

    return task(data)


def restored_values(
    saver: Any, spec: GraphSpec, config: dict[str, Any], checkpoint_id: str
) -> dict[str, Any]:
    """The state of the thread `config` names at `checkpoint_id`, restored as a resume
    restores it (from the nearest snapshot and the deltas after it; a branch run's lineages
    merged)."""
    from nbgraph.engine.persistence.persist import Thread

    return Thread(saver, spec, config).restore(checkpoint_id).values  # type: ignore[union-attr]


# --- a recorded task's routers, called again -----------------------------------------------------


def routes_again(
    graph: GraphSpec, task: Task, start: dict[str, Any], log: RunLog
) -> tuple[list[Any] | None, str]:
    """Where the task's routers send the run from `start`, or None and why it is unknown.

    A router is called as the engine calls it (its `config`, `runtime` parameters filled, with
    the run's context; a store is not reached again).
    """
    from nbgraph.engine.core.config import DEFAULT_RECURSION_LIMIT
    from nbgraph.engine.core.node_context.injection import call

    scratch = Task(task.step, task.index, task.node, task.kind, writes=task.writes)
    config = log.config
    limit = config.get("recursion_limit", DEFAULT_RECURSION_LIMIT)
    again = SimpleNamespace(spec=graph, config=config, context=log.context, store=None, log=log)
    fields = graph.fields.items()
    managed = {n: managed_value(f, limit - task.step) for n, f in fields if f.managed}
    for branch in graph.branches.get(task.node, ()):
        try:
            state = router_state(graph, scratch, start, managed, branch)
            result = call(branch.router, state, again, scratch)
            if inspect.isawaitable(result):
                getattr(result, "close", lambda: None)()
                return None, f"router {branch.name!r} is async and is not called again"
            absorb_route(graph, branch, scratch, result)
        except Exception as error:
            why = f"{type(error).__name__}: {str(error).rstrip('.')}"
            return None, f"router {branch.name!r} raised {why}"
    return list(scratch.routes), ""
