"""What a click on a drawing means: the drawn node or state-tree box behind a DOT id, and
the step a click on it goes to.

Drawings use synthetic DOT ids (`n0`, `t3`), so the SVG's `<title>` of a clicked box is
never a node name that needs unescaping: `graph_dot` and `tree_dot` leave their id maps on
the Digraph (`nbgraph_ids`), and these pure functions turn a clicked id back into a node
name or a step. No widgets here, so the mapping is tested directly.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "branch_boxes",
    "click_note",
    "graph_current",
    "graph_targets",
    "marked",
    "next_run_step",
    "tree_targets",
]


def graph_targets(drawing: Any, nodes: Any) -> dict[str, str]:
    """DOT id -> node name, for the boxes of a graph drawing (`run.draw()`) that are among
    `nodes` (the graph's node names): START, END, routers' diamonds and nodes drawn inside
    a subgraph's cluster are not targets."""
    ids = getattr(drawing, "nbgraph_ids", {})
    return {dot_id: name for name, dot_id in ids.items() if name in nodes}


def graph_current(drawing: Any, nodes: Any) -> list[str]:
    """The DOT ids of the boxes that stand for `nodes` (the nodes running at the shown
    step, `Overlay.current`) in a graph drawing: each node's own box, or the summary box a
    wide fan-out folded it into. The inspector's picture marks them and scrolls them into
    view. Names the drawing does not show are left out.

    >>> from nbgraph import START, StateGraph
    >>> from nbgraph.views.drawings.dot import graph_dot
    >>> spec = StateGraph(dict).add_node("a", lambda s: {}).add_edge(START, "a").compile().spec
    >>> drawing = graph_dot(spec)
    >>> graph_current(drawing, {START}) == [drawing.nbgraph_ids[START]]
    True
    """
    ids = getattr(drawing, "nbgraph_ids", {})
    alias = getattr(drawing, "nbgraph_alias", {})
    boxes = {ids.get(alias.get(name, name)) for name in nodes}
    return sorted(box for box in boxes if box is not None)


def tree_targets(drawing: Any, run: Any) -> dict[str, int]:
    """DOT id -> step, for the boxes of a state-tree drawing (`run.draw_tree()`) that belong
    to this run: its input (step 0), tasks (and a step's "+ N more" box), merges, resets and
    joins. The thread's other branches (forks) and subruns' boxes are not targets."""
    tree, targets = run.tree, {}
    for tree_id, dot_id in getattr(drawing, "nbgraph_ids", {}).items():
        if tree_id.startswith("more:"):  # a step's tasks folded into one box: that step
            targets[dot_id] = int(tree_id[5:])
            continue
        node = tree.nodes.get(tree_id)  # (a summary box, or a subrun's: not this run's own)
        if node is None or node.kind == "fork":
            continue
        targets[dot_id] = max(0, node.step)
    return targets


def next_run_step(run: Any, node: str, shown: int) -> int | None:
    """The step of `node`'s next run after step `shown`, wrapping to its first run; None if
    the node never ran in `run`.

    >>> from nbgraph import START, StateGraph
    >>> app = (StateGraph(dict).add_node("a", lambda s: {"n": s["n"] + 1})
    ...        .add_conditional_edges("a", lambda s: "a" if s["n"] < 3 else "__end__")
    ...        .add_edge(START, "a").compile())
    >>> run = app.run({"n": 0})
    >>> next_run_step(run, "a", 1), next_run_step(run, "a", 3), next_run_step(run, "b", 0)
    (2, 1, None)
    """
    steps = _run_steps(run, node)
    if not steps:
        return None
    return next((s for s in steps if s > shown), steps[0])


def click_note(run: Any, node: str, shown: int) -> str:
    """What a click on `node` says beside the picture when stepping cannot show it: the node
    never ran, or it ran in one step only and that step is already shown (else "").

    >>> from nbgraph import START, StateGraph
    >>> run = StateGraph(dict).add_node("a", lambda s: {}).add_edge(START, "a").compile().run({})
    >>> click_note(run, "a", 1), click_note(run, "a", 0), click_note(run, "b", 1)
    ("'a' ran only once, at step 1 (shown).", '', "'b' did not run in this run.")
    """
    steps = _run_steps(run, node)
    if not steps:
        return f"{node!r} did not run in this run."
    if steps == [shown]:
        return f"{node!r} ran only once, at step {shown} (shown)."
    return ""


def branch_boxes(drawing: Any, run: Any, task_ids: set[str]) -> tuple[set[str], set[str]]:
    """For a state-tree drawing: the DOT ids of the boxes of the tasks `task_ids` (a
    followed branch; a task folded into its step's "more" box stands for that box), and of
    every task box."""
    ids = getattr(drawing, "nbgraph_ids", {})
    every = {dot_id for tree_id, dot_id in ids.items() if tree_id.startswith(("task:", "more:"))}
    followed = set()
    for task_id in task_ids:
        dot_id = ids.get(f"task:{task_id}")
        if dot_id is None:
            node = run.tree.nodes.get(f"task:{task_id}")
            dot_id = None if node is None else ids.get(f"more:{node.step}")
        if dot_id is not None:
            followed.add(dot_id)
    return followed, every


def _run_steps(run: Any, node: str) -> list[int]:
    """The steps (after the input) in which `node` ran, in order."""
    return sorted({s.step for s in run.log.steps if s.step > 0 for t in s.tasks if t.node == node})


def marked(
    targets: dict[str, int], step: int, branch: tuple[set[str], set[str]] | None = None
) -> tuple[list[str], list[str]]:
    """The DOT ids of the state-tree boxes of `step`: those drawn as the current step, and
    those faded. Following one branch (`branch`: the boxes of its tasks and the boxes of
    every task, from `branch_boxes`), a task box of the step that is not on the branch is
    faded, not marked: one task of a `Send` fan-out stands out from its siblings. Merges
    and resets stay marked.

    >>> targets = {"t1": 1, "t2": 2, "t3": 2, "t4": 2, "m2": 2}
    >>> marked(targets, 2)
    (['m2', 't2', 't3', 't4'], [])
    >>> marked(targets, 2, branch=({"t1", "t3"}, {"t1", "t2", "t3", "t4"}))
    (['m2', 't3'], ['t2', 't4'])
    """
    boxes = sorted(dot_id for dot_id, at in targets.items() if at == step)
    if branch is None:
        return boxes, []
    followed, tasks = branch
    faded = [box for box in boxes if box in tasks and box not in followed]
    return [box for box in boxes if box not in faded], faded
