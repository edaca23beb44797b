"""A shown inspector stays as it was shown: a later cell's code moves only the inspector that
cell shows.

Code in a later cell that moves it (`go`, `follow`, a control's value) changes only the
inspector the later cell shows, never the output of the cell that showed it first.

A widget's views all follow its one model, so the earlier output is handed over to a twin:
an inspector made at the state the earlier output showed, which takes the earlier output's
comm (its model id) while the inspector in the user's variable goes on under the twin's
fresh one. Only code run by a later cell does this (an `execute_request` on the kernel's
main thread); clicks in the front-end, Play's timer and a live run's updates move the
shown inspector as before. Outside a kernel (tests, nbconvert), nothing happens.

The output also keeps a static snapshot (`views.snapshot`) for a notebook reopened without
the widget. An inspector displayed on its own gets a display id (`display`), and when the
person leaves it (the focus goes elsewhere, `left`) at another step than its snapshot
shows, its output is sent again: the saved notebook keeps where they left it.
"""

from __future__ import annotations

import threading
from typing import Any

__all__ = ["EarlierViews", "cell_running"]


def cell_running() -> int | None:
    """The execution count of the cell whose code is running now, or None (no kernel, a
    front-end message such as a click, or another thread)."""
    if threading.current_thread() is not threading.main_thread():
        return None
    try:
        from IPython import get_ipython
    except ImportError:  # (no IPython: no cells)
        return None
    shell = get_ipython()
    kernel = getattr(shell, "kernel", None)
    if kernel is None or not hasattr(kernel, "get_parent"):
        return None
    parent = kernel.get_parent() or {}
    if parent.get("header", {}).get("msg_type") != "execute_request":
        return None
    return int(shell.execution_count)


class EarlierViews:
    """Which cell showed an inspector, what it showed last, and the hand-over to a twin.

    Attributes:
        shown_in: the execution count of the cell that displayed it (None: not displayed).
        last: what it showed last (`remember`): run, step, branch, fields, compare, layout.
        twins: the twins that took earlier outputs (kept, as the outputs are).
        handle: the display handle of its latest output, while it shows this inspector.
        kept: the snapshot (`text/html`) that output holds.
    """

    def __init__(self, inspector: Any, now: Any = cell_running) -> None:
        self.inspector = inspector
        self.now = now
        self.shown_in: int | None = None
        self.last: dict[str, Any] | None = None
        self.twins: list[Any] = []
        self.handle: Any = None
        self.kept: str | None = None

    def display(self) -> None:
        """Display the inspector (its own bundle, snapshot included) with a display id."""
        from IPython.display import display

        bundle = self.inspector._repr_mimebundle_()
        if bundle is not None:
            self.handle = display(bundle, raw=True, display_id=True)
            self.kept = bundle.get("text/html")

    def left(self) -> bool:
        """The person left the inspector: if its snapshot now differs from the one its
        output keeps (another step, layout or comparison), send the output again (the view
        is drawn again from the same widget). True when it did."""
        if self.handle is None:
            return False
        bundle = self.inspector._repr_mimebundle_()
        if bundle is None or bundle.get("text/html") == self.kept:
            return False
        self.handle.update(bundle, raw=True)
        self.kept = bundle.get("text/html")
        return True

    def displayed(self) -> None:
        """The inspector is being displayed (by the running cell, if any)."""
        cell = self.now()
        if cell is not None:
            self.shown_in = cell

    def remember(self) -> None:
        """What the inspector shows now (called after each step shown)."""
        i = self.inspector
        self.last = {
            "run": i.run,
            "step": i.slider.value,
            "branch": i.branch,
            "fields": tuple(i.fields.value),
            "compare": (i.compare_mode.value, i.compare_step.value),
            "arrangement": i.arrangement.value,
            "kind": i.graph.kind,
        }

    def keep_earlier(self) -> bool:
        """Before a change: if a later cell's code makes it, hand the earlier output to a
        twin showing what it showed. True when it did."""
        cell = self.now() if self.shown_in is not None else None
        if cell is None or cell <= self.shown_in or self.last is None:
            return False
        twin = self._twin()
        mine, theirs = self.inspector.comm, twin.comm
        if mine is None or theirs is None:
            return False
        twin.comm, self.inspector.comm = mine, theirs  # (ipywidgets re-registers both)
        twin.send_state()
        self.inspector.send_state()
        self.twins.append(twin)
        self.shown_in = None  # shown nowhere now, until the later cell displays it
        self.handle = None  # (that output is the twin's now: never sent this one again)
        return True

    def _twin(self) -> Any:
        """An inspector of the same run, at the state the earlier output showed."""
        i, last = self.inspector, self.last
        twin = type(i)(i._made_for, i.other, step=last["step"])
        if last["run"] is not twin.run:
            twin.open_run(last["run"], last["step"])
        twin.graph.kind = last["kind"]
        twin.fields.value = last["fields"]
        twin.compare_mode.value, twin.compare_step.value = last["compare"]
        twin.arrange(last["arrangement"])
        if last["branch"] is not None:
            twin.follow(last["branch"])
        return twin
