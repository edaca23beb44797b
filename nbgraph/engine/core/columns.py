"""An engine run's steps kept as columns: a few growing arrays, no container per step.

`StepColumns` is the `Sequence[StepLog]` an engine run's `RunLog.steps` holds. The engine
appends each step as a live `StepLog`; once two newer steps follow it, it can no longer
change, and it is sealed: a flat step (see `_flat_task`) goes into arrays of numbers and one
list of written values, a rich one (resets, joins, a failed or interrupted task, sends...)
is kept as its object. `steps[i]` and iteration make equal `StepLog`/`Task` objects on demand
(the last few asked are cached). `docs/record.md` describes the columns.

The module-level readers (`step_numbers`, `applied_numbers`, `task_total`, `task_nodes`)
answer from the arrays for a `StepColumns` and from the objects for any other sequence.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, overload

from nbgraph.engine.core.runlog import StepLog
from nbgraph.engine.core.tasks import Task
from nbgraph.primitives import MISSING

if TYPE_CHECKING:
    from nbgraph.schema import FieldSpec

__all__ = ["LIVE", "StepColumns", "applied_numbers", "step_numbers", "task_nodes", "task_total"]

LIVE = 2
"""Steps kept as live objects at the end of the log: the engine may still change the last
one (`written`, `applied` after its commit; its tasks' interrupts) and reads the one before
(`outputs`, the stepper); older steps never change."""

_CACHED = 8  # steps made on demand kept, so `steps[i]` asked twice is the same object

_LISTED = object()  # ends a task shape's routes when the task's are a list, not a tuple


def _flat_task(task: Task) -> bool:
    """Whether a task holds nothing beyond its shape, times and written values."""
    return (
        task.arg is MISSING
        and task.error is None
        and not task.dropped
        and not task.interrupts
        and not task.held
        and not task.parent
        and not task.cached
        and not task.custom
        and not task.attempts
        and not task.from_cache
        and task.cache_key is None
        and not task.subruns
    )


def _task_shape(task: Task) -> tuple | None:
    """What a flat task shares with others of its kind (interned), or None if it is not flat:
    node, index, kind, triggers, routes (a tuple of names, ending with `_LISTED` when the
    task's are a list), routers' returns (names), the written fields' names."""
    if not _flat_task(task):
        return None
    routes = task.routes
    listed = type(routes) is list
    if listed or type(routes) is tuple:
        for route in routes:
            if type(route) is not str:
                return None  # (a Send: kept with its step's object)
    else:
        return None
    returned = task.returned
    for item in returned:
        if type(item) is not str:
            return None
    writes = task.writes
    if len(writes) == 1:
        names: tuple = (writes[0][0],)
    else:
        names = tuple([write[0] for write in writes])
    for name in names:
        if type(name) is not str:
            return None
    if listed:
        routes = (*routes, _LISTED)
    return (task.node, task.index, task.kind, task.triggers, routes, returned, names)


class StepColumns(Sequence):
    """A run's steps: sealed ones in columns (or kept as objects when rich), the last
    `LIVE` as the engine's own objects.

    Columns, one entry per sealed step (`position`): `numbers` (its step number),
    `task_starts` and `value_starts` (offsets into the task and value columns),
    `step_shapes` (an id in `step_table`: written, cleared, applied; -1 for a rich step,
    kept in `rich`). Per task: `task_shapes` (an id in `task_table`), `started`, `ended`.
    `values`: every flat task's written values, in order.
    """

    __slots__ = (
        "_cache", "_live", "_shape_ids", "_step_ids", "ended", "fields", "numbers", "rich",
        "started", "step_shapes", "step_table", "task_shapes", "task_starts", "task_table",
        "value_starts", "values",
    )  # fmt: skip

    def __init__(self, fields: Mapping[str, FieldSpec]) -> None:
        self.fields = fields
        self.numbers = array("q")
        self.task_starts = array("q")
        self.value_starts = array("q")
        self.step_shapes = array("i")
        self.task_shapes = array("i")
        self.started = array("d")
        self.ended = array("d")
        self.values: list[Any] = []
        self.task_table: list[tuple] = []
        self.step_table: list[tuple] = []
        self._shape_ids: dict[tuple, int] = {}
        self._step_ids: dict[tuple, int] = {}
        self.rich: dict[int, StepLog] = {}
        self._live: list[StepLog] = []
        self._cache: dict[int, StepLog] = {}

    # --- the one writer: the engine appends ----------------------------------------------

    def append(self, step: StepLog) -> None:
        """Add a step (live until `LIVE` newer steps follow it, then sealed)."""
        live = self._live
        live.append(step)
        if len(live) > LIVE:
            self._seal(live.pop(0))

    def extend(self, steps: Sequence[StepLog]) -> None:
        for step in steps:
            self.append(step)

    def seal(self) -> None:
        """Seal every live step (a finished run's record nobody appends to any more)."""
        live, self._live = self._live, []
        for step in live:
            self._seal(step)

    def _seal(self, step: StepLog) -> None:
        position = len(self.numbers)
        self.numbers.append(step.step)
        self.task_starts.append(len(self.task_shapes))
        self.value_starts.append(len(self.values))
        shapes = self._flat_shapes(step)
        key = (step.written, step.cleared, step.applied)
        ids = self._step_ids
        try:
            shape = ids.get(key)
        except TypeError:  # (not tuples: kept as its object)
            shapes = None
        if shapes is None:
            self.rich[position] = step
            self.step_shapes.append(-1)
            return
        if shape is None:
            shape = ids[key] = len(self.step_table)
            self.step_table.append(key)
        self.step_shapes.append(shape)
        task_shapes, started, ended, values = (
            self.task_shapes, self.started, self.ended, self.values,
        )  # fmt: skip
        for task, row_shape in zip(step.tasks, shapes, strict=True):
            task_shapes.append(row_shape)
            started.append(task.started)
            ended.append(task.ended)
            for write in task.writes:
                values.append(write[1])

    def _flat_shapes(self, step: StepLog) -> list[int] | None:
        """The task shape ids of a flat step, or None for a step kept as its object."""
        if (
            step.resets
            or step.merged
            or step.joins
            or step.heads
            or step.points
            or step.afters is not None
            or step.fields is not self.fields
            or type(step.tasks) is not list
        ):
            return None
        shapes, ids, table = [], self._shape_ids, self.task_table
        for task in step.tasks:
            if task.step != step.step:
                return None
            key = _task_shape(task)
            if key is None:
                return None
            try:
                shape = ids.get(key)
            except TypeError:  # (a trigger or a name that cannot be interned)
                return None
            if shape is None:
                shape = ids[key] = len(table)
                table.append(key)
            shapes.append(shape)
        return shapes

    # --- the Sequence --------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.numbers) + len(self._live)

    @overload
    def __getitem__(self, index: int) -> StepLog: ...

    @overload
    def __getitem__(self, index: slice) -> list[StepLog]: ...

    def __getitem__(self, index: int | slice) -> StepLog | list[StepLog]:
        if isinstance(index, slice):
            return [self._at(position) for position in range(*index.indices(len(self)))]
        size = len(self)
        position = index + size if index < 0 else index
        if not 0 <= position < size:
            raise IndexError(f"step position {index} out of range: the run has {size} steps")
        sealed = len(self.numbers)
        if position >= sealed:
            return self._live[position - sealed]
        cache = self._cache
        made = cache.get(position)
        if made is None:
            made = self._at(position)
            if len(cache) >= _CACHED:
                del cache[next(iter(cache))]
            cache[position] = made
        return made

    def __iter__(self) -> Iterator[StepLog]:
        position = 0
        while position < len(self):  # (the run may grow while a view reads it)
            yield self._at(position)
            position += 1

    def __reversed__(self) -> Iterator[StepLog]:
        for position in range(len(self) - 1, -1, -1):
            yield self._at(position)

    def __repr__(self) -> str:
        return f"StepColumns({len(self)} steps, {len(self.rich)} kept as objects)"

    def _at(self, position: int) -> StepLog:
        """The step at `position` (0 <= position < len): live, rich, cached or made."""
        sealed = len(self.numbers)
        if position >= sealed:
            return self._live[position - sealed]
        rich = self.rich.get(position)
        if rich is not None:
            return rich
        cached = self._cache.get(position)
        if cached is not None:
            return cached
        return self._made(position, sealed)

    def _made(self, position: int, sealed: int) -> StepLog:
        number = self.numbers[position]
        first = self.task_starts[position]
        last = self.task_starts[position + 1] if position + 1 < sealed else len(self.task_shapes)
        at = self.value_starts[position]
        values, table, started, ended = self.values, self.task_table, self.started, self.ended
        tasks = []
        for row in range(first, last):
            node, index, kind, triggers, routes, returned, names = table[self.task_shapes[row]]
            count = len(names)
            writes = list(zip(names, values[at : at + count], strict=True))
            task = Task(number, index, node, kind, MISSING, triggers, writes)
            at += count
            if routes and routes[-1] is _LISTED:
                task.routes = list(routes[:-1])
            elif routes:
                task.routes = routes
            task.started, task.ended, task.returned = started[row], ended[row], returned
            tasks.append(task)
        written, cleared, applied = self.step_table[self.step_shapes[position]]
        return StepLog(number, tasks, self.fields, written, (), cleared, (), applied)

    # --- columns for readers that want no objects ----------------------------------------

    def nodes_at(self, position: int) -> tuple[str, ...]:
        """The nodes of the step at `position`'s tasks, in write order (no task made)."""
        sealed = len(self.numbers)
        if position >= sealed or position in self.rich:
            return tuple([task.node for task in self._at(position).tasks])
        first = self.task_starts[position]
        last = self.task_starts[position + 1] if position + 1 < sealed else len(self.task_shapes)
        table, shapes = self.task_table, self.task_shapes
        return tuple([table[shapes[row]][0] for row in range(first, last)])

    def applied_at(self, position: int) -> bool:
        """Whether the step at `position` was applied (no step made)."""
        if position >= len(self.numbers) or position in self.rich:
            return self._at(position).applied
        return self.step_table[self.step_shapes[position]][2]

    def tasks_at(self, position: int) -> int:
        """How many tasks the step at `position` ran (no step made)."""
        sealed = len(self.numbers)
        if position >= sealed or position in self.rich:
            return len(self._at(position).tasks)
        last = self.task_starts[position + 1] if position + 1 < sealed else len(self.task_shapes)
        return last - self.task_starts[position]

    def number_at(self, position: int) -> int:
        if position >= len(self.numbers):
            return self._at(position).step
        return self.numbers[position]


# --- readers over any Sequence[StepLog] ----------------------------------------------------


def step_numbers(steps: Sequence[StepLog]) -> list[int]:
    """Every step's number, in order."""
    if isinstance(steps, StepColumns):
        return [steps.number_at(position) for position in range(len(steps))]
    return [step.step for step in steps]


def applied_numbers(steps: Sequence[StepLog]) -> list[int]:
    """The numbers of the steps that were applied, in order."""
    if isinstance(steps, StepColumns):
        return [
            steps.number_at(position)
            for position in range(len(steps))
            if steps.applied_at(position)
        ]
    return [step.step for step in steps if step.applied]


def task_total(steps: Sequence[StepLog], start: int = 0) -> int:
    """How many tasks the steps from position `start` on ran."""
    if isinstance(steps, StepColumns):
        return sum(steps.tasks_at(position) for position in range(start, len(steps)))
    return sum(len(steps[position].tasks) for position in range(start, len(steps)))


def task_nodes(steps: Sequence[StepLog], start: int = 0) -> Iterator[tuple[str, ...]]:
    """Per step from position `start` on, its tasks' nodes in write order."""
    if isinstance(steps, StepColumns):
        for position in range(start, len(steps)):
            yield steps.nodes_at(position)
        return
    for position in range(start, len(steps)):
        yield tuple([task.node for task in steps[position].tasks])
