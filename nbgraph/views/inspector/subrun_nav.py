"""The inspector's way into subruns: on a step whose task ran a graph, "step into" opens
that subrun's steps in the same widget, with a breadcrumb (`run › node › …`) and "back".

The parent's own step keeps showing what the subgraph returned as one write by the node
that ran it; the subrun's steps are its own run (`run.subruns`). "Back" opens the parent at
the step of the task that ran the subrun (also for an inspector opened on a subrun).
"""

from __future__ import annotations

import html
from typing import Any

import ipywidgets

from nbgraph.record.text import plural, short

__all__ = ["SubrunNav"]

_WIDGETS = frozenset({"crumbs", "pick", "into", "back"})
"""The row's widgets (`SubrunNav._make`)."""


class SubrunNav:
    """The breadcrumb, the subrun picker, "step into" and "back" of one inspector.

    Attributes:
        crumbs: the breadcrumb (HTML): the root run, then the node of each task stepped into.
        pick: the subruns the shown step's tasks started (values: indexes into `run.subruns`).
        into: the button opening the picked subrun.
        back: the button opening the parent run at the step of the task that ran this one.
        row: the box holding them, made once a run with subruns (or a subrun) is shown or
            one of them is first read; empty and hidden before.
    """

    def __init__(self, inspector: Any) -> None:
        self.inspector = inspector
        self.row = ipywidgets.HBox()
        self._shown: tuple[Any, int, Any] | None = None  # what `refresh` was last given

    def _make(self) -> None:
        """The row's widgets: made when a run with subruns (or a subrun) is shown, or one
        is asked for (a run without any hides the row: it costs one box)."""
        w = ipywidgets
        self.crumbs = w.HTML()
        self.pick = w.Dropdown(
            options=[], description="subrun", layout={"width": "440px", "max_width": "100%"}
        )
        self.into = w.Button(description="step into ▸", tooltip="show this subrun's steps")
        self.back = w.Button(description="◀ back", tooltip="back to the run that started it")
        self.into.on_click(lambda _: self.step_into())
        self.back.on_click(lambda _: self.go_back())
        self.row.children = [self.crumbs, self.back, self.pick, self.into]

    def __getattr__(self, name: str) -> Any:
        if name in _WIDGETS and "crumbs" not in self.__dict__:
            self._make()  # (asked for before a run with subruns was shown)
            if self._shown is not None:
                self._follow(*self._shown)
            return getattr(self, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def refresh(self, run: Any, step: int, log: Any) -> None:
        """The breadcrumb of `run` and the subruns started by the tasks of its `step`."""
        self._shown = (run, step, log)
        nested = bool(getattr(run, "subruns", None)) or getattr(run, "parent", None) is not None
        if nested or "crumbs" in self.__dict__:
            self._follow(run, step, log)

    def _follow(self, run: Any, step: int, log: Any) -> None:
        nodes = {task.id: task.node for task in log.tasks} if step > 0 else {}
        started = [
            (index, sub)
            for index, sub in enumerate(getattr(run, "subruns", ()))
            if sub.task in nodes
        ]
        told = _telling_inputs([sub for _, sub in started], nodes)
        options = [
            (f"{nodes[sub.task]}{said} (task {sub.task})", index)
            for (index, sub), said in zip(started, told, strict=True)
        ]
        if list(self.pick.options) != options:
            self.pick.options = options
            self.pick.value = options[0][1] if options else None
        self.pick.disabled = self.into.disabled = not options
        self.back.disabled = getattr(run, "parent", None) is None
        self.crumbs.value = " › ".join(
            f"<b>{html.escape(part)}</b>" if last else html.escape(part)
            for part, last in _marked_last(_breadcrumb(run))
        )

    def step_into(self, index: int | None = None) -> None:
        """Open subrun `index` of the shown run (default: the one picked) in the inspector.

        Raises:
            ValueError: no task of the shown step ran a graph, or `index` is not one of
                the run's subruns.
        """
        inspector = self.inspector
        run = inspector.run
        index = self.pick.value if index is None else index
        if index is None:
            raise ValueError(
                f"No task of step {inspector.step} ran a graph: nothing to step into "
                f"(the run's subruns were started by tasks {[s.task for s in run.subruns]})."
            )
        if not 0 <= index < len(run.subruns):
            raise ValueError(
                f"The run has {plural(len(run.subruns), 'subrun')} (run.subruns); "
                f"{index} is not one."
            )
        inspector.open_run(run.subruns[index])

    def go_back(self) -> None:
        """Open the parent run at the step of the task that ran the shown subrun."""
        run = self.inspector.run
        if getattr(run, "parent", None) is None:
            return
        step = next(t.step for t in run.parent.log.tasks() if t.id == run.task)
        self.inspector.open_run(run.parent, step)


def _telling_inputs(subruns: list[Any], nodes: dict[str, str]) -> list[str]:
    """What tells each subrun apart from the others its node started at this step, for its
    label: `": region='jp'"`, the fields of its input whose values differ between them, short
    ("" for a node's only subrun: its node's name tells it apart)."""
    inputs = [_input(sub) for sub in subruns]
    said = []
    for sub, values in zip(subruns, inputs, strict=True):
        siblings = [
            v for s, v in zip(subruns, inputs, strict=True) if nodes[s.task] == nodes[sub.task]
        ]
        keys = sorted({k for v in siblings for k in v}, key=str) if len(siblings) > 1 else []
        keys = [k for k in keys if len({short(v.get(k), 60) for v in siblings}) > 1]
        parts = ", ".join(f"{k}={short(values[k], 30)}" for k in keys if k in values)
        said.append(f": {_cut(parts, 60)}" if parts else "")
    return said


def _input(sub: Any) -> dict[str, Any]:
    try:
        return dict(sub.state_at(0))
    except Exception:  # (a subrun whose input cannot be rebuilt: labelled by its task)
        return {}


def _breadcrumb(run: Any) -> list[str]:
    """`["run", node, node, ...]`: the root run, then the node of each task, down to `run`."""
    parts: list[str] = []
    while getattr(run, "parent", None) is not None:
        nodes = {task.id: task.node for task in run.parent.log.tasks()}
        parts.append(nodes.get(run.task, run.task))
        run = run.parent
    return ["run", *reversed(parts)]


def _marked_last(parts: list[str]) -> list[tuple[str, bool]]:
    return [(part, position == len(parts) - 1) for position, part in enumerate(parts)]


def _cut(text: str, width: int) -> str:
    """`text` cut to `width` characters with "…"."""
    return text if len(text) <= width else text[: width - 1] + "…"
