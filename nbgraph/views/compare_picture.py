"""The picture of two runs compared at one step: both over one drawing of their graph, or a
picture each.

Their graph is drawn once with both runs over it (`compare_overlay`); two runs of graphs drawn
differently get each run's own picture, one above the other.

Over one drawing, a node either run ran at the step is marked "runs this step", with a line
saying in which run when only one ran it, and "≠ writes differ" when its writes differ
(`record.compare.divergence`); a node the two runs ran a different number of times so far
says both counts. Everything else is the first run's overlay (`views.overlay`).
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, NamedTuple

from nbgraph.record.compare.divergence import nodes_writing_differently
from nbgraph.views.dot import graph_dot
from nbgraph.views.overlay import Overlay, run_overlay
from nbgraph.views.render import render_svg

__all__ = ["DIFFER", "DIFFER_INK", "Drawn", "compare_overlay", "compare_pictures", "same_drawing"]

DIFFER = "≠ writes differ"
DIFFER_INK = "#7b1fa2"
"""The outline of a node the runs differ at (its writes, or it ran in one run only): apart
from the step's orange and a failure's red."""
READABLE_PX = 10
"""The smallest label, in pixels, a fitted picture is scaled down to (it scrolls instead)."""
_PT = 4 / 3  # graphviz sizes its SVG in points; the screen counts pixels


class Drawn(NamedTuple):
    """One picture: its title ("" for the one shared drawing), graphviz's SVG document (or
    None), why it could not be drawn, and the smallest width that keeps its labels
    readable (px)."""

    title: str
    svg: str | None
    problem: str
    min_width: float


def same_drawing(this: Any, other: Any) -> bool:
    """Whether two runs' graphs draw the same (the same nodes, edges and routers, by name):
    then one drawing holds both runs."""
    if this.graph is other.graph:
        return True
    return graph_dot(this.graph, expand=False).source == graph_dot(other.graph, expand=False).source


def _step_of(run: Any, step: int) -> int | None:
    return step if step in run.timeline.index else None


def compare_overlay(this: Any, other: Any, step: int, names: tuple[str, str]) -> Overlay:
    """Both runs over one drawing at `step` (a step either run may lack): the first run's
    overlay through that step, with the second's nodes and ways added, each node run at
    the step marked (and named with its run when only one ran it), counts that differ shown
    as both, and the nodes whose writes differ marked "≠ writes differ"."""
    mine, theirs = _step_of(this, step), _step_of(other, step)
    a = run_overlay(this, step=mine if mine is not None else this.log.steps[-1].step)
    b = run_overlay(other, step=theirs if theirs is not None else other.log.steps[-1].step)
    if mine is None:
        a.current, a.focus, a.focus_edges = set(), set(), set()
    if theirs is None:
        b.current, b.focus, b.focus_edges = set(), set(), set()
    both = dataclasses.replace(
        a,
        runs={n: max(a.runs.get(n, 0), b.runs.get(n, 0)) for n in {*a.runs, *b.runs}},
        edges={e: max(a.edges.get(e, 0), b.edges.get(e, 0)) for e in {*a.edges, *b.edges}},
        sends={e: max(a.sends.get(e, 0), b.sends.get(e, 0)) for e in {*a.sends, *b.sends}},
        failed={**b.failed, **a.failed},
        paused=a.paused | b.paused,
        focus=a.focus | b.focus,
        focus_edges=a.focus_edges | b.focus_edges,
        current=a.current | b.current,
        notes={},
        followed={},
        caption=f"step {step}: {names[0]} and {names[1]} drawn over one graph",
    )
    differ = _nodes_writing_differently(this, other, mine, theirs)
    for node in sorted({*a.runs, *b.runs}):
        lines = []
        if a.runs.get(node, 0) != b.runs.get(node, 0):
            lines.append(f"{names[0]} ×{a.runs.get(node, 0)}, {names[1]} ×{b.runs.get(node, 0)}")
        if node in a.current and node not in b.current:
            lines.append(f"only in {names[0]}")
        elif node in b.current and node not in a.current:
            lines.append(f"only in {names[1]}")
        if node in differ:
            lines.append(DIFFER)
        if lines:
            both.notes[node] = " — ".join(lines)
    return both


def _nodes_writing_differently(
    this: Any, other: Any, mine: int | None, theirs: int | None
) -> set[str]:
    """The nodes that ran at the step in both runs and wrote something else."""
    if mine is None or theirs is None:
        return set()
    return nodes_writing_differently(this.timeline.step_log(mine), other.timeline.step_log(theirs))


def compare_pictures(
    this: Any, other: Any, step: int, names: tuple[str, str], same: bool | None = None
) -> list[Drawn]:
    """What the comparison shows at `step`: one drawing with both runs over it when their
    graphs draw the same (`same`; None: found out here), else each run's own picture at
    that step (titled with its name)."""
    if same if same is not None else same_drawing(this, other):
        overlay = compare_overlay(this, other, step, names)
        drawing = graph_dot(this.graph, overlay)
        ids = getattr(drawing, "nbgraph_ids", {})
        for node, note in overlay.notes.items():  # (a node the runs differ at: its outline)
            if node in ids and (DIFFER in note or "only in" in note):
                drawing.node(ids[node], color=DIFFER_INK, penwidth="3.5")
        return [_drawn("", drawing)]
    shown = []
    for run, name in zip((this, other), names, strict=True):
        at = _step_of(run, step)
        title = f"{name} at step {step}" if at is not None else f"{name} (no step {step})"
        shown.append(_drawn(title, run.draw(step=at)))
    return shown


_FONT = re.compile(r'font-size="([\d.]+)"')


def _drawn(title: str, drawing: Any) -> Drawn:
    rendered = render_svg(drawing.source)
    if rendered.svg is None:
        return Drawn(title, None, rendered.problem, 0.0)
    width = re.search(r'<svg[^>]*\swidth="([\d.]+)pt"', rendered.svg)
    sizes = [float(s) for s in _FONT.findall(rendered.svg)] or [14.0]
    natural = float(width.group(1)) * _PT if width else 0.0
    scale = min(1.0, READABLE_PX / (min(sizes) * _PT))
    return Drawn(title, rendered.svg, "", round(natural * scale))
