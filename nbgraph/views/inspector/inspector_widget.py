"""The step-through inspector widget: an `ipywidgets.VBox` to walk a recorded run.

It only reads the run (views never drive the engine). Every panel's HTML is built by the
escaping functions of `views.panels.panels`; pictures come from the cached renderer. This module
imports ipywidgets: `nbgraph.views.inspector.inspector` loads it only when an inspector is made.
"""

from __future__ import annotations

import bisect
import threading
from collections import Counter
from typing import Any

import ipywidgets

from nbgraph.engine.facts import (
    hands_to_parent,
    initial_values,
    step_numbers,
    unapplied_positions,
)
from nbgraph.record.compare.divergence import rows_by_step
from nbgraph.record.run_context import context_line
from nbgraph.record.text import safe_repr
from nbgraph.views.drawings.display import svg_element
from nbgraph.views.drawings.overlay import ancestry, steps_of_nodes
from nbgraph.views.drawings.render import render_svg
from nbgraph.views.drawings.theme import themed_svg
from nbgraph.views.inspector.clickable_graph import PictureClicks
from nbgraph.views.inspector.earlier_views import EarlierViews
from nbgraph.views.inspector.playback import Playback
from nbgraph.views.inspector.snapshot import snapshot_html
from nbgraph.views.inspector.step_list import StepList, tasks_text
from nbgraph.views.inspector.subrun_nav import SubrunNav
from nbgraph.views.panels.answer_panel import AnswerPanel
from nbgraph.views.panels.custom_panel import custom_html
from nbgraph.views.panels.fork_panel import ForkPanel
from nbgraph.views.panels.panels import (
    attempts_html,
    diff_html,
    effects_html,
    error_html,
    state_html,
    store_ops_html,
)
from nbgraph.views.panels.router_panel import routing_html
from nbgraph.views.panels.table_view import ending, not_applied, readable_id, readable_ids
from nbgraph.views.panels.traceback_panel import traceback_html

__all__ = ["ALL_BRANCHES", "ARRANGEMENTS", "Inspector"]

ALL_BRANCHES = "(all branches)"
"""The branch picker's first choice: no branch highlighted."""

ARRANGEMENTS = {
    "auto": "nbgraph-auto",
    "side by side": "nbgraph-beside",
    "stacked": "nbgraph-stacked",
}
"""The inspector's layouts (`Inspector.arrange`), each a class on its root that the CSS it
ships lays out (`views/static/clickable_graph.css`): side by side, the step list its own
column, the picture what its drawing needs, at most half of the rest, and the panels the
rest; stacked, the step list, the picture and the panels one above the other, each the
output's whole width; "auto" (the default) side by side where the output has room for three
columns, else stacked: decided in the browser by the output's real width (a CSS container
query), so the kernel knows nothing of pixels, and a sidebar opened or closed re-lays it
out. The picture keeps readable labels and scrolls inside its box
(`views.inspector.clickable_graph`)."""


class Inspector(ipywidgets.VBox):
    """Play, step, jump to a node's n-th run, follow a branch, filter fields, compare.

    It is an `ipywidgets.VBox`: display it, or put it in a layout
    (`widgets.HBox([run_a.inspect(), run_b.inspect()])`). Opening it costs the step it shows,
    not the run: a step's state and reducer effects are rebuilt when it is shown.

    Attributes:
        widget: the inspector itself (kept for code written when it was a wrapper).
        step: the step shown.
    """

    def __init__(self, run: Any, other: Any = None, step: int | None = None) -> None:
        super().__init__()
        self.other, self._made_for = other, run
        self.subrun_nav = SubrunNav(self)  # "step into" a subrun, and back
        self.step_list = StepList(self)  # steps and tasks with their times, to pick
        self._drawing = threading.RLock()  # the play thread and the front end both show steps
        self.clicks = PictureClicks(self)  # the picture: clicks on nodes and tree boxes, arrows
        self.fork_panel = ForkPanel(self)  # "edit and fork here"
        self.answer_panel = AnswerPanel(self)  # a paused run's questions, answered
        self.earlier = EarlierViews(self)  # a later cell's code never changes this output
        self.add_class("nbgraph-inspector")
        self.open_run(run, step)

    def open_run(self, run: Any, step: int | None = None) -> None:
        """Show `run` in this widget, at `step` (default: its failed step, else step 1):
        the run it was made for, or a subrun stepped into (compared with no other run:
        "the other run" is offered for the run it was made for)."""
        other = self.other if run is self._made_for else None
        self._take(run)
        self.branch: str | None = None
        self.branch_writers: dict[int, set[str]] = {}
        self.branch_tasks: set[str] = set()  # the followed branch's tasks (ids)
        self._refreshing = False
        last = self.steps[-1]
        self._make_controls(_field_names(run), last, other is not None)
        self._wire_controls()
        self._lay_out()
        self.arrange(self.arrangement.value)
        self._node_changed(None)
        start = self.failed_step if self.failed_step is not None else min(1, last)
        start = start if step is None else step
        if self.slider.value == start:
            self.show(start)
        self.slider.value = start

    def _take(self, run: Any) -> None:
        """What the panels read of `run`: its steps, failed step, node counts; the caches
        of what was shown of the run before (emptied)."""
        self.run = run
        self.steps = step_numbers(run.log.steps)  # (read from the log's columns: no object)
        self.effects_by_step: dict[int, list[Any]] = {}  # filled as steps are shown
        self._whole_table = False
        self._state_after: tuple[int, dict[str, Any]] | None = None
        self._compared: Any = None
        self.failed_step = next((self.steps[p] for p in unapplied_positions(run.log.steps)), None)
        self._ran_at = steps_of_nodes(run)  # node -> the step of each of its runs (shared)
        self._runs = Counter({node: len(steps) for node, steps in self._ran_at.items()})

    def grow(self, run: Any) -> None:
        """Show `run`, the same run with more steps (a live run, `views.inspector.live_view`): the
        controls reach its new last step, the newest step is shown if it was (else the
        shown one stays), and a subrun stepped into stays shown."""
        following = self.slider.value >= self.slider.max
        stepped_into = self.run is not self._made_for
        self._made_for = run
        if stepped_into:
            return
        self._take(run)
        if list(self.node.options) != sorted(self._runs):
            picked = self.node.value  # (new options reset the pick: keep it, or the first)
            self.node.options = sorted(self._runs)
            self.node.value = picked if picked in self._runs else min(self._runs)
        last = self.steps[-1]
        for control in (self.play, self.slider, self.compare_step):
            control.max = last
        if following and self.slider.value != last:
            self.slider.value = last  # (shows it)
        else:
            self.show(self.slider.value)  # (its status may have changed: ended, failed)

    def _make_controls(self, fields: list[str], last: int, with_other: bool) -> None:
        """The widgets: playback, the node and branch pickers, fields, comparison, panels."""
        w = ipywidgets
        self.play = Playback(
            min=0, max=last, interval=700
        )  # (not w.Play: see views.inspector.playback)
        self.slider = w.IntSlider(min=0, max=last, description="step", continuous_update=True)
        w.link((self.play, "value"), (self.slider, "value"))
        self.previous = w.Button(description="◀ previous", tooltip="previous step")
        self.next = w.Button(description="next ▶", tooltip="next step")
        self.step_label = w.HTML()
        self.step_label.add_class("nbgraph-step-label")
        self.node = w.Dropdown(
            options=sorted(self._runs),
            description="node",
            layout={"width": "220px", "max_width": "100%"},
        )
        self.occurrence = w.BoundedIntText(
            value=0, min=0, max=0, description="run #", layout={"width": "160px"}
        )
        self.jump = w.Button(description="go to that run")
        self.branch_pick = w.Dropdown(
            options=[ALL_BRANCHES],
            description="branch",
            layout={"width": "320px", "max_width": "100%"},
        )
        self.fields = w.SelectMultiple(
            options=fields, value=tuple(fields), rows=min(6, len(fields)), description="fields"
        )
        modes = ["off", "another step"] + (["the other run"] if with_other else [])
        self.compare_mode = w.ToggleButtons(options=modes, description="compare")
        self.compare_step = w.IntSlider(min=0, max=last, description="with step")
        self.arrangement = w.ToggleButtons(
            options=list(ARRANGEMENTS),
            value=_arranged(self._dom_classes),  # (a subrun stepped into keeps the pick)
            description="layout",
            style={"button_width": "100px"},
        )
        self.graph = self.clicks.picture  # (clicks on nodes and tree boxes, arrows)
        self.graph.add_class("nbgraph-graph")
        self.state = w.HTML()
        self.effects = w.HTML()
        self.comparison = w.HTML()
        self.error = w.HTML()

    def _wire_controls(self) -> None:
        """What each control does when clicked or changed."""
        self.previous.on_click(lambda _: self.go(self.slider.value - 1))
        self.next.on_click(lambda _: self.go(self.slider.value + 1))
        self.jump.on_click(lambda _: self.go_to_run(self.node.value, self.occurrence.value))
        self.node.observe(self._node_changed, "value")
        self.slider.observe(lambda change: self.show(change["new"]), "value")
        self.branch_pick.observe(self._branch_picked, "value")
        self.arrangement.observe(lambda change: self.arrange(change["new"]), "value")
        for control in (self.fields, self.compare_mode, self.compare_step):
            control.observe(lambda _: self.show(self.slider.value), "value")

    def _lay_out(self) -> None:
        """The controls in rows (they wrap, never squeeze their buttons), the step list, the
        picture and the state and effects panels, side by side or stacked (`arrange`: each
        box a class the shipped CSS lays out, no inline style from the kernel)."""
        w = ipywidgets
        self.panels = w.VBox([self.state, self.effects])
        self.body = w.HBox([self.graph, self.panels])
        steps = w.VBox([self.step_list.select, self.step_list.task_panel])
        self.middle = w.HBox([steps, self.body])
        for box, name in ((self.panels, "panels"), (self.body, "body"), (steps, "steps")):
            box.add_class(f"nbgraph-{name}")  # (laid out by the CSS: `ARRANGEMENTS`)
        self.middle.add_class("nbgraph-middle")
        self.fork_note = w.HTML()  # why there is no fork row, when there is none
        rows = [
            w.HBox([self.play, self.previous, self.slider, self.next, self.step_label]),
            w.HBox([self.node, self.occurrence, self.jump, self.branch_pick]),
            self.subrun_nav.row,
            w.HBox([self.fields, w.VBox([self.compare_mode, self.compare_step, self.arrangement])]),
        ]
        for row in rows:
            row.add_class("nbgraph-row")  # rows wrap rather than squeeze their buttons
        self.children = [
            *rows[:3],
            self.error,
            self.answer_panel.box,  # a paused run's questions, answered (panels/answer_panel)
            self.middle,  # the step list, the picture and the panels (`arrange`)
            rows[3],
            self.fork_panel.box,
            self.fork_note,
            self.comparison,
        ]

    def _show_what_applies(self) -> None:
        """Only the controls that apply to this run: no subrun row for a run without
        subruns, no fork row without a checkpointer (one line saying why instead)."""
        run = self.run
        nested = bool(getattr(run, "subruns", None)) or getattr(run, "parent", None) is not None
        self.subrun_nav.row.layout.display = "" if nested else "none"
        problem = getattr(run, "fork_problem", "This run cannot be forked (no app to run on).")
        self.fork_panel.box.layout.display = "none" if problem else ""
        self.fork_note.value = (
            f"<i>edit and fork: not available — {_escape(problem)}</i>" if problem else ""
        )

    def arrange(self, how: str) -> None:
        """Lay the step list, the picture and the panels out: `"side by side"` (the step
        list, then the picture at most half the rest, the panels the rest), `"stacked"`
        (one above the other, each the whole width) or `"auto"` (the default: side by side
        on an output wide enough for three columns, else stacked; the browser decides, by
        the output's width: `ARRANGEMENTS`)."""
        if how not in ARRANGEMENTS:
            raise ValueError(f"arrange() takes 'auto', 'side by side' or 'stacked', not {how!r}.")
        for name, css_class in ARRANGEMENTS.items():
            (self.add_class if name == how else self.remove_class)(css_class)
        self.arrangement.value = how

    def reopen(self, run: Any, other: Any, step: int | None = None) -> None:
        """Show `run` compared with `other` from now on (after a fork: the branch forked
        from, and the fork)."""
        self.other, self._made_for = other, run
        self.open_run(run, step)

    @property
    def widget(self) -> Inspector:
        """The inspector itself: it is the widget."""
        return self

    # --- navigation ------------------------------------------------------------------------

    @property
    def step(self) -> int:
        return self.slider.value

    def go(self, step: int) -> None:
        """Show `step` (clamped to the run's steps)."""
        self.slider.value = max(self.slider.min, min(self.slider.max, step))

    def go_to_run(self, node: str, occurrence: int) -> None:
        """Show the step of `node`'s `occurrence`-th run (0 = its first)."""
        self.go(self.run.tree.occurrence(node, occurrence).step)

    def follow(self, task_id: str | None) -> None:
        """Follow one task's branch (its chain of triggering tasks); None or ALL: every branch."""
        if task_id in (None, ALL_BRANCHES):
            self.branch, self.branch_writers, self.branch_tasks = None, {}, set()
        else:
            self.branch = task_id
            self.branch_writers = {}
            self.branch_tasks = set()
            for task in ancestry(self.run, task_id):
                self.branch_writers.setdefault(task.step, set()).add(task.node)
                self.branch_tasks.add(task.id)
        self.show(self.slider.value)

    def _branch_picked(self, change: Any) -> None:
        if not self._refreshing:
            self.follow(change["new"])

    def _node_changed(self, _: Any) -> None:
        runs = self._runs.get(self.node.value, 0) if self.node.value else 0
        self.occurrence.max = max(0, runs - 1)

    def effects_at(self, step: int) -> list[Any]:
        """The reducer effects of `step` (`run.effects` rows), rebuilt for that step alone
        unless the run's whole table is already built."""
        cached = self.effects_by_step.get(step)
        if cached is not None:
            return cached
        run = self.run
        if "effect_list" in vars(run) or run.log.semantics == "branches":
            if not self._whole_table:  # index the whole table once
                self.effects_by_step.clear()
                for effect in run.effect_list:
                    self.effects_by_step.setdefault(effect.step, []).append(effect)
                self._whole_table = True
            return self.effects_by_step.get(step, [])
        from nbgraph.record.effects import SuperstepEffects

        position = run.timeline.index[step]
        before = (
            run.timeline.after(self.steps[position - 1])
            if position > 0
            else initial_values(run.graph)
        )
        replay = SuperstepEffects(run.log, before)
        rows = self.effects_by_step[step] = replay.rows(run.log.steps[position])
        self._state_after = (step, replay.values)  # the state panel's, without a second replay
        return rows

    # --- drawing ---------------------------------------------------------------------------

    def show(self, step: int) -> None:
        """Fill every panel for `step` (code in a later cell than the one that displayed
        the inspector first hands that cell's output to a twin: `views.inspector.earlier_views`)."""
        self.earlier.keep_earlier()
        log = self.run.timeline.step_log(step)
        effects = self.effects_at(step)
        fields = set(self.fields.value)
        with (
            self._drawing,
            self.graph.hold_sync(),
            self.state.hold_sync(),
            self.effects.hold_sync(),
        ):
            self.step_label.value = self._label(step, log)
            _pick_shown_node(self, step, log)  # the node picker names a node of this step
            self.graph.value = self._picture(step)
            state = self._state(step, log)
            changed = {e.field for e in effects if e.changed}
            self.state.value = "<b>state</b>" + state_html(state, changed, fields)
            writers = self.branch_writers.get(step, set()) if self.branch else None
            mine = _writes_on_branch(log, self.branch_tasks) if self.branch else None
            ops = [o for o in self.run.log.store_ops if o.step == step]
            unapplied = not_applied(log.tasks)  # paused at interrupt(), or failed
            self.effects.value = (
                "<b>reducer effects</b><br>"
                + effects_html(effects, fields, writers, mine, unapplied)
                + custom_html(log.tasks)  # what the step's nodes streamed
                + routing_html(self.run, step, log.tasks)  # why it went where it went
                + store_ops_html(ops)
            )
            failed_here = step == self.failed_step
            stopped = self._stopped_html(log, step) if failed_here else ""
            self.error.value = stopped + attempts_html(log.tasks)  # retries, cached tasks
            self._refresh_branches(log)
            self.subrun_nav.refresh(self.run, step, log)
            self.step_list.refresh(step)
            self.comparison.value = self._comparison(step)
            self.fork_panel.refresh(step)
            self.answer_panel.refresh()
            self._show_what_applies()  # (a live run gains subruns, and can fork once done)
        self.earlier.remember()

    def _state(self, step: int, log: Any) -> dict[str, Any]:
        """The state the panel shows: after the step, or (failed) what its tasks read."""
        if not log.applied:
            return self.run.timeline.start_of(step)
        if self._state_after is not None and self._state_after[0] == step:
            return self._state_after[1]
        return self.run.state_at(step)

    def _stopped_html(self, log: Any, step: int) -> str:
        """Why the run stopped at this step: its exception, or the questions it waits on."""
        if self.run.error is not None:
            failed = next((t.node for t in log.tasks if t.error is self.run.error), None)
            return error_html(self.run.error, step) + traceback_html(self.run.error, failed)
        asked = [(t.node, i.value) for t in log.tasks for i in t.interrupts]
        if not asked:
            return ""
        if getattr(self.run, "questions", None):  # the answer panel shows each question once
            return f"<div><b>Paused at step {step}, waiting for an answer</b> (below).</div>"
        items = "".join(
            f"<li><b>{_escape(node)}</b> asks: {_escape(safe_repr(value))}</li>"
            for node, value in asked
        )
        return f"<div><b>Paused at step {step}, waiting for an answer:</b><ul>{items}</ul></div>"

    def _label(self, step: int, log: Any) -> str:
        tasks = tasks_text([t.node for t in log.tasks]) if step > 0 else "input"
        status = "" if log.applied else f" — <b>{ending(log.tasks)}</b>"
        if any(hands_to_parent(t.error) for t in log.tasks):  # Command.PARENT, not a failure
            status = " — <b>handed to the parent graph</b> (Command.PARENT)"
        on_branch = self.branch is None or step in self.branch_writers or step == 0
        branch = "" if on_branch else " — <i>not on the followed branch</i>"
        facts = context_line(self.run.log, 60)
        facts = f" — {_escape(facts)}" if facts else ""
        return f"<b>step {step}</b> of {self.steps[-1]}: {_escape(tasks)}{status}{branch}{facts}"

    def _picture(self, step: int) -> str:
        drawing = self.clicks.drawing(self.run, step, self.branch)  # the graph or the tree
        rendered = render_svg(drawing.source)
        if rendered.svg is None:
            return f"<pre>{_escape(rendered.problem)}</pre>"
        return themed_svg(svg_element(rendered.svg))

    def _refresh_branches(self, log: Any) -> None:
        lineages = self.run.log.semantics == "branches"
        tasks = [t for t in log.tasks if log.step > 0]
        options: list[Any] = [ALL_BRANCHES, *(t.id for t in tasks)]
        if self.branch and self.branch not in options:
            options.append(self.branch)
        if lineages:  # a branch run labels each task with the lineage it read
            parents = {t.id: t.parent for t in tasks}
            options = [(_lineage_label(o, parents), o) for o in options]
        if list(self.branch_pick.options) != options:
            self._refreshing = True  # new options for this step; the followed branch stays
            try:
                self.branch_pick.options = options
                self.branch_pick.value = self.branch or ALL_BRANCHES
            finally:
                self._refreshing = False

    def _comparison(self, step: int) -> str:
        mode = self.compare_mode.value
        if mode == "another step":
            other = self.compare_step.value
            frame = self.run.diff(step, other)
            return f"<b>step {step} vs step {other}</b>" + diff_html(
                frame, f"step {step}", f"step {other}"
            )
        if mode == "the other run" and self.other is not None and self.run is self._made_for:
            if self._compared is None:
                self._compared = rows_by_step(self.run, self.run.compare(self.other))
            frame = self._compared.get(step)
            return f"<b>this run vs the other, step {step}</b>" + diff_html(frame, "this", "other")
        return ""

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any] | None:
        """ipywidgets' bundle (the widget view and text/plain) with a `text/html` snapshot of
        the shown step, for wherever the widget cannot be shown (`views.inspector.snapshot`)."""
        self.earlier.displayed()
        bundle = super()._repr_mimebundle_(**kwargs)
        if bundle is not None:
            bundle["text/html"] = snapshot_html(self)
        return bundle

    def _ipython_display_(self) -> None:
        self.earlier.display()  # (with a display id: the snapshot follows, `earlier.left`)

    def __repr__(self) -> str:
        return f"<Inspector of {self.run!r}, at step {self.slider.value}>"


def _pick_shown_node(inspector: Any, step: int, log: Any) -> None:
    """The node picker and its "run #" follow the shown step: the picked node if it ran at
    `step`, else the step's first node, and which of that node's runs this step is (so "go to
    that run" stays at this step). A step no node ran at (the input) leaves them."""
    names = [task.node for task in log.tasks if task.node in inspector._ran_at]
    if not names or step == 0:
        return
    node = inspector.node.value if inspector.node.value in names else names[0]
    inspector.node.value = node  # (sets "run #"'s maximum first: `_node_changed`)
    inspector.occurrence.value = bisect.bisect_left(inspector._ran_at[node], step)


def _arranged(classes: Any) -> str:
    """The layout an inspector's root classes say (`ARRANGEMENTS`); "auto" when none does."""
    return next((name for name, c in ARRANGEMENTS.items() if c in classes), "auto")


def _writes_on_branch(log: Any, tasks: set[str]) -> dict[str, list[bool]] | None:
    """Per field, whether each of the step's writes (in write order) is by a task of the
    followed branch: one task of a `Send` fan-out, not every task of its node. None when
    the step's writes were merged (`state_merger`) and no longer line up with its tasks."""
    if getattr(log, "merged", None):
        return None
    mine: dict[str, list[bool]] = {}
    for task in log.tasks:
        for key, _ in task.writes:
            mine.setdefault(key, []).append(task.id in tasks)
    return mine


def _field_names(run: Any) -> list[str]:
    """The fields the inspector can show: declared ones, and for a dict schema the keys written."""
    fields = [n for n, f in run.graph.fields.items() if not f.managed]
    if run.graph.open_schema:  # a dict schema: the keys the run wrote are fields too
        written = (k for s in run.log.steps for t in s.tasks for k, _ in t.writes)
        fields += [k for k in dict.fromkeys(written) if k not in fields]
    return fields


def _lineage_label(task_id: str, parents: dict[str, str]) -> str:
    """A branch-run task in the branch picker: its node and step, and the lineage it read,
    in words ("b (step 2) ← a (step 1)"), not tree ids."""
    if task_id not in parents:
        return task_id
    return f"{readable_id('task:' + task_id)} ← {readable_ids(str(parents[task_id]))}"


def _escape(text: str) -> str:
    import html

    return html.escape(text)
