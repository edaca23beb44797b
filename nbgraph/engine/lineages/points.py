"""Branch lineages: points of a lineage, and the rules that merge lineages at a join.

With `compile(semantics="branches")` each parallel branch carries its own copy of the state
from the fork onwards. A `Lineage` is one point of one branch: the root (the input applied),
the state after a task, a join, or a reset. The merge rules here are pure functions over
lineages, used by the engine (whose lineages hold values) and by the record (whose lineages
are rebuilt from the log and hold none).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from nbgraph.engine.core.writes import (
    apply_writes,
    clear_ephemeral,
    field_spec,
    group_task_writes,
    reduce_field,
)
from nbgraph.isolation import isolate
from nbgraph.primitives import MISSING, Mutation, is_overwrite
from nbgraph.schema import FieldSpec

__all__ = [
    "Lineage",
    "Values",
    "apply_points",
    "common_base",
    "delta_merge",
    "ensure_values",
    "grow",
    "keep_live_ephemeral",
    "strategy_name",
]

Values = dict[str, Any]
_SEQUENCE = itertools.count()
_NOTHING_OWNED: frozenset[str] = frozenset()  # a fresh point shares every value it holds


class Lineage:
    """One point of a lineage.

    Attributes:
        id: its state tree id (`"merge:0"`, `"task:<task id>"`, `"join:..."`, `"reset:..."`).
        kind: `"root"`, `"task"`, `"join"` (a delta merge), or `"reset"` (a fold, a strategy,
            a `state_filter`, or a lineage restored from a checkpoint: a whole new state).
        parent: the point it grew from (a join: the branches' common ancestor).
        writer: the node whose writes a task point holds.
        writes: a task's `(field, value)` writes; a reset's (and a root's) whole state.
        applied: a join's task and reset points since `parent`, in the order it applied them.
        heads: a join's branches, by id, in routing order.
        values: the state at this point (engine only; released once nothing can read it).
        owned: fields whose value objects no other lineage shares (safe to change in place).
        holders: how many pending runs, joins and END hold this point.
        frozen: its values must stay as they are (it forked: a join may need it as a base).
        depth: distance from the root, to find common ancestors.
        afters: (a run loaded from a file) values after this point of fields the file could
            not fold again; replay takes them instead.
        seq: when it was made, to list lineages in the order they came.
    """

    __slots__ = (
        "afters", "applied", "depth", "frozen", "heads", "holders", "id", "kind", "owned",
        "parent", "seq", "values", "writer", "writes",
    )  # fmt: skip

    def __init__(
        self,
        id: str,
        kind: str,
        parent: Lineage | None = None,
        writer: str = "",
        writes: Sequence[tuple[str, Any]] = (),
        applied: tuple[Lineage, ...] = (),
        values: Values | None = None,
    ) -> None:
        self.id, self.kind, self.parent, self.writer = id, kind, parent, writer
        self.writes, self.applied, self.values = writes, applied, values
        self.heads: tuple[str, ...] = ()
        self.owned: set[str] = _NOTHING_OWNED
        self.holders = 0
        self.frozen = False
        self.depth = 0 if parent is None else parent.depth + 1
        self.afters: dict[str, Any] | None = None
        self.seq = next(_SEQUENCE)

    def __repr__(self) -> str:
        return f"Lineage({self.id!r})"


# --- common ancestors and deltas ---------------------------------------------------------------


def common_base(heads: Sequence[Lineage]) -> Lineage | None:
    """The nearest point every head descends from (a head itself counts), or None."""
    base: Lineage | None = heads[0] if heads else None
    for other in heads[1:]:
        a, b = base, other
        while a is not b:
            if a is None or b is None:
                return None
            if a.depth > b.depth:
                a = a.parent
            elif b.depth > a.depth:
                b = b.parent
            else:
                a, b = a.parent, b.parent
        base = a
    return base


def _deltas_since(head: Lineage, base: Lineage | None) -> list[Lineage]:
    """The task and reset points between `base` (excluded) and `head`, oldest first.

    A join on the way contributes the points it applied, so nothing is counted twice.
    """
    if head.parent is base and head.kind == "task" and head is not base:
        return [head]  # the common case: one task since the fork
    path: list[Lineage] = []
    point: Lineage | None = head
    while point is not None and point is not base:
        path.append(point)
        point = point.parent
    deltas: list[Lineage] = []
    for point in reversed(path):
        if point.kind == "join":
            deltas.extend(point.applied)
        else:
            deltas.append(point)
    return deltas


def _apply_point(
    fields: Mapping[str, FieldSpec], values: Values, point: Lineage, step: int, owned: set[str]
) -> None:
    """Apply one point's delta to `values` in place: a task's writes through the reducers,
    or a reset's whole state. `owned` names the fields whose objects `values` may change;
    others are copied before a reducer touches them (and become owned)."""
    if point.kind != "task":
        for name, value in point.writes:
            values[name] = isolate(value)
            owned.add(name)
        return
    writes, afters = point.writes, point.afters
    for name, _ in writes:
        if name not in owned:  # (a reducer may change its old value in place)
            if name in values and not (afters and name in afters):
                values[name] = isolate(values[name])
            owned.add(name)
    if afters:  # (a run file's values after, for fields it could not replay)
        grouped = group_task_writes({}, point.writer, writes)
        apply_writes(fields, values, grouped, step, pinned=afters)
    else:
        apply_writes(fields, values, writes, step, point.writer)


def grow(
    fields: Mapping[str, FieldSpec],
    values: Values,
    point: Lineage,
    step: int,
    owned: set[str],
    ephemeral: Sequence[str] = (),
) -> tuple[str, ...]:
    """A task point's state from its parent's (`values`, changed in place): its writes
    through the reducers, then the ephemeral fields it did not write dropped (returned)."""
    _apply_point(fields, values, point, step, owned)
    if not ephemeral:
        return ()
    return clear_ephemeral(ephemeral, values, [name for name, _ in point.writes])


def keep_live_ephemeral(
    values: Values,
    heads: Sequence[Lineage],
    values_of: Callable[[Lineage], Values],
    ephemeral: Sequence[str],
) -> None:
    """A join keeps an ephemeral field only if one of the branches it merged still has it."""
    for name in ephemeral:
        if name in values and not any(name in values_of(head) for head in heads):
            del values[name]


def ensure_values(
    fields: Mapping[str, FieldSpec], point: Lineage, ephemeral: Sequence[str] = ()
) -> Values:
    """A point's values, computed from its parent's if it was left without (a task point
    only a join or END holds needs no values of its own: a delta merge reads its writes)."""
    if point.values is None:
        parent = point.parent
        if point.kind != "task" or parent is None:
            raise RuntimeError(f"nbgraph: lineage point {point.id!r} lost its values")
        values = dict(ensure_values(fields, parent, ephemeral))
        owned: set[str] = set()
        grow(fields, values, point, 0, owned, ephemeral)
        point.values, point.owned = values, owned
    return point.values


# --- the merge rules -----------------------------------------------------------------------------


def delta_merge(
    fields: Mapping[str, FieldSpec],
    base_values: Values,
    branches: Sequence[Lineage],
    base: Lineage | None,
    step: int,
) -> tuple[Values, list[Lineage]]:
    """The common ancestor's state plus each branch's writes since it, in routing order.

    Returns:
        The merged values (owned by the caller) and the points applied, in order.
    """
    values = dict(base_values)
    applied: list[Lineage] = []
    seen: set[int] = set()
    for branch in branches:
        for point in _deltas_since(branch, base):
            if id(point) in seen:  # shared by two branches (a join inside both): once
                continue
            seen.add(id(point))
            applied.append(point)
    apply_points(fields, values, applied, step)
    return values, applied


def apply_points(
    fields: Mapping[str, FieldSpec], values: Values, points: Sequence[Lineage], step: int
) -> None:
    """Apply several points' deltas in order, field by field (fields are independent).

    A field whose writes all go through a reducer, as plain values, is folded in one call;
    otherwise point by point (an overwrite field: the last branch's value; an `Overwrite`,
    a `Mutation`, a reset or a pinned value: in their turn).
    """
    by_field: dict[str, list[tuple[Lineage, Any]]] = {}
    stepwise: set[str] = set()  # fields that must go point by point
    for point in points:
        plain = point.kind == "task" and not point.afters
        for name, value in point.writes:
            entries = by_field.get(name)
            if entries is None:
                by_field[name] = [(point, value)]
            else:
                entries.append((point, value))
            if not plain or is_overwrite(value) or isinstance(value, Mutation):
                stepwise.add(name)
    for name, entries in by_field.items():
        spec = fields.get(name) or field_spec(fields, name)
        value = isolate(values.get(name, MISSING))
        if spec.reducer is not None and name not in stepwise:
            values[name] = reduce_field(spec, value, [(p.writer, v) for p, v in entries], step)
            continue
        index = 0
        while index < len(entries):
            point = entries[index][0]
            own = []  # this point's writes to the field, applied together
            while index < len(entries) and entries[index][0] is point:
                own.append((point.writer, entries[index][1]))
                index += 1
            if point.afters and name in point.afters:
                value = isolate(point.afters[name])
            elif point.kind != "task":
                value = isolate(own[-1][1])
            else:
                value = reduce_field(spec, value, own, step)
        values[name] = value


def strategy_name(strategy: Callable[..., Any] | str | None) -> str:
    """What the record calls a merge: `"delta"`, `"fold"`, or the strategy's name."""
    if strategy is None:
        return "delta"
    if isinstance(strategy, str):
        return strategy
    return getattr(strategy, "__name__", type(strategy).__name__)
