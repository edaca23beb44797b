"""The paths a batch of runs took, drawn as one graph (`Runs.draw_paths()`): each way taken is
an arrow whose width and label count the runs that took it; runs that failed end in red.

It draws from `record.batch.path_edges` alone (no run is read), and every name in it goes
through `dot.label`, which escapes it for DOT.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from nbgraph.primitives import END, START
from nbgraph.record.text import plural
from nbgraph.views.drawings.dot import (
    FAILED_FILL,
    FAILED_INK,
    INK,
    PAUSED_FILL,
    PAUSED_INK,
    RAN_FILL,
    TERMINAL_FILL,
    drawing,
    label,
)

if TYPE_CHECKING:
    import graphviz

    from nbgraph.record.batch import PathEnd

__all__ = ["paths_drawing"]

_WIDEST = 8.0
"""The pen width of a way every run took; the others in proportion (at least 1)."""


def paths_drawing(edges: dict[tuple[PathEnd, PathEnd], list[int]], runs: int) -> graphviz.Digraph:
    """The drawing of `edges` (`{(a, b): [runs, failed]}`, as `path_edges` counts them) of a
    batch of `runs` runs.

    >>> dot = paths_drawing({("__start__", "a"): [2, 0], ("a", "__end__"): [1, 0],
    ...                      ("a", ("status", "failed")): [1, 1]}, 2)
    >>> print([line.strip() for line in dot.body if "->" in line][2])
    n1 -> n3 [label="1 failed" arrowsize=0.62 color="#990000" fontcolor="#990000" penwidth=4.00]
    """
    dot = drawing("paths", graph_attr={"rankdir": "TB", "fontname": "Helvetica"})
    dot.attr("node", fontname="Helvetica", fontsize="11", color=INK, shape="box", style="filled")
    dot.attr("edge", fontname="Helvetica", fontsize="9", color=INK, fontcolor=INK)
    dot.attr(label=label(f"paths taken by {plural(runs, 'run')}"), labelloc="t")
    ids: dict[PathEnd, str] = {}
    for pair in edges:
        for end in pair:
            if end not in ids:
                ids[end] = f"n{len(ids)}"
                _node(dot, ids[end], end)
    for (a, b), (count, failed) in edges.items():
        _way(dot, ids[a], ids[b], count, failed, runs, ended=isinstance(b, tuple))
    return dot


def _node(dot: Any, id: str, end: PathEnd) -> None:
    if end in (START, END):
        terminal = {"shape": "circle" if end == START else "doublecircle", "fixedsize": "true"}
        text = "START" if end == START else "END"
        dot.node(id, label(text), fillcolor=TERMINAL_FILL, fontcolor="#ffffff", fontsize="9",
                 width="0.5", **terminal)  # fmt: skip
    elif isinstance(end, tuple):  # a status a run ended with
        failed = end[1] == "failed"
        fill, ink = (FAILED_FILL, FAILED_INK) if failed else (PAUSED_FILL, PAUSED_INK)
        dot.node(id, label(end[1]), shape="octagon", fillcolor=fill, color=ink, fontcolor=ink)
    else:
        dot.node(id, label(end), fillcolor=RAN_FILL)


def _way(dot: Any, a: str, b: str, count: int, failed: int, runs: int, ended: bool) -> None:
    """One arrow: `count` runs took it, `failed` of them failed (an arrow into a status:
    they all ended so)."""
    pen = max(1.0, _WIDEST * count / max(runs, 1))
    width, arrow = f"{pen:.2f}", f"{min(1.0, 2.5 / pen):.2f}"  # (graphviz grows heads with pens)
    if ended:
        text = f"{count} {'failed' if failed else 'ended'}"
    else:
        text = f"{count} ({failed} failed)" if failed else f"{count}"
    colour = {"color": FAILED_INK, "fontcolor": FAILED_INK} if failed == count else {}
    dot.edge(a, b, label=label(text), penwidth=width, arrowsize=arrow, **colour)
