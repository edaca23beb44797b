"""The effect of each reducer on each field at each step, from one replay of the recorded writes.

A row says, for one (step, field): the value before, each write with its writer in order, the
reducer, the value after, whether it changed, and why it is special (a conflict, an
`Overwrite` past the reducer, a key that was dropped, a root reset).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple

from nbgraph.engine.pinned import value_after
from nbgraph.engine.runlog import RunLog, initial_values
from nbgraph.engine.view import isolate
from nbgraph.engine.writes import (
    applied_writes,
    conflicting_writers,
    field_spec,
    group_writes,
    reduce_field,
)
from nbgraph.schema import FieldSpec
from nbgraph.types import MISSING, Overwrite


class Effect(NamedTuple):
    """One row of `Run.effects`."""

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


EFFECT_COLUMNS = Effect._fields


def same(a: Any, b: Any) -> bool:
    """Whether two recorded values are equal (values whose `==` misbehaves count as different)."""
    if a is b:
        return True
    try:
        return bool(a == b)
    except Exception:
        return False


def is_conflict(spec: FieldSpec, writes: list[tuple[str, Any]]) -> bool:
    """Whether these writes, in one step, are an error for this field (the engine's rule)."""
    return bool(conflicting_writers(spec, writes))


_SHALLOW = {list: list.copy, dict: dict.copy, set: set.copy}


def snapshot(value: Any) -> Any:
    """A table's copy of a replayed value: containers copied at C speed, one level deep.

    Items inside are shared with the record (which holds its own copies of what nodes
    wrote), so a growing list costs one pointer per item per row, not a Python-level deep
    copy: treat table cells as read-only (copy before changing a nested item).
    """
    copier = _SHALLOW.get(type(value))
    return copier(value) if copier is not None else isolate(value)


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while building many small acyclic rows.

    Without it, building a 100,000-row table spends most of its time in collections that
    walk the rows built so far (measured: 1.4 s with, 0.56 s without).
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


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
        if type(value) is Overwrite:
            bypass = True
            break
    return Effect(
        step,
        spec.name,
        spec.reducer_name,
        before,
        writes,
        [writer for writer, _ in writes],
        after,
        applied and not same(before, after),
        applied,
        len(writes) > 1 and is_conflict(spec, writes),
        bypass,
        False,
        False,
        point,
    )


def reset_effects(
    step: int, writer: str, reason: str, old: dict, new: dict, point: str
) -> Iterator[Effect]:
    """The fields a root reset changed (each new value, written by `writer`)."""
    for name in [*old, *(n for n in new if n not in old)]:
        before, after = old.get(name, MISSING), new.get(name, MISSING)
        if not same(before, after):
            yield Effect(step, name, reason, before, [(writer, after)], [writer], after,
                         True, True, False, False, False, True, point)  # fmt: skip


def cleared_effect(step: int, name: str, before: Any, point: str) -> Effect:
    """An ephemeral field dropped because nothing wrote it."""
    return Effect(step, name, "cleared", before, [], [], MISSING, True, True,
                  False, False, False, False, point)  # fmt: skip


def dropped_effects(step: int, task: Any, point: str = "") -> Iterator[Effect]:
    """What a task wrote to keys the state does not have (dropped, with a warning)."""
    for key, value, _why in task.dropped:
        yield Effect(step, key, "dropped", MISSING, [(task.node, value)], [task.node],
                     MISSING, False, False, False, False, True, False, point)  # fmt: skip


def effect_rows(log: RunLog) -> list[Effect]:
    """Every (step, field) the run touched, in step order: resets, writes, clears, drops.

    `point` names the state tree node a row's `after` belongs to (a step's merge, a reset; in
    a branch-lineage run, a task's lineage or a join); `winner`, at a join where branches
    disagreed, the branch whose value the merged state kept.
    """
    if log.semantics == "branches":
        from nbgraph.record.lineage_effects import lineage_effect_rows

        with collector_paused():
            return lineage_effect_rows(log)
    with collector_paused():
        return _effect_rows(log)


def _effect_rows(log: RunLog) -> list[Effect]:
    graph = log.graph
    values = initial_values(graph)  # the replay's own values; reducers may change them in place
    shown = {name: isolate(value) for name, value in values.items()}  # last value per field
    rows: list[Effect] = []
    specs: dict[str, FieldSpec] = {}
    for step in log.steps:
        number = step.step
        for reset in step.resets:
            new = {name: isolate(value) for name, value in reset.values.items()}
            point = f"reset:{number}:{reset.node}"
            rows.extend(
                reset_effects(number, f"reset:{reset.node}", reset.reason, shown, new, point)
            )
            values = {name: isolate(value) for name, value in new.items()}
            shown = new
        written = group_writes(applied_writes(graph.fields, step.tasks, step.merged))
        merge_id = f"merge:{number}" if step.applied else ""
        for name, writes in written.items():
            spec = specs.get(name) or specs.setdefault(name, field_spec(graph.fields, name))
            before = shown.get(name, MISSING)
            after = MISSING
            if step.applied:
                if step.afters is not None and name in step.afters:
                    values[name] = value_after(step.afters[name], values.get(name, MISSING))
                else:
                    values[name] = reduce_field(spec, values.get(name, MISSING), writes, number)
                after = shown[name] = snapshot(values[name])
            rows.append(write_effect(number, spec, before, writes, after, step.applied, merge_id))
        for name in step.cleared:
            values.pop(name, None)
            rows.append(cleared_effect(number, name, shown.pop(name, MISSING), merge_id))
        for task in step.tasks:
            rows.extend(dropped_effects(number, task))
    return rows
