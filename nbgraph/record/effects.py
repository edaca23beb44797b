"""The effect of each reducer on each field at each step, from one replay of the recorded writes.

A row says, for one (step, field): the value before, each write with its writer in order, the
reducer, the value after, whether it changed, and why it is special (a conflict, an
`Overwrite` past the reducer, a key that was dropped, a root reset).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

from nbgraph.codec.values import same as same  # the codec's equality, used across the record
from nbgraph.engine.facts import (
    RunLog,
    applied_writes,
    apply_writes,
    collector_paused,
    common_steps,
    conflicting_writers,
    field_spec,
    group_writes,
    initial_values,
)
from nbgraph.errors import ReplayLimitError
from nbgraph.isolation import ATOMS, isolate
from nbgraph.primitives import MISSING, Mutation, Overwrite, is_overwrite
from nbgraph.record.cells import ListTrails, TextPrefix, TextTrail, plain
from nbgraph.record.replaying import replay_graph, set_plainly
from nbgraph.schema import FieldSpec


class _EffectRow(NamedTuple):
    """The columns of `Run.effects`, as an `Effect` holds its cells."""

    step: int
    field: str
    reducer: str
    before: Any
    writes: list[tuple[str, Any]]
    writers: list[str]
    after: Any
    changed: bool
    applied: bool
    conflict: bool
    overwrite_bypass: bool
    dropped_key: bool
    root_reset: bool
    point: str = ""
    winner: str = ""


class Effect(_EffectRow):
    """One row of `Run.effects`, built by keyword only (`Effect(step=..., field=..., ...)`):
    the producers are the builders below (`write_effect`, `reset_effects`, `cleared_effect`,
    `dropped_effects`, `merge_effect`), so a new column is added here and there, never by
    position (`tests/record/test_effect_rows.py`).

    The table cells of a list that grows are `ListPrefix` views of one list the field's rows
    share (`cell`, `run.effects`); `before` and `after` give real lists of their own.
    """

    __slots__ = ()

    def __new__(cls, **cells: Any) -> Effect:
        """`Effect(step=..., field=..., ...)`: the cells by keyword (`effect_row`)."""
        return effect_row(**cells)

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        # (pickle and copy rebuild from the cells, not through the keyword-only __new__)
        return _effect_from_cells, (tuple(self),)

    @property
    def before(self) -> Any:
        """The value before (MISSING: none); a list is a copy you may change."""
        return plain(tuple.__getitem__(self, BEFORE))

    @property
    def after(self) -> Any:
        """The value after (MISSING: none); a list is a copy you may change."""
        return plain(tuple.__getitem__(self, AFTER))

    def cell(self, column: str) -> Any:
        """What the table holds in `column` (for a growing list: a shared `ListPrefix`)."""
        return tuple.__getitem__(self, EFFECT_COLUMNS.index(column))


def _effect_from_cells(cells: tuple[Any, ...]) -> Effect:
    """An `Effect` from its cells in column order (unpickling, copying)."""
    return _new_row(Effect, cells)


_new_row = tuple.__new__


def effect_row(
    *,
    step: int,
    field: str,
    reducer: str,
    before: Any,
    writes: list[tuple[str, Any]],
    writers: list[str],
    after: Any,
    changed: bool,
    applied: bool,
    conflict: bool = False,
    overwrite_bypass: bool = False,
    dropped_key: bool = False,
    root_reset: bool = False,
    point: str = "",
    winner: str = "",
) -> Effect:
    """The one way an `Effect` is built: each cell by its column's name.

    A plain function, not `Effect.__new__` (which calls it): `type.__call__` hands a
    Python `__new__` its keywords as a new dict, twice the cost of this call; rows are built
    one per field a step wrote (`benchmarks/looking.py`).
    """
    return _new_row(Effect, (step, field, reducer, before, writes, writers, after, changed,
                             applied, conflict, overwrite_bypass, dropped_key, root_reset, point,
                             winner))  # fmt: skip


EFFECT_COLUMNS = _EffectRow._fields
BEFORE, AFTER = EFFECT_COLUMNS.index("before"), EFFECT_COLUMNS.index("after")


def is_conflict(spec: FieldSpec, writes: list[tuple[str, Any]]) -> bool:
    """Whether these writes, in one step, are an error for this field (the engine's rule)."""
    return bool(conflicting_writers(spec, writes))


_SHALLOW = {list: list.copy, dict: dict.copy, set: set.copy}


def snapshot(value: Any) -> Any:
    """A table's copy of a replayed value: containers copied at C speed, one level deep.

    Items inside are shared with the record (which holds its own copies of what nodes
    wrote): treat table cells as read-only (copy before changing a nested item).
    """
    copier = _SHALLOW.get(type(value))
    return copier(value) if copier is not None else isolate(value)


class TableValues:
    """The cells a pass shows for each field: lists share one trail per field (`ListPrefix`),
    so a list that grows by k items a step costs k pointers a row, not its whole length."""

    def __init__(self) -> None:
        self.trails = ListTrails()

    def cell(self, name: str, value: Any, appended: bool = False) -> Any:
        """The table's form of `value`, field `name`'s value now (MISSING stays MISSING).

        Args:
            appended: the caller knows `value` only grew at its end since the field's last
                cell (the same list, extended in place by `append`): no prefix check.
        """
        kind = type(value)
        if kind is list:
            return self.trails.cell(name, value, appended)
        self.trails.forget(name)
        if kind in ATOMS:  # (MISSING too: `snapshot` would return each as it is)
            return value
        if kind is TextTrail:
            return TextPrefix(value, len(value))
        return value if value is MISSING else snapshot(value)


def grows_in_place(spec: FieldSpec, writes: list[tuple[str, Any]]) -> bool:
    """Whether folding `writes` into this field only appends to its list in place (its
    reducer says so: `Reducer.extends_in_place`, as `append` and a replay's `operator.add`
    on lists do; plain writes): the replay's list keeps its items and grows."""
    reducer = spec.reducer
    if reducer is None or not reducer.extends_in_place:
        return False
    return not any(is_overwrite(new) or isinstance(new, Mutation) for _, new in writes)


# --- the four kinds of row (supersteps and branch lineages build the same rows) -------------


def write_effect(
    step: int,
    spec: FieldSpec,
    before: Any,
    writes: list[tuple[str, Any]],
    after: Any,
    applied: bool,
    point: str,
) -> Effect:
    """A field's writes of one step (or one task, in a lineage), folded by its reducer."""
    bypass = False
    for _, value in writes:
        if type(value) is Overwrite or (spec.reducer is not None and is_overwrite(value)):
            bypass = True
            break
    return effect_row(
        step=step,
        field=spec.name,
        reducer=spec.reducer_name,
        before=before,
        writes=writes,
        writers=[writer for writer, _ in writes],
        after=after,
        changed=applied and not same(before, after),
        applied=applied,
        conflict=len(writes) > 1 and is_conflict(spec, writes),
        overwrite_bypass=bypass,
        point=point,
    )


def reset_effects(
    step: int, writer: str, reason: str, old: dict, new: dict, point: str
) -> Iterator[Effect]:
    """The fields a root reset changed (each new value, written by `writer`)."""
    for name in [*old, *(n for n in new if n not in old)]:
        before, after = old.get(name, MISSING), new.get(name, MISSING)
        if not same(before, after):
            yield effect_row(
                step=step,
                field=name,
                reducer=reason,
                before=before,
                writes=[(writer, after)],
                writers=[writer],
                after=after,
                changed=True,
                applied=True,
                root_reset=True,
                point=point,
            )


def cleared_effect(step: int, name: str, before: Any, point: str) -> Effect:
    """An ephemeral field dropped because nothing wrote it."""
    return effect_row(
        step=step,
        field=name,
        reducer="cleared",
        before=before,
        writes=[],
        writers=[],
        after=MISSING,
        changed=True,
        applied=True,
        point=point,
    )


def dropped_effects(step: int, task: Any, point: str = "") -> Iterator[Effect]:
    """What a task wrote to keys the state does not have (dropped, with a warning)."""
    for key, value, _why in task.dropped:
        yield effect_row(
            step=step,
            field=key,
            reducer="dropped",
            before=MISSING,
            writes=[(task.node, value)],
            writers=[task.node],
            after=MISSING,
            changed=False,
            applied=False,
            dropped_key=True,
            point=point,
        )


def merge_effect(
    step: int,
    field: str,
    strategy: str,
    before: Any,
    given: list[tuple[str, Any]],
    after: Any,
    pinned: bool,
    point: str,
    winner: str,
) -> Effect:
    """A field at a join of branch lineages: each branch's value (`given`, by branch name),
    merged by `strategy`; `winner`, where they disagreed, the branch whose value was kept;
    `pinned`: the merged state was recorded, not recomputed (a root reset's row)."""
    return effect_row(
        step=step,
        field=field,
        reducer=strategy,
        before=before,
        writes=given,
        writers=[name for name, _ in given],
        after=after,
        changed=not same(before, after),
        applied=True,
        conflict=bool(winner),
        root_reset=pinned,
        point=point,
        winner=winner,
    )


def effect_rows(log: RunLog) -> list[Effect]:
    """Every (step, field) a superstep run touched, in step order: resets, writes, clears, drops.

    `point` names the state tree node a row's `after` belongs to (a step's merge, a reset). A
    branch-lineage run's rows come from `record.lineages.effects.lineage_effect_rows`, built
    on this module (`point` a task's lineage or a join; `winner`, at a join where branches
    disagreed, the branch whose value the merged state kept); `RunRecord.effect_list` picks.
    """
    if log.semantics == "branches":
        raise ValueError("A branch-lineage run's rows: use lineage_effect_rows.")
    with collector_paused():
        return _effect_rows(log)


def step_effect_rows(log: RunLog, position: int, values: dict[str, Any]) -> list[Effect]:
    """The rows of one step (`log.steps[position]`) alone, as `effect_rows` makes them.

    Args:
        values: the state after the step before (owned by this call), e.g. from `Timeline`.
    """
    if log.semantics == "branches":
        raise ValueError("A branch-lineage run's rows come from its lineages: use effect_rows.")
    return SuperstepEffects(log, values).rows(log.steps[position])


def _effect_rows(log: RunLog) -> list[Effect]:
    replay = SuperstepEffects(log)
    rows: list[Effect] = []
    add, common, steps = rows.extend, replay._one_task_rows, log.steps
    for position, (number, node, writes, step) in enumerate(common_steps(steps)):
        found = None if step is not None else common(number, node, writes)  # (no object)
        add(found if found is not None else replay.rows(step or steps[position]))
    return rows


def _texts_for(values: dict[str, Any], written: dict[str, Any], afters: Any) -> None:
    """A field grown as a `TextTrail` becomes its str again before a write that is not one
    more str (a `Mutation`, an `Overwrite`, a pinned value after the step), which expects it."""
    for name, writes in written.items():
        value = values.get(name)
        if type(value) is TextTrail and (
            (afters and name in afters) or any(type(new) is not str for _, new in writes)
        ):
            values[name] = value.text()


class SuperstepEffects:
    """The replay behind `effect_rows` for a superstep run, one step after the other.

    Args:
        log: the run.
        values: the state to start from (owned by the replay; default: the run's start).
    """

    def __init__(self, log: RunLog, values: dict[str, Any] | None = None) -> None:
        self.graph = replay_graph(log.graph, texts=True)  # (grows a list, a str, in place)
        # the replay's own values; reducers may change them in place
        self.values = initial_values(self.graph) if values is None else values
        self.cells = TableValues()
        self.seen: dict[str, Any] = {}  # per field, the replay's object its last cell showed
        self.shown = {name: self._cell(name, value) for name, value in self.values.items()}
        self.specs: dict[str, FieldSpec] = {}
        self.known: dict[str, tuple[FieldSpec, str]] = {}  # (`_know`)

    def _cell(self, name: str, value: Any, spec: Any = None, writes: Any = ()) -> Any:
        grew = spec is not None and self.seen.get(name) is value and grows_in_place(spec, writes)
        self.seen[name] = value
        return self.cells.cell(name, value, grew)

    def rows(self, step: Any) -> list[Effect]:
        """The rows of `step`, the next step of the run: resets, writes, clears, drops."""
        tasks = step.tasks
        if (
            len(tasks) == 1
            and step.applied
            and not (step.resets or step.cleared or step.merged or step.afters)
        ):
            task = tasks[0]
            if task.kind != "call" and not task.dropped:
                rows = self._one_task_rows(step.step, task.node, task.writes)
                if rows is not None:
                    return rows
        return self._rows(step)

    def _one_task_rows(self, number: int, node: str, writes: list) -> list[Effect] | None:
        """`_rows` of an applied step of one task (`node`, its `writes`) that wrote each
        field once and dropped nothing (the common step), without grouping its writes; None
        for any other task."""
        if len(writes) > 1 and len({name for name, _ in writes}) != len(writes):
            return None  # (a field written twice: its writes are grouped, `_rows`)
        values, shown, fields, known = self.values, self.shown, self.graph.fields, self.known
        for name, new in writes:  # (`_texts_for`)
            if type(new) is not str and type(values.get(name)) is TextTrail:
                values[name] = values[name].text()
        try:
            if not set_plainly(fields, values, writes):
                apply_writes(fields, values, writes, number, source=node)
        except ReplayLimitError as error:  # (a file's reducer: name the step)
            raise ReplayLimitError(f"step {number}, {error}") from None
        rows, point, trails = [], f"merge:{number}", self.cells.trails.trails
        for name, new in writes:
            spec, reducer_name = known.get(name) or self._know(name)
            field_writes = [(node, new)]
            before = shown.get(name, MISSING)
            value = values[name]
            if type(value) in ATOMS and name not in trails:  # (`_cell` of an atom, inline)
                self.seen[name] = after = shown[name] = value
            else:
                after = shown[name] = self._cell(name, value, spec, field_writes)
            bypass = type(new) is Overwrite or (spec.reducer is not None and is_overwrite(new))
            changed = not same(before, after)
            cells = (number, name, reducer_name, before, field_writes, [node], after, changed,
                     True, False, bypass, False, False, point, "")  # fmt: skip
            rows.append(_new_row(Effect, cells))  # (`write_effect` of one write, applied)
        return rows

    def _know(self, name: str) -> tuple[FieldSpec, str]:
        """A field's spec and reducer name, kept for the rows of the steps after."""
        spec = self.specs.get(name) or self.specs.setdefault(
            name, field_spec(self.graph.fields, name)
        )
        found = self.known[name] = (spec, spec.reducer_name)
        return found

    def _rows(self, step: Any) -> list[Effect]:
        number, rows, fields = step.step, [], self.graph.fields
        for reset in step.resets:
            new = {name: isolate(value) for name, value in reset.values.items()}
            point = f"reset:{number}:{reset.node}"
            rows.extend(
                reset_effects(number, f"reset:{reset.node}", reset.reason, self.shown, new, point)
            )
            self.values = {name: isolate(value) for name, value in new.items()}
            self.shown = new
        written = group_writes(applied_writes(fields, step.tasks, step.merged))
        merge_id = f"merge:{number}" if step.applied else ""
        values, shown = self.values, self.shown
        if step.applied:  # (each row's before is its field's cell in `shown`)
            _texts_for(values, written, step.afters)
            try:
                apply_writes(fields, values, written, number, pinned=step.afters)
            except ReplayLimitError as error:  # (a file's reducer: name the step)
                raise ReplayLimitError(f"step {number}, {error}") from None
        for name, writes in written.items():
            spec = self.specs.get(name) or self.specs.setdefault(name, field_spec(fields, name))
            before = shown.get(name, MISSING)
            after = MISSING
            if step.applied:
                after = shown[name] = self._cell(name, values[name], spec, writes)
            rows.append(write_effect(number, spec, before, writes, after, step.applied, merge_id))
        for name in step.cleared:
            values.pop(name, None)
            rows.append(cleared_effect(number, name, shown.pop(name, MISSING), merge_id))
        for task in step.tasks:
            rows.extend(dropped_effects(number, task))
        return rows
