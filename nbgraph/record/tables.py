"""A run's pandas tables: `Run.effects`, `steps`, `states`, `field_history`, `diff`.

Cells stay the Python objects the run holds; numbers and flags are typed. pandas is imported
only when a table is built, never by `import nbgraph`."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from nbgraph.engine.facts import initial_values
from nbgraph.primitives import MISSING
from nbgraph.record.effects import Effect, same
from nbgraph.record.text import safe_str
from nbgraph.record.tree import TreeNode

if TYPE_CHECKING:
    import pandas as pd

    from nbgraph.record.run import RunRecord

__all__ = [
    "TASK_COLUMNS",
    "diff_frame",
    "field_history_frame",
    "frame",
    "states_frame",
    "task_frame",
    "task_rows",
]

_NUMBERS = {"step": "int64", "duration": "float64", "attempts": "int64"}
_FLAGS = ("changed", "applied", "conflict", "overwrite_bypass", "dropped_key", "root_reset")


def frame(rows: list[tuple], columns: Iterable[str]) -> pd.DataFrame:
    """A DataFrame whose cells stay the Python objects in `rows`; numbers and flags typed."""
    import numpy as np
    import pandas as pd

    columns = list(columns)
    by_column = list(zip(*rows, strict=True)) if rows else [()] * len(columns)  # raw cells
    data = {}
    for name, cells in zip(columns, by_column, strict=True):
        dtype = _NUMBERS.get(name) or ("bool" if name in _FLAGS else object)
        # fromiter: numpy must not look inside list-like cells for a shape (O(items) each)
        data[name] = pd.Series(np.fromiter(cells, dtype=dtype, count=len(rows)), dtype=dtype)
    return pd.DataFrame(data, columns=columns)


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


def _fields_written(writes: tuple[tuple[str, object], ...]) -> list[str]:
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
