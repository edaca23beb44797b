"""The inspector's picture as a small `anywidget`: clicks on nodes and state-tree boxes, arrow,
Home and End keys.

The graph (or the state tree) drawn by graphviz, where a click on a node jumps to that node's
next run and a click on a state-tree box jumps to its step; left/right arrows step, Home and End
go to the first and last steps, while the inspector has focus.

The JavaScript and CSS ship in the package (`views/static/`), so nothing is fetched at run
time. The browser sends back only the synthetic DOT id of what was clicked (`views.clicks`
maps it to a node or a step), so node names with quotes, spaces or `<>` need no unescaping.
This module imports anywidget: the inspector loads it when one is made.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anywidget
import traitlets

from nbgraph.views.clicks import (
    branch_boxes,
    click_note,
    graph_current,
    graph_targets,
    marked,
    next_run_step,
    tree_targets,
)
from nbgraph.views.dot import graph_dot
from nbgraph.views.overlay import run_overlay
from nbgraph.views.tree_dot import legend_text

__all__ = ["STATIC", "ClickablePicture", "PictureClicks"]

STATIC = Path(__file__).parent / "static"

_STEP_KEYS = {"ArrowLeft": -1, "ArrowRight": +1}


class ClickablePicture(anywidget.AnyWidget):
    """The picture panel: an SVG (`value`, the `<svg>` element as HTML, like the
    `ipywidgets.HTML` it replaces), which of its nodes are clickable, which are marked as
    the shown step, a one-line note, the kind of picture picked ("graph" or "tree"), and
    its caption (shown above the drawing, never inside it: a long caption must not widen
    the drawing and shrink its labels). The browser side zooms (−, fit, +, ctrl+wheel) and
    pans (drag, scroll); its default zoom fits the room but never draws a label under
    10 px.

    Clicks and keys arrive as custom messages (`{"event": "click", "id": ...}`,
    `{"event": "key", "key": "ArrowLeft"}`, also "ArrowRight", "Home" and "End"; and
    `{"event": "left"}` when the focus leaves the inspector); `PictureClicks` acts on them.
    """

    _esm = STATIC / "clickable_graph.js"
    _css = STATIC / "clickable_graph.css"
    value = traitlets.Unicode("").tag(sync=True)
    clickable = traitlets.List(traitlets.Unicode()).tag(sync=True)
    current = traitlets.List(traitlets.Unicode()).tag(sync=True)
    faded = traitlets.List(traitlets.Unicode()).tag(sync=True)
    kind = traitlets.Enum(["graph", "tree"], default_value="graph").tag(sync=True)
    caption = traitlets.Unicode("").tag(sync=True)
    note = traitlets.Unicode("").tag(sync=True)


class PictureClicks:
    """Wires a `ClickablePicture` to an inspector: what the picture shows for a step, and
    what its clicks and keys do.

    Attributes:
        picture: the widget (the inspector's `graph`).
        targets: the DOT ids of the shown drawing -> node name (graph) or step (tree).
        handled: every click or key message acted on, with what it did (for tests and
            debugging): `(message, step moved to or None)`.
    """

    def __init__(self, inspector: Any) -> None:
        self.inspector = inspector
        self.picture = ClickablePicture()
        self.targets: dict[str, Any] = {}
        self.handled: list[tuple[dict[str, Any], int | None]] = []
        self._tree: tuple[Any, Any, dict[str, int]] | None = None  # (run, drawing, targets)
        self.picture.on_msg(self._message)
        self.picture.observe(self._kind_changed, "kind")

    def drawing(self, run: Any, step: int, branch: str | None) -> Any:
        """The Digraph to show at `step` (the graph with the step or branch drawn over it,
        or the state tree), remembering what its clickable ids stand for."""
        if self.picture.kind == "tree":
            if self._tree is None or self._tree[0] is not run:  # one tree per run, not per step
                drawing = run.draw_tree()
                self._tree = (run, drawing, tree_targets(drawing, run))
            _, drawing, steps = self._tree
            self.targets = steps
            tasks = self.inspector.branch_tasks if branch else set()
            boxes = branch_boxes(drawing, run, tasks) if tasks else None
            self.picture.current, self.picture.faded = marked(steps, step, boxes)
            legend = legend_text(getattr(drawing, "nbgraph_legend", ()))  # (not in the picture)
            caption = f"state tree of the run — step {step} marked"
            self.picture.caption = f"{caption} — {legend}" if legend else caption
        else:
            overlay = run_overlay(run, step=step, branch=branch)  # (following: step marked)
            drawing = graph_dot(run.graph, overlay, caption=False)  # (the caption: outside)
            self.picture.caption = overlay.caption
            self.targets = graph_targets(drawing, run.graph.nodes)
            self.picture.current = graph_current(drawing, overlay.current)  # (followed)
            self.picture.faded = []
        self.picture.clickable = sorted(self.targets)
        return drawing

    def click(self, dot_id: str) -> int | None:
        """Act on a click on the drawn box `dot_id`; return the step moved to, or None."""
        inspector = self.inspector
        target = self.targets.get(dot_id)
        if target is None:
            return None
        if isinstance(target, int):  # a state-tree box: its step
            step: int | None = target
            note = ""
        else:
            note = click_note(inspector.run, target, inspector.step)  # (never ran, ran once)
            step = next_run_step(inspector.run, target, inspector.step)
        self.picture.note = note
        if step is not None:
            inspector.go(step)
        return step

    def key(self, key: str) -> int | None:
        """Act on a key: an arrow steps back or forward, Home goes to step 0 and End to the
        last step; return the step moved to (None for another key)."""
        inspector = self.inspector
        ends = {"Home": inspector.slider.min, "End": inspector.slider.max}
        if key in ends:
            inspector.go(ends[key])
        elif key in _STEP_KEYS:
            inspector.go(inspector.step + _STEP_KEYS[key])
        else:
            return None
        return inspector.step

    def _message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if not isinstance(content, dict):
            return
        event = content.get("event")
        moved: int | None = None
        if event == "click":
            moved = self.click(str(content.get("id", "")))
        elif event == "key":
            moved = self.key(str(content.get("key", "")))
        elif event == "left":  # the focus left the inspector: its output keeps this step
            self.inspector.earlier.left()
        else:
            return
        self.handled.append((content, moved))

    def _kind_changed(self, _change: Any) -> None:
        self.picture.note = ""
        self.inspector.show(self.inspector.step)
