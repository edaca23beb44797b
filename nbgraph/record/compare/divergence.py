"""Where two runs part, step by step: `run.compare(other)`'s rows grouped by step, the steps
whose writes differ, and the first step where either happens (what a comparison view marks
and jumps to).

The rows are `RunRecord.compare`'s (the one comparison of states); what is added here is
what that table does not say: a step where the same node wrote something else although the
state after it came out equal (a write an overwrite or a reducer hid).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from nbgraph.record.compare.messages import compare_values

__all__ = [
    "Divergence",
    "RowsByStep",
    "divergence",
    "nodes_writing_differently",
    "rows_by_step",
    "writes_by_field",
    "writes_differ",
]

ROW_KINDS = frozenset({"tasks", "outcome", "update_state", "runs"})
"""The `what` of `compare` rows that are about a step or the run, not a field."""


@dataclass(frozen=True)
class Divergence:
    """Where two runs differ, by step of the first.

    Attributes:
        rows: `this.compare(other)`'s rows per step of `this` (a step with no entry, or
            an empty table: no rows).
        steps: the steps where the runs differ (tasks, outcome, a field after the step, or
            a node's writes), in order.
        writes: per step, the fields some node wrote differently in the two runs.
        last: the last step of `this`: where a node-aligned table's rows about the whole
            run (the outcome, how often a node ran, the final state) belong.
    """

    rows: Mapping[int, Any]
    steps: list[int]
    writes: dict[int, list[str]] = field(default_factory=dict)
    last: int | None = None

    @property
    def first(self) -> int | None:
        """The first step where the runs differ, or None when they do not."""
        return self.steps[0] if self.steps else None

    def step_rows(self, step: int) -> Any:
        """The compare rows of `step` (None: none): its own, and in a node-aligned table
        the rows about the whole run at the last step only."""
        rows = self.rows.get(step)
        if rows is not None and "occurrence" in rows.columns and step != self.last:
            rows = rows[rows["occurrence"] >= 0]
        return rows

    def fields(self, step: int) -> list[str]:
        """The fields that differ at `step`: after it, or in what a node wrote to them."""
        rows = self.step_rows(step)
        named = [] if rows is None else [w for w in rows["what"] if w not in ROW_KINDS]
        return list(dict.fromkeys([*named, *self.writes.get(step, [])]))


def divergence(this: Any, other: Any, frame: Any = None) -> Divergence:
    """Where `this` and `other` (two runs) differ, step by step; `frame`: their
    `this.compare(other)` when already made (else it is made here).

    >>> from nbgraph import START, StateGraph
    >>> def app(n):
    ...     return (StateGraph(dict).add_node("a", lambda s: {"x": 1})
    ...             .add_node("b", lambda s: {"x": n}).add_edge(START, "a").add_edge("a", "b")
    ...             .compile())
    >>> found = divergence(app(2).run({"x": 0}), app(3).run({"x": 0}))
    >>> found.first, found.steps, found.fields(2)
    (2, [2], ['x'])
    """
    from nbgraph.record.run import RunRecord

    if frame is None:
        frame = RunRecord.compare(this, other)
    rows = rows_by_step(this, frame)
    own = _steps_with_own_rows(this, frame)
    writes: dict[int, list[str]] = {}
    theirs = {s.step: s for s in other.log.steps}
    for step in this.log.steps:
        seen = theirs.get(step.step)
        if seen is not None and (differ := writes_differ(step, seen)):
            writes[step.step] = differ
    steps = sorted(set(own) | set(writes))
    if not steps and len(frame):  # only rows about the whole run (a node-aligned table)
        steps = [this.log.steps[-1].step]
    return Divergence(rows, steps, writes, this.log.steps[-1].step)


def writes_by_field(step: Any) -> dict[str, list[tuple[str, Any]]]:
    """A step's writes (its `StepLog`) per field: `(node, value)` in write order."""
    found: dict[str, list[tuple[str, Any]]] = {}
    for task in step.tasks:
        for name, value in task.writes:
            found.setdefault(name, []).append((task.node, value))
    return found


def writes_differ(step: Any, other: Any) -> list[str]:
    """The fields that the same nodes wrote differently in two steps (two `StepLog`s):
    each field's writes compared as (node, value) lists, messages by what they say (their
    ids are only ids). A field one step wrote and the other did not differs too."""
    mine, theirs = writes_by_field(step), writes_by_field(other)
    differ = []
    for name in [*mine, *(n for n in theirs if n not in mine)]:
        a, b = mine.get(name, []), theirs.get(name, [])
        if [n for n, _ in a] != [n for n, _ in b]:
            differ.append(name)
            continue
        found = compare_values([v for _, v in a], [v for _, v in b])
        if found is not None and found.said:
            differ.append(name)
    return differ


def nodes_writing_differently(step: Any, other: Any) -> set[str]:
    """The nodes that ran in both steps (two `StepLog`s) and wrote other fields or other
    values (messages compared by what they say)."""
    mine, theirs = _writes_by_node(step), _writes_by_node(other)
    differ = set()
    for node in mine.keys() & theirs.keys():
        a, b = mine[node], theirs[node]
        if a.keys() != b.keys() or any(
            (found := compare_values(a[name], b[name])) is not None and found.said for name in a
        ):
            differ.add(node)
    return differ


def _writes_by_node(step: Any) -> dict[str, dict[str, list[Any]]]:
    found: dict[str, dict[str, list[Any]]] = {}
    for task in step.tasks:
        for name, value in task.writes:
            found.setdefault(task.node, {}).setdefault(name, []).append(value)
    return found


class RowsByStep(Mapping):
    """`run.compare(other)`'s rows per step: positions found in one pass, each step's table
    made when it is asked for (a long run's thousands of differing steps cost no table
    each up front)."""

    def __init__(self, frame: Any, positions: dict[int, list[int]]) -> None:
        self.frame, self.positions = frame, positions

    def __getitem__(self, step: int) -> Any:
        return self.frame.iloc[self.positions[step]]

    def __iter__(self) -> Iterator[int]:
        return iter(self.positions)

    def __len__(self) -> int:
        return len(self.positions)


def rows_by_step(run: Any, frame: Any) -> RowsByStep:
    """`run.compare(other)`'s rows per step of `run`: a step-aligned table by its `step`; a
    node-aligned one (either run used branch lineages) by the step of the node's run each
    row is about, its whole-run rows (`occurrence` -1: the outcome, how often a node ran,
    the final state) at every step."""
    positions: dict[int, list[int]] = {}
    if "step" in frame.columns:
        for i, step in enumerate(frame["step"]):
            positions.setdefault(int(step), []).append(i)
        return RowsByStep(frame, positions)
    steps = _node_row_steps(run, frame)
    whole_run = [i for i, step in enumerate(steps) if step is None]
    for i, step in enumerate(steps):
        if step is not None:
            positions.setdefault(step, []).append(i)
    return RowsByStep(
        frame,
        {
            s: sorted(positions.get(s, []) + whole_run)
            for s in (x.step for x in run.log.steps)
            if s in positions or whole_run
        },
    )


def _node_row_steps(run: Any, frame: Any) -> list[int | None]:
    """Per row of a node-aligned table, the step of the node's run it is about (None: a
    row about the whole run)."""
    return [
        run.tree[ids[k]].step if k >= 0 and k < len(ids) else None
        for ids, k in zip(
            (run.tree.by_name.get(node, []) for node in frame["node"]),
            frame["occurrence"],
            strict=True,
        )
    ]


def _steps_with_own_rows(run: Any, frame: Any) -> list[int]:
    """The steps that have rows of their own (not only rows about the whole run)."""
    if "step" in frame.columns:
        return sorted({int(s) for s in frame["step"]})
    return sorted({s for s in _node_row_steps(run, frame) if s is not None})
