"""A run's steps as JSON data, with `afters` where a loaded run could not replay a step.

Where replaying a step would need a function the file cannot hold (a `Mutation`, a
`state_merger`) or would fold values the file keeps only as reprs, the field's value after
that step is saved in the step's `afters`, and replay takes it; for a reducer that may be
missing where the file is read (a lambda, the user's own function or registered name) it is
saved in the step's `kept` instead, as what it added when it only grew
(`nbgraph.engine.facts.growth`), and `graph=` replays the real function.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, NamedTuple

from nbgraph.codec.nesting import ValueTooDeepError
from nbgraph.codec.values import ValueEncoder, encode_error, encode_value, is_opaque
from nbgraph.engine.facts import (
    Attempt,
    StepLog,
    Task,
    flat_steps,
    growth,
    join_data,
    kept_steps,
    pinned_data,
    reset_data,
)
from nbgraph.primitives import MISSING, Mutation, is_overwrite
from nbgraph.reducers import callable_anywhere
from nbgraph.schema import FieldSpec

if TYPE_CHECKING:
    from nbgraph.record.run import RunRecord

__all__ = ["encode_steps", "needs_afters", "step_data"]


_ATOMS = frozenset({str, bool, type(None)})  # JSON as they are (a float may be nan)
_LONG_INT = 10**4000  # (as `nbgraph.codec.values`: an int this long is tagged)


def _is_atom(value: Any) -> bool:
    """Whether `value` is its own JSON data (a str, bool, None, or an int not too long)."""
    kind = type(value)
    return kind in _ATOMS or (kind is int and -_LONG_INT < value < _LONG_INT)


def _encode_task(task: Task, watch: ValueEncoder) -> dict[str, Any]:
    data: dict[str, Any] = {
        "step": task.step,
        "index": task.index,
        "node": task.node,
        "kind": task.kind,
        "triggers": list(task.triggers),
        "writes": [
            [
                key if type(key) is str else encode_value(key),
                value if _is_atom(value) else _write(task, key, value, watch),
            ]
            for key, value in task.writes
        ],
        "started": task.started,
        "ended": task.ended,
    }
    if task.kind == "call":  # a `@task` call: what it was called with, `[args, kwargs]`
        data["arg"] = encode_value(list(getattr(task.arg, "input", task.arg)))
    elif task.arg is not MISSING:
        data["arg"] = encode_value(task.arg)
    if task.routes:
        data["routes"] = [r if type(r) is str else encode_value(r) for r in task.routes]
    if task.returned:  # (what its routers returned: the inspector shows why it went there)
        data["returned"] = [v if type(v) is str else encode_value(v) for v in task.returned]
    if task.dropped:
        data["dropped"] = [[encode_value(k), encode_value(v), why] for k, v, why in task.dropped]
    if task.error is not None:
        data["error"] = encode_error(task.error)
    if task.parent:
        data["parent"] = task.parent
    if task.custom:
        data["custom"] = [_write(task, "custom", chunk, encode_value) for chunk in task.custom]
    if task.attempts:
        data["attempts"] = [_attempt_data(attempt) for attempt in task.attempts]
    if task.interrupts:  # (what a paused task asked: the run file keeps the question)
        asked = task.interrupts
        data["interrupts"] = [
            {"value": _write(task, "interrupt", i.value, watch), "id": i.id} for i in asked
        ]
    if task.from_cache:
        data["from_cache"] = True
    return data


def _attempt_data(attempt: Attempt) -> dict[str, Any]:
    return {
        "number": attempt.number,
        "started": float(attempt.started),
        "ended": float(attempt.ended),
        "error": encode_error(attempt.error),
        "wait": float(attempt.wait),
    }


def _write(task: Task, field: Any, value: Any, watch: ValueEncoder) -> Any:
    return _written(task.node, task.step, field, value, watch)


def _written(node: str, number: int, field: Any, value: Any, watch: ValueEncoder) -> Any:
    try:
        return watch(value)
    except ValueTooDeepError as error:
        raise error.within(
            f"The value node {node!r} wrote to field {field!r} at step {number}"
        ) from None


def _head(shape: tuple) -> tuple | None:
    """What every flat task of `shape` writes alike: its fields' names encoded, its routes
    and its routers' returns encoded (None when it has none); None for a `@task` call."""
    _, _, kind, _, routes, returned, names = shape
    if kind == "call":  # (read from its object: its arg)
        return None
    return (
        [key if type(key) is str else encode_value(key) for key in names],
        [r if type(r) is str else encode_value(r) for r in routes] if routes else None,
        [v if type(v) is str else encode_value(v) for v in returned] if returned else None,
    )


def _flat_task(number: int, row: tuple, head: tuple, watch: ValueEncoder) -> dict[str, Any]:
    """A flat task row of the columns (`flat_steps`) as `_encode_task` gives its `Task`
    (no arg, error, attempts...); `head`: its shape's `_head`."""
    (node, index, kind, triggers, _, _, names), values, started, ended = row
    keys, routes, returned = head
    data: dict[str, Any] = {
        "step": number,
        "index": index,
        "node": node,
        "kind": kind,
        "triggers": list(triggers),
        "writes": [
            [
                key,
                value
                if (t := type(value)) in _ATOMS or (t is int and -_LONG_INT < value < _LONG_INT)
                else _written(node, number, name, value, watch),
            ]
            for name, key, value in zip(names, keys, values, strict=True)
        ],
        "started": started,
        "ended": ended,
    }
    if routes is not None:
        data["routes"] = [*routes]
    if returned is not None:
        data["returned"] = [*returned]
    return data


def encode_steps(run: RunRecord) -> list[dict[str, Any]]:
    """Every step of the run, with `afters` where a loaded run could not replay it."""
    watch = ValueEncoder()  # encodes what reaches the state, noting anything opaque
    steps = list(step_data(run, watch))
    if watch.opaque or needs_afters(run):
        pinned = _point_afters(run) if run.log.semantics == "branches" else _afters(run)
        for data, afters in zip(steps, pinned, strict=True):
            kept = {k: v.pinned for k, v in (afters or {}).items() if type(v) is _Kept}
            whole = {k: v for k, v in (afters or {}).items() if type(v) is not _Kept}
            data["afters"] = encode_value(whole) if whole else None
            if kept:  # an append-like field keeps what it added: the file stays linear
                data["kept"] = {k: _kept_data(v) for k, v in kept.items()}
    return steps


def step_data(run: RunRecord, watch: ValueEncoder) -> Iterator[dict[str, Any]]:
    """Each step of the run as JSON data, made when asked for, with `"afters": None`: they
    are what `encode_steps` gives unless `needs_afters(run)`, or `watch` (which encodes
    the values that reach the state) is left with `opaque` set. A flat step is read from
    the run's columns (`flat_steps`: no `StepLog` made), into the same data."""
    steps = run.log.steps
    heads: dict[int, tuple | None] = {}  # per task shape (its id, kept by `flat_steps`)
    for position, (number, key, rows, step) in enumerate(flat_steps(steps)):
        if step is None:
            tasks = []
            for row in rows:  # type: ignore[union-attr]
                shape = id(row[0])
                head = heads[shape] if shape in heads else heads.setdefault(shape, _head(row[0]))
                if head is None:  # (a `@task` call: its arg, as the object has it)
                    step = steps[position]
                    break
                tasks.append(_flat_task(number, row, head, watch))
            else:
                written, cleared, applied = key  # type: ignore[misc]
                yield {
                    "step": number,
                    "applied": applied,
                    "written": [n if type(n) is str else encode_value(n) for n in written],
                    "cleared": [n if type(n) is str else encode_value(n) for n in cleared]
                    if cleared
                    else [],
                    "merged": [],
                    "resets": [],
                    "afters": None,
                    "tasks": tasks,
                }
                continue
        yield _step_data(step, watch)


def _step_data(step: StepLog, watch: ValueEncoder) -> dict[str, Any]:
    resets = [reset_data(reset, watch, encode_value) for reset in step.resets]
    data = {
        "step": step.step,
        "applied": step.applied,
        "written": [n if type(n) is str else encode_value(n) for n in step.written],
        "cleared": [n if type(n) is str else encode_value(n) for n in step.cleared]
        if step.cleared
        else [],
        "merged": [[w, encode_value(f), watch(v)] for w, f, v in step.merged]
        if step.merged
        else [],
        "resets": resets,
        "afters": None,
        "tasks": [_encode_task(task, watch) for task in step.tasks],
    }
    if step.joins or step.heads:
        data["joins"] = [join_data(join, watch, encode_value) for join in step.joins]
        data["heads"] = list(step.heads)
    return data


def _kept_data(pinned: Any) -> list[Any]:
    kind, part = pinned_data(pinned)
    return [kind, encode_value(part)]


def _point_afters(run: RunRecord) -> list[dict[str, dict[Any, Any]] | None]:
    """A branch run's `afters`: per step, per lineage point (a task, a join), the values
    after it of the fields it wrote or merged — replay takes them instead of folding."""
    fields = run.graph.fields
    by_step: dict[int, dict[str, dict[Any, Any]]] = {}
    for effect in run.effect_list:
        if effect.dropped_key or not effect.applied or not effect.point:
            continue
        if effect.point.startswith("reset:") or effect.reducer == "cleared":
            continue
        spec = fields.get(effect.field)
        reducer = spec.reducer if spec is not None else None
        plain = reducer is None and not any(is_opaque(v) for _, v in effect.writes)
        if plain and not effect.point.startswith("join:"):
            continue
        by_step.setdefault(effect.step, {}).setdefault(effect.point, {})[effect.field] = (
            effect.after
        )
    for step in run.log.steps:  # where lineages are apart, the state "after the step" too
        if step.applied and len(step.heads) > 1:
            by_step.setdefault(step.step, {})["heads"] = run.timeline.after(step.step)
    return [by_step.get(step.step) for step in run.log.steps]


def needs_afters(run: RunRecord) -> bool:
    """Whether some step may need `afters` even though every written value encodes plainly."""
    fields = run.graph.fields.values()
    return (
        any(step.merged for step in kept_steps(run.log.steps))  # (a flat step merges none)
        or any(spec.reducer is not None and not callable_anywhere(spec.reducer) for spec in fields)
        or any(is_opaque(_initial(spec)) for spec in fields if spec.initial is not None)
    )


class _Kept(NamedTuple):
    """A field's value after a step, pinned only because its reducer may be missing where
    the file is read (a `Grown` when it only grew); `graph=` on load uses the function."""

    pinned: Any


def _afters(run: RunRecord) -> list[dict[Any, Any] | None]:
    """Per step, the values after it of the fields a loaded run could not fold again.

    A field is pinned at a step when its reducer is not one nbgraph finds again (its own,
    or `operator`'s), when a `Mutation` or a `state_merger` wrote it, or when its writes, or
    its value before (for a reducer that folds into it), come back from the file as
    something else (a repr, say). Pinned for its reducer alone, it is `_Kept`.
    """
    fields = run.graph.fields
    merged = {step.step: {name for _, name, _ in step.merged} for step in run.log.steps}
    opaque = {n for n, spec in fields.items() if spec.initial and is_opaque(_initial(spec))}
    afters: dict[int, dict[Any, Any]] = {}
    for effect in run.effect_list:
        name = effect.field
        if effect.dropped_key or not effect.applied:
            continue
        if effect.root_reset or not effect.writes:  # a reset's new value, or a clear
            (opaque.add if is_opaque(effect.after) else opaque.discard)(name)
            continue
        spec = fields.get(name)
        reducer = spec.reducer if spec is not None else None
        writes = [value for _, value in effect.writes]
        mutated = any(isinstance(value, Mutation) for value in writes)
        replaced = not mutated and (reducer is None or any(map(is_overwrite, writes)))
        needed = (
            mutated
            or name in merged[effect.step]
            or (name in opaque and not replaced)
            or any(is_opaque(value) for value in writes)
        )
        if needed or (reducer is not None and not callable_anywhere(reducer)):
            after_opaque = is_opaque(effect.after)
            pinned = effect.after
            if not needed and not after_opaque:  # only its reducer is missing: kept
                pinned = _Kept(growth(effect.before, effect.after) or effect.after)
            afters.setdefault(effect.step, {})[name] = pinned
            (opaque.add if after_opaque else opaque.discard)(name)
        else:  # folded from plain values by one of nbgraph's reducers: plain too
            opaque.discard(name)
    return [afters.get(step.step) for step in run.log.steps]


def _initial(spec: FieldSpec) -> Any:
    try:
        return spec.initial()  # type: ignore[misc]
    except Exception:
        return MISSING
