"""What a recorded run adds to a drawing of its graph: counts, taken ways, failures, focus.

A node whose tasks ran graphs (subruns) carries their counts, summed over all of them, and
the graph they ran (`Overlay.subgraphs`); `views.drawings.dot` draws it as a cluster.
"""

from __future__ import annotations

import bisect
import dataclasses
import weakref
from dataclasses import dataclass, field
from typing import Any

from nbgraph.engine.facts import handed_text, hands_to_parent, numbered_tasks
from nbgraph.primitives import END, MISSING, START, Send
from nbgraph.record.text import plural, status_text

__all__ = [
    "FollowedTask",
    "Overlay",
    "ancestry",
    "ends_implicitly",
    "run_overlay",
    "steps_of_nodes",
]


@dataclass(frozen=True)
class FollowedTask:
    """The task followed among its node's many at one step (one task of a `Send` fan-out).

    Attributes:
        index: its place among the node's tasks at that step (0: the first).
        count: how many tasks the node ran at that step.
        step: the step.
        arg: its `Send` argument (MISSING for a task an edge triggered).
    """

    index: int
    count: int
    step: int
    arg: Any = MISSING


@dataclass
class Overlay:
    """What a run adds to a graph drawing.

    Attributes:
        runs: how many times each node ran.
        failed: node -> exception type name, for nodes whose task raised.
        paused: nodes whose task is waiting for an answer to `interrupt()`.
        handed: node -> what its task handed to the parent graph (`Command.PARENT`).
        edges: (source, target) -> how many times that way was taken.
        sends: (source, target) -> how many `Send`s went that way.
        calls: (caller, task) -> how many times a node (an entrypoint) called a `@task`.
        focus: nodes to highlight (a step's tasks, or a branch's ancestry); empty: none.
        focus_edges: edges to highlight.
        caption: a line under the drawing.
        subgraphs: node -> (the graph its tasks ran, their subruns' summed overlay).
        current: nodes whose tasks run at the shown step ("runs this step"), drawn apart from
            the focused nodes that ran before it (a step's triggers, a branch's chain).
        notes: node -> a line about the task followed among its step's many (one task of a
            `Send` fan-out: "following task 38 of 200 (step 2)").
        followed: node -> the task followed among its step's many, which `views.drawings.dot` draws
            apart from its faded siblings.
    """

    runs: dict[str, int] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)
    paused: set[str] = field(default_factory=set)
    handed: dict[str, str] = field(default_factory=dict)
    edges: dict[tuple[str, str], int] = field(default_factory=dict)
    sends: dict[tuple[str, str], int] = field(default_factory=dict)
    calls: dict[tuple[str, str], int] = field(default_factory=dict)
    focus: set[str] = field(default_factory=set)
    focus_edges: set[tuple[str, str]] = field(default_factory=set)
    caption: str = ""
    subgraphs: dict[str, tuple[Any, Overlay]] = field(default_factory=dict)
    current: set[str] = field(default_factory=set)
    notes: dict[str, str] = field(default_factory=dict)
    followed: dict[str, FollowedTask] = field(default_factory=dict)


def ends_implicitly(spec: Any) -> list[str]:
    """The nodes with no way out (no edge, router, declared `Command` destination or
    waiting edge): the run ends after them unless they route by `Command(goto=...)`."""
    out = {s for s, targets in spec.edges.items() if targets} | set(spec.branches)
    out |= {s for wait in spec.waiting for s in wait.sources}
    return [n for n, node in spec.nodes.items() if n not in out and not node.destinations]


def run_overlay(run: Any, step: int | None = None, branch: str | None = None) -> Overlay:
    """The overlay of `run`; `step` or `branch` (a task id) picks what to highlight.

    With `step`, the counts are the run's so far (through that step: a node that has not
    run yet shows no count), its tasks are marked "runs this step" and the nodes that
    triggered them drawn apart ("ran before"). With `branch`, the chain that led to that
    task is highlighted; with both, the chain is outlined and the step's tasks on it marked.
    Without `step`, the counts are computed once per run and shared.

    Raises:
        ValueError: a step the run does not have, or a task id it does not have.
    """
    base = _base(run)
    overlay = dataclasses.replace(
        base, focus=set(), focus_edges=set(), current=set(), notes={}, followed={}
    )
    if step is not None:
        run.timeline.step_log(step)  # raises ValueError naming the step
        so_far = _counts(run, upto=step)
        for name in ("runs", "failed", "paused", "edges", "sends"):
            setattr(overlay, name, getattr(so_far, name))
    if branch is not None:
        _focus_branch(run, overlay, branch, step)
    elif step is not None:
        _focus_step(run, overlay, step)
    return overlay


_BASES: weakref.WeakKeyDictionary[Any, Overlay] = weakref.WeakKeyDictionary()


def _base(run: Any) -> Overlay:
    """The counts of `run` (with its subruns' summed per node), computed once per run."""
    base = _BASES.get(run)
    if base is None:
        base = _BASES[run] = _counts(run)
        if getattr(run, "subruns", None):
            base.subgraphs = _subrun_overlays(run, _base)
    return base


_TALLIES: weakref.WeakKeyDictionary[Any, dict[str, dict[Any, Any]]] = weakref.WeakKeyDictionary()


_WAYS = {"send": "sends", "call": "calls"}  # (a task's kind -> the way it came; else an edge)


def _tally(run: Any) -> dict[str, dict[Any, Any]]:
    """What the run did, by step: for each node, failure, hand-over, pause, way and Send the sorted
    steps it happened at (once per time), so the counts through any step are a bisect; and
    `"totals"`: the run's tasks, failed attempts retried, tasks from the node cache. One
    pass over the tasks, made once per run."""
    tally = _TALLIES.get(run)
    if tally is not None:
        return tally
    spec = run.graph
    runs: dict[str, list[int]] = {}
    ways: dict[str, dict[Any, list[Any]]] = {"edges": {}, "sends": {}, "calls": {}}
    tally = {
        "runs": runs, "failed": {}, "handed": {}, "paused": {}, **ways,
        "totals": {"tasks": 0, "retried": 0, "cached": 0},
    }  # fmt: skip
    dead_ends = set(ends_implicitly(spec))
    to_end: dict[str, int] = {}  # node -> its static edges to END (taken when it ran fine)
    edges, count = ways["edges"], 0
    for number, shape, task in numbered_tasks(run.log.steps, 1):  # (a flat row: no Task)
        node, _, kind, triggers, routes, _, _ = shape
        count += 1
        ran = runs.get(node)
        if ran is None:
            runs[node] = [number]
        else:
            ran.append(number)
        if triggers:
            by_way = edges if kind not in _WAYS else ways[_WAYS[kind]]
            for source in triggers:
                taken = by_way.get((source, node))
                if taken is None:
                    by_way[source, node] = [number]
                else:
                    taken.append(number)
        paused = False
        if task is not None:  # (a task kept as an object: it may have failed, paused...)
            if task.error is not None:
                _tally_unusual(tally, task, number)
                continue
            paused = bool(task.interrupts)
            if paused or task.attempts or task.from_cache:
                _tally_unusual(tally, task, number)
        if kind != "call":
            ends = to_end.get(node)
            if ends is None:
                ends = to_end[node] = sum(t == END for t in spec.edges.get(node, ()))
            if routes:
                if END in routes:  # (a `Send` is never END: `in` compares at C speed)
                    ends += sum(not isinstance(r, Send) and r == END for r in routes)
            elif node in dead_ends and not paused:
                ends += 1
            if ends:
                edges.setdefault((node, END), []).extend([number] * ends)
    tally["totals"]["tasks"] = count
    _TALLIES[run] = tally
    return tally


def _tally_unusual(tally: dict[str, Any], task: Any, number: int) -> None:
    """`_tally`'s entries of a task that failed, handed over, paused, was retried or cached."""
    node = task.node
    if hands_to_parent(task.error):
        tally["handed"].setdefault(node, []).append((number, handed_text(task.error)))
    elif task.error is not None:
        tally["failed"].setdefault(node, []).append((number, type(task.error)))
    if task.interrupts:
        tally["paused"].setdefault(node, []).append(number)
    tally["totals"]["retried"] += len(task.attempts)
    tally["totals"]["cached"] += bool(task.from_cache)


def steps_of_nodes(run: Any) -> dict[str, list[int]]:
    """Each node that ran -> the step of each of its runs, in order (a step twice for a
    node that ran twice in it): read, never changed (shared with the run's drawings)."""
    return _tally(run)["runs"]


def _counts(run: Any, upto: int | None = None) -> Overlay:
    """Runs, failures, pauses and ways taken, by the whole run or through step `upto`."""
    log = run.log
    overlay = Overlay()
    tally = _tally(run)

    def through(steps: list[Any]) -> int:
        if upto is None:
            return len(steps)
        return bisect.bisect_right(steps, upto, key=lambda s: s[0] if isinstance(s, tuple) else s)

    for name in ("runs", "edges", "sends", "calls"):
        target = getattr(overlay, name)
        for key, steps in tally[name].items():
            if count := through(steps):
                target[key] = count
    for node, failures in tally["failed"].items():
        if count := through(failures):
            overlay.failed[node] = failures[count - 1][1].__name__
    overlay.paused = {node for node, steps in tally["paused"].items() if through(steps)}
    for node, handed in tally["handed"].items():  # Command.PARENT: handed on, not failed
        if count := through(handed):
            overlay.handed[node] = handed[count - 1][1]
    overlay.runs[START] = 1
    if upto is not None:  # (the caption is the whole run's: `run_overlay` keeps the base's)
        return overlay
    totals = tally["totals"]
    steps = plural(len(log.steps) - 1, "superstep")
    status = f"run {status_text(run.status)}: {steps}, {plural(totals['tasks'], 'task')}"
    retried, cached = totals["retried"], totals["cached"]
    if retried:  # retry_policy=: the failed attempts before each task's last
        status += f", {retried} failed attempt{'s' * (retried > 1)} retried"
    if cached:  # cache_policy=: tasks whose node did not run
        status += f", {cached} from the node cache"
    overlay.caption = status if run.error is None else f"{status} — {type(run.error).__name__}"
    return overlay


def _focus_step(run: Any, overlay: Overlay, step: int) -> None:
    chosen = run.timeline.step_log(step)  # raises ValueError naming the step
    for task in chosen.tasks:
        overlay.focus.add(task.node)
        overlay.current.add(task.node)
        for source in task.triggers:
            overlay.focus_edges.add((source, task.node))
            overlay.focus.add(source)
    overlay.caption += f" — showing step {step}"


def ancestry(run: Any, task_id: str) -> list[Any]:
    """A task and the chain of tasks that triggered it, back to START (latest first).

    In a branch-lineage run: the tasks of its own lineage, through every branch a join on
    the way merged.

    Raises:
        ValueError: the run has no such task.
    """
    ordered = list(run.log.tasks())
    by_id = {t.id: t for t in ordered}
    wanted = task_id.removeprefix("task:")
    if wanted not in by_id:
        sample = ", ".join(t.id for t in ordered[1:6])
        raise ValueError(f"This run has no task {task_id!r}; task ids look like: {sample}.")
    if run.log.semantics == "branches":
        return _lineage_of(run, by_id, wanted)
    runs_of: dict[str, list[tuple[int, Any]]] = {}
    for task in ordered:
        runs_of.setdefault(task.node, []).append((task.step, task))
    frontier, found, seen = [by_id[wanted]], [], set()
    while frontier:
        task = frontier.pop()
        if task.id in seen:
            continue
        seen.add(task.id)
        found.append(task)
        for source in task.triggers:
            runs = runs_of.get(source, [])
            # the source's latest run before this task's step triggered it
            index = bisect.bisect_left(runs, task.step, key=lambda pair: pair[0]) - 1
            if index >= 0:
                frontier.append(runs[index][1])
    return found


def _focus_branch(run: Any, overlay: Overlay, task_id: str, step: int | None = None) -> None:
    """Highlight a task and the chain of tasks that triggered it, back to START; with
    `step`, mark the chain's tasks at that step as the ones running now."""
    chain = ancestry(run, task_id)
    for task in chain:
        overlay.focus.add(task.node)
        siblings = [t for t in run.timeline.step_log(task.step).tasks if t.node == task.node]
        if len(siblings) > 1 and task.node not in overlay.notes:  # one task of a fan-out
            index = next(i for i, t in enumerate(siblings) if t.id == task.id)
            overlay.notes[task.node] = (
                f"following task {index + 1} of {len(siblings)} (step {task.step})"
            )
            overlay.followed[task.node] = FollowedTask(index, len(siblings), task.step, task.arg)
        if task.step == step:
            overlay.current.add(task.node)
        for source in task.triggers:
            overlay.focus_edges.add((source, task.node))
            overlay.focus.add(source)
    overlay.caption += f" — showing the branch that led to {chain[0].id}"
    if step is not None:
        overlay.caption += f", at step {step}"
        if not overlay.current:  # the step is not on the branch: still say which it is
            overlay.caption += " (not on this branch)"


def _lineage_of(run: Any, by_id: dict[str, Any], wanted: str) -> list[Any]:
    """The tasks whose writes `wanted`'s lineage carries, back through joins and resets."""
    tree = run.tree
    found, seen = [by_id[wanted]], set()
    frontier = list(tree[f"task:{wanted}"].parents)
    while frontier:
        node_id = frontier.pop()
        if node_id in seen or node_id not in tree.nodes:
            continue
        seen.add(node_id)
        node = tree[node_id]
        if node.kind == "task":
            found.append(by_id[node.task_id])
        frontier.extend(node.parents)
    return found


def _subrun_overlays(run: Any, overlay_of: Any) -> dict[str, tuple[Any, Overlay]]:
    """Node name -> (the graph its tasks ran, the summed overlay of those subruns).

    `overlay_of(sub)` gives one subrun's overlay (with its own `subgraphs`, for nesting).
    """
    nodes = {task.id: task.node for task in run.log.tasks()}
    found: dict[str, tuple[Any, Overlay]] = {}
    for sub in run.subruns:
        name = nodes.get(sub.task)
        if name is None:
            continue
        one = overlay_of(sub)
        if name in found:
            spec, total = found[name]
            found[name] = (spec, _summed(total, one))
        else:
            found[name] = (sub.graph, _summed(Overlay(), one))
    return found


def _summed(a: Overlay, b: Overlay) -> Overlay:
    """The counts of two runs of one graph added up (failures, pauses and commands handed
    to the parent of either)."""
    total = Overlay(
        failed={**a.failed, **b.failed},
        paused=a.paused | b.paused,
        handed={**a.handed, **b.handed},
    )
    for mine, theirs, into in (
        (a.runs, b.runs, total.runs),
        (a.edges, b.edges, total.edges),
        (a.sends, b.sends, total.sends),
    ):
        for key in {*mine, *theirs}:
            into[key] = mine.get(key, 0) + theirs.get(key, 0)
    total.subgraphs = dict(a.subgraphs)
    for name, (spec, inner) in b.subgraphs.items():
        before = total.subgraphs.get(name)
        total.subgraphs[name] = (spec, _summed(before[1], inner) if before else inner)
    return total
