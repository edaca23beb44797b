"""The state at any point of a recorded run, rebuilt from its writes, with cached snapshots.

Snapshots are taken in one forward replay, as far as the states asked for need: a new one
whenever the writes replayed since the last snapshot outweigh the state itself. So the
snapshots cost about as much memory as the writes did, and rebuilding any state folds at
most about one state's worth of writes — never the whole history.
"""

from __future__ import annotations

from collections.abc import Iterator, Sized
from functools import cached_property
from typing import TYPE_CHECKING, Any

from nbgraph.engine.facts import (
    PLAIN_WRITES,
    RunLog,
    StepLog,
    apply_writes,
    common_steps,
    initial_values,
    replay_step,
    step_numbers,
)
from nbgraph.isolation import isolate
from nbgraph.record.effects import collector_paused
from nbgraph.record.replaying import replay_graph, set_plainly

if TYPE_CHECKING:
    from nbgraph.blueprint import GraphSpec

MIN_SNAPSHOT_COST = 64


_SIZED: dict[type, bool] = {}  # per type: whether a value's size is its len (an ABC check is slow)


def _size(value: Any) -> int:
    kind = type(value)
    sized = _SIZED.get(kind)
    if sized is None:
        sized = _SIZED[kind] = issubclass(kind, Sized) and not issubclass(kind, str)
    return len(value) if sized else 1


def _copy(values: dict[str, Any]) -> dict[str, Any]:
    return {name: isolate(value) for name, value in values.items()}


def _common(step: StepLog) -> bool:
    """Whether a step was applied with nothing reset, merged, pinned or cleared."""
    return step.applied and not (step.resets or step.cleared or step.merged or step.afters)


def replay(graph: GraphSpec, values: dict[str, Any], step: StepLog) -> dict[str, Any]:
    """`replay_step`: one recorded step applied to `values` (the caller's); the common step
    (applied, one task that is not a `@task` call, nothing reset, merged, pinned or
    cleared) takes that task's writes as they are, without grouping them."""
    tasks = step.tasks
    if len(tasks) == 1 and _common(step):
        task = tasks[0]
        if task.kind != "call":
            writes = task.writes
            if writes and not set_plainly(graph.fields, values, writes):
                apply_writes(graph.fields, values, writes, step.step, source=task.node)
            return values
    return replay_step(graph, values, step)


class Timeline:
    """Values after each step (and at the start of each step), rebuilt on demand."""

    def __init__(self, log: RunLog) -> None:
        self.log = log
        self.graph = replay_graph(log.graph)  # (folds a concatenated list in place)
        self._snapshots: list[tuple[int, dict[str, Any]]] | None = None
        self._cursor: tuple[int, dict[str, Any], int] = (-1, {}, 0)  # replayed up to here

    @cached_property
    def index(self) -> dict[int, int]:
        """Each step number's position in the log (made when first asked for: a run file's
        steps are read when first asked for, and a record that shows only tables never
        needs it)."""
        numbers = step_numbers(self.log.steps)  # (a run's columns: no step made)
        return dict(zip(numbers, range(len(numbers)), strict=True))

    def steps(self) -> list[int]:
        """The step numbers the run recorded (0 = the input applied)."""
        return list(self.index)

    def _position(self, step: int) -> int:
        steps = self.log.steps
        if "index" not in self.__dict__ and steps:  # (numbered up from the first, mostly:
            guess = step - steps[0].step  # a run file's steps are then read only so far)
            if 0 <= guess < len(steps) and steps[guess].step == step:
                return guess
        position = self.index.get(step)
        if position is None:
            raise ValueError(
                f"This run has no step {step}; its steps are {self.steps()} "
                "(-1 is the input as given)."
            )
        return position

    def _build(self, position: int | None = None) -> list[tuple[int, dict[str, Any]]]:
        """The snapshots, replayed as far as `position` (None: the whole run) and no further:
        the replay stops where the last question needed it and resumes from there."""
        end = len(self.log.steps) - 1 if position is None else position
        if self._snapshots is None:
            self._cursor = (-1, initial_values(self.log.graph), 0)
            self._snapshots = [(-1, _copy(self._cursor[1]))]
        if self._cursor[0] < end:
            with collector_paused():
                self._replay_until(end)
        return self._snapshots

    def _replay_until(self, end: int) -> None:
        graph, snapshots, steps = self.graph, self._snapshots, self.log.steps
        assert snapshots is not None
        done, values, cost = self._cursor
        fields, sized = graph.fields, _SIZED
        plain = {n for n, spec in fields.items() if spec.reducer is None}  # (`set_plainly`)
        rows = common_steps(steps, done + 1, end + 1)  # (a common step: no object made)
        for position, (number, node, writes, step) in enumerate(rows, done + 1):
            cost += 1
            if step is None:  # (`replay`, inline: `set_plainly` the common write of a loop)
                name, new = writes[0] if len(writes) == 1 else (None, None)
                if name in plain and type(new) in PLAIN_WRITES and name in values:
                    values[name] = new
                elif writes and not set_plainly(fields, values, writes):
                    apply_writes(fields, values, writes, number, source=node)
                for _, value in writes:
                    cost += len(value) if sized.get(type(value)) else _size(value)
            else:
                values = replay(graph, values, step)
                for task in step.tasks:
                    for _, value in task.writes:
                        cost += len(value) if sized.get(type(value)) else _size(value)
            # (the state's size only once the writes could outweigh it: it is at least 0)
            if cost >= MIN_SNAPSHOT_COST and cost >= sum(map(_size, values.values())):
                snapshots.append((position, _copy(values)))
                cost = 0
        self._cursor = (end, values, cost)

    def _replay_to(self, position: int) -> dict[str, Any]:
        """Values after the step at `position` in the log (owned by the caller)."""
        start, snapshot = -1, None
        for at, values in self._build(position):
            if at > position:
                break
            start, snapshot = at, values
        assert snapshot is not None
        values = _copy(snapshot)
        graph, fields = self.graph, self.graph.fields
        for number, node, writes, step in common_steps(self.log.steps, start + 1, position + 1):
            if step is not None:
                values = replay(graph, values, step)
            elif writes and not set_plainly(fields, values, writes):  # (`replay`, no object)
                apply_writes(fields, values, writes, number, source=node)
        return values

    def after(self, step: int) -> dict[str, Any]:
        """The full state after `step` (a copy the caller may change)."""
        position = self._position(step)
        return _copy(self._replay_to(position))

    def start_of(self, step: int) -> dict[str, Any]:
        """The state the tasks of `step` read: the previous step's, after `step`'s resets."""
        position = self._position(step)
        values = self._replay_to(position - 1) if position > 0 else initial_values(self.log.graph)
        for reset in self.log.steps[position].resets:
            values = _copy(reset.values)
        return _copy(values)

    def walk(self) -> Iterator[tuple[StepLog, dict[str, Any]]]:
        """Each step with the values after it, in order, in one forward replay: what reads
        every step (comparing two runs) costs one pass, not a replay per step.

        The values are the replay's own, changed by the next step: read them, and copy what
        you keep.
        """
        graph, values = self.graph, initial_values(self.log.graph)
        with collector_paused():
            for step in self.log.steps:
                values = replay(graph, values, step)
                yield step, values

    def step_log(self, step: int) -> StepLog:
        return self.log.steps[self._position(step)]

    @property
    def snapshot_count(self) -> int:
        """How many snapshots the cache holds (built on first use)."""
        return len(self._build())
