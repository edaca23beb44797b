"""What a shared run's file (`views/share_html.py`) holds beyond the run's own steps: its
subruns, each with its own steps and picture, and the state tree's picture.

Subruns (graphs run inside a task, `run.subruns`, nested ones too) are listed depth first,
each right after its parent, with the index of its parent, the step and task that started
it and a label that tells it apart (`run › node › node`, "#2" for a task's second graph run,
and its input). Each distinct graph is drawn once; subruns of one graph share its picture.
The state tree is `run.draw_tree()` (long runs summarised as it summarises them); each box
drawn for a run's own node maps back to that run and its step, so the page can mark the step
shown and a click on a box can open it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from nbgraph.record.text import short
from nbgraph.views.clicks import graph_targets
from nbgraph.views.display import svg_element
from nbgraph.views.dot import graph_dot
from nbgraph.views.fitted import legend_html
from nbgraph.views.render import render_svg

__all__ = ["MAX_SUBRUNS", "Picture", "SharedRun", "pictures", "shared_runs", "tree_picture"]

MAX_SUBRUNS = 1000
"""The most subruns one file holds; the page says how many more ran."""
_SUMMARY_BOX = re.compile(r"^(.*)(?:collapsed|more):(\d+)$")
"""The ids `tree_dot` gives its summary boxes: `<prefix>collapsed:<first step>` and
`<prefix>more:<step>`."""


@dataclass
class SharedRun:
    """One run of the file: the run itself (index 0) or a subrun.

    Attributes:
        run: the `Run`.
        parent: the index of the run whose task started it (-1: none).
        step: the step (number) of that task; 0 for the run itself.
        task: the task's position among its step's tasks (-1: none).
        name: where it ran, as a breadcrumb (`run › node › node`, "#2": a task's second).
        label: its name and its input: what tells it apart, for the page's list of runs.
        prefix: its state tree's id prefix (`record.subruns.trees`).
        picture: the index of its graph's picture (`pictures`).
    """

    run: Any
    parent: int = -1
    step: int = 0
    task: int = -1
    name: str = "run"
    label: str = "the run"
    prefix: str = ""
    picture: int = 0


@dataclass
class Picture:
    """A graph drawn once: its `<svg>` element ("" if it could not be drawn), why not, and
    DOT id -> what a click on that box means (a node's name, or `[run, step]` in the tree)."""

    svg: str
    problem: str
    targets: dict[str, Any]


def shared_runs(run: Any, limit: int = MAX_SUBRUNS) -> tuple[list[SharedRun], int]:
    """`run`, then its subruns depth first (at most `limit`), and how many were left out.

    >>> from nbgraph import START, StateGraph
    >>> inner = StateGraph(dict).add_node("x", lambda s: {"n": 1}).add_edge(START, "x")
    >>> app = StateGraph(dict).add_node("sub", inner.compile()).add_edge(START, "sub")
    >>> runs, left_out = shared_runs(app.compile().run({"n": 0}))
    >>> [(r.label, r.parent, r.step, r.task) for r in runs], left_out
    ([('the run', -1, 0, -1), ("run › sub: {'n': 0}", 0, 1, 0)], 0)
    """
    found = [SharedRun(run)]
    left_out = _add_subruns(found, 0, "run", limit)
    return found, left_out


def _add_subruns(found: list[SharedRun], index: int, crumbs: str, limit: int) -> int:
    """Append the subruns of `found[index]` (and theirs), depth first; return how many did
    not fit under `limit`."""
    parent = found[index]
    subs = parent.run.subruns
    if not subs:
        return 0
    where = {t.id: (t.step, t.node) for t in parent.run.log.tasks()}
    position = {s.step: {t.id: i for i, t in enumerate(s.tasks)} for s in parent.run.log.steps}
    seen: dict[str, int] = {}
    left_out = 0
    for sub in subs:
        if len(found) > limit:
            left_out += 1 + _count(sub)
            continue
        step, node = where.get(sub.task, (0, "?"))
        seen[sub.task] = nth = seen.get(sub.task, -1) + 1
        name = f"{crumbs} › {node}" + (f" #{nth + 1}" if nth else "")
        found.append(
            SharedRun(
                sub,
                parent=index,
                step=step,
                task=position.get(step, {}).get(sub.task, -1),
                name=name,
                label=f"{name}: {_input(sub)}",
                prefix=f"{parent.prefix}task:{sub.task}/{nth}/",
            )
        )
        left_out += _add_subruns(found, len(found) - 1, name, limit)
    return left_out


def _count(run: Any) -> int:
    return sum(1 + _count(sub) for sub in run.subruns)


def _input(sub: Any) -> str:
    """The subrun's input, short (what tells apart the graph runs of one node)."""
    try:
        return short(dict(sub.state_at(0)), 60)
    except Exception:  # (an input that cannot be rebuilt: the label does without it)
        return "?"


def pictures(runs: list[SharedRun]) -> list[Picture]:
    """The picture of `runs[0]` (`run.draw()`: its graph with the run drawn over it), then
    each other graph of the subruns once, plain; sets each run's `picture`."""
    main = runs[0].run
    drawn = [_picture(main.draw(), main.graph.nodes)]
    index_of = {id(main.graph): 0}
    for shared in runs[1:]:
        graph = shared.run.graph
        if id(graph) not in index_of:
            index_of[id(graph)] = len(drawn)
            drawn.append(_picture(graph_dot(graph), graph.nodes))
        shared.picture = index_of[id(graph)]
    return drawn


def _picture(drawing: Any, nodes: Any) -> Picture:
    rendered = render_svg(drawing.source)
    if rendered.svg is None:
        return Picture("", rendered.problem, {})
    return Picture(svg_element(rendered.svg), "", graph_targets(drawing, nodes))


def tree_picture(runs: list[SharedRun]) -> Picture:
    """`runs[0]`'s state tree (`run.draw_tree()`), each box of a shared run's own node (and
    each summary box) mapped to `[run index, step]`; the thread's other branches are not."""
    drawing = runs[0].run.draw_tree()
    rendered = render_svg(drawing.source)
    if rendered.svg is None:
        return Picture("", rendered.problem, {})
    index_of = {shared.prefix: index for index, shared in enumerate(runs)}
    ids = getattr(drawing, "nbgraph_ids", {})
    targets: dict[str, Any] = {}
    trees = [runs[0].run.tree]
    while trees:
        tree = trees.pop()
        trees += [sub for subs in tree.subtrees.values() for sub in subs]
        index = index_of.get(tree.prefix)
        if index is None:
            continue
        for tree_id, node in tree.nodes.items():
            if tree_id in ids and node.kind != "fork":
                targets[ids[tree_id]] = [index, max(0, node.step)]
    for tree_id, dot_id in ids.items():
        summary = _SUMMARY_BOX.match(tree_id)
        if summary and summary.group(1) in index_of:
            targets[dot_id] = [index_of[summary.group(1)], int(summary.group(2))]
    legend = legend_html(getattr(drawing, "nbgraph_legend", ()))  # (under it, not in it)
    return Picture(svg_element(rendered.svg) + legend, "", targets)
