"""The last rows of a run's tables without building the whole tables: what a run shows.

Displaying a run (`app.last_run` in a cell) shows its last tasks and effects. For a long
superstep run whose tables are not built yet, those rows are rebuilt from the last steps
alone: the state before them comes from the run's `Timeline`, the rows from the same replay
as `run.effects`. Short runs, branch-lineage runs and runs whose tables exist read the tables.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from nbgraph.engine.facts import initial_values
from nbgraph.record.effects import EFFECT_COLUMNS, Effect, SuperstepEffects
from nbgraph.record.tree import task_node

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["last_effects", "last_tasks", "steps_effects"]

_LONG_RUN_STEPS = 1_000
"""A run with more steps than this shows its tails without building its tables."""


def _use_tables(run: Any, table: str) -> bool:
    log = run.log
    built = table in vars(run)
    return built or log.semantics == "branches" or len(log.steps) <= _LONG_RUN_STEPS


def last_effects(run: Any, count: int) -> tuple[pd.DataFrame, int | None]:
    """The last `count` rows of `run.effects`, and how many rows the table has (None: not
    counted, because the table was not built)."""
    from nbgraph.record.tables import frame as _frame

    if _use_tables(run, "effects"):
        return run.effects.tail(count), len(run.effects)
    steps, back = run.log.steps, count
    while True:  # most steps make a row or more: widen the window only when they did not
        start = max(0, len(steps) - back)
        rows = _rows_from(run, start)
        if len(rows) >= count or start == 0:
            frame = _frame(rows[-count:], EFFECT_COLUMNS)
            return frame, (len(rows) if start == 0 else None)
        back *= 4


def steps_effects(run: Any, logs: list[Any], before: dict[str, Any] | None) -> pd.DataFrame:
    """The rows of `run.effects` of `logs`, steps of the run one after the other, replayed
    from `before` (the state just before the first, owned by the replay; None: the run's
    start) — what a stepper shows after each step, without the whole table again. A run
    whose table is built, or that has branch lineages, reads the table."""
    from nbgraph.record.tables import frame as _frame

    if "effects" in vars(run) or run.log.semantics == "branches":
        wanted = {log.step for log in logs}
        effects = run.effects
        return effects[effects["step"].isin(wanted)]
    replay = SuperstepEffects(run.log, before)
    return _frame([row for log in logs for row in replay.rows(log)], EFFECT_COLUMNS)


def _rows_from(run: Any, start: int) -> list[Effect]:
    steps = run.log.steps
    before = run.timeline.after(steps[start - 1].step) if start else initial_values(run.graph)
    replay = SuperstepEffects(run.log, before)
    return [row for step in steps[start:] for row in replay.rows(step)]


def last_tasks(run: Any, count: int) -> pd.DataFrame:
    """The last `count` rows of `run.steps` (one per task)."""
    from nbgraph.record.tables import task_frame as _task_frame

    if _use_tables(run, "steps") or "tree" in vars(run):
        return run.steps.tail(count)
    tasks: list[Any] = []
    for step in reversed(run.log.steps[1:]):
        tasks[:0] = step.tasks
        if len(tasks) >= count:
            break
    return _task_frame(task_node(task, "", {}) for task in tasks[-count:])
