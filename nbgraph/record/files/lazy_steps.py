"""A loaded run's steps, each read from its line, checked and replayed when first asked for.

`Run.load` of a file whose step lines agree with its header (`step_lines`) reads the rest of
the file at once and gives its log a `LazySteps`: a `Sequence[StepLog]` that holds each
step's line of JSON and, the first time a step is asked for (by index, slice or iteration:
`run.effects`, `state_at`, `run.tree`, the inspector, `len` aside), reads and checks it and
every step before it not yet read, in order, as `Run.load` of a whole file does: the step's
shape (the run file's fast reader, or the schema), its names (it follows the step before,
its tasks ran nodes of the graph), then its replay through the reducers onto the state after
the step before, under the load's one replay budget. A step that fails is refused with a
`RunFileError` naming the file, the step's entry and what was expected, before any of its
data is returned; the steps before it stay readable.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, overload

from nbgraph.codec.classes import named_classes
from nbgraph.engine.facts import StepLog, collector_paused, initial_values, replay_step
from nbgraph.record.files.log_shape import (
    LogShapeError,
    check_step,
    read_plain_step,
    step_name_problems,
)
from nbgraph.record.files.step_decoding import decode_step
from nbgraph.record.files.step_lines import StepLines, parse_json
from nbgraph.record.replaying import replay_graph
from nbgraph.reducers import ReplayBudget, replay_budget

if TYPE_CHECKING:
    from nbgraph.blueprint import GraphSpec

__all__ = ["LazySteps", "Refusal", "StepLineError"]


class StepLineError(ValueError):
    """A step's line is not one JSON value (`json`), with a comma after it but for the last,
    or the lines are not as many as the header counts."""

    def __init__(self, message: str, json: bool = False) -> None:
        super().__init__(message)
        self.json = json


Refusal = Callable[[BaseException, int, bool], BaseException]
"""How a step that fails is named: `(error, entry, replaying) -> the error to raise`."""


class LazySteps(Sequence[StepLog]):
    """The steps of a run file, read, checked and replayed when first asked for (see the
    module); a read step is kept. Pickled or copied, it is the list of its steps.

    Args:
        lines: where the steps' lines of JSON are, one a line (all but the last ending in a
            comma), and how many (`step_lines.StepLines`).
        graph: the run's graph (its functions, or the stand-ins a file gives).
        functions: `graph` has the real functions (`graph=` was given to load).
        nodes: the names a task may run (`log_shape.known_nodes`).
        models: the classes saved values may come back as (as for `Run.load`).
        refuse: names a step's failure (`Refusal`).
    """

    def __init__(
        self,
        lines: StepLines,
        graph: GraphSpec,
        functions: bool,
        nodes: set[str],
        models: Iterable[type] | None,
        refuse: Refusal,
    ) -> None:
        self._data: bytes | None = lines.data
        self._count, self._start, self._end = lines.count, lines.start, lines.end
        self._at, self._strict = self._start, lines.strict
        # (the next step's line starts at `_at` in `_data`; the last ends at `_end`)
        self._steps: list[StepLog] = []  # read and checked, in order
        self._graph, self._functions, self._nodes = graph, functions, nodes
        self._models = None if models is None else list(models)
        self._refuse = refuse
        self._replay = replay_graph(graph)  # (the checking replay: as `Timeline`'s)
        self._values: dict[str, Any] | None = None  # the state after the last step read
        self._budget = ReplayBudget()  # (one for the whole file, as a whole load has)
        self._failed: BaseException | None = None
        self._lock = threading.RLock()

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, index: int) -> StepLog: ...

    @overload
    def __getitem__(self, index: slice) -> list[StepLog]: ...

    def __getitem__(self, index: int | slice) -> StepLog | list[StepLog]:
        if isinstance(index, slice):
            positions = range(*index.indices(self._count))
            if positions and max(positions[0], positions[-1]) >= len(self._steps):
                self._read_through(max(positions[0], positions[-1]))
            return self._steps[index]
        if index < 0:
            index += self._count
        if not 0 <= index < self._count:
            raise IndexError(f"step entry {index} out of range: the run has {self._count}")
        if index >= len(self._steps):
            self._read_through(index)
        return self._steps[index]

    def __iter__(self) -> Iterator[StepLog]:
        if len(self._steps) == self._count:
            return iter(self._steps)
        return self._walk()

    def _walk(self) -> Iterator[StepLog]:
        """Each step in order, read a growing batch at a time (a walk that stops early, at
        the first steps, reads few more than it shows)."""
        steps, batch = self._steps, 16
        for position in range(self._count):
            if position >= len(steps):
                self._read_through(min(position + batch, self._count) - 1)
                batch = min(batch * 2, 4096)
            yield steps[position]

    def __repr__(self) -> str:
        return f"<{self._count} steps of a run file, {len(self._steps)} read>"

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return list, (list(self),)

    @property
    def read(self) -> int:
        """How many steps (from the first) are read and checked so far."""
        return len(self._steps)

    def _read_through(self, index: int) -> None:
        """Read, check and replay every step up to entry `index` not read yet.

        Raises:
            the `refuse` callback's error, for the first step that fails (and again for it
            and any step after it, whenever they are asked for).
        """
        with self._lock:  # (one reader at a time: the steps are read in order)
            if self._failed is not None:
                raise self._failed
            try:
                self._read_steps(index)
            except Exception:
                raise
            except BaseException:  # (interrupted mid-step: read again from the first step)
                self._steps, self._at, self._values = [], self._start, None
                self._budget = ReplayBudget()
                raise
            if len(self._steps) == self._count:  # all read: the lines and the replay let go
                self._data = self._values = self._replay = None  # type: ignore[assignment]

    def _read_steps(self, index: int) -> None:
        steps = self._steps
        with collector_paused(), named_classes(self._models), replay_budget(self._budget):
            for position in range(len(steps), index + 1):
                replaying = False
                try:
                    step = self._decoded(position)
                    replaying = True
                    self._replayed(step)
                except Exception as error:
                    self._failed = self._refuse(error, position, replaying)
                    if self._failed is error:
                        raise
                    raise self._failed from error
                steps.append(step)

    def _decoded(self, position: int) -> StepLog:
        """Step entry `position` from its line: its shape, then its names, checked."""
        data = self._data
        assert data is not None and position == len(self._steps)  # (read in order)
        end, last = data.find(b"\n", self._at, self._end), position == self._count - 1
        if end < 0 and not last:  # (the lines are counted as they are read)
            raise StepLineError(f"the steps end here, where the header counts {self._count}")
        if end >= 0 and last:
            raise StepLineError(f"more steps follow, where the header counts {self._count}")
        end = self._end if last else end
        line, self._at = data[self._at : end], end + 1
        if position < self._count - 1:
            if not line.endswith(b","):
                raise StepLineError("its line should end with ',' (one step a line)")
            line = line[:-1]
        try:
            data = parse_json(line, self._strict)
        except ValueError as error:
            raise StepLineError(str(error), json=True) from None
        plain = b"$type" not in line and b"\\u" not in line  # (no tagged value in it)
        step = read_plain_step(data, self._graph.fields) if plain else None
        if step is None:
            check_step(data, position)
            step = decode_step(data, self._graph, self._functions, plain)
        previous = self._steps[-1].step if self._steps else None
        for problem in step_name_problems(data, position, previous, self._nodes):
            raise LogShapeError(problem)
        return step

    def _replayed(self, step: StepLog) -> None:
        """Replay `step` onto the state after the step before (the check `Run.load` of a
        whole file does through `run.effects`)."""
        values = self._values
        if values is None:
            values = initial_values(self._graph)
        self._values = replay_step(self._replay, values, step)
