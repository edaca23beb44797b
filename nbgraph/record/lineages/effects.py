"""`Run.effects` for a branch-lineage run: each task's writes on its own lineage, and what every
join did.

A join's rows give each field's value in each branch, the strategy, the result, and which branch
won where they disagreed.

One forward pass over the log, holding the state of each lineage point only while something
still reads it; a point read once is continued in place, so a long loop costs what it wrote.
"""

from __future__ import annotations

from typing import Any

from nbgraph.engine.facts import (
    Join,
    RunLog,
    delta_merge,
    field_spec,
    group_writes,
    grow,
    initial_values,
    keep_live_ephemeral,
)
from nbgraph.isolation import isolate
from nbgraph.primitives import MISSING, START
from nbgraph.record.effects import (
    Effect,
    TableValues,
    cleared_effect,
    dropped_effects,
    merge_effect,
    reset_effects,
    same,
    write_effect,
)
from nbgraph.record.lineages.states import LineageStates, input_state

__all__ = ["lineage_effect_rows"]


def lineage_effect_rows(log: RunLog) -> list[Effect]:
    """Every effect of a branch run, in step order: resets, joins, then each task."""
    return _Pass(log).rows


class _Pass:
    def __init__(self, log: RunLog) -> None:
        self.log = log
        self.graph = log.graph
        self.points = LineageStates(log)
        self.values: dict[str, dict[str, Any]] = {}
        self.owned: dict[str, set[str]] = {}  # fields a point's dict alone holds
        self.readers = _reader_counts(log)
        self.rows: list[Effect] = []
        self.cells = TableValues()
        for step in log.steps:
            self._step(step)
        if log.end is not None:
            self._join(log.end)

    # --- the values of each point ---------------------------------------------------------------

    def _take(self, point_id: str) -> tuple[dict[str, Any], bool]:
        """A point's values for one reader: (values, whether the reader may change them)."""
        left = self.readers[point_id] = self.readers.get(point_id, 1) - 1
        values = self.values[point_id]
        if left <= 0:
            del self.values[point_id]
            return values, True
        self.owned[point_id] = set()  # shared from now on: whoever changes it copies first
        return values, False

    def _peek(self, point_id: str) -> dict[str, Any]:
        return self.values[point_id]

    # --- rows -------------------------------------------------------------------------------------

    def _step(self, step: Any) -> None:
        number = step.step
        for reset in step.resets:
            parent = self._peek(reset.parent) if reset.parent in self.values else {}
            new = {k: isolate(v) for k, v in reset.values.items()}
            writer = f"reset:{reset.node}"
            self.rows.extend(reset_effects(number, writer, reset.reason, parent, new, reset.id))
            if reset.parent in self.values:
                self._take(reset.parent)
            self.values[reset.id] = new
            self.owned[reset.id] = set(new)
        for point in step.points:  # a resumed run starts from its restored lineages
            self.values[point["id"]] = self.points.after(point["id"])
            self.owned[point["id"]] = set()
        for join in step.joins:
            self._join(join)
        if step.tasks and step.tasks[0].kind == "input":
            self._input(step)
            return
        for task in step.tasks:
            self._task(number, task, step.applied)

    def _input(self, step: Any) -> None:
        number, root_id = step.step, f"merge:{step.step}"
        root = self.points.point(root_id)
        start = None
        if root.parent is not None:
            start, _ = self._take(root.parent.id)
        before = {k: isolate(v) for k, v in (start or initial_values(self.graph)).items()}
        grouped = group_writes([(START, k, v) for k, v in step.tasks[0].writes])
        values = input_state(self.graph, root, start)
        for name, writes in grouped.items():
            before_value = before.get(name, MISSING)
            self._write_row(number, root_id, name, writes, before_value, values, True)
        self.values[root_id] = values
        self.owned[root_id] = set(values)

    def _task(self, number: int, task: Any, applied: bool) -> None:
        point_id = f"task:{task.id}"
        grouped = group_writes([(task.node, k, v) for k, v in task.writes])
        if not applied:
            parent = self._peek(task.parent) if task.parent in self.values else {}
            for name, writes in grouped.items():
                before = parent.get(name, MISSING)
                self._write_row(number, "", name, writes, before, None, False)
            self.rows.extend(dropped_effects(number, task, f"task:{task.id}"))
            return
        values, mine = self._take(task.parent)
        if not mine:
            values = dict(values)
        owned = self.owned.pop(task.parent, set()) if mine else set()
        befores = {name: values.get(name, MISSING) for name in grouped}
        befores = {k: self.cells.cell(k, v) for k, v in befores.items()}
        point = self.points.point(point_id)
        gone = {name: values[name] for name in self.graph.ephemeral if name in values}
        cleared = grow(self.graph.fields, values, point, number, owned, self.graph.ephemeral)
        for name, writes in grouped.items():
            self._write_row(number, point_id, name, writes, befores[name], values, True)
        self.rows.extend(cleared_effect(number, name, gone[name], point_id) for name in cleared)
        self.rows.extend(dropped_effects(number, task, f"task:{task.id}"))
        if self.readers.get(point_id, 0) > 0:
            self.values[point_id] = values
            self.owned[point_id] = owned

    def _write_row(
        self,
        number: int,
        point_id: str,
        name: str,
        writes: list[tuple[str, Any]],
        before: Any,
        values: dict[str, Any] | None,
        applied: bool,
    ) -> None:
        after = MISSING
        if values is not None and name in values:
            after = self.cells.cell(name, values[name])
        spec = field_spec(self.graph.fields, name)
        self.rows.append(write_effect(number, spec, before, writes, after, applied, point_id))

    def _join(self, join: Join) -> None:
        heads = [self._peek(i) for i in join.parents]
        base = self._peek(join.base) if join.base in self.values else None
        if join.values is not None:
            result = {k: isolate(v) for k, v in join.values.items()}
        else:
            start = base if base is not None else initial_values(self.graph)
            branches = [self.points.point(i) for i in join.parents]
            base_point = self.points.points.get(join.base)
            result, _ = delta_merge(self.graph.fields, start, branches, base_point, join.step)
            pinned = self.points.points[join.id].afters or {}
            result.update({k: isolate(v) for k, v in pinned.items()})
            keep_live_ephemeral(result, heads, lambda head: head, self.graph.ephemeral)
        names = [_writer(i) for i in join.parents]
        before_state = base if base is not None else {}
        fields = dict.fromkeys([*before_state, *(k for h in heads for k in h), *result])
        for name in fields:
            cell = self.cells.cell
            before = cell(name, before_state.get(name, MISSING))
            given = [cell(name, h.get(name, MISSING)) for h in heads]
            after = cell(name, result.get(name, MISSING))
            if all(same(v, before) for v in given) and same(after, before):
                continue
            disagreed = any(not same(v, given[0]) for v in given[1:])
            winner = ""
            if disagreed:  # one branch's value kept, another's lost: who won
                kept = [n for n, v in zip(names, given, strict=True) if same(v, after)]
                winner = kept[-1] if kept else ""
            given_by = [(n, v) for n, v in zip(names, given, strict=True)]
            recorded = join.values is not None
            row = merge_effect(join.step, name, join.strategy, before, given_by, after, recorded,
                               join.id, winner)  # fmt: skip
            self.rows.append(row)
        for point_id in {*join.parents, *([join.base] if join.base in self.values else [])}:
            if point_id in self.values:
                self._take(point_id)
        if self.readers.get(join.id, 0) > 0:
            self.values[join.id] = result
            self.owned[join.id] = set()


def _writer(point_id: str) -> str:
    """What a merge row calls a branch: the node of a task point, else the point's id."""
    if point_id.startswith("task:"):
        return point_id.rsplit(":", 1)[1]
    return point_id


def _reader_counts(log: RunLog) -> dict[str, int]:
    """How many times each lineage point is read later in the pass (tasks, joins, resets)."""
    readers: dict[str, int] = {}

    def read(point_id: str) -> None:
        if point_id:
            readers[point_id] = readers.get(point_id, 0) + 1

    for step in log.steps:
        for reset in step.resets:
            read(reset.parent)
        if step.tasks and step.tasks[0].kind == "input" and step.resets:
            read(step.resets[-1].id)  # new input on a thread: the root grows from its state
        for join in step.joins:
            for point_id in {*join.parents, join.base}:
                read(point_id)
        if step.step > 0:
            for task in step.tasks:
                read(task.parent)
    if log.end is not None:
        for point_id in {*log.end.parents, log.end.base}:
            read(point_id)
    return readers
