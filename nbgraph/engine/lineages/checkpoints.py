"""Checkpoints of a branch-lineage run: the set of live lineages, saved and restored.

A checkpoint of a branch run holds the lineage points its step created (a task's writes, a
join's merged points, a reset's state) and what runs next, by point id. Now and then (when
the writes since the last one outweigh the state) it also holds a lineage snapshot: every
point from the live lineages' common ancestor down to each of them, with the values of the
ancestor. Restoring walks back to the nearest snapshot and replays the points after it, so
joins after a resume merge exactly as they would have without one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from nbgraph.blueprint import GraphSpec
from nbgraph.engine.lineages.points import (
    Lineage,
    apply_points,
    common_base,
    delta_merge,
    ensure_values,
    grow,
    keep_live_ephemeral,
)
from nbgraph.isolation import isolate
from nbgraph.primitives import Mutation

__all__ = [
    "Descriptor",
    "control_ids",
    "describe",
    "live_points",
    "merged_values",
    "rebuild",
    "snapshot",
]

Descriptor = dict[str, Any]


# --- points as plain data ------------------------------------------------------------------------


def describe(
    spec: GraphSpec, point: Lineage, skip: frozenset[str], with_values: bool = False
) -> Descriptor:
    """A lineage point as plain data (its values only when asked: a snapshot's roots)."""
    data: Descriptor = {"id": point.id, "kind": point.kind}
    data["parent"] = point.parent.id if point.parent is not None else None
    if point.kind == "task":
        data["writer"] = point.writer
        data["writes"] = [[k, v] for k, v in point.writes if k not in skip]
        mutated = {k for k, v in point.writes if isinstance(v, Mutation)} - skip
        if mutated:  # a Mutation cannot run again: keep its results
            values = _values(spec, point)
            data["afters"] = {k: isolate(values[k]) for k in mutated if k in values}
    elif point.kind == "join":
        data["applied"] = [p.id for p in point.applied]
        data["parents"] = list(point.heads)
    else:  # a root, a reset: a whole state
        data["writes"] = [[k, v] for k, v in point.writes if k not in skip]
    if point.afters and "afters" not in data:
        data["afters"] = dict(point.afters)
    if with_values:
        values = _values(spec, point)
        data["values"] = {k: isolate(v) for k, v in values.items() if k not in skip}
    return data


def snapshot(spec: GraphSpec, live: list[Lineage], skip: frozenset[str]) -> list[Descriptor]:
    """Every point from the live lineages' common ancestor down to each of them, parents
    first; the points whose parent is not among them carry their values."""
    base = common_base(live)
    order: list[Lineage] = []
    seen: set[int] = set()

    def visit(point: Lineage) -> None:
        stack = [point]
        while stack:
            top = stack[-1]
            if id(top) in seen:
                stack.pop()
                continue
            needs = [] if top is base else [p for p in (top.parent, *top.applied) if p is not None]
            pending = [p for p in needs if id(p) not in seen]
            if pending:
                stack.extend(pending)
                continue
            seen.add(id(top))
            order.append(top)
            stack.pop()

    for point in live:
        visit(point)
    kept = {id(p) for p in order}
    return [
        describe(
            spec, p, skip, with_values=p is base or p.parent is None or id(p.parent) not in kept
        )
        for p in order
    ]


def rebuild(
    spec: GraphSpec, descriptors: Iterable[Descriptor], points: dict[str, Lineage], step: int
) -> None:
    """Turn descriptors back into points with values, added to `points` (parents first)."""
    fields, ephemeral = spec.fields, spec.ephemeral
    for data in descriptors:
        parent = points.get(data["parent"]) if data["parent"] is not None else None
        kind = data["kind"]
        writes = tuple((k, v) for k, v in data.get("writes", ()))
        point = Lineage(data["id"], kind, parent, data.get("writer", ""), writes)
        point.afters = data.get("afters")
        if "values" in data:
            point.values = {k: isolate(v) for k, v in data["values"].items()}
        elif kind == "task":
            values = dict(_values_of(parent, data))
            grow(fields, values, point, step, set(), ephemeral)
            point.values = values
        elif kind == "join":
            point.applied = tuple(points[i] for i in data["applied"])
            values = dict(_values_of(parent, data))
            apply_points(fields, values, point.applied, step)
            values.update({k: isolate(v) for k, v in (point.afters or {}).items()})
            heads = [points[i] for i in data.get("parents", ()) if i in points]
            if heads:  # (checkpoints written before joins named their branches: no check)
                keep_live_ephemeral(values, heads, lambda h: h.values or {}, ephemeral)
            point.values = values
        else:
            point.values = {k: isolate(v) for k, v in writes}
        point.frozen = True  # restored points are copied before anything changes them
        points[point.id] = point


def _values(spec: GraphSpec, point: Lineage) -> dict[str, Any]:
    return ensure_values(spec.fields, point, spec.ephemeral)


def _values_of(parent: Lineage | None, data: Descriptor) -> dict[str, Any]:
    if parent is None or parent.values is None:
        raise ValueError(
            f"A checkpoint's lineage point {data['id']!r} grows from {data['parent']!r}, "
            "which the thread's checkpoints do not hold; the thread is incomplete."
        )
    return parent.values


# --- the merged view -----------------------------------------------------------------------------


def merged_values(spec: GraphSpec, live: list[Lineage], step: int) -> dict[str, Any]:
    """What the live lineages would make if they met now (delta merge; one: its state)."""
    if not live:
        return {}
    if len(live) == 1:
        return dict(_values(spec, live[0]))
    base = common_base(live)
    start = _values(spec, base) if base is not None else {}
    values, _ = delta_merge(spec.fields, start, live, base, step)
    return values


def control_ids(loop: Any) -> dict[str, Any]:
    """What runs next in a branch run, naming lineage points by id (plus the superstep
    control's keys, so `get_state().next` and the history read it the same way)."""
    arrivals = {
        name: [[list(sources), [p.id for p in points]] for sources, points in items]
        for name, items in loop.arrivals.items()
    }
    later = {
        name: [[list(sources), [p.id for p in points]] for sources, points in items]
        for name, items in loop.later.items()
    }
    return {
        "pull": {name: [s for srcs, _ in items for s in srcs] for name, items in arrivals.items()},
        "push": [[sender, send.node, send.arg] for sender, send, _ in loop.sends],
        "seen": [sorted(seen) for seen in loop.schedule.seen],
        "deferred": {name: [s for srcs, _ in items for s in srcs] for name, items in later.items()},
        "incoming": {},
        "lineages": {
            "arrivals": arrivals,
            "later": later,
            "sends": [p.id for _, _, p in loop.sends],
            "captured": [[[s, p.id] for s, p in captured] for captured in loop.captured],
            "ended": [[s, p.id] for s, p in loop.ended],
            "live": [p.id for p in loop.live()],
        },
    }


def live_points(control: Mapping[str, Any], points: Mapping[str, Lineage]) -> list[Lineage]:
    """The restored points a checkpoint's control names as live, in routing order."""
    return [points[i] for i in control["lineages"]["live"]]
