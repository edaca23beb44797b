"""The inspector's "edit and fork here": a field's value edited as JSON, and the run forked at
the shown step.

Pick a field, edit its value, and fork a checkpointed run there (`Run.fork`: `update_state` on
that step's checkpoint, then the run continued on the same app). The inspector then shows the
fork (the thread's branch through the edit, at the edit's step), with the branch forked from in
its state tree and as "the other run" to compare with; the fork is kept in `run.forks`.

Views never drive the engine themselves: the panel calls the run's own `fork`, which the
notebook layer provides; a run that cannot fork (no checkpointer, no app) says why and its
button is disabled.
"""

from __future__ import annotations

import html
import json
from typing import Any

import ipywidgets

from nbgraph.primitives import MISSING
from nbgraph.record.text import plural

__all__ = ["EDIT_CHARS", "ForkPanel", "edit_step"]

_AUTO = "(the node that made the checkpoint)"
_NO_FIELD = "(pick a field)"
"""The field picker's first option: no field picked yet (the box stays empty)."""
_PLACEHOLDER = "pick a field to edit its value here, as JSON"
_WIDGETS = frozenset({"field", "as_node", "value", "button", "status"})
"""The row's widgets (`ForkPanel._make`)."""
EDIT_CHARS = 20_000
"""The longest value the box is filled with (as the panels' text to copy, `COPY_CHARS`)."""


class ForkPanel:
    """The row of the inspector that edits a field and forks.

    Attributes:
        box: the row (field, writer to update as, JSON value, button, status: made when a
            run that can fork is shown, or one of them is first read; empty and hidden before).
        last_fork: what the latest fork made (`nbgraph.notebook.fork.Fork`), or None.
    """

    def __init__(self, inspector: Any) -> None:
        self.inspector = inspector
        self.last_fork: Any = None
        self._step: int | None = None
        self._shown: int | None = None  # the step the inspector shows (`refresh`)
        self._refreshing = False
        self.box = ipywidgets.VBox()
        self.box.add_class("nbgraph-fork")

    def _make(self) -> None:
        """The row's widgets: made when a run that can fork is shown, or one is asked for
        (a run that cannot fork hides the row: it costs one box)."""
        w = ipywidgets
        self.field = w.Dropdown(
            options=[], description="edit", layout={"width": "220px", "max_width": "100%"}
        )
        self.as_node = w.Dropdown(
            options=[_AUTO], description="as", layout={"width": "260px", "max_width": "100%"}
        )
        self.value = w.Textarea(
            placeholder=_PLACEHOLDER,
            layout={"width": "320px", "max_width": "100%", "height": "3.2em"},
        )
        self.button = w.Button(
            description="edit and fork here", icon="code-branch", layout={"width": "auto"}
        )
        self.status = w.HTML()
        self.box.children = [
            w.HBox([self.field, self.as_node, self.value, self.button]),
            self.status,
        ]
        self.field.observe(lambda _: self._picked(), "value")
        self.button.on_click(lambda _: self.fork())

    def __getattr__(self, name: str) -> Any:
        if name in _WIDGETS and "status" not in self.__dict__:
            self._make()  # (asked for before a run that can fork was shown)
            if self._shown is not None:
                self._follow(self._shown)
            return getattr(self, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def refresh(self, step: int) -> None:
        """Follow the shown step: its value of the field, its writers, whether it can fork."""
        self._shown = step
        problem = getattr(self.inspector.run, "fork_problem", "This run cannot fork.")
        if problem is not None and "status" not in self.__dict__:
            return  # (the row is hidden and not made: made, it follows the step shown)
        self._follow(step)

    def _follow(self, step: int) -> None:
        run = self.inspector.run
        fields = [_NO_FIELD, *self.inspector.fields.options]
        if list(self.field.options) != fields:
            picked = self.field.value
            self._refreshing = True  # (new options: not a person's pick)
            try:
                self.field.options = fields
                self.field.value = picked if picked in fields else _NO_FIELD
            finally:
                self._refreshing = False
        problem = getattr(run, "fork_problem", "This run cannot fork.")
        self.button.disabled = self.value.disabled = problem is not None
        self.button.tooltip = problem or f"update_state at step {step}'s checkpoint, then run on"
        if problem is not None:
            self.status.value = f"<i>{html.escape(problem)}</i>"
        elif self._step is not None and self._step != step:
            self.status.value = ""
        writers = sorted({t.node for t in run.timeline.step_log(step).tasks if step > 0})
        options = [_AUTO] if len(writers) < 2 else writers  # (one writer: it is the one)
        if list(self.as_node.options) != options:
            self.as_node.options = options
            self.as_node.value = options[0]
        self.as_node.layout.display = "none" if len(options) == 1 else ""
        if self._step != step:
            self._step = step
            self._fill_value()

    def fork(self) -> Any:
        """Parse the value, fork at the shown step, and show the result; on bad input or a
        refused fork, say why in the panel (and return None)."""
        field, step = self.field.value, self.inspector.step
        if field in (None, _NO_FIELD):
            return self._fail("Pick the field to edit first (the 'edit' list).")
        try:
            value = json.loads(self.value.value)
        except ValueError as error:
            return self._fail(
                f"The value for field {field!r} is not valid JSON ({error}). Write it as "
                'JSON: "text" in double quotes, 3, true, null, [1, 2], {"key": "value"}.'
            )
        as_node = None if self.as_node.value == _AUTO else self.as_node.value
        try:
            made = self.inspector.run.fork(step, {field: value}, as_node=as_node)
        except Exception as error:  # shown in the panel: the person fixes it and retries
            return self._fail(f"Could not fork at step {step}: {type(error).__name__}: {error}")
        self.last_fork = made
        inspector = self.inspector
        edited = edit_step(made.branch, step)
        inspector.reopen(made.branch, made.original, edited)  # the original: "the other run"
        inspector.clicks.picture.kind = "tree"  # (where both show, one as a dashed branch)
        inspector.compare_mode.value = "the other run"
        self.status.value = _fork_note(made, step, edited, field, value)
        return made

    def _fail(self, message: str) -> None:
        self.status.value = f"<span style='color:#990000'>{html.escape(message)}</span>"
        return None

    def _picked(self) -> None:
        """A person picked a field: the box shows its value, and follows it step by step."""
        if not self._refreshing:
            self._fill_value()

    def _fill_value(self) -> None:
        """The picked field's value at the shown step as JSON in the box: only once a field
        was picked (not `_NO_FIELD`), only when the run can fork, and only up to `EDIT_CHARS`
        (the box is synced to the browser: a larger value is not sent, the panel says so)."""
        step, field = self._step, self.field.value
        self.value.placeholder = _PLACEHOLDER
        if field in (None, _NO_FIELD) or self.button.disabled or step is None:
            self.value.value = ""
            return
        inspector = self.inspector
        state = inspector._state(step, inspector.run.timeline.step_log(step))  # (the panel's)
        current = state.get(field, MISSING)
        text = None if current is MISSING else _bounded_json(current)
        self.value.value = text or ""
        if text is None and current is not MISSING:
            self.value.placeholder = (
                f"{field} holds a value JSON cannot show or longer than {EDIT_CHARS:,} "
                f"characters: write the new one (or fork from code: run.fork(step, {{...}}))"
            )


def _bounded_json(value: Any) -> str | None:
    """`value` as JSON, or None if JSON cannot write it or it is longer than `EDIT_CHARS`
    (encoded piece by piece: a long value costs what its first `EDIT_CHARS` do)."""
    pieces, used = [], 0
    try:
        for piece in json.JSONEncoder(ensure_ascii=False).iterencode(value):
            used += len(piece)
            if used > EDIT_CHARS:
                return None
            pieces.append(piece)
    except (TypeError, ValueError, RecursionError):
        return None
    return "".join(pieces)


def edit_step(branch: Any, step: int) -> int:
    """The step of `branch` that `update_state` made when it was forked after `step` (its
    first "update" step after `step`; `step + 1` if none is found)."""
    return next(
        (
            s.step
            for s in branch.log.steps
            if s.step > step and s.tasks and all(t.kind == "update" for t in s.tasks)
        ),
        step + 1,
    )


def _fork_note(made: Any, step: int, edited: int, field: str, value: Any) -> str:
    """The line the inspector shows after a fork: where, what changed, how the fork went,
    and where it differs from the run forked from."""
    run = made.run
    done = sum(1 for s in run.log.steps if s.tasks and s.tasks[0].kind != "update")
    shown = html.escape(json.dumps(value, ensure_ascii=False)[:80])
    differs = made.branch.compare(made.original)
    if "step" not in differs.columns:  # (branch lineages: compared node by node)
        where = f"the comparison with the original has {plural(len(differs), 'row')}"
    elif len(differs):
        steps = sorted({int(s) for s in differs["step"]})
        where = f"it differs from the original at step{'s' * (len(steps) != 1)} {_ranges(steps)}"
    else:
        where = "it ends as the original did"
    return (
        f"<b>Forked after step {step}</b>: {html.escape(field)} ← <code>{shown}</code> (the "
        f"edit is step {edited} of the fork); the fork ran {done} step{'s' * (done != 1)} "
        f"({html.escape(run.status)}) and {where}. Shown now: the fork, compared with the "
        "original (<i>the other run</i>); <code>run.forks[-1]</code> holds it in code."
    )


def _ranges(steps: list[int]) -> str:
    """Step numbers as short ranges: "2–4, 7".

    >>> _ranges([2, 3, 4, 7])
    '2–4, 7'
    """
    parts: list[str] = []
    for step in steps:
        if parts and step == int(parts[-1].split("–")[-1]) + 1:
            parts[-1] = f"{parts[-1].split('–')[0]}–{step}"
        else:
            parts.append(str(step))
    return ", ".join(parts)
