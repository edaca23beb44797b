"""A run's pandas tables: `Run.effects`, `steps`, `states`, `field_history`, `diff`.

Cells stay the Python objects the run holds; numbers and flags are typed. pandas is imported
only when a table is built, never by `import nbgraph`."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from nbgraph.engine.facts import (
    TASK_COLUMNS as LOG_TASK_COLUMNS,
)
from nbgraph.engine.facts import (
    initial_values,
    step_numbers,
    task_columns,
    task_row,
)
from nbgraph.primitives import MISSING
from nbgraph.record.effects import Effect, same
from nbgraph.record.text import safe_str
from nbgraph.record.tree import TreeNode, task_status

if TYPE_CHECKING:
    import pandas as pd

    from nbgraph.engine.facts import RunLog
    from nbgraph.record.run import RunRecord

__all__ = [
    "TASK_COLUMNS",
    "column_frame",
    "diff_frame",
    "field_history_frame",
    "frame",
    "log_task_frame",
    "shown_columns",
    "shown_tasks",
    "states_frame",
    "task_frame",
    "task_rows",
]

_NUMBERS = {"step": "int64", "duration": "float64", "attempts": "int64"}
_FLAGS = ("changed", "applied", "conflict", "overwrite_bypass", "dropped_key", "root_reset")


def frame(rows: list[tuple], columns: Iterable[str]) -> pd.DataFrame:
    """A DataFrame whose cells stay the Python objects in `rows`; numbers and flags typed."""
    columns = list(columns)
    by_column = list(zip(*rows, strict=True)) if rows else [()] * len(columns)  # raw cells
    return column_frame(dict(zip(columns, by_column, strict=True)), len(rows))


def column_frame(data: dict[str, Any], length: int) -> pd.DataFrame:
    """A DataFrame of these columns (each a sequence of `length` cells, or an array of its
    dtype already), in this order: cells stay the Python objects given (never inferred as
    strings), numbers and flags typed (`_NUMBERS`, `_FLAGS`). One array a column, made once."""
    import numpy as np
    import pandas as pd

    arrays = []
    for name, cells in data.items():
        dtype = _NUMBERS.get(name) or ("bool" if name in _FLAGS else object)
        if isinstance(cells, np.ndarray) and cells.dtype == dtype:
            arrays.append(cells)
        else:  # fromiter: numpy must not look inside list-like cells for a shape (O(items))
            arrays.append(np.fromiter(cells, dtype=dtype, count=length))
    names = list(data)
    build = getattr(pd.DataFrame, "_from_arrays", None)
    if build is not None:  # (each array as one column, its dtype kept: no copy, no inference)
        try:
            return build(arrays, columns=pd.Index(names), index=pd.RangeIndex(length),
                         verify_integrity=False)  # fmt: skip
        except TypeError:  # (a pandas whose private constructor changed: the public way)
            pass
    series = {n: pd.Series(a, dtype=a.dtype) for n, a in zip(names, arrays, strict=True)}
    return pd.DataFrame(series, columns=names)


TASK_COLUMNS = (
    "step",
    "node",
    "task_id",
    "kind",
    "triggers",
    "writes",
    "duration",
    "status",
    "error",
    "warnings",
    "attempts",
    "attempt_errors",
    "subruns",
)


def _task_kind(node: TreeNode) -> str:
    """`"edge"`, `"send"`, `"update"` or `"call"` (a `@task` called by a node)."""
    if node.reason == "call":
        return "call"
    return "send" if node.arg is not MISSING else node.reason or "edge"


def task_frame(
    nodes: Iterable[TreeNode], subruns: dict[str, list[int]] | None = None
) -> pd.DataFrame:
    """`Run.steps` of these task nodes; `subruns`: task id -> the indexes into `run.subruns`
    of the graphs the task ran (its `subruns` cell, `[]` when none)."""
    return frame(task_rows(nodes, subruns), TASK_COLUMNS)


def task_rows(nodes: Iterable[TreeNode], subruns: dict[str, list[int]] | None = None) -> list:
    """The rows of `task_frame`, as tuples in `TASK_COLUMNS` order (a batch's columns)."""
    subruns = subruns or {}
    return [
        (
            node.step,
            node.name,
            node.task_id,
            _task_kind(node),
            list(node.triggers),
            _fields_written(node.writes),
            node.duration,
            node.status,
            None if node.error is None else _error_text(node.error),
            list(node.warnings),
            len(node.attempts) + 1,
            [_error_text(attempt.error) for attempt in node.attempts] if node.attempts else [],
            list(subruns.get(node.task_id, ())) if subruns else [],
        )
        for node in nodes
    ]


def log_task_frame(log: RunLog, subruns: dict[str, list[int]] | None = None) -> pd.DataFrame | None:
    """`Run.steps` read from the log's tasks, column by column, without the state tree: the
    rows of `task_frame(tree.tasks(), subruns)`, the tasks the tree shows in its order
    (`shown_columns`; a run of flat steps read from the log's columns, no `Task` made). None
    when the tree's order is not the log's (step numbers out of order, a task id twice):
    then the tree's frame is the table."""
    import numpy as np

    shown = shown_columns(log)
    numbers, nodes, tasks = shown["step"], shown["node"], shown["task"]
    count = len(tasks)
    steps = np.fromiter(numbers, "int64", count)
    ids = [f"{n}:{i}:{node}" for n, i, node in zip(numbers, shown["index"], nodes, strict=True)]
    if (steps[1:] < steps[:-1]).any() or len(set(ids)) != count:
        return None
    started = np.fromiter(shown["started"], "float64", count)
    ended = np.fromiter(shown["ended"], "float64", count)
    with np.errstate(invalid="ignore"):
        duration = np.fmax(ended - started, 0.0)
    duration[(started == 0.0) & (ended == 0.0)] = np.nan  # (not recorded: TreeNode.duration)
    errors, warnings, statuses = [None] * count, [[] for _ in tasks], ["ok"] * count
    attempts, attempt_errors = [1] * count, [[] for _ in tasks]
    kinds = [
        "call" if k == "call" else "update" if k == "update" else "edge" for k in shown["kind"]
    ]
    for i, task in enumerate(tasks):
        if task is None:  # (a flat row: the common cells)
            continue
        kinds[i] = _log_task_kind(task)
        if not _unusual(task):
            continue
        statuses[i] = task_status(task)
        if task.error is not None:
            errors[i] = _error_text(task.error)
        if task.dropped:
            warnings[i] = [f"dropped {key!r}: {why}" for key, _, why in task.dropped]
        if task.attempts:
            attempts[i] = len(task.attempts) + 1
            attempt_errors[i] = [_error_text(attempt.error) for attempt in task.attempts]
    subrun_cells = [list(subruns.get(i, ())) for i in ids] if subruns else [[] for _ in tasks]
    columns = {
        "step": steps,
        "node": nodes,
        "task_id": ids,
        "kind": kinds,
        "triggers": [list(t) for t in shown["triggers"]],
        "writes": [[n[0]] if len(n) == 1 else list(dict.fromkeys(n)) for n in shown["names"]],
        "duration": duration,
        "status": statuses,
        "error": errors,
        "warnings": warnings,
        "attempts": np.fromiter(attempts, "int64", count),
        "attempt_errors": attempt_errors,
        "subruns": subrun_cells,
    }
    return column_frame(columns, count)


def shown_columns(log: RunLog) -> dict[str, list]:
    """`task_columns` of the tasks the state tree has a task node for (`shown_tasks`), in
    log order: a run of flat steps read from the log's columns ("task" None), no `Task` made."""
    if log.semantics != "branches":
        numbers = step_numbers(log.steps)
        start = next((p for p, number in enumerate(numbers) if number != 0), len(numbers))
        if 0 not in numbers[start:]:  # (the input's steps first: the rest read as columns)
            return task_columns(log.steps, start)
    rows = [task_row(task) for task in shown_tasks(log)]
    cells = list(zip(*rows, strict=True)) if rows else [()] * 11
    picked = (0, 1, 2, 3, 4, 5, 8, 9, 10)  # (`task_row`'s cells, `TASK_COLUMNS`' order)
    return {name: list(cells[at]) for name, at in zip(LOG_TASK_COLUMNS, picked, strict=True)}


def shown_tasks(log: RunLog) -> list[Any]:
    """The log's tasks the state tree has a task node for, in log order: each step's, but
    the input's (step 0's in a superstep run, a lineage run's `"input"` task)."""
    if log.semantics == "branches":
        return [
            task
            for step in log.steps
            if not (step.tasks and step.tasks[0].kind == "input")
            for task in step.tasks
        ]
    return [task for step in log.steps if step.step != 0 for task in step.tasks]


def _unusual(task: Any) -> bool:
    """Whether a task's row has more than the common cells (status "ok", no error, no
    warning, one attempt)."""
    return bool(
        task.error is not None or task.dropped or task.attempts or task.from_cache
        or task.interrupts
    )  # fmt: skip


def _log_task_kind(task: Any) -> str:
    """`_task_kind` of a task's tree node, read from the task."""
    kind = task.kind
    if kind == "call":
        return "call"
    if task.arg is not MISSING:
        return "send"
    return "update" if kind == "update" else "edge"


def _fields_written(writes: Any) -> list[str]:
    """The fields of a task's writes, each once, in order (one write: the common case)."""
    if len(writes) == 1:
        return [writes[0][0]]
    return list(dict.fromkeys(f for f, _ in writes))


def _error_text(error: BaseException) -> str:
    return f"{type(error).__name__}: {safe_str(error)}"


def diff_frame(left: dict, right: dict, a: str, b: str) -> pd.DataFrame:
    import pandas as pd

    rows = []
    for name in [*left, *(n for n in right if n not in left)]:
        x, y = left.get(name, MISSING), right.get(name, MISSING)
        if same(x, y):
            continue
        change = "added" if x is MISSING else "removed" if y is MISSING else "changed"
        rows.append((name, change, x, y))
    return pd.DataFrame(rows, columns=["field", "change", a, b], dtype=object)


def states_frame(run: RunRecord) -> pd.DataFrame:
    """`Run.states`: the state after each applied superstep, one column per field."""
    import pandas as pd

    names = [n for n, f in run.graph.fields.items() if not f.managed]
    if run.graph.open_schema:  # a dict schema: keys nobody declared are fields too
        seen = dict.fromkeys(e.field for e in run.effect_list if not e.dropped_key)
        names += [n for n in seen if n not in names]
    if run.log.semantics == "branches":  # lineages met after each step (docs/BRANCHES.md)
        applied = [s.step for s in run.log.steps if s.applied]
        rows = [[state.get(n, MISSING) for n in names] for state in map(run.state_at, applied)]
        index = pd.Index(applied, name="step")
        return pd.DataFrame(rows, index=index, columns=names, dtype=object)
    current = initial_values(run.graph)
    by_step: dict[int, list[Effect]] = {}
    for effect in run.effect_list:
        by_step.setdefault(effect.step, []).append(effect)
    rows, index = [], []
    for step in run.log.steps:
        for effect in by_step.get(step.step, ()):
            if effect.dropped_key or not effect.applied:
                continue
            after = effect.cell("after")  # shared, not copied: see `effects`
            if after is MISSING:
                current.pop(effect.field, None)
            else:
                current[effect.field] = after
        if step.applied:
            rows.append([current.get(n, MISSING) for n in names])
            index.append(step.step)
    return pd.DataFrame(rows, index=pd.Index(index, name="step"), columns=names, dtype=object)


def field_history_frame(run: RunRecord, field: str) -> pd.DataFrame:
    """`Run.field_history`: one field through the run, per applied step."""
    import pandas as pd

    if field not in run.graph.fields and not run.graph.open_schema:
        raise KeyError(f"No field {field!r} in this run's state; fields: {list(run.graph.fields)}.")
    effects = {e.step: e for e in run.effect_list if e.field == field and not e.dropped_key}
    rows = []
    for step, value in run.states[field].items() if field in run.states else []:
        effect = effects.get(step)
        rows.append(
            (
                step,
                value,
                effect is not None and effect.changed,
                effect.writes if effect else [],
                effect.writers if effect else [],
                effect.reducer if effect else "",
            )
        )
    columns = ["step", "value", "changed", "writes", "writers", "reducer"]
    return pd.DataFrame(rows, columns=columns).astype(
        {"value": object, "writes": object, "writers": object}
    )
