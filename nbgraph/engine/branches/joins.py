"""Joins in a branch run: lineages merged where they meet (a waiting edge, a node with
`merge=`, a deferred node) and at END, by the delta merge or the node's strategy.

Functions of a `engine.branches.run.BranchLoop` (`loop`); `nbgraph.engine.lineages.points` holds the
merges themselves, this module decides which lineages meet and records each `Join`.
"""

from __future__ import annotations

from typing import Any

from nbgraph.engine.core.merging import fold_states, state_pairs
from nbgraph.engine.core.runlog import Join, initial_values
from nbgraph.engine.core.tasks import state_for
from nbgraph.engine.lineages.points import (
    Lineage,
    common_base,
    delta_merge,
    keep_live_ephemeral,
    strategy_name,
)
from nbgraph.isolation import isolate
from nbgraph.primitives import END

__all__ = ["finish", "join"]


def join(loop: Any, name: str, points: list[Lineage], strategy: Any = ...) -> Lineage:
    """Merge lineages for `name` (END included) by its strategy; record the merge."""
    unique: list[Lineage] = []
    seen: set[int] = set()
    for point in points:
        if id(point) in seen:
            point.holders -= 1
        else:
            seen.add(id(point))
            unique.append(point)
    if len(unique) == 1 and name != END:
        return unique[0]
    if strategy is ...:
        strategy = loop.spec.nodes[name].merge
    base = common_base(unique)
    step = loop.step
    join_id = loop.unique_id("join:end" if name == END else f"join:{step}:{name}")
    parents = tuple(p.id for p in unique)
    if strategy is None or strategy == "delta":
        base_values = loop.values_at(base) if base is not None else initial_values(loop.spec)
        values, applied = delta_merge(loop.spec.fields, base_values, unique, base, step)
        keep_live_ephemeral(values, unique, loop.values_at, loop.ephemeral)
        point = Lineage(join_id, "join", base, applied=tuple(applied), values=values)
        point.heads = parents
        ids = tuple(p.id for p in applied)
        join = Join(step, join_id, name, parents, "delta", _id(base), ids)
    else:
        values, dropped = _strategy_values(loop, name, strategy, unique)
        point = Lineage(join_id, "reset", base, writes=tuple(values.items()), values=values)
        recorded = {k: isolate(v) for k, v in values.items()}
        join = Join(
            step, join_id, name, parents, strategy_name(strategy), _id(base), (), recorded,
            dropped,
        )  # fmt: skip
    for parent in unique:  # each held it once; a join releases what no one else holds
        parent.holders -= 1
        if parent.holders <= 0 and not parent.frozen:
            parent.values = None
    point.holders = 1
    loop.made(point)
    if name == END:
        loop.log.end = join
    else:
        loop.add_join(join)
    return point


def _strategy_values(
    loop: Any, name: str, strategy: Any, points: list[Lineage]
) -> tuple[dict[str, Any], tuple[str, ...]]:
    states = [loop.values_at(p) for p in points]
    where = f"the merge for {name!r} at step {loop.step}"
    try:
        if strategy == "fold":
            values = fold_states(loop.spec.fields, states, loop.step)  # type: ignore[arg-type]
        else:
            given = [state_for(loop.spec.state, s, {}, whole=True) for s in states]  # type: ignore[arg-type]
            result = strategy(given)
            values = {k: isolate(v) for k, v in state_pairs(loop.spec.state, result, where)}
    except Exception as error:
        error.add_note(f"nbgraph: while computing {where} ({strategy_name(strategy)})")
        raise
    fields = loop.spec.fields
    unknown = [k for k in values if k not in fields and not loop.spec.open_schema]
    if unknown:
        message = f"The merge for {name!r} returned keys the state does not have: {unknown}."
        loop.warn(message, stacklevel=6)
        values = {k: v for k, v in values.items() if k not in unknown}
    had = dict.fromkeys(k for s in states for k in s)  # type: ignore[union-attr]
    return values, tuple(k for k in had if k not in values)


def finish(loop: Any) -> None:
    """END merges the lineages that reached it (in routing order) into the final state.

    A lineage still waiting at a join that can no longer fire is not lost: END collects
    it too, with a warning naming the join.
    """
    for index, captured in enumerate(loop.captured):
        if captured:
            edge = loop.spec.waiting[index]
            loop.warn(
                f"Waiting edge {list(edge.sources)} -> {edge.target!r} never fired: "
                f"{', '.join(sorted({s for s, _ in captured}))} ran but not all of its "
                "sources did; END collected those lineages.",
                stacklevel=6,
            )
            loop.ended.extend(captured)
            loop.captured[index] = []
    if not loop.ended:
        return
    points = [point for _, point in loop.ended]
    final = join(loop, END, points, loop.spec.end_merge)
    loop.ended = [(END, final)]  # held until the run ends: a checkpoint's final state
    loop.reset_values(final.values)  # type: ignore[arg-type]


def _id(point: Lineage | None) -> str:
    return "" if point is None else point.id
