"""What runs next from a branch-lineage checkpoint (`semantics="branches"`), as `get_state`
shows it: one pull task per arriving lineage, counted as `BranchLoop.next_tasks` runs them.

A node reached by plain edges from two lineages runs once per lineage (BRANCHES.md rule 3),
so a checkpoint where two lineages wait at one node — say, two branches each paused by an
`interrupt()` inside the same subgraph node — has two tasks of that node, not one. The same
lineage arriving twice runs once; a waiting edge's arrivals, a node with `merge=` and a
deferred node run once on their merge.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["branch_pull_names"]


def branch_pull_names(spec: Any, control: Mapping[str, Any]) -> list[str] | None:
    """The node of each pull task a branch checkpoint runs next, in task order (by node
    name, then arrival); None for a checkpoint that is not a branch one, or has no pulls."""
    lineages = control.get("lineages")
    if spec is None or not lineages or not control.get("pull"):
        return None
    names: list[str] = []
    for name in sorted(lineages["arrivals"]):
        items = lineages["arrivals"][name]
        node = spec.nodes.get(name)
        if node is None or node.merge is not None or node.defer or len(items) == 1:
            runs = 1  # (one arrival, or a join: one run on the merge)
        else:  # one run per lineage; the same single point arriving twice runs once
            singles = {ids[0] for _, ids in items if len(ids) == 1}
            runs = len(singles) + sum(len(ids) != 1 for _, ids in items)
        names.extend([name] * runs)
    return names
