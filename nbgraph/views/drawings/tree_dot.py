"""Drawing the state tree: the input, each task with its writes, each step's merge with its
parents in write order, and root resets with the fields they dropped.

A large run is summarised rather than drawn box by box: long stretches of one-task steps
collapse into one box, and a step with many tasks shows the first few and a count.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from nbgraph.engine.facts import handed_text, hands_to_parent
from nbgraph.record.text import plural
from nbgraph.views.drawings.dot import (
    FADED,
    FAILED_FILL,
    FAILED_INK,
    HIGHLIGHT_FILL,
    INK,
    PAUSED_FILL,
    PAUSED_INK,
    RAN_FILL,
    TERMINAL_FILL,
    drawing,
    label,
    short,
)

if TYPE_CHECKING:
    import graphviz

__all__ = ["legend_of", "legend_text", "tree_dot"]

_KEEP_ENDS = 2  # steps kept at each end of a collapsed stretch
_MIN_STRETCH = 6  # a stretch of one-task steps longer than this collapses
_TASKS_PER_STEP = 8  # a step with more tasks shows this many and a count


def tree_dot(run: Any, width: int = 28, legend: bool = True) -> graphviz.Digraph:
    """The state tree of `run` as a Digraph (summarised when long or wide).

    With `legend`, the drawing carries the edge styles it uses and what each means
    (`nbgraph_legend`): its notebook display shows them as one line of text under the
    picture (`views.drawings.fitted`), not inside it, so the legend never widens the drawing.
    """
    tree = run.tree
    compact = {"rankdir": "LR", "nodesep": "0.15", "ranksep": "0.3", "fontname": _FONT}
    dot = drawing("tree", graph_attr=compact)
    dot.attr("node", fontname=_FONT, fontsize=_FONT_SIZE, color=INK, margin="0.08,0.03")
    dot.attr("edge", color=INK, arrowsize="0.6", fontname=_FONT, fontsize=_FONT_SIZE, fontcolor=INK)
    ids: dict[str, str] = {}

    def node_id(tree_id: str) -> str:
        return ids.setdefault(tree_id, f"t{len(ids)}")

    node_id.drawn = ids  # type: ignore[attr-defined]  # parents not drawn map to `previous`
    _draw_tree(dot, tree, node_id, width)
    dot.nbgraph_ids = ids  # tree id -> DOT id: what a click maps back (clicks.py)
    dot.nbgraph_legend = legend_of(dot.body) if legend else ()
    return dot  # a `drawing`: shows as SVG and PNG (a notebook reopened untrusted)


_FONT = "Helvetica"
_FONT_SIZE = "10"
"""Every label's size, in points (13.3 CSS px at the drawing's own size): one size, so a
drawing fitted to its output (`views.drawings.fitted`) shrinks to 75% before a label is under 10
px."""
_LEGEND = (
    ("solid", "state passed on"),
    ("dashed", "collapsed steps, or another branch of the thread"),
    ("bold", "a subgraph's input, from the task that ran it"),
    ("dotted", "fields a merge cleared"),
)
"""The edge styles of a tree drawing, as its legend shows them."""
_EDGE_STYLE = re.compile(r"\bstyle=(\w+)")


def legend_of(body: list[str]) -> tuple[tuple[str, str], ...]:
    """The legend of a tree drawing's DOT statements: the edge styles they use, each with
    what it means; "numbers: merge order" when an edge is numbered.

    >>> legend_of(["\\tt0 -> t1 [label=1]", "\\tt1 -> t2 [style=dotted]"])
    (('solid', 'state passed on (numbers: merge order)'), ('dotted', 'fields a merge cleared'))
    """
    edges = [line for line in body if " -> " in line]
    used = set()
    for line in edges:
        found = _EDGE_STYLE.search(line)
        used.add(found.group(1) if found else "solid")
    numbered = any(re.search(r"\blabel=", line) for line in edges)
    return tuple(
        (style, f"{meaning} (numbers: merge order)" if style == "solid" and numbered else meaning)
        for style, meaning in _LEGEND
        if style in used
    )


def legend_text(legend: Any) -> str:
    """A legend (`legend_of`) as one line of plain text, for a caption.

    >>> legend_text((("solid", "state passed on"), ("dashed", "collapsed steps")))
    'edges: solid, state passed on; dashed, collapsed steps'
    """
    if not legend:
        return ""
    return "edges: " + "; ".join(f"{style}, {meaning}" for style, meaning in legend)


def _draw_tree(dot: Any, tree: Any, node_id: Any, width: int) -> None:
    """One run's tree (the root run's, or a subrun's hung off its task), then its subtrees."""
    steps = sorted(s for s in tree.by_step if s >= 1)
    hidden = _collapsed_steps(tree, steps)
    root = tree.root
    dot.node(
        node_id(root.id),
        label("input" if not tree.prefix else "subgraph input", *_writes(root.writes, width)),
        shape="ellipse",
        style="filled",
        fillcolor=TERMINAL_FILL,
        fontcolor="#ffffff",
    )
    for parent in root.parents:  # a subtree's input hangs off the task that ran it
        dot.edge(node_id(parent), node_id(root.id), style="bold", color=PAUSED_INK)
    previous_shown = root.id
    for step in [0, *steps]:
        if step in hidden:
            start, end, names = hidden[step]
            if step == start:
                summary = (
                    f"… steps {start}–{end}: {plural(len(names), 'task')} ({_counts(names)}) …"
                )
                collapsed = f"{tree.prefix}collapsed:{start}"
                dot.node(
                    node_id(collapsed),
                    label(summary),
                    shape="note",
                    style="filled",
                    fillcolor="#eeeeee",
                )
                dot.edge(node_id(previous_shown), node_id(collapsed), style="dashed")
                previous_shown = collapsed
            continue
        previous_shown = _draw_step(dot, tree, step, node_id, previous_shown, width)
    _draw_forks(dot, tree, node_id, width)
    for task, subs in tree.subtrees.items():
        for sub in subs:
            if task in node_id.drawn:  # (a task inside a collapsed stretch: not drawn)
                _draw_tree(dot, sub, node_id, width)


def _draw_forks(dot: Any, tree: Any, node_id: Any, width: int) -> None:
    """The thread's other branches (from a checkpointer): dashed boxes off this run's tree."""
    for node in tree:
        if node.kind != "fork":
            continue
        lines = [f"{node.reason} branch, step {node.step}", node.name, *_writes(node.writes, width)]
        style = {"shape": "box", "style": "rounded,dashed,filled", "color": PAUSED_INK}
        dot.node(node_id(node.id), label(*lines), fillcolor=PAUSED_FILL, **style)
        for parent in node.parents:
            if parent in node_id.drawn:
                dot.edge(node_id(parent), node_id(node.id), style="dashed", color=PAUSED_INK)


def _task_box(node: Any, width: int) -> tuple[list[str], dict[str, str]]:
    """A task's lines (name, step, writes, what stopped it) and its box's attributes."""
    lines = [node.name, f"step {node.step}", *_writes(node.writes, width)]
    attrs = {"shape": "box", "style": "rounded,filled", "fillcolor": RAN_FILL}
    if hands_to_parent(node.error):  # Command.PARENT: handed on, not a failure
        lines.append(handed_text(node.error))
        attrs.update(color=PAUSED_INK, fontcolor=PAUSED_INK)
    elif node.error is not None:
        lines.append(f"raised {type(node.error).__name__}")
        attrs.update(fillcolor=FAILED_FILL, color=FAILED_INK, fontcolor=FAILED_INK)
    if node.dropped:
        lines.append(f"dropped keys: {', '.join(node.dropped)}")
    if node.interrupts:
        lines.append("paused: " + ", ".join(short(i.value, width) for i in node.interrupts))
        attrs.update(fillcolor=PAUSED_FILL, color=PAUSED_INK)
    return lines, attrs


def _draw_step(dot: Any, tree: Any, step: int, node_id: Any, previous: str, width: int) -> str:
    """Draw one step's resets, tasks and merge; return the id of what the next step hangs on."""
    ids_of_step = tree.by_step.get(step, [])
    members = [tree[i] for i in ids_of_step]
    for node in members:
        if node.kind == "reset":
            dropped = f"dropped: {', '.join(node.dropped)}" if node.dropped else "dropped nothing"
            dot.node(
                node_id(node.id),
                label(f"root reset ({node.reason}) for {node.name}", dropped),
                shape="hexagon",
                style="filled",
                fillcolor=HIGHLIGHT_FILL,
            )
            _parent_edges(dot, node, node_id, previous)
            previous = node.id
    joins = [n for n in members if n.kind == "join"]
    for node in joins:
        if node.name != "END":
            _draw_join(dot, node, node_id)
    tasks = [n for n in members if n.kind == "task"]
    shown, extra = tasks[:_TASKS_PER_STEP], tasks[_TASKS_PER_STEP:]
    for node in shown:
        lines, attrs = _task_box(node, width)
        dot.node(node_id(node.id), label(*lines), **attrs)
        _parent_edges(dot, node, node_id, previous)
    if extra:
        more = f"step {step}: +{len(extra)} more tasks ({_counts([n.name for n in extra])})"
        dot.node(
            node_id(f"{tree.prefix}more:{step}"),
            label(more),
            shape="box",
            style="dashed",
            fontcolor=INK,
        )
        dot.edge(node_id(previous), node_id(f"{tree.prefix}more:{step}"), color=FADED)
    for node in joins:
        if node.name == "END":
            _draw_join(dot, node, node_id)
    return _draw_merge(dot, tree, step, node_id, previous, shown, extra)


def _draw_merge(
    dot: Any, tree: Any, step: int, node_id: Any, previous: str, shown: list, extra: list
) -> str:
    """A step's merge, its parents numbered in write order; none for a single parent (the
    next step hangs on it). Returns the id of what the next step hangs on."""
    merge = tree.merge(step)
    if merge is None:
        return previous
    single = [p for p in merge.parents if p in node_id.drawn]
    if len(merge.parents) <= 1 and len(single) == 1 and not merge.dropped and not extra:
        node_id.drawn[merge.id] = node_id(single[0])  # one parent: the next step hangs on it
        return merge.id
    dot.node(
        node_id(merge.id),
        label(f"merge {step}"),
        shape="ellipse",
        width="0.3",
        height="0.25",
        style="filled",
        fillcolor="#ffffff",
    )
    if step == 0:
        dot.edge(node_id(previous), node_id(merge.id))
    for order, parent in enumerate(merge.parents, start=1):
        if parent in {n.id for n in shown}:
            dot.edge(node_id(parent), node_id(merge.id), label=label(str(order)))
    if extra:
        dot.edge(node_id(f"{tree.prefix}more:{step}"), node_id(merge.id), color=FADED)
    if merge.dropped:
        _draw_cleared(dot, merge, node_id, f"{tree.prefix}cleared:{step}")
    return merge.id


def _draw_cleared(dot: Any, merge: Any, node_id: Any, cleared_id: str) -> None:
    """The fields a step's merge cleared, as a note on the merge."""
    cleared = f"cleared: {', '.join(merge.dropped)}"
    dot.node(node_id(cleared_id), label(cleared), shape="plaintext", fontcolor=INK)
    dot.edge(node_id(merge.id), node_id(cleared_id), style="dotted", arrowhead="none")


def _draw_join(dot: Any, node: Any, node_id: Any) -> None:
    """A branch-lineage join: the lineages it merged, numbered in routing order."""
    title = "END" if node.name == "END" else f"join for {node.name}"
    lines = [title, f"merge: {node.reason}"]
    if node.dropped:
        lines.append(f"dropped: {', '.join(node.dropped)}")
    reset = node.reason != "delta"
    dot.node(
        node_id(node.id),
        label(*lines),
        shape="hexagon" if reset else "octagon",
        style="filled",
        fillcolor=HIGHLIGHT_FILL if reset else "#ffffff",
    )
    for order, parent in enumerate(node.parents, start=1):
        if parent in node_id.drawn:
            dot.edge(node_id(parent), node_id(node.id), label=label(str(order)))


def _parent_edges(dot: Any, node: Any, node_id: Any, fallback: str) -> None:
    drawn = [p for p in node.parents if p in node_id.drawn]
    for parent in drawn or [fallback]:
        dot.edge(node_id(parent), node_id(node.id))


def _writes(writes: Any, width: int, most: int = 3) -> list[str]:
    lines = [f"{field} ← {short(value, width)}" for field, value in list(writes)[:most]]
    if len(writes) > most:
        lines.append(f"+{len(writes) - most} more writes")
    return lines


def _counts(names: list[str]) -> str:
    counts: dict[str, int] = {}
    for name in names:
        counts[name] = counts.get(name, 0) + 1
    return ", ".join(f"{name} ×{count}" for name, count in counts.items())


def _collapsed_steps(tree: Any, steps: list[int]) -> dict[int, tuple[int, int, list[str]]]:
    """Steps hidden inside long stretches of one-task, reset-free steps.

    Returns step -> (first hidden step, last hidden step, task names of the stretch).
    """
    hidden: dict[int, tuple[int, int, list[str]]] = {}
    stretch: list[int] = []

    nodes, by_step = tree.nodes, tree.by_step

    def simple(step: int) -> bool:  # (one task, no reset or join; a long run asks it often)
        task = None
        for node_id in by_step.get(step, ()):
            member = nodes[node_id]
            if member.kind == "task":
                if task is not None:
                    return False
                task = member
            elif member.kind in ("reset", "join"):
                return False
        return task is not None and task.error is None

    def close() -> None:
        if len(stretch) > _MIN_STRETCH:
            inner = stretch[_KEEP_ENDS:-_KEEP_ENDS]
            found = [nodes[i] for s in inner for i in by_step[s]]
            names = [node.name for node in found if node.kind == "task"]
            hidden.update(dict.fromkeys(inner, (inner[0], inner[-1], names)))
        stretch.clear()

    for step in steps:
        one = simple(step)
        if one and (not stretch or step == stretch[-1] + 1):
            stretch.append(step)
        else:
            close()
            if one:
                stretch.append(step)
    close()
    return hidden
