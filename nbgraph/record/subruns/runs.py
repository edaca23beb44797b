"""The runs of graphs started inside a run's tasks (subgraphs), as the engine kept them.

The engine keeps each such run's `RunLog` on the task that started it (`Task.subruns`); here
they are listed in start order with that task's id. `nbgraph.Run.subruns` (the notebook
layer) makes a `Run` of each.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from nbgraph.engine.facts import kept_tasks

if TYPE_CHECKING:
    from nbgraph.engine.facts import RunLog

__all__ = ["subrun_logs"]


def subrun_logs(log: RunLog) -> list[tuple[str, RunLog]]:
    """`(task id, subrun log)` for every graph run inside one of `log`'s tasks, in start
    order: by the step of the task that ran it, the tasks of one step (which start
    together) in their write order, then in the order that task started them. Not by the
    clock: parallel tasks start on threads in whatever order, and the same run lists its
    subruns the same way every time. The task id is `run.steps.task_id`'s."""
    found = [  # (a flat step's tasks ran none: not read, no `Task` made for them)
        (task.step, task.index, position, task.id, sub)
        for task in kept_tasks(log.steps)
        if task.subruns  # (most tasks ran none: no enumerate made for them)
        for position, sub in enumerate(task.subruns)
    ]
    found.sort(key=lambda row: row[:3])
    return [(row[3], row[4]) for row in found]
