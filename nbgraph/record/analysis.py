"""What-if questions about a recorded run, answered by re-folding its writes, never its nodes.

`writers` says who writes each field and whether the order of their writes can matter;
`order_sensitivity` folds each step's concurrent writes in other task orders; `remerge`
replays the whole run through other reducers and says where it would have gone another way.
Every fold goes through `reduce_field`, the engine's own.
"""

from __future__ import annotations

import dataclasses
import inspect
import itertools
import math
import numbers
import operator
import random
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from nbgraph import reducers as builtin
from nbgraph.engine.loop import DEFAULT_RECURSION_LIMIT
from nbgraph.engine.runlog import RunLog, StepLog, initial_values, replay_step
from nbgraph.engine.tasks import Task, absorb_route, router_state
from nbgraph.engine.view import isolate
from nbgraph.engine.writes import (
    applied_writes,
    clear_ephemeral,
    field_spec,
    group_writes,
    merge_unreduced,
    reduce_field,
)
from nbgraph.record.effects import is_conflict, same
from nbgraph.record.run import Run, _frame
from nbgraph.reducers import (
    Reducer,
    check_reducer_callable,
    get_reducer,
    reducer_from_callable,
    registered_names,
)
from nbgraph.schema import FieldSpec, _empty_factory
from nbgraph.types import MISSING

if TYPE_CHECKING:
    import pandas as pd

    from nbgraph.graph import GraphSpec

WRITER_COLUMNS = (
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
ORDER_COLUMNS = (
    "step",
    "field",
    "reducer",
    "orders_tried",
    "order_a",
    "result_a",
    "order_b",
    "result_b",
)
ROUTING_COLUMNS = ("step", "node", "recorded", "would_route")

_ORDER_FREE = (builtin.maximum, builtin.minimum, max, min)
_ADDITION = (builtin.add, operator.add)
_NUMBER_TYPES = (int, float, complex, bool)
Outcome = tuple[bool, Any]
"""A fold's result: `(True, value)`, or `(False, the exception it raised)`."""


# --- one step's concurrent writes, folded in other orders ------------------------------------


@dataclass(frozen=True, slots=True)
class ConcurrentWrites:
    """One field written by two or more tasks of one step (`writers` in write order)."""

    step: StepLog
    field: str
    writers: tuple[Task, ...]


def concurrent_writes(log: RunLog, *, applied_only: bool) -> list[ConcurrentWrites]:
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
        found += [ConcurrentWrites(step, n, tuple(ts)) for n, ts in by_field.items() if len(ts) > 1]
    return found


def _refoldable(group: ConcurrentWrites) -> bool:
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
    graph: GraphSpec, group: ConcurrentWrites, order: Sequence[int], start: dict[str, Any]
) -> Outcome:
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


def _same_outcome(a: Outcome, b: Outcome) -> bool:
    """Two values that are equal, or two errors of one type (their messages name the order)."""
    if a[0] and b[0]:
        return same(a[1], b[1])
    return not a[0] and not b[0] and type(a[1]) is type(b[1])


def _shown(outcome: Outcome) -> Any:
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
    first: tuple[tuple[int, ...], Outcome]
    other: tuple[tuple[int, ...], Outcome] | None = None


def _try_orders(
    graph: GraphSpec,
    group: ConcurrentWrites,
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

    def __init__(self, run: Run) -> None:
        super().__init__()
        self.run = run

    def __missing__(self, step: int) -> dict[str, Any]:
        self[step] = self.run.timeline.start_of(step)
        return self[step]


def order_sensitivity(run: Run, max_orders: int = 120, seed: int = 0) -> pd.DataFrame:
    """The fields whose value after a step depends on the order its tasks' writes came in.

    For each applied superstep, each field that two or more tasks wrote is folded again from
    the state at the start of the step, in every order of those tasks (each task's own writes
    stay in their order), or in `max_orders` distinct orders drawn with `random.Random(seed)`
    when there are more; the recorded order is always tried first. A fold that raises (a
    conflict, say) counts as a result, `"error: ..."`; errors of one type count as the same
    result. A value the record keeps only as "after" (a reducer a file could not hold) is
    skipped. Tasks of one node sent more than once in a step are told apart as `node#0`, ...

    Args:
        run: the recorded run.
        max_orders: how many orders to try at most per (step, field); at least 2.
        seed: seeds the random orders when not all of them are tried.

    Returns:
        One row per order-dependent (step, field): step, field, reducer, orders_tried,
        order_a (the recorded order, as node names), result_a, order_b (the first order
        that disagrees), result_b.
    """
    if isinstance(max_orders, bool) or not isinstance(max_orders, int) or max_orders < 2:
        raise ValueError(f"max_orders must be an integer of at least 2, got {max_orders!r}.")
    graph, rng, starts = run.graph, random.Random(seed), _Starts(run)
    rows = []
    for group in concurrent_writes(run.log, applied_only=True):
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
            )
        )
    return _frame(rows, ORDER_COLUMNS)


# --- who writes what ---------------------------------------------------------------------------


@dataclass(slots=True)
class _FieldWrites:
    writers: dict[str, None] = field(default_factory=dict)
    steps: dict[int, None] = field(default_factory=dict)
    writes: int = 0
    concurrent_steps: int = 0
    conflict: bool = False


def writers(run: Run) -> pd.DataFrame:
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
    graph = run.graph
    stats: dict[str, _FieldWrites] = {}
    written: dict[str, list[Any]] = {}
    for step in run.log.steps:
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
            if entry and is_conflict(field_spec(graph.fields, change.field), list(change.writes)):
                entry.conflict = True
    tried = _tried_order_dependence(run)
    rows = []
    for name, entry in stats.items():
        spec = field_spec(graph.fields, name)
        if name in tried:
            dependent, basis = tried[name], "tried"
        else:
            dependent, basis = guess_order_dependent(spec, written.get(name, ())), "guessed"
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
    return _frame(rows, WRITER_COLUMNS)


def _tried_order_dependence(run: Run, max_orders: int = 120) -> dict[str, bool]:
    """Per field written concurrently, whether some step's task orders disagree."""
    dependent: dict[str, bool] = {}
    rng, starts = random.Random(0), _Starts(run)
    for group in concurrent_writes(run.log, applied_only=False):
        if dependent.get(group.field) or not _refoldable(group):
            continue
        start = starts[group.step.step]
        trial = _try_orders(run.graph, group, start, max_orders, rng, stop_early=True)
        dependent[group.field] = trial.other is not None
    return dependent


def guess_order_dependent(spec: FieldSpec, written: Sequence[Any] = ()) -> bool:
    """Whether concurrent writes to this field could give another value in another order.

    False for a field without a reducer, for `max`/`min`, and for addition on numbers (the
    declared type, or else every value in `written`); True otherwise.

    >>> guess_order_dependent(FieldSpec("n", int, get_reducer("add")))
    False
    >>> guess_order_dependent(FieldSpec("log", list, reducer_from_callable(operator.add)))
    True
    """
    reducer = spec.reducer
    if reducer is None or any(reducer.fn is fn for fn in _ORDER_FREE):
        return False
    if any(reducer.fn is fn for fn in _ADDITION):
        numeric = spec.type in _NUMBER_TYPES or (
            bool(written) and all(isinstance(v, numbers.Number) for v in written)
        )
        return not numeric
    return True


# --- the same writes through other reducers ------------------------------------------------------


class RemergedRun(Run):
    """A run rebuilt from another run's recorded writes under other reducers (`Run.remerge`).

    Attributes:
        source: the run whose writes were replayed.
        reducers: per field changed, `(old reducer name, new reducer name)`.
        remerge_notes: what the replay shows and what it cannot know, in plain English.
    """

    def __init__(self, log: RunLog, source: Run, reducers: dict[str, tuple[str, str]]) -> None:
        super().__init__(log)
        self.source = source
        self.reducers = reducers
        self.remerge_notes: list[str] = []
        self._routing_rows: list[tuple] = []

    def __repr__(self) -> str:
        changed = ", ".join(f"{n}: {a} -> {b}" for n, (a, b) in self.reducers.items())
        return f"{super().__repr__()[:-1]}, re-merged with {changed or 'the same reducers'}>"

    @cached_property
    def routing_changes(self) -> pd.DataFrame:
        """Where a router would have sent the run elsewhere: step, node, recorded, would_route.

        `recorded` is the task's recorded routes (Command gotos, then router choices; static
        edges are not routes); `would_route` is the same with the routers called again.
        """
        return _frame(self._routing_rows, ROUTING_COLUMNS)


def remerge(run: Run, reducers: Mapping[str, Any]) -> RemergedRun:
    """The run as it would have been had some fields other reducers; no node runs again.

    Each recorded step's writes are folded again through the new reducers. The first step
    where that raises (two writes to a field now without a reducer, say) fails the new run,
    which stops there. Then each router whose view differs (the step's starting state plus its
    own node's writes) is called again; where it would choose differently, `routing_changes`
    has a row. Nodes that ran on a state that differs are named in `remerge_notes`: their
    writes were replayed as recorded, though they might have written something else.

    Args:
        run: the recorded run.
        reducers: `{field: reducer}`, each a registered name, a two-argument callable, or
            `"overwrite"` (or None): no reducer, one write per step, no starting value.

    Returns:
        A `RemergedRun` (a `Run`) with `remerge_notes` and `routing_changes`.

    Raises:
        ValueError: naming each unknown field, unknown reducer name or unusable callable.
    """
    fields, changed = _swap_reducers(run, reducers)
    graph = dataclasses.replace(run.graph, fields=fields)
    new = RemergedRun(_replay(run.log, graph, changed), run, changed)
    new.remerge_notes, new._routing_rows = _consequences(run, new)
    return new


def _swap_reducers(
    run: Run, reducers: Mapping[str, Any]
) -> tuple[dict[str, FieldSpec], dict[str, tuple[str, str]]]:
    if not isinstance(reducers, Mapping):
        raise TypeError(
            f"reducers must be a dict of field -> reducer, got {type(reducers).__name__}."
        )
    graph = run.graph
    written = {name for task in run.log.tasks() for name, _ in task.writes}
    fields, changed, problems = dict(graph.fields), {}, []
    for name, given in reducers.items():
        spec = graph.fields.get(name)
        if spec is None and graph.open_schema and name in written:
            spec = FieldSpec(name)
        if spec is None:
            known = [n for n, f in graph.fields.items() if not f.managed]
            known += sorted(written - set(known)) if graph.open_schema else []
            problems.append(f"{name!r} is not a field of this run's state; fields: {known}")
            continue
        if spec.managed:
            problems.append(f"{name!r} is managed by the engine and takes no writes")
            continue
        reducer, problem = _reducer(given)
        if problem:
            problems.append(f"field {name!r}: {problem}")
            continue
        initial = None if reducer is None else spec.initial or _empty_factory(spec.type)
        fields[name] = dataclasses.replace(spec, reducer=reducer, initial=initial)
        changed[name] = (spec.reducer_name, fields[name].reducer_name)
    if problems:
        raise ValueError(
            "remerge() cannot use these reducers:\n" + "\n".join(f"  - {p}." for p in problems)
        )
    return fields, changed


def _reducer(given: Any) -> tuple[Reducer | None, str | None]:
    """The reducer `given` stands for (None: no reducer), or why it cannot be one."""
    if given is None or (isinstance(given, str) and given == "overwrite"):
        return None, None
    if isinstance(given, Reducer):
        return given, None
    if isinstance(given, str):
        found = get_reducer(given)
        if found is None:
            names = ", ".join(registered_names())
            return None, f"no reducer is registered as {given!r}; registered: {names}"
        return found, None
    problem = check_reducer_callable(given)
    if problem:
        return None, f"the reducer {problem}"
    return reducer_from_callable(given), None


def _replay(source: RunLog, graph: GraphSpec, changed: Mapping[str, Any]) -> RunLog:
    """A new log over the same recorded tasks, each step folded through `graph`'s reducers."""
    log = RunLog(graph, source.input, source.config, warnings=list(source.warnings))
    log.status, log.error = source.status, source.error
    ephemeral = tuple(n for n, f in graph.fields.items() if f.ephemeral)
    values = initial_values(graph)
    for recorded in source.steps:
        afters = recorded.afters
        if afters is not None:
            afters = {k: v for k, v in afters.items() if k not in changed}
        step = StepLog(
            recorded.step, recorded.tasks, graph.fields, resets=recorded.resets, afters=afters
        )
        log.steps.append(step)
        for reset in recorded.resets:
            values = {name: isolate(value) for name, value in reset.values.items()}
        if recorded.failed:
            log.status, log.error = "failed", recorded.failed[0].error
            break
        try:
            step.merged = _merged(graph, recorded, values, changed)
            staged = _staged(graph, step, values)
        except Exception as error:
            error.add_note(f"nbgraph: while re-merging the writes of step {step.step}")
            log.status, log.error = "failed", error
            break
        values.update(staged)
        step.written = tuple(staged)
        step.cleared = clear_ephemeral(ephemeral, values, step.written)
        step.applied = True
        if not recorded.applied:  # it failed as recorded; the record has nothing after it
            log.status, log.error = "running", None
    log.final = values
    return log


def _merged(
    graph: GraphSpec, recorded: StepLog, values: dict[str, Any], changed: Mapping[str, Any]
) -> Any:
    """The step's `state_merger` writes: as recorded, unless the fields it merges changed."""
    if graph.state_merger is None or len(recorded.tasks) < 2:
        return ()
    if not any(name in changed for task in recorded.tasks for name, _ in task.writes):
        return recorded.merged
    per_task = [(task.node, task.writes) for task in recorded.tasks]
    return merge_unreduced(graph.state_merger, graph.fields, values, per_task)


def _staged(graph: GraphSpec, step: StepLog, values: dict[str, Any]) -> dict[str, Any]:
    """Each written field's value after `step`; `values` stay as they were if a fold raises."""
    staged = {}
    for change in step.changes:
        name = change.field
        if step.afters is not None and name in step.afters:
            staged[name] = isolate(step.afters[name])
            continue
        old = isolate(values.get(name, MISSING))
        staged[name] = reduce_field(field_spec(graph.fields, name), old, change.writes, step.step)
    return staged


# --- what the new reducers change downstream ---------------------------------------------------


MAX_NOTES = 10
"""Notes of one kind listed before the rest are counted (`routing_changes` has every row)."""


@dataclass(slots=True)
class _Findings:
    """What `_consequences` found, step by step."""

    first: list[str] = field(default_factory=list)
    resets: list[str] = field(default_factory=list)
    routes: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    rows: list[tuple] = field(default_factory=list)
    inputs: dict[str, tuple[list[int], dict[str, None]]] = field(default_factory=dict)

    def ran_on(self, node: str, step: int, differing: Sequence[str]) -> None:
        steps, fields = self.inputs.setdefault(node, ([], {}))
        steps.append(step)
        fields.update(dict.fromkeys(differing))

    def notes(self) -> list[str]:
        notes = self.first + _capped(self.resets, "root resets")
        notes += _capped(self.routes, "routing changes, listed in routing_changes")
        notes += _capped(self.unknown, "routings are unknown")
        if self.inputs:
            each = [
                f"{node!r} at {_steps(steps)} (in {_names(list(fields))})"
                for node, (steps, fields) in self.inputs.items()
            ]
            notes.append(
                f"Nodes ran on a state that differs: {'; '.join(each)}. What they wrote was "
                "replayed as recorded, though with this input they might have written "
                "something else."
            )
        return notes


def _consequences(source: Run, new: RemergedRun) -> tuple[list[str], list[tuple]]:
    """The notes on a re-merged run, and its routing changes as rows."""
    changes = ", ".join(f"{n!r} {a} -> {b}" for n, (a, b) in new.reducers.items())
    head = (
        f"Replayed the recorded writes of steps 0-{new.log.steps[-1].step} with other reducers "
        f"({changes or 'none changed'}); no node was run again."
    )
    found = _Findings()
    before: list[str] = []  # fields that differ after the previous step
    old_after, new_after = initial_values(source.graph), initial_values(new.graph)
    for recorded, step in zip(source.log.steps, new.log.steps, strict=False):
        number = step.step
        old_start, new_start = old_after, new_after  # read here, advanced by replay_step below
        if step.resets:  # the tasks read the last reset's state
            old_start = new_start = {k: isolate(v) for k, v in step.resets[-1].values.items()}
            found.resets += [
                f"Step {number}: the {reset.reason} for {reset.node!r} (a root reset) was "
                "replayed as recorded, though the state it was made from differs."
                for reset in (step.resets if before else ())
            ]
        start_diff = _differing(old_start, new_start)
        for task in step.tasks:
            if _input_differs(new.graph, task, start_diff):
                found.ran_on(task.node, number, start_diff)
        if not step.applied:
            break
        for task in step.tasks:  # a router's view differs only by the start or own writes
            own = {name for name, _ in task.writes}
            if new.graph.branches.get(task.node) and (start_diff or own & new.reducers.keys()):
                _check_routes(source, new, task, (old_start, new_start), found)
        old_after = replay_step(source.graph, old_after, recorded)
        new_after = replay_step(new.graph, new_after, step)
        before = _differing(old_after, new_after)
        if before and not found.first:
            found.first.append(f"The state first differs after step {number}, in {_names(before)}.")
    ending = _ending(source, new, bool(found.first))
    return [head, *found.notes(), *ending], found.rows


def _capped(notes: list[str], what: str) -> list[str]:
    if len(notes) <= MAX_NOTES:
        return notes
    return [*notes[:MAX_NOTES], f"... and {len(notes) - MAX_NOTES} more {what}."]


def _steps(steps: list[int]) -> str:
    """`step 3`, or `steps 2-5, 8` (runs of consecutive steps folded)."""
    spans: list[list[int]] = []
    for step in steps:
        if spans and step == spans[-1][1] + 1:
            spans[-1][1] = step
        else:
            spans.append([step, step])
    shown = ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in spans[:MAX_NOTES])
    more = ", ..." if len(spans) > MAX_NOTES else ""
    return f"step {steps[0]}" if len(steps) == 1 else f"steps {shown}{more}"


def _ending(source: Run, new: Run, differs: bool) -> list[str]:
    last, recorded_last = new.log.steps[-1], source.log.steps[-1].step
    if new.status == "failed" and not last.applied and not last.failed:
        went_on = (
            f"the recorded run went on to step {recorded_last}"
            if recorded_last > last.step
            else "it was the recorded run's last step"
        )
        return [
            f"Step {last.step} fails under the new reducers ({_error(new.error)}); the "
            f"re-merged run stops there ({went_on})."
        ]
    if last.failed:
        return [
            f"Step {last.step}: {_names([t.node for t in last.failed])} raised in the recorded "
            f"run ({_error(last.failed[0].error)}); the re-merged run fails there too."
        ]
    if new.status == "running":
        return [
            f"Step {last.step} failed in the recorded run ({_error(source.error)}) but applies "
            "under the new reducers; the record ends there, so what would have run next is "
            "unknown (status 'running': the run did not end)."
        ]
    if not differs:
        return ["Nothing differs: the state after every step is the same as recorded."]
    return []


def _differing(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[str]:
    names = [*a, *(n for n in b if n not in a)]
    return [n for n in names if not same(a.get(n, MISSING), b.get(n, MISSING))]


def _names(names: Sequence[str]) -> str:
    return ", ".join(repr(n) for n in dict.fromkeys(names))


def _input_differs(graph: GraphSpec, task: Task, differing: Sequence[str]) -> bool:
    """Whether a node's input differed (a send's input is its recorded argument)."""
    if task.kind != "edge" or not differing:
        return False
    node = graph.nodes.get(task.node)
    if node is None or node.input is None:
        return True
    return any(name in node.input.fields for name in differing)


def _check_routes(
    source: Run,
    new: Run,
    task: Task,
    starts: tuple[dict[str, Any], dict[str, Any]],
    found: _Findings,
) -> None:
    """Call the task's routers on the new view if it differs; note or list what they say."""
    where = f"Step {task.step}: the routing after {task.node!r}"
    try:
        old_view = _router_values(source.graph, task, starts[0])
        new_view = _router_values(new.graph, task, starts[1])
    except Exception as error:
        found.unknown.append(f"{where} is unknown: its view cannot be rebuilt ({_error(error)}).")
        return
    if not _differing(old_view, new_view):
        return
    old, why_old = _router_routes(source.graph, task, starts[0], source.log.config)
    now, why_now = _router_routes(new.graph, task, starts[1], source.log.config)
    if old is None or now is None:
        found.unknown.append(f"{where} is unknown: {why_old or why_now}.")
        return
    recorded = list(task.routes)
    cut = len(recorded) - len(old)
    if cut < 0 or not same(recorded[cut:], old):
        found.unknown.append(
            f"{where} is unknown: on the recorded state its routers choose {old}, but the "
            f"record says {recorded[max(cut, 0) :]} (they are not a pure function of the state)."
        )
        return
    would = recorded[:cut] + now
    if not same(would, recorded):
        found.rows.append((task.step, task.node, recorded, would))
        found.routes.append(
            f"{where} changes: its routers would now choose {now} instead of {old}, so after "
            f"step {task.step} the run would have gone another way (what follows was replayed "
            "as recorded)."
        )


def _router_values(graph: GraphSpec, task: Task, start: dict[str, Any]) -> dict[str, Any]:
    """What the task's routers see: the step's start plus only its own writes, folded."""
    values = dict(start)
    own = group_writes([(task.node, key, value) for key, value in task.writes])
    for name, writes in own.items():
        spec = field_spec(graph.fields, name)
        values[name] = reduce_field(spec, isolate(values.get(name, MISSING)), writes, task.step)
    return values


def _router_routes(
    graph: GraphSpec, task: Task, start: dict[str, Any], config: dict[str, Any]
) -> tuple[list[Any] | None, str]:
    """Where the task's routers send the run from `start`, or None and why it is unknown."""
    scratch = Task(task.step, task.index, task.node, task.kind, writes=task.writes)
    limit = config.get("recursion_limit", DEFAULT_RECURSION_LIMIT)
    managed = {n: limit - task.step for n, f in graph.fields.items() if f.managed}
    for branch in graph.branches.get(task.node, ()):
        try:
            state = router_state(graph, scratch, start, managed)
            result = branch.router(state, config) if branch.takes_config else branch.router(state)
            if inspect.isawaitable(result):
                getattr(result, "close", lambda: None)()
                return None, f"router {branch.name!r} is async and is not called again"
            absorb_route(graph, branch, scratch, result)
        except Exception as error:
            return None, f"router {branch.name!r} raised {_error(error)}"
    return list(scratch.routes), ""


def _error(error: BaseException | None) -> str:
    return f"{type(error).__name__}: {str(error).rstrip('.')}"
