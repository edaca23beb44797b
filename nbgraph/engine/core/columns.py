"""An engine run's steps kept as columns: a few growing arrays, no container per step.

`StepColumns` is the `Sequence[StepLog]` an engine run's `RunLog.steps` holds. The engine
appends each step as a live `StepLog`; once two newer steps follow it, it can no longer
change, and it is sealed with a batch of others: a flat step (see `_flat_step`) goes into
arrays of numbers and one list of written values, a rich one (resets, joins, a failed or
interrupted task, sends...) is kept as its object. `steps[i]` and iteration make equal
`StepLog`/`Task` objects on demand (kept once made: a view's next pass reads the same).
`docs/record.md` describes the columns.

The module-level readers (`step_numbers`, `applied_numbers`, `last_applied`, `task_total`,
`task_nodes`, `task_tuples`) answer from the arrays for a `StepColumns` and from the objects
for any other sequence.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, overload

from nbgraph.engine.core.runlog import StepLog
from nbgraph.engine.core.tasks import Task
from nbgraph.primitives import MISSING

if TYPE_CHECKING:
    from nbgraph.schema import FieldSpec

__all__ = [
    "StepColumns",
    "applied_numbers",
    "last_applied",
    "step_numbers",
    "task_nodes",
    "task_total",
    "task_tuples",
]

_LIVE = 2  # the last steps never sealed: the engine may still change them
_BATCH = 64  # steps sealed a batch at a time (a short run: never); a power of two (`SEALS`)
SEALS = _BATCH - 1  # the engine seals at a step number `n` with `n & SEALS == SEALS`

_LISTED = object()  # ends a task shape's routes when the task's are a list, not a tuple


def _flat_step(
    step: StepLog, fields: Mapping, memo: dict, ids: dict, table: list, rows: list,
    times: list, values: list,
) -> int:  # fmt: skip
    """Append a flat step's task rows (a shape id to `rows`, started and ended to `times`,
    the written values to `values`) and return how many values it wrote; -1, nothing
    appended, if the step or one of its tasks holds more (resets, joins, an error,
    interrupts, a Send, attempts, custom chunks, subruns...). `memo`: per node and routes
    tuple, the last shape interned with them and what it was made of (a task of the same
    node and routes holding the same triggers, equal returns and names, has that shape: no
    shape key made or hashed)."""
    tasks = step.tasks
    if (step.resets or step.merged or step.joins or step.heads or step.points
            or step.afters is not None or step.fields is not fields
            or type(tasks) is not list):  # fmt: skip
        return -1
    number, added, written = step.step, 0, 0
    for task in tasks:  # (one frame a step: everything a task takes, inline)
        if (task.step != number or task.arg is not MISSING or task.error is not None
                or task.dropped or task.interrupts or task.held or task.parent or task.cached
                or task.custom or task.attempts or task.from_cache
                or task.cache_key is not None or task.subruns):  # fmt: skip
            break
        writes = task.writes
        count = len(writes)
        if count == 1:
            write = writes[0]
            names: tuple = (write[0],)
            written_values: Any = (write[1],)
        elif count == 2:
            write, other = writes
            names, written_values = (write[0], other[0]), (write[1], other[1])
        else:
            names = tuple([write[0] for write in writes])
            written_values = [write[1] for write in writes]
        try:
            last = memo.get((task.node, task.routes))
        except TypeError:  # (a list of routes: never in `memo`)
            last = None
        if (last is not None and last[0] is task.triggers and last[1] == task.returned
                and last[2] == names and last[3] == task.index
                and last[4] is task.kind):  # fmt: skip
            rows.append(last[5])
        else:
            shape = _interned(task, names, memo, ids, table)
            if shape < 0:
                break
            rows.append(shape)
        times += (task.started, task.ended)
        values += written_values
        written += count
        added += 1
    else:
        return written
    if added:  # (a task that is not flat after flat ones: take theirs back)
        del rows[-added:], times[-2 * added :]
        if written:
            del values[-written:]
    return -1


def _interned(task: Task, names: tuple, memo: dict, ids: dict, table: list) -> int:
    """The shape id of a flat task (a new one interned in `ids` and `table`), -1 if its
    routes or returns hold more than names. A task's shape: node, index, kind, triggers,
    routes (a tuple of names, ending with `_LISTED` when the task's are a list), routers'
    returns (names), the written fields' names."""
    triggers, routes, returned = task.triggers, task.routes, task.returned
    listed = type(routes) is list
    if not listed and type(routes) is not tuple:
        return -1
    for route in routes:
        if type(route) is not str:
            return -1  # (a Send: kept with its step's object)
    for item in returned:
        if type(item) is not str:
            return -1
    key = (task.node, task.index, task.kind, triggers, (*routes, _LISTED) if listed else routes,
           returned, names)  # fmt: skip
    try:
        shape = ids.get(key)
    except TypeError:  # (a trigger or a name that cannot be interned)
        return -1
    if shape is None:
        shape = ids[key] = len(table)
        table.append(key)
    if not listed and type(returned) is tuple and type(triggers) is tuple:
        # (tuples of names never change: the same objects, the same shape)
        memo[task.node, routes] = (triggers, returned, names, task.index, task.kind, shape)
    return shape


class _Columns:
    """The sealed steps' arrays (made at the first seal: a short run has none).

    Per sealed step (`position`), four entries of `steps`: its number, its first task row,
    its first value, its step shape (an id in `step_table`: written, cleared, applied; -1
    for a step kept as its object in `rich`). Per task row: `tasks` (a shape id in
    `task_table`) and two entries of `times` (started, ended). `values`: the flat tasks'
    written values, in order.
    """

    __slots__ = (
        "last", "memo", "rich", "step_ids", "step_table", "steps", "task_ids", "task_table",
        "tasks", "times", "values",
    )  # fmt: skip

    def __init__(self) -> None:
        self.steps = array("q")
        self.tasks = array("i")
        self.times = array("d")
        self.values: list[Any] = []
        self.task_table: list[tuple] = []
        self.task_ids: dict[tuple, int] = {}
        self.memo: dict[tuple, tuple] = {}  # per node and routes: a shape (`_flat_step`)
        self.step_table: list[tuple] = []
        self.step_ids: dict[tuple, int] = {}
        self.rich: dict[int, StepLog] = {}
        self.last: tuple = ((), (), None, -1)  # the last step shape: written, cleared, applied, id

    def seal(self, position: int, steps: list[StepLog], fields: Mapping, flat: bool) -> None:
        """Add finished steps from `position` on: each into the arrays if it is flat (and
        `flat`), else kept as its object. (Per step: one frame, `_flat_step`; the arrays
        are extended once a batch.)"""
        rich, values, memo, ids, table = self.rich, self.values, self.memo, self.task_ids, (
            self.task_table
        )  # fmt: skip
        numbers: list[int] = []
        rows: list[int] = []
        times: list[float] = []
        written, cleared, applied, shape = self.last
        step_ids = self.step_ids
        row_count, value_count = len(self.tasks), len(values)
        for step in steps:
            count = _flat_step(step, fields, memo, ids, table, rows, times, values) if flat else -1
            if count < 0:
                rich[position] = step
                numbers += (step.step, row_count, value_count, -1)
                position += 1
                continue
            if (
                step.written is not written
                or step.cleared is not cleared
                or step.applied != applied
            ):
                written, cleared, applied = key = (step.written, step.cleared, step.applied)
                shape = step_ids.get(key)
                if shape is None:
                    shape = self._step_shape(key)
            numbers += (step.step, row_count, value_count, shape)
            position += 1
            row_count += len(step.tasks)
            value_count += count
        self.last = (written, cleared, applied, shape)
        # (the rows first: a step's entry reads the next's, or them; `fromlist`: a list
        # copied in, where `extend` iterates it)
        self.tasks.fromlist(rows)
        self.times.fromlist(times)
        self.steps.fromlist(numbers)

    def _step_shape(self, key: tuple) -> int:
        """A new step shape's id: `key` (written, cleared, applied) interned."""
        shape = self.step_ids[key] = len(self.step_table)
        self.step_table.append(key)
        return shape

    def rows(self, position: int) -> range:
        """The task rows of the sealed step at `position` (up to the next step's first, or
        the last row: a step's entry is written before its rows)."""
        steps = self.steps
        last = steps[4 * position + 5] if len(steps) > 4 * position + 5 else len(self.tasks)
        return range(steps[4 * position + 1], last)

    def made(self, position: int, fields: Mapping[str, Any]) -> StepLog:
        """The flat step at `position`, as a new `StepLog` with new `Task`s."""
        number, _, at, shape = self.steps[4 * position : 4 * position + 4]
        values, table, times, shapes = self.values, self.task_table, self.times, self.tasks
        tasks = []
        for row in self.rows(position):
            node, index, kind, triggers, routes, returned, names = table[shapes[row]]
            count = len(names)
            writes = list(zip(names, values[at : at + count], strict=True))
            at += count
            if routes and routes[-1] is _LISTED:
                routes = list(routes[:-1])
            tasks.append(  # (every field in order, positionally: one call, no attribute set)
                Task(number, index, node, kind, MISSING, triggers, writes, routes, (), None,
                     times[2 * row], times[2 * row + 1], (), False, "", False, (), (), False,
                     None, (), returned)
            )  # fmt: skip
        written, cleared, applied = self.step_table[shape]
        return StepLog(number, tasks, fields, written, (), cleared, (), applied)


class StepColumns(Sequence):
    """A run's steps: sealed ones in columns (`_Columns`; or kept as objects when rich),
    the newer ones as the engine's own objects. The engine may still change the last step
    (`written` and `applied` after its commit; its tasks' interrupts) and reads the one
    before (`outputs`, the stepper); older steps never change. They are sealed a batch at a
    time (`_BATCH`), and when the run stops (`settle`).

    The engine is its one writer; a view may read it from another thread while the run goes
    (`app.run(..., live=True)`): `_state`, `(sealed, live)`, is swapped in one assignment
    once a batch's columns are written, so a reader sees every position in one place.
    """

    __slots__ = ("_made", "_state", "_upto", "append", "columns", "fields")
    sealing = True  # False: every step kept as its object (tests compare the two)

    def __init__(self, fields: Mapping[str, FieldSpec]) -> None:
        self.fields = fields
        self.columns: _Columns | None = None  # made at the first seal (a short run: none)
        # the number of steps sealed (positions 0 .. sealed - 1), and the steps after them
        # as the engine's objects
        live: list[StepLog] = []
        self._state: tuple[int, list[StepLog]] = (0, live)
        # add a step: the live list's own `append` (a built-in call, no frame); the engine
        # seals every `_BATCH` step numbers (`RunLoop.open_step`), and `extend` as it goes
        self.append = live.append
        # the sealed steps made for a reader, by position (None: not made), kept: a view's
        # next pass reads the same objects, and a run nobody reads keeps none
        self._made: list[StepLog | None] | None = None
        self._upto = 0  # every position below it is made (`_filled`)

    def __getstate__(self) -> tuple:
        return (self.fields, self.columns, self._state, self._made, self._upto)

    def __setstate__(self, state: tuple) -> None:  # (a copy's `append` adds to its own list)
        self.fields, self.columns, self._state, self._made, self._upto = state
        self.append = self._state[1].append

    @property
    def sealed(self) -> int:
        """How many steps are sealed (positions 0 .. sealed - 1)."""
        return self._state[0]

    # --- the one writer: the engine appends ----------------------------------------------

    def seal(self, count: int | None = None) -> None:
        """Seal the `count` oldest live steps (None: all but the last `_LIVE`, the ones the
        engine may still change)."""
        sealed, live = self._state
        count = len(live) - _LIVE if count is None else count
        if count <= 0:
            return
        columns = self.columns
        if columns is None:
            columns = self.columns = _Columns()
        columns.seal(sealed, live[:count], self.fields, self.sealing)
        live = live[count:]
        self._state = (sealed + count, live)  # (published: see the class)
        self.append = live.append

    def settle(self) -> None:
        """The run ended (nothing left to run: `RunLoop.next_tasks`): seal all but the last
        `_LIVE` steps, if it has columns already (a short run keeps its few steps as they
        are), and drop the shape memo (a resumed run makes it again)."""
        columns = self.columns
        if columns is not None:
            self.seal()
            columns.memo = {}

    def extend(self, steps: Iterable[StepLog]) -> None:
        for step in steps:
            self.append(step)
            if len(self._state[1]) > _BATCH:
                self.seal()

    # --- the Sequence --------------------------------------------------------------------

    def __len__(self) -> int:
        sealed, live = self._state
        return sealed + len(live)

    @overload
    def __getitem__(self, index: int) -> StepLog: ...

    @overload
    def __getitem__(self, index: slice) -> list[StepLog]: ...

    def __getitem__(self, index: int | slice) -> StepLog | list[StepLog]:
        if isinstance(index, slice):
            sealed, live = self._state
            positions = range(*index.indices(sealed + len(live)))
            made = self._filled(sealed)  # (a slice of the steps: most of them, mostly)
            return [made[p] if p < sealed else live[p - sealed] for p in positions]  # type: ignore[misc]
        size = len(self)
        position = index + size if index < 0 else index
        if not 0 <= position < size:
            raise IndexError(f"step position {index} out of range: the run has {size} steps")
        return self._at(position)

    def __iter__(self) -> Iterator[StepLog]:
        position = 0
        while True:  # (the run may grow, and seal, while a view reads it)
            sealed, live = self._state
            if position < sealed:
                yield from self._filled(sealed)[position:sealed]  # type: ignore[misc]
                position = sealed
                continue
            if position >= sealed + len(live):
                return
            yield live[position - sealed]
            position += 1

    def __reversed__(self) -> Iterator[StepLog]:
        sealed, live = self._state
        yield from reversed(live)
        yield from reversed(self._filled(sealed)[:sealed])  # type: ignore[arg-type]

    def __repr__(self) -> str:
        rich = len(self.columns.rich) if self.columns is not None else 0
        return f"StepColumns({len(self)} steps, {rich} kept as objects)"

    def _at(self, position: int) -> StepLog:
        """The step at `position` (0 <= position < len): live, rich, made before or made."""
        sealed, live = self._state
        if position >= sealed:
            return live[position - sealed]
        columns: _Columns = self.columns  # type: ignore[assignment]
        rich = columns.rich.get(position)
        if rich is not None:
            return rich
        made = self._made
        if made is None:
            made = self._made = []
        if position >= len(made):
            made.extend([None] * (sealed - len(made)))
        step = made[position]
        if step is None:
            step = made[position] = columns.made(position, self.fields)
        return step

    def _filled(self, sealed: int) -> list[StepLog | None]:
        """The made steps, every position below `sealed` made (a whole pass: one loop)."""
        made = self._made
        if made is None:
            made = self._made = []
        upto = self._upto
        if upto >= sealed:
            return made
        if len(made) < sealed:
            made.extend([None] * (sealed - len(made)))
        columns: _Columns = self.columns  # type: ignore[assignment]
        rich, make, fields = columns.rich, columns.made, self.fields
        for position in range(upto, sealed):
            if made[position] is None:
                step = rich.get(position)
                made[position] = step if step is not None else make(position, fields)
        self._upto = sealed
        return made

    # --- columns for readers that want no objects ----------------------------------------

    def _flat(self, position: int) -> _Columns | None:
        """The columns holding the step at `position`, None if it is an object."""
        columns = self.columns
        if position >= self.sealed or columns is None or position in columns.rich:
            return None
        return columns

    def nodes_at(self, position: int) -> tuple[str, ...]:
        """The nodes of the step at `position`'s tasks, in write order (no task made)."""
        columns = self._flat(position)
        if columns is None:
            return tuple([task.node for task in self._at(position).tasks])
        table, shapes = columns.task_table, columns.tasks
        return tuple([table[shapes[row]][0] for row in columns.rows(position)])

    def applied_at(self, position: int) -> bool:
        """Whether the step at `position` was applied (no step made)."""
        columns = self._flat(position)
        if columns is None:
            return self._at(position).applied
        return columns.step_table[columns.steps[4 * position + 3]][2]

    def tasks_at(self, position: int) -> int:
        """How many tasks the step at `position` ran (no step made)."""
        columns = self._flat(position)
        if columns is None:
            return len(self._at(position).tasks)
        return len(columns.rows(position))

    def numbers(self) -> list[int]:
        """Every step's number, in order (the sealed ones read from their column at once)."""
        sealed, live = self._state
        numbers = self.columns.steps[0 : 4 * sealed : 4].tolist() if self.columns else []
        return [*numbers, *(step.step for step in live)]

    def number_at(self, position: int) -> int:
        """The step number of the step at `position` (no step made)."""
        if position >= self.sealed:
            return self._at(position).step
        return self.columns.steps[4 * position]


# --- readers over any Sequence[StepLog] ----------------------------------------------------


def step_numbers(steps: Sequence[StepLog]) -> list[int]:
    """Every step's number, in order."""
    if isinstance(steps, StepColumns):
        return steps.numbers()
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


def last_applied(steps: Sequence[StepLog]) -> int:
    """The number of the last step that was applied, -1 if none was (read from the end)."""
    columns = steps if isinstance(steps, StepColumns) else None
    for position in range(len(steps) - 1, -1, -1):
        if columns is not None:
            if columns.applied_at(position):
                return columns.number_at(position)
        elif steps[position].applied:
            return steps[position].step
    return -1


def task_total(steps: Sequence[StepLog], start: int = 0) -> int:
    """How many tasks the steps from position `start` on ran."""
    if isinstance(steps, StepColumns):
        return sum(steps.tasks_at(position) for position in range(start, len(steps)))
    return sum(len(steps[position].tasks) for position in range(start, len(steps)))


def task_tuples(steps: Sequence[StepLog], start: int = 0) -> Iterator[tuple]:
    """Per task of the steps from position `start` on, in order: `(step, index, node, kind,
    triggers, fields written, routes, returned, started, ended, task)`. `task` is the `Task`
    itself for a step kept as objects (read its error, attempts, subruns... from it), None
    for a flat row: it has none of those (no error, no attempts, no subruns, no interrupts,
    no custom chunks, nothing dropped) and no `Task` is made for it."""
    columns = steps.columns if isinstance(steps, StepColumns) else None
    for position in range(start, len(steps)):
        flat = steps._flat(position) if columns is not None else None  # type: ignore[union-attr]
        if flat is None:
            for task in steps[position].tasks:
                yield (task.step, task.index, task.node, task.kind, task.triggers,
                       tuple([name for name, _ in task.writes]), task.routes, task.returned,
                       task.started, task.ended, task)  # fmt: skip
            continue
        number, table, shapes, times = flat.steps[4 * position], flat.task_table, flat.tasks, (
            flat.times
        )  # fmt: skip
        for row in flat.rows(position):
            node, index, kind, triggers, routes, returned, names = table[shapes[row]]
            if routes and routes[-1] is _LISTED:
                routes = list(routes[:-1])
            yield (number, index, node, kind, triggers, names, routes, returned,
                   times[2 * row], times[2 * row + 1], None)  # fmt: skip


def task_nodes(steps: Sequence[StepLog], start: int = 0) -> Iterator[tuple[str, ...]]:
    """Per step from position `start` on, its tasks' nodes in write order."""
    if isinstance(steps, StepColumns):
        for position in range(start, len(steps)):
            yield steps.nodes_at(position)
        return
    for position in range(start, len(steps)):
        yield tuple([task.node for task in steps[position].tasks])
