"""The state tree of a run: the input at the root, a child per task holding its writes, a
merge node per superstep whose parents are that step's tasks in write order, and root resets
as their own nodes.

The tree holds references to what the engine recorded; it copies nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

from nbgraph.engine.facts import TO_PARENT, RunLog, applied_numbers, flat_steps, hands_to_parent
from nbgraph.primitives import MISSING
from nbgraph.record.text import plural

__all__ = ["NodeKind", "StateTree", "TreeNode", "build_tree", "task_node", "task_status"]

NodeKind = Literal["input", "task", "merge", "reset", "fork", "join"]


class TreeNode(NamedTuple):
    """One node of the state tree (immutable; `node._replace(...)` gives a changed copy).

    A named tuple, not a dataclass: a long run's tree has two nodes a step, and a tuple is
    built much faster than a frozen dataclass (`benchmarks/looking.py`; benchmarks/README.md,
    "Timings behind the code").

    Attributes:
        id: `"input"`, `"task:<step>:<index>:<node>"`, `"merge:<step>"`,
            `"reset:<step>:<node>"`, `"fork:<checkpoint id>"`, or (branch lineages)
            `"join:<step>:<node>"` and `"join:end"`.
        kind: `"input"`, `"task"`, `"merge"`, `"reset"`, `"fork"` (a checkpoint of the
            thread on another branch than this run's, read from a checkpointer), or `"join"`
            (with `semantics="branches"`: lineages merged for a node, or at END).
        step: the superstep (-1 for the input).
        name: the graph node's name (a task, or the node a reset was made for); `"input"`
            or `"merge"` otherwise.
        parents: ids of the parents, in order (a merge: its step's tasks in write order).
        writes: `(field, value)` pairs: a task's writes, the input's keys, a reset's new root.
        task_id: the engine's task id (`"<step>:<index>:<node>"`), for tasks.
        triggers: the nodes whose edges, routers or Commands triggered a task (a send task:
            the node that sent it).
        arg: what a `Send` task received as its whole input (MISSING otherwise).
        started, ended: `time.time()` at the start and end of a task.
        error: the exception a task raised.
        warnings: what was dropped from a task's writes, as messages.
        dropped: fields a reset dropped; keys a task wrote that were dropped.
        reason: for a reset, `"merge"`, `"state_filter"` or `"resume"`; for a join, its
            strategy (`"delta"`, `"fold"` or the strategy's name); for a task, `"update"`
            when it is a write made by `update_state` (or a stepper's `update`), not a node.
        interrupts: what a paused task asked (`interrupt()`), waiting for an answer.
        occurrence: for a task, how many earlier tasks of the same node the run had.
        attempts: a retried task's failed attempts before its last one
            (`engine.retrying.Attempt` each: number, started, ended, error, wait).
        from_cache: a task whose writes came from the node cache (its node did not run).
    """

    id: str
    kind: NodeKind
    step: int
    name: str
    parents: tuple[str, ...] = ()
    writes: tuple[tuple[str, Any], ...] = ()
    task_id: str = ""
    triggers: tuple[str, ...] = ()
    arg: Any = MISSING
    started: float = 0.0
    ended: float = 0.0
    error: BaseException | None = None
    warnings: tuple[str, ...] = ()
    dropped: tuple[str, ...] = ()
    reason: str = ""
    occurrence: int = 0
    interrupts: tuple[Any, ...] = ()
    attempts: tuple[Any, ...] = ()
    from_cache: bool = False

    @property
    def duration(self) -> float:
        """Seconds the task took (0 for other nodes; NaN for a task whose times were not
        recorded: a run imported from LangGraph's checkpoints)."""
        if self.kind == "task" and not self.started and not self.ended:
            return float("nan")
        return max(0.0, self.ended - self.started)

    @property
    def status(self) -> str:
        return task_status(self)

    def __repr__(self) -> str:
        return f"TreeNode({self.id!r}, parents={list(self.parents)})"


def task_status(task: Any) -> str:
    """A task's status (a `Task` or a task's `TreeNode`): `"to_parent"` (it handed a
    `Command.PARENT` on), `"error"`, `"cached"`, `"paused"` or `"ok"`."""
    if hands_to_parent(task.error):  # Command.PARENT: handed on, not a failure
        return TO_PARENT
    if task.error is not None:
        return "error"
    if task.from_cache:
        return "cached"
    return "paused" if task.interrupts else "ok"


@dataclass
class StateTree:
    """All tree nodes of a run, by id, with lookups by step and by (node, occurrence).

    A run's subruns (graphs run inside its tasks) have trees of their own, hung off the
    task that started them (`subtrees`): the task's children include each subtree's input
    root. A subtree's node ids are its own ids behind a `prefix` naming where it hangs,
    `"<task node id>/<k>/"` (its k-th subrun), e.g. `"task:2:0:left/0/merge:1"`; iterating,
    `len`, `tree[id]` and the lookups by step and name cover this run's own nodes;
    `walk()` and `find(id)` go into the subtrees too.
    """

    nodes: dict[str, TreeNode] = field(default_factory=dict)
    by_step: dict[int, list[str]] = field(default_factory=dict)
    by_name: dict[str, list[str]] = field(default_factory=dict)
    prefix: str = ""
    subtrees: dict[str, list[StateTree]] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.nodes)

    def __iter__(self) -> Iterator[TreeNode]:
        return iter(self.nodes.values())

    def __getitem__(self, node_id: str) -> TreeNode:
        try:
            return self.nodes[node_id]
        except KeyError:
            if self._nested(node_id) is not None:
                raise KeyError(
                    f"Tree node {node_id!r} is in a subrun's tree, not this run's own: "
                    f"`tree.find({node_id!r})` finds it; the subrun's own `Run` is in "
                    "`run.subruns`."
                ) from None
            raise KeyError(
                f"No tree node {node_id!r}; ids look like 'input', 'merge:2', "
                f"'task:2:0:agent' or 'reset:3:join' (a subrun's: 'task:2:0:left/0/input')."
            ) from None

    @property
    def root(self) -> TreeNode:
        return self.nodes[self.prefix + "input"]

    def children(self, node_id: str) -> list[TreeNode]:
        """Nodes that have `node_id` among their parents, in creation order; a task that
        ran graphs also has their subtrees' input roots, in start order."""
        own = [n for n in self.nodes.values() if node_id in n.parents]
        return own + [sub.root for sub in self.subtrees.get(node_id, ())]

    def walk(self) -> Iterator[TreeNode]:
        """Every node: this run's own, each task's subtrees right after the task."""
        for node in self.nodes.values():
            yield node
            for sub in self.subtrees.get(node.id, ()):
                yield from sub.walk()

    def find(self, node_id: str) -> TreeNode:
        """The node with this id, in this tree or any subtree (nested too)."""
        found = self.nodes.get(node_id) or self._nested(node_id)
        if found is None:
            return self[node_id]  # raises, naming what ids look like
        return found

    def _nested(self, node_id: str) -> TreeNode | None:
        for subs in self.subtrees.values():
            for sub in subs:
                if node_id.startswith(sub.prefix):
                    found = sub.nodes.get(node_id) or sub._nested(node_id)
                    if found is not None:
                        return found
        return None

    def tasks(self, step: int | None = None) -> list[TreeNode]:
        """Task nodes (of one step, or all), in step and write order."""
        steps = [step] if step is not None else sorted(self.by_step)
        return [
            self.nodes[i]
            for s in steps
            for i in self.by_step.get(s, ())
            if self.nodes[i].kind == "task"
        ]

    def merge(self, step: int) -> TreeNode | None:
        """The merge node of `step` (None if the step failed or does not exist)."""
        return self.nodes.get(f"{self.prefix}merge:{step}")

    def occurrence(self, name: str, occurrence: int) -> TreeNode:
        """The `occurrence`-th task of node `name` (0 = its first run, -1 = its last)."""
        ids = self.by_name.get(name)
        if not ids:
            raise KeyError(
                f"Node {name!r} never ran in this run; nodes that ran: {sorted(self.by_name)}."
            )
        try:
            return self.nodes[ids[occurrence]]
        except IndexError:
            raise IndexError(
                f"Node {name!r} ran {plural(len(ids), 'time')}; "
                f"occurrence {occurrence} does not exist."
            ) from None

    def _add(self, node: TreeNode) -> None:
        self.nodes[node.id] = node
        self.by_step.setdefault(node.step, []).append(node.id)
        if node.kind == "task":
            self.by_name.setdefault(node.name, []).append(node.id)


def build_tree(log: RunLog) -> StateTree:
    """The state tree of a recorded run (a flat step's task nodes read from the run's
    columns, `flat_steps`: no `StepLog` made)."""
    if log.semantics == "branches":
        return _build_lineage_tree(log)
    tree = StateTree()
    given = log.input
    input_writes = tuple(given.items()) if isinstance(given, dict) else (("input", given),)
    tree._add(TreeNode("input", "input", -1, "input", writes=input_writes))
    current = "input"
    counts: dict[str, int] = {}
    nodes, by_step, by_name = tree.nodes, tree.by_step, tree.by_name
    for number, key, rows, step in flat_steps(log.steps):
        if step is not None:
            current = _step_nodes(tree, step, current, counts)
            continue
        cleared, applied = key[1], key[2]  # type: ignore[index]
        if number == 0 and rows:  # the input applied
            merge_parents: tuple[str, ...] = (current,)
            merge_writes = tuple(zip(rows[0][0][6], rows[0][1], strict=True))
        else:
            ids: list[str] = []
            ids_of_step = by_step.setdefault(number, []) if rows else ids
            for (name, index, kind, triggers, _, _, names), values, started, ended in rows:  # type: ignore[union-attr]
                occurrence = counts.get(name, 0)
                counts[name] = occurrence + 1
                task_id = f"{number}:{index}:{name}"
                node_id = f"task:{task_id}"
                nodes[node_id] = _new(
                    TreeNode,
                    (node_id, "task", number, name, (current,),
                     tuple(zip(names, values, strict=True)), task_id, triggers, MISSING,
                     started, ended, None, (), (), kind if kind in ("update", "call") else "",
                     occurrence, (), (), False),
                )  # fmt: skip
                ids_of_step.append(node_id)
                by_name.setdefault(name, []).append(node_id)
                ids.append(node_id)
            merge_parents, merge_writes = tuple(ids) or (current,), ()
        if applied:  # (`_merge`, inline: a long run has many)
            current = f"merge:{number}"
            nodes[current] = _new(
                TreeNode,
                (current, "merge", number, "merge", merge_parents, merge_writes, "", (),
                 MISSING, 0.0, 0.0, None, (), cleared, "", 0, (), (), False),
            )  # fmt: skip
            by_step.setdefault(number, []).append(current)
    _add_branches(tree, log)
    return tree


def _step_nodes(tree: StateTree, step: Any, current: str, counts: dict[str, int]) -> str:
    """Add a step kept as its object (resets, tasks, merge); the id of its last node."""
    nodes, by_step, by_name = tree.nodes, tree.by_step, tree.by_name
    for reset in step.resets:
        reset_id = f"reset:{step.step}:{reset.node}"
        tree._add(
            TreeNode(
                reset_id,
                "reset",
                step.step,
                reset.node,
                parents=(current,),
                writes=tuple(reset.values.items()),
                triggers=reset.sources,
                dropped=reset.dropped,
                reason=reset.reason,
            )
        )
        current = reset_id
    if step.step == 0 and step.tasks:  # the input applied
        task = step.tasks[0]
        merge_parents: tuple[str, ...] = (current,)
        merge_writes = tuple(task.writes)
    else:  # a resumed run's first step may have no task: its merge follows the reset
        ids = []
        for task in step.tasks:
            node = task_node(task, current, counts)
            nodes[node.id] = node  # (`tree._add`, inline: a long run has many)
            by_step.setdefault(node.step, []).append(node.id)
            by_name.setdefault(node.name, []).append(node.id)
            ids.append(node.id)
        merge_parents, merge_writes = tuple(ids) or (current,), ()
    if step.applied:
        current = _merge(tree, step.step, merge_parents, merge_writes, step.cleared)
    return current


def _merge(tree: StateTree, number: int, parents: tuple, writes: tuple, cleared: Any) -> str:
    """Add the merge node of step `number`; its id."""
    merge_id = f"merge:{number}"
    tree.nodes[merge_id] = _new(
        TreeNode,
        (merge_id, "merge", number, "merge", parents, writes, "", (), MISSING, 0.0, 0.0, None,
         (), cleared, "", 0, (), (), False),
    )  # fmt: skip
    tree.by_step.setdefault(number, []).append(merge_id)
    return merge_id


def _build_lineage_tree(log: RunLog) -> StateTree:
    """The state tree of a branch-lineage run: each task hangs off the lineage point it
    read, and each join has the branch heads it merged as parents, in routing order."""
    tree = StateTree()
    given = log.input
    input_writes = tuple(given.items()) if isinstance(given, dict) else (("input", given),)
    tree._add(TreeNode("input", "input", -1, "input", writes=input_writes))
    counts: dict[str, int] = {}
    for step in log.steps:
        for reset in step.resets:
            tree._add(
                TreeNode(
                    reset.id or f"reset:{step.step}:{reset.node}",
                    "reset",
                    step.step,
                    reset.node,
                    parents=(reset.parent,) if reset.parent else ("input",),
                    writes=tuple(reset.values.items()),
                    triggers=reset.sources,
                    dropped=reset.dropped,
                    reason=reset.reason,
                )
            )
        for join in step.joins:
            tree._add(_join_node(join))
        for point in step.points:  # restored from a checkpoint: where its lineages stood
            known = any(p["id"] == point["parent"] for p in step.points)
            parent = point["parent"] if known else "input"
            tree._add(
                TreeNode(point["id"], "reset", step.step, "resume",
                         (parent,), reason="resume")
            )  # fmt: skip
        if step.tasks and step.tasks[0].kind == "input":
            task = step.tasks[0]
            parent = step.resets[-1].id if step.resets else "input"
            root = TreeNode(f"merge:{step.step}", "merge", step.step, "merge", (parent,))
            tree._add(root._replace(writes=tuple(task.writes)))
            continue
        for task in step.tasks:
            tree._add(task_node(task, task.parent, counts))
    if log.end is not None:
        tree._add(_join_node(log.end))
    _add_branches(tree, log)
    return tree


def _join_node(join: Any) -> TreeNode:
    return TreeNode(
        join.id,
        "join",
        join.step,
        "END" if join.id == "join:end" else join.node,
        parents=join.parents,
        writes=tuple(join.values.items()) if join.values is not None else (),
        dropped=join.dropped,
        reason=join.strategy,
    )


def _add_branches(tree: StateTree, log: RunLog) -> None:
    """A thread's other branches (forks, replays) as `fork:` nodes hanging off this run's."""
    if not log.branches:
        return
    steps = set(applied_numbers(log.steps))
    for record in log.branches:
        parent = record.parent_id
        if f"fork:{parent}" in tree.nodes:
            parents: tuple[str, ...] = (f"fork:{parent}",)
        else:
            parents = (_merge_of(tree, log, parent, steps),)
        tasks = record.payload["tasks"]
        writes = tuple((k, v) for task in tasks for k, v in task["writes"])
        names = " + ".join(task["node"] for task in tasks) or "branch point"
        node_id = f"fork:{record.checkpoint_id}"
        tree._add(
            TreeNode(node_id, "fork", record.step, names, parents, writes, reason=record.source)
        )


def _merge_of(tree: StateTree, log: RunLog, checkpoint_id: str | None, steps: set[int]) -> str:
    """The merge node of this run's chain for one of its checkpoints (by the saver's steps)."""
    record = log.source.get(log.config["configurable"]["thread_id"], checkpoint_id)
    while record is not None and record.step not in steps:
        record = log.source.get(record.thread_id, record.parent_id) if record.parent_id else None
    return f"merge:{record.step}" if record is not None else "input"


_new = tuple.__new__
"""`_new(TreeNode, fields)`: a node from all its fields in order, without `TreeNode(...)`'s
keyword handling (the two nodes a step of a long run are built this way)."""


def task_node(task: Any, parent: str, counts: dict[str, int]) -> TreeNode:
    """The tree node of a recorded task whose parent is `parent` (`counts`: each node's tasks
    so far, for `occurrence`; updated)."""
    name = task.node
    occurrence = counts.get(name, 0)
    counts[name] = occurrence + 1
    task_id, dropped, kind = task.id, task.dropped, task.kind
    return _new(
        TreeNode,
        (
            f"task:{task_id}",
            "task",
            task.step,
            name,
            (parent,),
            tuple(task.writes),
            task_id,
            task.triggers,
            getattr(task.arg, "input", task.arg) if kind == "call" else task.arg,
            task.started,
            task.ended,
            task.error,
            tuple(f"dropped {key!r}: {why}" for key, _, why in dropped) if dropped else (),
            tuple(key for key, _, _ in dropped) if dropped else (),
            kind if kind in ("update", "call") else "",
            occurrence,
            tuple(task.interrupts) if task.interrupts else (),
            tuple(task.attempts) if task.attempts else (),
            task.from_cache,
        ),
    )
