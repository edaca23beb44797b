"""The states of a branch-lineage run (`semantics="branches"`), rebuilt from its log.

The log keeps, for every task, the lineage point it read (`Task.parent`), and every join with
its base and the points it applied; `LineageStates` turns that back into `Lineage` points
(without values) and folds the recorded writes through the same merge rules the engine used.
States are cached sparsely (like `Timeline`): a snapshot whenever the writes replayed since
the last one outweigh the state, and at every join and reset.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from nbgraph.engine.facts import (
    Join,
    Lineage,
    RunLog,
    StepLog,
    apply_writes,
    common_base,
    delta_merge,
    group_writes,
    grow,
    initial_values,
    keep_live_ephemeral,
    rebuild_lineages,
)
from nbgraph.isolation import isolate
from nbgraph.primitives import START
from nbgraph.record.effects import collector_paused
from nbgraph.record.timeline import MIN_SNAPSHOT_COST, Timeline, _copy, _size

__all__ = ["BranchTimeline", "LineageStates", "input_state"]


class LineageStates:
    """The lineage points of a branch run, and the state at each."""

    def __init__(self, log: RunLog) -> None:
        self.log = log
        self.points: dict[str, Lineage] = {}
        self.steps: dict[str, int] = {}  # point id -> the step its delta belongs to
        self.joins: dict[str, Join] = {}
        self._cache: dict[str, dict[str, Any]] = {}
        self._build_points()

    def _add(self, point: Lineage, step: int) -> None:
        self.points[point.id] = point
        self.steps[point.id] = step

    def _build_points(self) -> None:
        for step in self.log.steps:
            for reset in step.resets:
                parent = self.points.get(reset.parent)
                writes = tuple(reset.values.items())
                self._add(Lineage(reset.id, "reset", parent, writes=writes), step.step)
            for join in step.joins:
                self._add_join(join)
            if step.points:  # a resumed run: the lineages restored from a checkpoint
                restored: dict[str, Lineage] = {}
                rebuild_lineages(self.log.graph, step.points, restored, step.step)
                for point in restored.values():
                    self._add(point, step.step)
                    self._cache[point.id] = point.values  # type: ignore[assignment]
                    point.values = None
            if step.tasks and step.tasks[0].kind == "input":
                parent = self.points.get(step.resets[-1].id) if step.resets else None
                root = Lineage(f"merge:{step.step}", "root", parent, writes=step.tasks[0].writes)
                self._add(root, step.step)
                continue
            if not step.applied:
                continue
            for task in step.tasks:
                parent = self.points[task.parent]
                point = Lineage(f"task:{task.id}", "task", parent, task.node, task.writes)
                self._add(point, step.step)
        if self.log.end is not None:
            self._add_join(self.log.end)
        for step in self.log.steps:  # a loaded run's pinned values
            for point_id, afters in (step.afters or {}).items():
                if point_id in self.points:
                    self.points[point_id].afters = afters

    def _add_join(self, join: Join) -> None:
        base = self.points.get(join.base)
        if join.values is None:
            applied = tuple(self.points[i] for i in join.applied)
            point = Lineage(join.id, "join", base, applied=applied)
        else:
            point = Lineage(join.id, "reset", base, writes=tuple(join.values.items()))
        self.joins[join.id] = join
        self._add(point, join.step)

    def point(self, point_id: str) -> Lineage:
        try:
            return self.points[point_id]
        except KeyError:
            raise KeyError(
                f"No lineage point {point_id!r} in this run; points look like 'merge:0', "
                f"'task:2:0:agent', 'join:3:join' or 'join:end'."
            ) from None

    # --- states ------------------------------------------------------------------------------

    def after(self, point_id: str) -> dict[str, Any]:
        """The state at a lineage point (after its task, join or reset); a fresh copy."""
        with collector_paused():
            return _copy(self._after(self.point(point_id)))

    def _after(self, point: Lineage) -> dict[str, Any]:
        """The state at `point` (the cache's own copy, or a new dict: do not change it)."""
        cached = self._cache.get(point.id)
        if cached is not None:
            return cached
        chain: list[Lineage] = []
        start: Lineage | None = point
        while start is not None and start.kind == "task" and start.id not in self._cache:
            chain.append(start)
            start = start.parent
        if start is None:
            values = initial_values(self.log.graph)
        elif start.id in self._cache:
            values = _copy(self._cache[start.id])
        else:
            values = self._cache[start.id] = self._compute(start)
            values = _copy(values)
        owned = set(values)
        cost = 0
        graph = self.log.graph
        for task in reversed(chain):
            grow(graph.fields, values, task, self.steps[task.id], owned, graph.ephemeral)
            cost += 1 + sum(_size(v) for _, v in task.writes)
            if task is point or cost >= max(MIN_SNAPSHOT_COST, _state_size(values)):
                self._cache[task.id] = _copy(values) if task is not point else values
                cost = 0
        return values

    def _compute(self, point: Lineage) -> dict[str, Any]:
        graph = self.log.graph
        if point.kind == "root":
            start = self._after(point.parent) if point.parent is not None else None
            return input_state(graph, point, start)
        if point.kind == "reset":
            return {k: isolate(v) for k, v in point.writes}
        join = self.joins[point.id]
        heads = [self.points[i] for i in join.parents]
        base = point.parent
        start = self._after(base) if base is not None else initial_values(graph)
        values, _ = delta_merge(graph.fields, start, heads, base, join.step)
        values.update({k: isolate(v) for k, v in (point.afters or {}).items()})
        keep_live_ephemeral(values, heads, self._after, graph.ephemeral)
        return values

    def merged(self, point_ids: tuple[str, ...], step: int) -> dict[str, Any]:
        """The delta merge of several lineages (the state if they met now); a fresh copy."""
        if len(point_ids) == 1:
            return self.after(point_ids[0])
        heads = [self.point(i) for i in point_ids]
        base = common_base(heads)
        start = self._after(base) if base is not None else initial_values(self.log.graph)
        with collector_paused():
            values, _ = delta_merge(self.log.graph.fields, start, heads, base, step)
            return _copy(values)


def input_state(graph: Any, root: Lineage, start: dict | None = None) -> dict[str, Any]:
    """The state after the input: its writes through the reducers (or pinned values), on
    the empty state or on `start` (a thread's state when new input continues it)."""
    values = initial_values(graph) if start is None else _copy(start)
    afters = root.afters or {}
    writes = [(START, k, v) for k, v in root.writes if k not in afters]
    apply_writes(graph.fields, values, group_writes(writes), 0)
    values.update({k: isolate(v) for k, v in afters.items()})
    return values


def _state_size(values: dict[str, Any]) -> int:
    return sum(_size(v) for v in values.values())


class BranchTimeline(Timeline):
    """`Timeline` for a branch run: the state after a step is the delta merge of the
    lineages alive after it (one lineage: its state), as if they met there."""

    def __init__(self, log: RunLog) -> None:
        super().__init__(log)
        self.lineages = LineageStates(log)

    def after(self, step: int) -> dict[str, Any]:
        log = self.step_log(step)  # raises ValueError naming the step
        if not log.applied:  # a failed step changed nothing
            return self.start_of(step)
        end = self.log.end
        if end is not None and step == self._last_applied():
            return self.lineages.after(end.id)
        if log.tasks and log.tasks[0].kind == "input":
            return self.lineages.after(f"merge:{step}")
        if not log.heads:
            return {}
        pinned = (log.afters or {}).get("heads")  # a loaded run that could not merge again
        if pinned is not None:
            return _copy(pinned)
        return self.lineages.merged(log.heads, step)

    def walk(self) -> Iterator[tuple[StepLog, dict[str, Any]]]:
        """Each step with the state after it (`after`: the lineages met there), in order."""
        for step in self.log.steps:
            yield step, self.after(step.step)

    def _last_applied(self) -> int:
        return max(s.step for s in self.log.steps if s.applied)

    def start_of(self, step: int) -> dict[str, Any]:
        position = self._position(step)
        if position == 0:
            return initial_values(self.log.graph)
        previous: StepLog = self.log.steps[position - 1]
        return self.after(previous.step)

    @property
    def snapshot_count(self) -> int:
        return len(self.lineages._cache)
