"""A run's state tree with its subruns' trees hung off the tasks that started them.

Each subrun (a graph run inside one of the run's tasks, `record.subruns`) gets its own
state tree, its node ids prefixed with `"<task node id>/<k>/"` (the task's k-th subrun) and
its input root's parent set to that task; nested subruns the same way, one prefix inside
the other. The run's own nodes and lookups are unchanged (`StateTree`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from nbgraph.record.subruns.runs import subrun_logs
from nbgraph.record.tree import StateTree, TreeNode, build_tree

if TYPE_CHECKING:
    from nbgraph.engine.facts import RunLog

__all__ = ["run_tree", "subrun_positions"]


def run_tree(log: RunLog) -> StateTree:
    """The state tree of `log`, with its subruns' trees (nested too) under their tasks."""
    tree = build_tree(log)
    _hang_subtrees(tree, log)
    return tree


def subrun_positions(log: RunLog) -> dict[str, list[int]]:
    """Task id -> the indexes into `run.subruns` of the graphs that task ran."""
    positions: dict[str, list[int]] = {}
    for position, (task_id, _) in enumerate(subrun_logs(log)):
        positions.setdefault(task_id, []).append(position)
    return positions


def _hang_subtrees(tree: StateTree, log: RunLog) -> None:
    for task_id, sub in subrun_logs(log):
        task_node = f"{tree.prefix}task:{task_id}"
        if task_node not in tree.nodes:  # a task the tree does not show: nothing to hang on
            continue
        hung = tree.subtrees.setdefault(task_node, [])
        subtree = _prefixed(build_tree(sub), f"{task_node}/{len(hung)}/", task_node)
        hung.append(subtree)
        _hang_subtrees(subtree, sub)


def _prefixed(tree: StateTree, prefix: str, parent: str) -> StateTree:
    """`tree` with every id behind `prefix`, its input root a child of `parent`."""

    def moved(node: TreeNode) -> TreeNode:
        parents = (parent,) if node.kind == "input" else tuple(prefix + p for p in node.parents)
        return node._replace(id=prefix + node.id, parents=parents)

    return StateTree(
        nodes={prefix + key: moved(node) for key, node in tree.nodes.items()},
        by_step={step: [prefix + i for i in ids] for step, ids in tree.by_step.items()},
        by_name={name: [prefix + i for i in ids] for name, ids in tree.by_name.items()},
        prefix=prefix,
    )
