"""Lineage routing in a branch run: a committed task's lineage point handed along its edges,
routes, `Send`s and `state_filter`s to the runs, joins and END it reaches.

Functions of a `engine.branches.run.BranchLoop` (`loop`), filling the queues its `__init__`
sets: `arrivals`, `later`, `sends`, `captured`, `ended`.
"""

from __future__ import annotations

from typing import Any

from nbgraph.engine.core.merging import state_pairs
from nbgraph.engine.core.runlog import RootReset
from nbgraph.engine.core.tasks import Task, state_for
from nbgraph.engine.lineages.points import Lineage
from nbgraph.isolation import isolate
from nbgraph.primitives import END, Send

__all__ = ["fire_waiting", "trigger_lineage"]


def trigger_lineage(loop: Any, task: Task, point: Lineage) -> bool:
    """Hand `point` to every run, join and END that `task`'s edges and routes reach;
    return whether a run will read it (joins and END read only its writes)."""
    spec, source = loop.spec, task.node
    reached = readers = False
    for target in spec.edges.get(source, ()):
        reached = True
        state_filter = spec.filters.get((source, target))
        handed = point if state_filter is None else _filtered(loop, source, target, point)
        readers = _arrive(loop, target, source, handed) or readers
    for index in spec.waits_by_source.get(source, ()):
        reached = True
        point.holders += 1
        loop.captured[index].append((source, point))
        loop.schedule.mark_seen(index, source)
    for route in task.routes:
        reached = True
        if isinstance(route, Send):
            point.holders += 1
            readers = True
            loop.sends.append((source, route, point))
        else:
            readers = _arrive(loop, route, source, point) or readers
    if not reached:  # a dead end: its lineage ends there, and END collects it
        _arrive(loop, END, source, point)
    return readers


def _arrive(loop: Any, target: str, source: str, point: Lineage) -> bool:
    point.holders += 1
    if target == END:
        loop.ended.append((source, point))
        return False
    node = loop.spec.nodes[target]
    queue = loop.later if node.defer else loop.arrivals
    queue.setdefault(target, []).append(((source,), [point]))
    return node.merge is None and not node.defer  # a join reads only its writes


def _filtered(loop: Any, source: str, target: str, point: Lineage) -> Lineage:
    """An edge's `state_filter`: the target starts a lineage from the filtered state."""
    state_filter = loop.spec.filters[(source, target)]
    given = state_for(loop.spec.state, loop.values_at(point), {}, whole=True)
    where = f"The state_filter of edge {source!r} -> {target!r}"
    try:
        pairs = state_pairs(loop.spec.state, state_filter(given), where)
    except Exception as error:
        error.add_note(f"nbgraph: while filtering the state from {source!r} to {target!r}")
        raise
    values = {k: isolate(v) for k, v in pairs}
    reset_id = loop.unique_id(f"reset:{loop.step + 1}:{target}")
    dropped = tuple(k for k in point.values if k not in values)  # type: ignore[union-attr]
    recorded = {k: isolate(v) for k, v in values.items()}
    reset = RootReset(
        loop.step + 1, target, "state_filter", (source,), dropped, recorded, reset_id, point.id
    )
    loop.add_reset(reset)  # the next step's tasks read it
    point.frozen = True
    reset = Lineage(reset_id, "reset", point, writes=tuple(recorded.items()), values=values)
    loop.made(reset)
    return reset


def fire_waiting(loop: Any) -> None:
    """Waiting edges whose sources have all run hand their captured lineages on, to be
    merged into one run of the target."""
    for index, edge in enumerate(loop.spec.waiting):
        seen = loop.schedule.seen[index]
        if seen and seen.issuperset(edge.sources):
            seen.clear()
            captured, loop.captured[index] = loop.captured[index], []
            if edge.target == END:  # END collects them, in the order they came
                loop.ended.extend(captured)
                continue
            sources = tuple(s for s, _ in captured)
            queue = loop.later if loop.spec.nodes[edge.target].defer else loop.arrivals
            queue.setdefault(edge.target, []).append((sources, [p for _, p in captured]))
