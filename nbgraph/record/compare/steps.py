"""Comparing two superstep runs step by step: what `Run.compare` does when neither run used
branch lineages (then a step is a moment both runs share; see `node_compare` otherwise)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from nbgraph.record.compare.messages import IDS_ONLY, compare_values
from nbgraph.types import MISSING

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["compare_by_step"]

_COLUMNS = ["step", "what", "this", "other", "note"]


def compare_by_step(this: Any, other: Any) -> pd.DataFrame:
    """Rows where the tasks of a step, its outcome, or a field after it differ.

    Messages are compared by what they say; a field whose messages differ only in their ids
    gets a row with the ids as this and other and `note` `IDS_ONLY`; other rows' `note` is "".
    """
    import pandas as pd

    rows = []
    mine, theirs = _tasks_by_step(this), _tasks_by_step(other)
    for step in sorted(set(mine) | set(theirs)):
        if mine.get(step) != theirs.get(step):
            rows.append((step, "tasks", mine.get(step, []), theirs.get(step, []), ""))
        outcome = (_outcome(this, step), _outcome(other, step))
        if outcome[0] != outcome[1]:
            rows.append((step, "outcome", *outcome, ""))
            continue  # a step that failed on one side has no state to compare
        here, there = _maybe_after(this, step), _maybe_after(other, step)
        for name in [*here, *(n for n in there if n not in here)]:
            left, right = here.get(name, MISSING), there.get(name, MISSING)
            difference = compare_values(left, right)
            if difference is None:
                continue
            if difference.said or difference.ids is None:
                rows.append((step, name, left, right, ""))
            else:
                rows.append((step, name, *difference.ids, IDS_ONLY))
    return pd.DataFrame(rows, columns=_COLUMNS, dtype=object)


def _tasks_by_step(run: Any) -> dict[int, list[str]]:
    return {s.step: [t.node for t in s.tasks if s.step > 0] for s in run.log.steps}


def _outcome(run: Any, step: int) -> str:
    if step not in run.timeline.index:
        return "not reached"
    return "applied" if run.timeline.step_log(step).applied else "failed"


def _maybe_after(run: Any, step: int) -> dict[str, Any]:
    if step not in run.timeline.index or not run.timeline.step_log(step).applied:
        return {}
    return run.timeline.after(step)
