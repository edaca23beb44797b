"""Watching a run while it runs (`app.run(input, live=True)`): a header (steps done, time
taken) above the inspector, refreshed after supersteps while the cell executes.

Redraws happen on a thread of their own, so the run does not wait for them (drawing the graph
is mostly the `dot` process, which runs beside the engine); each redraw shows the run as it
was after its latest committed step (`running_view`). They are throttled by what they cost:
after a redraw that took `c` seconds the next waits `c * (1 - share) / share` seconds, and
never comes sooner than `min_interval` after the last (the first, `first_after` into the
run); so the redraws take at most about
`share` of the run (5%) however fast or slow the nodes are. (The first redraw, which makes
the widgets, is a one-time cost: the next comes `min_interval` after it.) Between redraws the
header alone (steps done, time taken) follows the run, at most every 50 ms. When the run ends,
one last redraw shows the whole run before `run()` returns.

The newest step is shown unless the slider was moved away from it in code. While a cell runs,
Jupyter delivers the front-end's clicks to the kernel only when the cell ends, so a click
during the run would be queued and replayed after it: the inspector's controls are inert
while the run goes (disabled, the inspector taking no pointer events, and a line in the
header saying why) and wake when it ends.
"""

from __future__ import annotations

import copy
import html
import threading
import time
from typing import Any

import ipywidgets

from nbgraph.views.inspector.inspector_widget import Inspector
from nbgraph.views.inspector.snapshot import SnapshotBox

__all__ = ["INERT_NOTE", "LiveView", "running_view"]

INERT_NOTE = (
    "The controls below wake when the run ends: while the cell runs, Jupyter holds back "
    "clicks until it is done."
)
"""The header's line while the run goes, saying why the inspector's controls are inert."""
_RUNNING = "nbgraph-live-running"
# (in the header: scoped to a live view whose run goes on, so no click reaches a control)
_INERT_CSS = f"<style>.{_RUNNING} .nbgraph-inspector{{pointer-events:none;opacity:.85}}</style>"


class LiveView:
    """The widget a live run displays, and its refreshes.

    Attributes:
        box: the displayed widget (header, then the inspector once a step is done).
        header: steps done and time taken.
        inspector: the `Inspector`, from the first redraw on (None before).
        shown: the steps each redraw showed (the run's step count then), in order.
    """

    share = 0.05
    min_interval = 0.25
    first_after = 0.5  # (a run shorter than this is drawn once, when it ends)

    def __init__(self, record: Any, background: bool = True) -> None:
        self._record = record  # log -> Run (the notebook layer makes the record)
        self.header = ipywidgets.HTML("<b>starting…</b>")
        self.box = SnapshotBox([self.header])  # (saved: a snapshot, `views.inspector.snapshot`)
        self.box.add_class("nbgraph-live")
        self.inspector: Inspector | None = None
        self.shown: list[int] = []
        self._started = time.perf_counter()
        self._due = self._started + self.first_after
        self._log: Any = None
        self._count = 0  # committed steps of `_log`
        self._background = background
        self._wake = threading.Event()
        self._stop = False
        self._lock = threading.Lock()  # one redraw at a time
        self._worker: threading.Thread | None = None
        self._header_count = -1  # the steps the header counted last
        self._inert: list[Any] = []  # the controls disabled while the run goes

    def step_done(self, log: Any) -> None:
        """A superstep committed (called by the run, between steps): redraw when due."""
        self._log, self._count = log, len(log.steps)
        if not self._background:
            if time.perf_counter() >= self._due:
                self._redraw(running_view(log, self._count))
            return
        if self._worker is None:
            self._worker = threading.Thread(target=self._work, name="nbgraph-live", daemon=True)
            self._worker.start()
        self._wake.set()

    def finish(self, log: Any) -> None:
        """The run ended: stop the redraw thread and show the whole run."""
        self._stop = True
        self._wake.set()
        if self._worker is not None:
            self._worker.join()
        self._redraw(log, finished=True)
        self.box.refresh()  # the display sent again: a saved notebook keeps the whole run

    def _work(self) -> None:
        while True:
            self._wake.wait()
            if self._stop:
                return
            wait = self._due - time.perf_counter()
            if wait > 0:  # between redraws, the header alone follows the run (it is cheap)
                self._tick_header()
                time.sleep(min(wait, 0.05))  # (wakes often enough to see the run end)
                continue
            self._wake.clear()
            self._redraw(running_view(self._log, self._count))

    def _redraw(self, log: Any, finished: bool = False) -> None:
        with self._lock:
            setup = self.inspector is None  # this redraw makes the widgets: a one-time cost
            start = time.perf_counter()
            self._draw(log, finished)
            cost = 0.0 if setup else time.perf_counter() - start
            self._due = time.perf_counter() + max(
                self.min_interval, cost * (1 - self.share) / self.share
            )

    def _tick_header(self) -> None:
        """The header, when steps were done since it was last written (redraw thread only)."""
        count = self._count
        if self._log is not None and count != self._header_count:
            with self._lock:
                self._header_count = count
                self.header.value = self._header_html(self._log.steps[:count], "running")

    def _header_html(self, steps: list[Any], state: str) -> str:
        done = sum(1 for s in steps if s.tasks and s.tasks[0].kind != "input")
        elapsed = time.perf_counter() - self._started
        line = f"<b>{html.escape(state)}</b> — {done} step{'s' * (done != 1)} done, {elapsed:.1f} s"
        if state == "running" and self.inspector is not None:
            line += f"<br><i class='nbgraph-inert-note'>{html.escape(INERT_NOTE)}</i>"
        return _INERT_CSS + line

    def _draw(self, log: Any, finished: bool) -> None:
        self._header_count = len(log.steps)
        self.header.value = self._header_html(log.steps, log.status if finished else "running")
        if not log.steps:
            return
        run = self._record(log)
        self.shown.append(len(log.steps))
        if self.inspector is None:
            self.inspector = Inspector(run, step=run.log.steps[-1].step)
            if not finished:  # (inert before it is shown: no moment takes a click)
                self._make_inert()
                self.header.value = self._header_html(log.steps, "running")
            self.box.children = [self.header, self.inspector]
        else:
            self.inspector.grow(run)
        if finished:
            self._wake_up()

    def _make_inert(self) -> None:
        """Disable the inspector's enabled controls while the run goes (remembered, so
        `_wake_up` enables those alone) and let it take no pointer events."""
        self._inert = [w for w in _controls(self.inspector) if not w.disabled]
        for control in self._inert:
            control.disabled = True
        self.box.add_class(_RUNNING)

    def _wake_up(self) -> None:
        """The run ended: the controls disabled for it work again."""
        for control in self._inert:
            control.disabled = False
        self._inert = []
        self.box.remove_class(_RUNNING)


def _controls(widget: Any) -> list[Any]:
    """The widgets under `widget` with a `disabled` switch (buttons, sliders, pickers)."""
    found, stack = [], [widget]
    while stack:
        current = stack.pop()
        if current is not widget and current.has_trait("disabled"):
            found.append(current)
        stack.extend(getattr(current, "children", ()))
    return found


def running_view(log: Any, count: int) -> Any:
    """`log` as it was after its first `count` steps (a shallow copy: committed steps do not
    change), still running — what a redraw may read while the run goes on."""
    view = copy.copy(log)
    view.steps = log.steps[:count]
    view.status, view.error = "running", None
    return view
