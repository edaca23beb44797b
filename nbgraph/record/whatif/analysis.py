"""Who writes each field of a recorded run, and whether the order of concurrent writes matters.

`writers` says who writes each field and whether the order of their writes can matter;
`order_sensitivity` folds each step's concurrent writes in other task orders, re-folding the
recorded writes, never running a node. Every fold goes through `reduce_field`, the engine's own.
(`remerge`, the whole run through other reducers, is in `nbgraph.record.whatif.remerge`.)
"""

from __future__ import annotations

import itertools
import math
import numbers
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from nbgraph.engine.facts import (
    RunLog,
    StepLog,
    Task,
    applied_writes,
    field_spec,
    merge_unreduced,
    reduce_field,
)
from nbgraph.isolation import isolate
from nbgraph.primitives import MISSING
from nbgraph.record.compare.values import first_difference
from nbgraph.record.effects import is_conflict, same
from nbgraph.record.tables import frame
from nbgraph.record.timeline import Timeline
from nbgraph.schema import FieldSpec

if TYPE_CHECKING:
    import pandas as pd

    from nbgraph.blueprint import GraphSpec

__all__ = ["order_sensitivity", "writers"]

_WRITER_COLUMNS = (
    "field",
    "reducer",
    "writers",
    "steps",
    "writes",
    "concurrent_steps",
    "overwrite_conflict",
    "order_dependent",
    "order_basis",
)
_ORDER_COLUMNS = (
    "step",
    "field",
    "reducer",
    "orders_tried",
    "order_a",
    "result_a",
    "order_b",
    "result_b",
    "differs_at",
)

_NUMBER_TYPES = (int, float, complex, bool)
_Outcome = tuple[bool, Any]
"""A fold's result: `(True, value)`, or `(False, the exception it raised)`."""


# --- one step's concurrent writes, folded in other orders ------------------------------------


@dataclass(frozen=True, slots=True)
class _ConcurrentWrites:
    """One field written by two or more tasks of one step (`writers` in write order)."""

    step: StepLog
    field: str
    writers: tuple[Task, ...]


def _concurrent_writes(log: RunLog, *, applied_only: bool) -> list[_ConcurrentWrites]:
    """Every (step, field) that two or more tasks wrote, in step and first-write order."""
    found = []
    for step in log.steps:
        if step.step <= 0 or (applied_only and not step.applied):
            continue
        by_field: dict[str, list[Task]] = {}
        for task in step.tasks:
            if task.error is None:
                for name in dict.fromkeys(key for key, _ in task.writes):
                    by_field.setdefault(name, []).append(task)
        found += [
            _ConcurrentWrites(step, n, tuple(ts)) for n, ts in by_field.items() if len(ts) > 1
        ]
    return found


def _refoldable(group: _ConcurrentWrites) -> bool:
    """False where the record keeps only the value after (a reducer a file could not hold)."""
    return group.step.afters is None or group.field not in group.step.afters


def _orders(n: int, max_orders: int, rng: random.Random) -> list[tuple[int, ...]]:
    """Every order of `n` tasks if there are at most `max_orders`, else `max_orders` distinct
    ones drawn at random; the recorded order comes first either way."""
    recorded = tuple(range(n))
    if math.factorial(n) <= max_orders:
        return list(itertools.permutations(recorded))
    orders, seen = [recorded], {recorded}
    while len(orders) < max_orders:
        order = list(recorded)
        rng.shuffle(order)
        if tuple(order) not in seen:
            seen.add(tuple(order))
            orders.append(tuple(order))
    return orders


def _fold(
    graph: GraphSpec, group: _ConcurrentWrites, order: Sequence[int], start: dict[str, Any]
) -> _Outcome:
    """The field's value after its step, had its writers' tasks come in `order`."""
    reordered = iter([group.writers[i] for i in order])
    tasks = [next(reordered) if t in group.writers else t for t in group.step.tasks]
    try:
        merged: Any = ()
        if group.step.merged:  # the step's state_merger sees the tasks' updates in order
            per_task = [(t.node, t.writes) for t in tasks]
            merged = merge_unreduced(graph.state_merger, graph.fields, start, per_task)
        every = applied_writes(graph.fields, tasks, merged)
        writes = [(writer, value) for writer, name, value in every if name == group.field]
        spec = field_spec(graph.fields, group.field)
        old = isolate(start.get(group.field, MISSING))
        return True, reduce_field(spec, old, writes, group.step.step)
    except Exception as error:
        return False, error


def _same_outcome(a: _Outcome, b: _Outcome) -> bool:
    """Two values that are equal, or two errors of one type (their messages name the order)."""
    if a[0] and b[0]:
        return same(a[1], b[1])
    return not a[0] and not b[0] and type(a[1]) is type(b[1])


def _shown(outcome: _Outcome) -> Any:
    ok, value = outcome
    return isolate(value) if ok else f"error: {type(value).__name__}: {value}"


def _labels(tasks: Sequence[Task]) -> list[str]:
    """Node names; a node that ran more than once in the step (sends) gets `#0`, `#1`, ..."""
    counts, seen = Counter(t.node for t in tasks), Counter[str]()
    labels = []
    for task in tasks:
        if counts[task.node] == 1:
            labels.append(task.node)
        else:
            labels.append(f"{task.node}#{seen[task.node]}")
            seen[task.node] += 1
    return labels


@dataclass(slots=True)
class _OrderTrial:
    tried: int
    first: tuple[tuple[int, ...], _Outcome]
    other: tuple[tuple[int, ...], _Outcome] | None = None


def _try_orders(
    graph: GraphSpec,
    group: _ConcurrentWrites,
    start: dict[str, Any],
    max_orders: int,
    rng: random.Random,
    *,
    stop_early: bool = False,
) -> _OrderTrial:
    orders = _orders(len(group.writers), max_orders, rng)
    trial = _OrderTrial(1, (orders[0], _fold(graph, group, orders[0], start)))
    for order in orders[1:]:
        outcome = _fold(graph, group, order, start)
        trial.tried += 1
        if trial.other is None and not _same_outcome(trial.first[1], outcome):
            trial.other = (order, outcome)
            if stop_early:
                break
    return trial


class _Starts(dict):
    """The state at the start of each step, rebuilt once per step asked for."""

    def __init__(self, timeline: Timeline) -> None:
        super().__init__()
        self.timeline = timeline

    def __missing__(self, step: int) -> dict[str, Any]:
        self[step] = self.timeline.start_of(step)
        return self[step]


def order_sensitivity(
    log: RunLog, graph: GraphSpec, timeline: Timeline, max_orders: int = 120, seed: int = 0
) -> pd.DataFrame:
    """The fields whose value after a step depends on the order its tasks' writes came in.

    For each applied superstep, each field that two or more tasks wrote is folded again from
    the state at the start of the step, in every order of those tasks (each task's own writes
    stay in their order), or in `max_orders` distinct orders drawn with `random.Random(seed)`
    when there are more; the recorded order is always tried first. A fold that raises (a
    conflict, say) counts as a result, `"error: ..."`; errors of one type count as the same
    result. A value the record keeps only as "after" (a reducer a file could not hold) is
    skipped. Tasks of one node sent more than once in a step are told apart as `node#0`, ...

    Args:
        log, graph, timeline: the recorded run's log, graph and states (`RunRecord`'s).
        max_orders: how many orders to try at most per (step, field); at least 2.
        seed: seeds the random orders when not all of them are tried.

    Returns:
        One row per order-dependent (step, field): step, field, reducer, orders_tried,
        order_a (the recorded order, as node names), result_a, order_b (the first order
        that disagrees), result_b, differs_at (where result_a and result_b first differ:
        "index 1: 'a' vs 'b'", see `record.value_diff`).
    """
    if isinstance(max_orders, bool) or not isinstance(max_orders, int) or max_orders < 2:
        raise ValueError(f"max_orders must be an integer of at least 2, got {max_orders!r}.")
    rng, starts = random.Random(seed), _Starts(timeline)
    rows = []
    for group in _concurrent_writes(log, applied_only=True):
        if not _refoldable(group):
            continue
        trial = _try_orders(graph, group, starts[group.step.step], max_orders, rng)
        if trial.other is None:
            continue
        labels = _labels(group.writers)
        (order_a, a), (order_b, b) = trial.first, trial.other
        rows.append(
            (
                group.step.step,
                group.field,
                field_spec(graph.fields, group.field).reducer_name,
                trial.tried,
                [labels[i] for i in order_a],
                _shown(a),
                [labels[i] for i in order_b],
                _shown(b),
                first_difference(_shown(a), _shown(b)),
            )
        )
    return frame(rows, _ORDER_COLUMNS)


# --- who writes what ---------------------------------------------------------------------------


@dataclass(slots=True)
class _FieldWrites:
    writers: dict[str, None] = field(default_factory=dict)
    steps: dict[int, None] = field(default_factory=dict)
    writes: int = 0
    concurrent_steps: int = 0
    conflict: bool = False


def writers(log: RunLog, graph: GraphSpec, timeline: Timeline) -> pd.DataFrame:
    """Per field a node wrote, who wrote it, when, how often together, and whether order matters.

    The input (step 0) is not a writer: only fields a node wrote get a row, in first-write
    order. `overwrite_conflict` is True when one step's writes to the field are an error:
    two values for a field without a reducer (or two `Overwrite`s). `order_dependent` is
    decided by trying where the run has concurrent writes to the field (in any step, failed
    ones too): their task orders are folded as `order_sensitivity` does and it is True if two
    orders disagree (`order_basis` `"tried"`). Elsewhere it is a guess (`"guessed"`): False for
    a field without a reducer (two writes in one step are an error whichever comes first), for
    `max`/`min`, and for `add`/`sum`/`operator.add` on numbers (a numeric declared type, or
    every value written is a number); True for every other reducer, `merge` included (two
    writers of one key disagree).

    Returns:
        One row per field: field, reducer, writers (node names, first-write order), steps,
        writes (how many), concurrent_steps (steps where two or more tasks wrote it),
        overwrite_conflict, order_dependent, order_basis.
    """
    stats, written = _tally_writes(log, graph)
    tried = _tried_order_dependence(log, graph, timeline)
    rows = []
    for name, entry in stats.items():
        spec = field_spec(graph.fields, name)
        if name in tried:
            dependent, basis = tried[name], "tried"
        else:
            dependent, basis = _order_dependent(spec, written.get(name, ())), "guessed"
        rows.append(
            (
                name,
                spec.reducer_name,
                list(entry.writers),
                list(entry.steps),
                entry.writes,
                entry.concurrent_steps,
                entry.conflict,
                dependent,
                basis,
            )
        )
    return frame(rows, _WRITER_COLUMNS)


def _tally_writes(
    log: RunLog, graph: GraphSpec
) -> tuple[dict[str, _FieldWrites], dict[str, list[Any]]]:
    """Per field a node wrote, its `_FieldWrites`; and per field, every value written to it.

    Writes of tasks that raised are left out; the values include the input's (step 0).
    """
    fields = graph.fields
    stats: dict[str, _FieldWrites] = {}
    written: dict[str, list[Any]] = {}
    for step in log.steps:
        together: Counter[str] = Counter()
        for task in step.tasks:
            if task.error is not None:
                continue
            for name, value in task.writes:
                written.setdefault(name, []).append(value)
            if step.step <= 0:
                continue
            for name, _ in task.writes:
                entry = stats.setdefault(name, _FieldWrites())
                entry.writers[task.node] = entry.steps[step.step] = None
                entry.writes += 1
            together.update({name for name, _ in task.writes})
        for name, count in together.items():
            if count > 1:
                stats[name].concurrent_steps += 1
        for change in step.changes if step.step > 0 else ():
            entry = stats.get(change.field)
            if entry and is_conflict(field_spec(fields, change.field), list(change.writes)):
                entry.conflict = True
    return stats, written


def _tried_order_dependence(
    log: RunLog, graph: GraphSpec, timeline: Timeline, max_orders: int = 120
) -> dict[str, bool]:
    """Per field written concurrently, whether some step's task orders disagree."""
    dependent: dict[str, bool] = {}
    rng, starts = random.Random(0), _Starts(timeline)
    for group in _concurrent_writes(log, applied_only=False):
        if dependent.get(group.field) or not _refoldable(group):
            continue
        start = starts[group.step.step]
        trial = _try_orders(graph, group, start, max_orders, rng, stop_early=True)
        dependent[group.field] = trial.other is not None
    return dependent


def _order_dependent(spec: FieldSpec, written: Sequence[Any] = ()) -> bool:
    """Whether concurrent writes to this field could give another value in another order.

    False for a field without a reducer, for `max`/`min`, and for addition on numbers (the
    declared type, or else every value in `written`); True otherwise.

    >>> import operator
    >>> from nbgraph.reducers import get_reducer, reducer_from_callable
    >>> _order_dependent(FieldSpec("n", int, get_reducer("add")))
    False
    >>> _order_dependent(FieldSpec("log", list, reducer_from_callable(operator.add)))
    True
    """
    reducer = spec.reducer  # (what it is, it says: `Reducer.order_matters`)
    if reducer is None or not reducer.order_matters():
        return False
    if reducer.order_matters(numbers=True):
        return True
    return not (
        spec.type in _NUMBER_TYPES
        or (bool(written) and all(isinstance(v, numbers.Number) for v in written))
    )
