"""States handed to a node that merges or filters them (`add_node(..., merge=...)`, an edge's
state filter): the step starts from their merge, recorded as a root reset. `fold_states` is
EvoFabric's rule (whole states folded through the reducers); branch lineages
(`engine.branches`) use it and `state_pairs` too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from nbgraph.engine.core.runlog import RootReset
from nbgraph.engine.core.writes import field_spec, reduce_field
from nbgraph.errors import InvalidUpdateError
from nbgraph.isolation import isolate
from nbgraph.primitives import MISSING
from nbgraph.schema import FieldSpec

__all__ = ["Values", "fold_states", "merged_resets", "state_pairs"]

Values = dict[str, Any]


def merged_resets(run: Any, pull: dict[str, list[str]]) -> list[RootReset]:
    """The resets of a step whose pulled nodes were handed states to merge or filter
    (`run.schedule.incoming`): each merged (or the last filtered one taken) into the
    run's values, in node name order."""
    resets = []
    incoming, spec = run.schedule.incoming, run.spec
    for name in sorted(pull):
        states = incoming.pop(name, None)
        if not states:
            continue
        node = spec.nodes[name]
        if node.merge not in (None, "delta"):
            try:
                if node.merge == "fold":
                    given = [dict(state_pairs(spec.state, s, "A state")) for _, s in states]
                    merged = fold_states(spec.fields, given, run.step)
                else:
                    merged = node.merge([state for _, state in states])
            except Exception as error:
                error.add_note(
                    f"nbgraph: while merging the states for {name!r} at step "
                    f"{run.step} (its merge= strategy)"
                )
                raise
            reason = "merge"
        else:
            merged = states[-1][1]
            reason = "state_filter"
        resets.append(_reset(run, name, reason, tuple(s for s, _ in states), merged))
    return resets


def _reset(run: Any, node: str, reason: str, sources: tuple[str, ...], state: Any) -> RootReset:
    spec = run.spec
    pairs = state_pairs(spec.state, state, f"The {reason} for node {node!r}")
    fields = spec.fields
    new = {
        k: isolate(v)
        for k, v in pairs
        if (k in fields and not fields[k].managed) or spec.open_schema
    }
    unknown = [k for k, _ in pairs if k not in new]
    if unknown:
        run.warn(
            f"The {reason} for node {node!r} at step {run.step} returned keys the "
            f"state does not have; they were dropped: {unknown}."
        )
    dropped = tuple(k for k in run.values if k not in new)
    run.reset_values(new)
    recorded = {k: isolate(v) for k, v in new.items()}  # the engine may extend `new` in place
    return RootReset(run.step, node, reason, sources, dropped, recorded)


def fold_states(fields: Mapping[str, FieldSpec], states: Sequence[Values], step: int) -> Values:
    """EvoFabric's rule: whole branch states folded left to right through the reducers.

    With an append reducer, what the branches share is appended once per branch.
    """
    merged = {name: isolate(value) for name, value in states[0].items()}
    for state in states[1:]:
        for name, value in state.items():
            spec = field_spec(fields, name)
            merged[name] = reduce_field(
                spec, merged.get(name, MISSING), [("fold", isolate(value))], step
            )
    return merged


def state_pairs(state_schema: Any, result: Any, where: str) -> list[tuple[str, Any]]:
    """A merge strategy's (or a filter's) result as `(field, value)` pairs.

    Raises:
        InvalidUpdateError: it returned something that is not a whole state.
    """
    pairs = state_schema.updates_from(result)
    if pairs is not None:
        return pairs
    if not isinstance(result, Mapping):
        raise InvalidUpdateError(
            f"{where} returned {type(result).__name__}; expected a dict (or model) of the "
            "whole state."
        )
    return list(result.items())
