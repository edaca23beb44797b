"""The runs of graphs started inside a run's tasks (subgraphs), as the engine kept them.

The engine keeps each such run's `RunLog` on the task that started it (`Task.subruns`); here
they are listed in start order with that task's id. `nbgraph.Run.subruns` (the notebook
layer) makes a `Run` of each.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nbgraph.engine.runlog import RunLog


def subrun_logs(log: RunLog) -> list[tuple[str, RunLog]]:
    """`(task id, subrun log)` for every graph run inside one of `log`'s tasks, in start
    order: by the start of the task that ran it (parallel tasks start together), then in
    the order that task started them. The task id is `run.steps.task_id`'s."""
    found = [
        (task.started, task.step, task.index, position, task.id, sub)
        for task in log.tasks()
        for position, sub in enumerate(task.subruns)
    ]
    found.sort(key=lambda row: row[:4])
    return [(row[4], row[5]) for row in found]
