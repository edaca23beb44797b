"""The effect of each reducer on each field at each step, from one replay of the recorded writes.

A row says, for one (step, field): the value before, each write with its writer in order, the
reducer, the value after, whether it changed, and why it is special (a conflict, an
`Overwrite` past the reducer, a key that was dropped, a root reset).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from nbgraph.engine.runlog import RunLog, apply_change, initial_values
from nbgraph.engine.view import isolate
from nbgraph.engine.writes import field_spec
from nbgraph.schema import FieldSpec
from nbgraph.types import MISSING, Mutation, Overwrite


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
    """Whether these writes, in one step, are an error for this field."""
    overwrites = sum(type(value) is Overwrite for _, value in writes)
    if spec.reducer is None:
        plain = sum(not isinstance(value, Mutation) for _, value in writes)
        return plain > 1
    return overwrites > 1


def effect_rows(log: RunLog) -> list[Effect]:
    """Every (step, field) the run touched, in step order: resets, writes, clears, drops."""
    graph = log.graph
    values = initial_values(graph)  # the replay's own values; reducers may change them in place
    shown = {name: isolate(value) for name, value in values.items()}  # last value per field
    rows: list[Effect] = []
    for step in log.steps:
        number = step.step
        for reset in step.resets:
            new = {name: isolate(value) for name, value in reset.values.items()}
            for name in [*shown, *(n for n in new if n not in shown)]:
                before, after = shown.get(name, MISSING), new.get(name, MISSING)
                if not same(before, after):
                    writer = f"reset:{reset.node}"
                    rows.append(
                        Effect(
                            number,
                            name,
                            reset.reason,
                            before,
                            [(writer, after)],
                            [writer],
                            after,
                            True,
                            True,
                            False,
                            False,
                            False,
                            True,
                        )
                    )
            values = {name: isolate(value) for name, value in new.items()}
            shown = new
        for change in step.changes:
            name, writes = change.field, list(change.writes)
            spec = field_spec(graph.fields, name)
            before = shown.get(name, MISSING)
            after = MISSING
            if step.applied:
                values[name] = apply_change(graph, step, values, change)
                after = shown[name] = isolate(values[name])
            rows.append(
                Effect(
                    number,
                    name,
                    change.reducer,
                    before,
                    writes,
                    [w for w, _ in writes],
                    after,
                    step.applied and not same(before, after),
                    step.applied,
                    is_conflict(spec, writes),
                    any(type(value) is Overwrite for _, value in writes),
                    False,
                    False,
                )
            )
        for name in step.cleared:
            before = shown.pop(name, MISSING)
            values.pop(name, None)
            rows.append(
                Effect(
                    number,
                    name,
                    "cleared",
                    before,
                    [],
                    [],
                    MISSING,
                    True,
                    True,
                    False,
                    False,
                    False,
                    False,
                )
            )
        for task in step.tasks:
            for key, value, _why in task.dropped:
                rows.append(
                    Effect(
                        number,
                        key,
                        "dropped",
                        MISSING,
                        [(task.node, value)],
                        [task.node],
                        MISSING,
                        False,
                        False,
                        False,
                        False,
                        True,
                        False,
                    )
                )
    return rows
