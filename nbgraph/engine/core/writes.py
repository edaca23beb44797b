"""Applying a superstep's writes: the one place every write to the state passes through.

Writes arrive in write order (edge tasks by node name, then sends in send order; within a
task, in the order it wrote them). `apply_step` folds them into the engine's values through
each field's reducer and returns what it did as `FieldChange`s, so a run is recorded at a
cost proportional to what was written, never to the size of the state.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from nbgraph.engine.core.pinned import value_after
from nbgraph.errors import InvalidUpdateError
from nbgraph.isolation import isolate
from nbgraph.messages.merge import forget_messages
from nbgraph.primitives import MISSING, Mutation, Overwrite, is_overwrite, overwrite_value
from nbgraph.schema import FieldSpec

__all__ = [
    "PLAIN_WRITES",
    "FieldChange",
    "Write",
    "applied_before_conflict",
    "applied_writes",
    "apply_step",
    "apply_writes",
    "clear_ephemeral",
    "combine_mutations",
    "conflicting_writers",
    "field_spec",
    "fold_one",
    "group_task_writes",
    "group_writes",
    "merge_unreduced",
    "reduce_field",
    "step_changes",
]

PLAIN_WRITES = frozenset({int, float, str, bool, type(None), bytes, list, tuple})
"""Types of a write that is a plain value: not an `Overwrite`, a `Mutation` or its JSON form
(a field without reducer takes such a write as its value, that very object)."""

Write = tuple[str, str, Any]
"""One write: (writer, field, value); value may be an `Overwrite` or a `Mutation`."""


class FieldChange(NamedTuple):
    """What one superstep did to one field: its writes (writer, value) in order.

    The values before and after are not kept here: they are rebuilt on demand by
    replaying the run, so recording costs what was written.
    """

    field: str
    writes: tuple[tuple[str, Any], ...]
    reducer: str


def field_spec(fields: Mapping[str, FieldSpec], name: str) -> FieldSpec:
    """The spec of `name`; a plain-dict schema accepts any key as an overwrite field."""
    spec = fields.get(name)
    return spec if spec is not None else FieldSpec(name)


def group_writes(writes: Sequence[Write]) -> dict[str, list[tuple[str, Any]]]:
    """Writes grouped by field, each group in write order."""
    grouped: dict[str, list[tuple[str, Any]]] = {}
    for writer, name, value in writes:
        group = grouped.get(name)
        if group is None:
            grouped[name] = [(writer, value)]
        else:
            group.append((writer, value))
    return grouped


def group_task_writes(
    grouped: dict[str, list[tuple[str, Any]]], node: str, writes: Iterable[Sequence[Any]]
) -> dict[str, list[tuple[str, Any]]]:
    """`group_writes` for one task's `(field, value)` writes, added to `grouped` (in write
    order) without making `(writer, field, value)` triples first; returns `grouped`."""
    for key, value in writes:  # (a task writing a field twice: the rare case)
        grouped.setdefault(key, []).append((node, value))
    return grouped


def reduce_field(spec: FieldSpec, old: Any, writes: Sequence[tuple[str, Any]], step: int) -> Any:
    """Fold one field's writes of one step into its old value (MISSING if it has none).

    The old value must belong to the caller: reducers allowed to work in place may change it.

    Raises:
        InvalidUpdateError: two value writes to a field without a reducer, or two
            `Overwrite`s to one field, in one step (naming the field, writers and step).
    """
    reducer = spec.reducer
    if len(writes) == 1:
        return fold_one(reducer, old, writes[0][1])
    writes = combine_mutations(writes)
    if reducer is None:
        return _last_value(spec, old, writes, step)
    value = old
    fn = reducer.in_place or reducer.fn
    seen_overwrite: str | None = None
    for writer, new in writes:
        kind = type(new)
        if kind is Overwrite or (kind is dict and is_overwrite(new)):
            if seen_overwrite is not None:
                _check_conflict(spec, writes, step)
            value, seen_overwrite = isolate(overwrite_value(new)), writer
        elif isinstance(new, Mutation):
            value = new.apply(forget_messages(value))
        elif seen_overwrite is not None:
            continue  # LangGraph: after an Overwrite, the step's other writes are ignored
        elif value is MISSING and not reducer.takes_missing:
            value = isolate(new)
        else:
            result = fn(value, new)
            value = isolate(result) if result is new else result
    return value


def fold_one(reducer: Any, old: Any, new: Any) -> Any:
    """A field's one write of a step (`new`) folded into its old value (MISSING if none)
    through its `reducer` (None: the write is the value): `reduce_field` of one write, the
    one place a lone write is folded (`apply_writes` asks only its first question inline).

    >>> from nbgraph.reducers import get_reducer
    >>> fold_one(get_reducer("append"), ["a"], ["b"]), fold_one(None, 1, Overwrite(2))
    (['a', 'b'], 2)
    """
    if type(new) is Overwrite:
        return new.value if reducer is None else isolate(new.value)
    if reducer is not None and type(new) is dict and is_overwrite(new):
        return isolate(overwrite_value(new))
    if isinstance(new, Mutation):
        return new.apply(forget_messages(old))
    if reducer is None:
        return new
    if old is MISSING and not reducer.takes_missing:
        return isolate(new)
    result = (reducer.in_place or reducer.fn)(old, new)
    return isolate(result) if result is new else result


def combine_mutations(writes: Sequence[tuple[str, Any]]) -> Sequence[tuple[str, Any]]:
    """Fold runs of consecutive `Mutation`s with their `combine` (the Rust seed's batching).

    A combined mutation keeps the first writer's name; a `combine` returning None keeps both.
    """
    if not any(isinstance(new, Mutation) for _, new in writes):
        return writes
    folded: list[tuple[str, Any]] = []
    for writer, new in writes:
        if folded and isinstance(new, Mutation) and isinstance(folded[-1][1], Mutation):
            combined = folded[-1][1].combine(new)
            if combined is not None:
                folded[-1] = (folded[-1][0], combined)
                continue
        folded.append((writer, new))
    return folded


def conflicting_writers(spec: FieldSpec, writes: Sequence[tuple[str, Any]]) -> list[str]:
    """The writers whose writes to this field, in one step, are a conflict (else `[]`).

    Two value writes to a field without a reducer, or two `Overwrite`s to one field.
    """
    if spec.reducer is None:
        plain = [writer for writer, new in writes if not isinstance(new, Mutation)]
        return plain if len(plain) > 1 else []
    overwriters = [writer for writer, new in writes if is_overwrite(new)]
    return overwriters if len(overwriters) > 1 else []


def _check_conflict(spec: FieldSpec, writes: Sequence[tuple[str, Any]], step: int) -> None:
    """Raise the step's conflict for this field, if its writes are one.

    Raises:
        InvalidUpdateError: naming the field, the writers and the step.
    """
    writers = conflicting_writers(spec, writes)
    if not writers:
        return
    if spec.reducer is None:
        hint = (
            "it is ephemeral and takes one write per step"
            if spec.ephemeral
            else "declare a reducer to combine them, e.g. Annotated[T, operator.add]"
        )
        raise InvalidUpdateError(
            f"At key {spec.name!r}: Can receive only one value per step. Step {step} wrote "
            f"it from {', '.join(repr(w) for w in writers)}; {hint}."
        )
    raise InvalidUpdateError(
        f"Can receive only one Overwrite value per super-step: field {spec.name!r} got "
        f"Overwrite from {writers[0]!r} and {writers[1]!r} at step {step}."
    )


def _last_value(spec: FieldSpec, old: Any, writes: Sequence[tuple[str, Any]], step: int) -> Any:
    _check_conflict(spec, writes, step)
    value = old
    for _, new in writes:
        if isinstance(new, Mutation):
            value = new.apply(value)
        else:
            value = new.value if type(new) is Overwrite else new
    return value


def applied_writes(
    fields: Mapping[str, FieldSpec],
    tasks: Sequence[Any],
    merged: Sequence[Write] = (),
) -> list[Write]:
    """A step's writes in write order; with a `state_merger` result, that replaces the
    tasks' plain writes to reducer-less fields."""
    writes = [
        (t.node, key, value)
        for t in tasks
        for key, value in t.writes
        if key in fields or t.kind != "call"  # (a `@task` call's result is a write only
    ]  # where the state keeps them: an entrypoint's `calls`; engine.core.calls)
    if not merged:
        return writes
    kept = [
        w
        for w in writes
        if field_spec(fields, w[1]).reducer is not None or isinstance(w[2], (Mutation, Overwrite))
    ]
    return kept + list(merged)


def step_changes(fields: Mapping[str, FieldSpec], writes: Sequence[Write]) -> list[FieldChange]:
    """One `FieldChange` per written field, in first-write order."""
    return [
        FieldChange(name, tuple(field_writes), field_spec(fields, name).reducer_name)
        for name, field_writes in group_writes(writes).items()
    ]


def apply_writes(
    fields: Mapping[str, FieldSpec],
    values: dict[str, Any],
    writes: Mapping[str, Sequence[tuple[str, Any]]] | Sequence[tuple[str, Any]],
    step: int,
    source: str | None = None,
    pinned: Mapping[str, Any] | None = None,
) -> tuple[str, ...]:
    """Apply one step's writes to `values` (the caller's) in place, each field through its
    reducer (`reduce_field`): the one place writes reach a state (kept in field order).
    Returns the fields written, in first-write order; conflicting writes change nothing.

    Args:
        writes: by field, in first-write order, each field's `[(writer, value), ...]`
            (`group_writes`); or, with `source` (its node), one task's `[(field, value),
            ...]`: a field written once as a plain value is set without a list made for it.
        pinned: values after the step (`value_after`), taken unfolded (a file's, a checkpoint's).

    >>> from nbgraph.reducers import get_reducer
    >>> values, fields = {"log": ["a"]}, {"log": FieldSpec("log", list, get_reducer("append"))}
    >>> apply_writes(fields, values, [("log", ["b"]), ("n", 1)], 1, source="node"), values
    (('log', 'n'), {'log': ['a', 'b'], 'n': 1})
    """
    grouped, fresh = source is None, False  # fresh: a field gets its first value
    if grouped:
        items: Iterable[tuple[str, Any]] = writes.items()  # type: ignore[union-attr]
        for name, field_writes in items:  # (all or nothing: conflicts first)
            if len(field_writes) > 1 and not (pinned and name in pinned):
                _check_conflict(field_spec(fields, name), field_writes, step)
    elif (count := len(writes)) > 1 and (
        writes[0][0] == writes[1][0] if count == 2 else len(dict(writes)) != count  # type: ignore
    ):  # a field written twice: the grouped form
        return apply_writes(fields, values, group_task_writes({}, source, writes), step)
    else:
        items = writes  # type: ignore[assignment]
    for name, field_writes in items:
        fresh = fresh or name not in values
        spec, new = fields.get(name) or FieldSpec(name), field_writes  # (one task's: a value)
        if grouped:
            if pinned and name in pinned:
                values[name] = value_after(pinned[name], values.get(name, MISSING))
                continue
            if len(field_writes) > 1:
                values[name] = reduce_field(spec, values.get(name, MISSING), field_writes, step)
                continue
            new = field_writes[0][1]
        reducer = spec.reducer
        if type(new) in PLAIN_WRITES:  # `fold_one` of a plain write, inline: a frame a field
            if reducer is None:  # a step, which the budgets of self-loop + MemorySaver and
                values[name] = new  # SqliteSaver, agent and history show (budgets.json)
                continue
            old = values.get(name, MISSING)
            if old is not MISSING:
                result = (reducer.in_place or reducer.fn)(old, new)
                values[name] = isolate(result) if result is new else result
                continue
        values[name] = fold_one(reducer, values.get(name, MISSING), new)
    if fresh:  # a field's first value: the state keeps the schemas' order
        in_field_order(fields, values)
    if grouped:
        return tuple(writes)
    if count == 2:  # (not one field twice: that took the grouped form above)
        return writes[0][0], writes[1][0]  # type: ignore[index]
    return (writes[0][0],) if count == 1 else tuple(dict(writes))  # type: ignore


def applied_before_conflict(
    fields: Mapping[str, FieldSpec],
    values: dict[str, Any],
    writes: Mapping[str, Sequence[tuple[str, Any]]],
    step: int,
) -> tuple[dict[str, Any], str | None]:
    """A copy of `values` with a refused step's `writes` (`group_writes`) applied field by
    field in first-write order up to the first field they conflict on: what LangGraph's
    channels hold after such a step (its `apply_writes` updates channels one at a time);
    and that field's name (None if none conflicts)."""
    values = {k: isolate(v) for k, v in values.items()}
    for name, field_writes in writes.items():
        try:
            apply_writes(fields, values, {name: field_writes}, step)
        except InvalidUpdateError:
            return values, name
    return values, None


def in_field_order(fields: Mapping[str, FieldSpec], values: dict[str, Any]) -> None:
    """Put `values`' keys (in place) in the order the schemas declare the fields, as
    LangGraph reads its channels: a node, `get_state` and a stream show the state so;
    keys no schema declares go last.

    >>> values = {"log": [], "x": 1, "extra": 0}
    >>> in_field_order({"x": FieldSpec("x"), "log": FieldSpec("log")}, values); values
    {'x': 1, 'log': [], 'extra': 0}
    """
    order, now = list(filter(values.__contains__, fields)), list(values)
    if order == now:  # (the common case, a run's input in order: no comprehension made)
        return
    if len(order) < len(now):
        order += [name for name in now if name not in fields]
    if order != now:
        items = [(name, values[name]) for name in order]
        values.clear()
        values.update(items)


def apply_step(
    fields: Mapping[str, FieldSpec],
    values: dict[str, Any],
    writes: Sequence[Write],
    step: int,
) -> list[FieldChange]:
    """Apply one step's writes to `values` in place, and say what changed.

    Args:
        fields: the graph's fields.
        values: the engine's values (changed in place).
        writes: (writer, field, value) in write order.
        step: the superstep number, for error messages.

    Returns:
        One `FieldChange` per written field, in first-write order.
    """
    grouped = group_writes(writes)
    apply_writes(fields, values, grouped, step)
    return [
        FieldChange(name, tuple(field_writes), field_spec(fields, name).reducer_name)
        for name, field_writes in grouped.items()
    ]


def clear_ephemeral(
    ephemeral: Sequence[str], values: dict[str, Any], written: Sequence[str]
) -> tuple[str, ...]:
    """Drop ephemeral fields this step did not write; return the names dropped."""
    if not ephemeral:
        return ()
    kept = set(written)
    cleared = tuple(name for name in ephemeral if name in values and name not in kept)
    for name in cleared:
        del values[name]
    return cleared


def merge_unreduced(
    merger: Any,
    fields: Mapping[str, FieldSpec],
    values: Mapping[str, Any],
    per_task: Sequence[tuple[str, Sequence[tuple[str, Any]]]],
) -> list[Write]:
    """langgraphgo's `stateMerger`: fold parallel writes to reducer-less fields.

    Args:
        merger: `(current, [update, ...]) -> merged`, each update a dict of one task.
        fields: the graph's fields.
        values: the current values.
        per_task: (writer, [(field, value), ...]) for each task, in write order.

    Returns:
        The merged values as writes by `"state_merger"` (empty if nothing to merge).
    """
    updates = []
    names: set[str] = set()
    for _, task_writes in per_task:
        plain = {
            k: v
            for k, v in task_writes
            if field_spec(fields, k).reducer is None and not isinstance(v, (Mutation, Overwrite))
        }
        if plain:
            updates.append(plain)
            names.update(plain)
    if len(updates) < 2:
        return []
    current = {name: isolate(values[name]) for name in names if name in values}
    merged = merger(current, updates)
    if not isinstance(merged, Mapping):
        raise InvalidUpdateError(
            f"state_merger must return a dict of merged fields, got {type(merged).__name__}."
        )
    return [("state_merger", name, isolate(value)) for name, value in merged.items()]
