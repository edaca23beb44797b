"""The inspector's list of steps and tasks beside the slider, with their times; a picked task's
input and output.

Each step has its time, each task under it its own; picking a step goes there, picking a task
goes to its step and shows what the task read (`run.state_at("task:<id>")`) and what it wrote.

A long run lists the steps around the shown one (`_WINDOW` each side), so the list stays small.
"""

from __future__ import annotations

import html
from typing import Any

import ipywidgets

from nbgraph.record.text import plural
from nbgraph.views.panels.table_view import duration_text, ending
from nbgraph.views.panels.value_tree import value_tree_html

__all__ = ["StepList", "tasks_text"]

_WINDOW = 30
_TASKS_LISTED = 12
"""A step lists this many of its tasks, then one line for the rest (a `Send` fan-out)."""


def tasks_text(nodes: list[str], names: int = 4) -> str:
    """A step's tasks in a few words: each node once with its count, in order of first run,
    the first `names` of them and how many other nodes ran.

    >>> tasks_text(["plan"] + ["work"] * 200 + ["a", "b", "c", "d"])
    'plan, work ×200, a, b and 2 other nodes'
    """
    counts: dict[str, int] = {}
    for node in nodes:
        counts[node] = counts.get(node, 0) + 1
    parts = [f"{n} ×{c}" if c > 1 else n for n, c in counts.items()]
    if len(parts) <= names:
        return ", ".join(parts)
    others = plural(len(parts) - names, "other node")
    return f"{', '.join(parts[:names])} and {others}"


class StepList:
    """A `Select` of steps and tasks and a panel of the picked task.

    Attributes:
        select: the list (values: `("step", n)` or `("task", task id)`).
        task_panel: the picked task's input and output (empty when a step is picked).
    """

    def __init__(self, inspector: Any) -> None:
        self.inspector = inspector
        self.select = ipywidgets.Select(rows=14, layout={"width": "230px"})
        self.task_panel = ipywidgets.HTML()
        self._listed: tuple[Any, int, int, int] | None = None  # run, steps, window
        self._refreshing = False
        self.select.observe(self._picked, "value")

    def refresh(self, step: int) -> None:
        """List the steps around `step` (when it left the listed window) and select it."""
        run = self.inspector.run
        positions = run.timeline.index
        position = positions[step]
        steps = run.log.steps
        window = (max(0, position - _WINDOW), min(len(steps), position + _WINDOW + 1))
        self._refreshing = True
        try:
            listed = (run, len(steps), *window)
            if self._listed is None or any(
                a is not b and a != b for a, b in zip(listed, self._listed, strict=True)
            ):
                self._listed = listed
                listed_steps = [steps[at] for at in range(*window)]  # (a slice makes all)
                self.select.options = _options(listed_steps)
            chosen = self.select.value
            if not (chosen and chosen[0] == "task" and _task(run, chosen[1]).step == step):
                self.select.value = ("step", step)
                self.task_panel.value = ""
        finally:
            self._refreshing = False

    def _picked(self, change: Any) -> None:
        if self._refreshing or change["new"] is None:
            return
        kind, key = change["new"]
        if kind in ("step", "more"):  # ("more": a step's tasks past the listed ones)
            self.task_panel.value = ""
            self.inspector.go(key)
            return
        self.show_task(key)

    def show_task(self, task_id: str) -> None:
        """Go to the task's step and show what it read and what it wrote."""
        run = self.inspector.run
        task = _task(run, task_id)
        self.task_panel.value = _task_html(run, task)
        self._refreshing = True
        try:
            self.select.value = ("task", task_id)
        finally:
            self._refreshing = False
        if self.inspector.step != task.step:
            self.inspector.go(task.step)


def _task(run: Any, task_id: str) -> Any:
    number = task_id.partition(":")[0]  # (`Task.id`: its step first; look there first)
    position = run.timeline.index.get(int(number)) if number.isdigit() else None
    if position is not None:
        for task in run.log.steps[position].tasks:
            if task.id == task_id:
                return task
    for step in run.log.steps:
        for task in step.tasks:
            if task.id == task_id:
                return task
    raise ValueError(f"This run has no task {task_id!r}.")


def _options(steps: Any) -> list[tuple[str, tuple[str, Any]]]:
    """A line per step (its tasks' total time) and an indented line per task (its time)."""
    options: list[tuple[str, tuple[str, Any]]] = []
    for step in steps:
        tasks = list(step.tasks) if step.step > 0 else []
        timed = [t for t in tasks if _timed(t)]
        spent = sum(_seconds(t) for t in timed)
        status = "" if step.applied else _not_applied(tasks)
        names = "input" if step.step == 0 else f"{len(tasks)} task{'s' * (len(tasks) != 1)}"
        took = f", {duration_text(spent)}" if timed else ", time unknown" if tasks else ""
        options.append((f"step {step.step}: {names}{took}{status}", ("step", step.step)))
        listed = tasks if len(tasks) <= _TASKS_LISTED + 1 else tasks[:_TASKS_LISTED]
        for task in listed:
            mark = " ✗" if task.error is not None else " ⏸" if task.interrupts else ""
            line = f"    {task.node}  {_took(task)}{mark}"
            options.append((line, ("task", task.id)))
        if len(listed) < len(tasks):  # the rest: pick them in the branch picker
            rest = tasks_text([t.node for t in tasks[len(listed) :]])
            options.append((f"    … {len(tasks) - len(listed)} more: {rest}", ("more", step.step)))
    return options


def _not_applied(tasks: list[Any]) -> str:
    """How a step whose writes never reached the state ended: paused by `interrupt()` (a
    task asked, none failed), else failed."""
    return f" — {ending(tasks)}"


def _timed(task: Any) -> bool:
    """Whether the task's time is known (a run imported from LangGraph has none)."""
    return bool(task.started or task.ended)


def _took(task: Any) -> str:
    return duration_text(_seconds(task)) if _timed(task) else "time unknown"


def _seconds(task: Any) -> float:
    return max(0.0, (task.ended or 0.0) - (task.started or 0.0))


def _task_html(run: Any, task: Any) -> str:
    """A task: node, step, time, then its input (the state it read) and its writes. Escaped."""
    read = run.state_at(f"task:{task.id}")
    head = (
        f"<b>{html.escape(str(task.node))}</b> (task {html.escape(task.id)}, step {task.step},"
        f" {_took(task)})"
    )
    rows = "".join(
        f"<tr><td>{html.escape(str(k))}</td><td>{value_tree_html(v, 60)}</td></tr>"
        for k, v in read.items()
    )
    writes = "".join(
        f"<tr><td>{html.escape(str(k))}</td><td>{value_tree_html(v, 60)}</td></tr>"
        for k, v in task.writes
    )
    error = ""
    if task.error is not None:
        error = f"<p>raised {html.escape(type(task.error).__name__)}</p>"
    return (
        f"<div class='nbgraph-task'>{head}<br><i>input (the state it read)</i>"
        f"<table>{rows}</table><i>output (its writes, in order)</i>"
        f"<table>{writes or '<tr><td>nothing</td></tr>'}</table>{error}</div>"
    )
