"""`remerge`: a recorded run's writes folded again through other reducers, and what that changes.

No node runs again. Every fold goes through `apply_writes`, the engine's own; routers whose
view differs are called again to see where the run would have gone another way.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping
from functools import cached_property
from typing import TYPE_CHECKING, Any

from nbgraph.engine.facts import (
    RunLog,
    StepLog,
    applied_writes,
    apply_writes,
    clear_ephemeral,
    group_writes,
    initial_values,
    merge_unreduced,
)
from nbgraph.isolation import isolate
from nbgraph.primitives import MISSING
from nbgraph.record.tables import frame
from nbgraph.record.whatif.notes import consequences
from nbgraph.reducers import (
    Reducer,
    check_reducer_callable,
    get_reducer,
    reducer_from_callable,
    registered_names,
)
from nbgraph.schema import FieldSpec, empty_factory

if TYPE_CHECKING:
    import pandas as pd

    from nbgraph.blueprint import GraphSpec
    from nbgraph.record.run import RunRecord

__all__ = ["RemergedRun", "remerge"]

_ROUTING_COLUMNS = ("step", "node", "recorded", "would_route")


# --- the same writes through other reducers ------------------------------------------------------


class RemergedRun:
    """A run rebuilt from another run's recorded writes under other reducers (`Run.remerge`):
    what it adds to the source run's own class (`RunRecord`, or `nbgraph.Run`, which draws),
    put on top of that class by `remerge` (so the record's run module imports this one, not
    the other way).

    Attributes:
        source: the run whose writes were replayed.
        reducers: per field changed, `(old reducer name, new reducer name)`.
        remerge_notes: what the replay shows and what it cannot know, in plain English.
    """

    def __init__(
        self, log: RunLog, source: RunRecord, reducers: dict[str, tuple[str, str]]
    ) -> None:
        super().__init__(log)
        self.source = source
        self.reducers = reducers
        self.remerge_notes: list[str] = []
        self._routing_rows: list[tuple] = []

    def __repr__(self) -> str:
        changed = ", ".join(f"{n}: {a} -> {b}" for n, (a, b) in self.reducers.items())
        return f"{super().__repr__()[:-1]}, re-merged with {changed or 'the same reducers'}>"

    @cached_property
    def routing_changes(self) -> pd.DataFrame:
        """Where a router would have sent the run elsewhere: step, node, recorded, would_route.

        `recorded` is the task's recorded routes (Command gotos, then router choices; static
        edges are not routes); `would_route` is the same with the routers called again.
        """
        return frame(self._routing_rows, _ROUTING_COLUMNS)


@functools.cache
def _remerged_class(base: type[RunRecord]) -> type[RemergedRun]:
    """`RemergedRun` on top of `base`: a re-merged `nbgraph.Run` is an `nbgraph.Run` too."""
    if issubclass(base, RemergedRun):
        return base
    return type("RemergedRun", (RemergedRun, base), {"__doc__": RemergedRun.__doc__})


def remerge(run: RunRecord, reducers: Mapping[str, Any]) -> RemergedRun:
    """The run as it would have been had some fields other reducers; no node runs again.

    Each recorded step's writes are folded again through the new reducers. The first step
    where that raises (two writes to a field now without a reducer, say) fails the new run,
    which stops there. Then each router whose view differs (the step's starting state plus its
    own node's writes) is called again; where it would choose differently, `routing_changes`
    has a row. Nodes that ran on a state that differs are named in `remerge_notes`: their
    writes were replayed as recorded, though they might have written something else.

    Args:
        run: the recorded run.
        reducers: `{field: reducer}`, each a registered name, a two-argument callable, or
            `"overwrite"` (or None): no reducer, one write per step, no starting value.

    Returns:
        A `RemergedRun` (of the run's own class: an `nbgraph.Run` draws) with `remerge_notes`
        and `routing_changes`.

    Raises:
        ValueError: naming each unknown field, unknown reducer name or unusable callable.
    """
    fields, changed = _swap_reducers(run, reducers)
    graph = dataclasses.replace(run.graph, fields=fields)
    new = _remerged_class(type(run))(_replay(run.log, graph, changed), run, changed)
    new.remerge_notes, new._routing_rows = consequences(run, new)
    return new


def _swap_reducers(
    run: RunRecord, reducers: Mapping[str, Any]
) -> tuple[dict[str, FieldSpec], dict[str, tuple[str, str]]]:
    if not isinstance(reducers, Mapping):
        raise TypeError(
            f"reducers must be a dict of field -> reducer, got {type(reducers).__name__}."
        )
    graph = run.graph
    written = {name for task in run.log.tasks() for name, _ in task.writes}
    fields, changed, problems = dict(graph.fields), {}, []
    for name, given in reducers.items():
        spec = graph.fields.get(name)
        if spec is None and graph.open_schema and name in written:
            spec = FieldSpec(name)
        if spec is None:
            known = [n for n, f in graph.fields.items() if not f.managed]
            known += sorted(written - set(known)) if graph.open_schema else []
            problems.append(f"{name!r} is not a field of this run's state; fields: {known}")
            continue
        if spec.managed:
            problems.append(f"{name!r} is managed by the engine and takes no writes")
            continue
        reducer, problem = _reducer(given)
        if problem:
            problems.append(f"field {name!r}: {problem}")
            continue
        initial = None if reducer is None else spec.initial or empty_factory(spec.type)
        fields[name] = dataclasses.replace(spec, reducer=reducer, initial=initial)
        changed[name] = (spec.reducer_name, fields[name].reducer_name)
    if problems:
        raise ValueError(
            "remerge() cannot use these reducers:\n" + "\n".join(f"  - {p}." for p in problems)
        )
    return fields, changed


def _reducer(given: Any) -> tuple[Reducer | None, str | None]:
    """The reducer `given` stands for (None: no reducer), or why it cannot be one."""
    if given is None or (isinstance(given, str) and given == "overwrite"):
        return None, None
    if isinstance(given, Reducer):
        return given, None
    if isinstance(given, str):
        found = get_reducer(given)
        if found is None:
            names = ", ".join(registered_names())
            return None, f"no reducer is registered as {given!r}; registered: {names}"
        return found, None
    problem = check_reducer_callable(given)
    if problem:
        return None, f"the reducer {problem}"
    return reducer_from_callable(given), None


def _replay(source: RunLog, graph: GraphSpec, changed: Mapping[str, Any]) -> RunLog:
    """A new log over the same recorded tasks, each step folded through `graph`'s reducers."""
    log = RunLog(graph, source.input, source.config, warnings=list(source.warnings))
    log.status, log.error = source.status, source.error
    ephemeral = graph.ephemeral
    values = initial_values(graph)
    for recorded in source.steps:
        afters = recorded.afters
        if afters is not None:
            afters = {k: v for k, v in afters.items() if k not in changed}
        step = StepLog(
            recorded.step, recorded.tasks, graph.fields, resets=recorded.resets, afters=afters
        )
        log.steps.append(step)
        for reset in recorded.resets:
            values = {name: isolate(value) for name, value in reset.values.items()}
        if recorded.failed:
            log.status, log.error = "failed", recorded.failed[0].error
            break
        try:
            step.merged = _merged(graph, recorded, values, changed)
            staged = _staged(graph, step, values)
        except Exception as error:
            error.add_note(f"nbgraph: while re-merging the writes of step {step.step}")
            log.status, log.error = "failed", error
            break
        values.update(staged)
        step.written = tuple(staged)
        step.cleared = clear_ephemeral(ephemeral, values, step.written)
        step.applied = True
        if not recorded.applied:  # it failed as recorded; the record has nothing after it
            log.status, log.error = "running", None
    log.final = values
    return log


def _merged(
    graph: GraphSpec, recorded: StepLog, values: dict[str, Any], changed: Mapping[str, Any]
) -> Any:
    """The step's `state_merger` writes: as recorded, unless the fields it merges changed."""
    if graph.state_merger is None or len(recorded.tasks) < 2:
        return ()
    if not any(name in changed for task in recorded.tasks for name, _ in task.writes):
        return recorded.merged
    per_task = [(task.node, task.writes) for task in recorded.tasks]
    return merge_unreduced(graph.state_merger, graph.fields, values, per_task)


def _staged(graph: GraphSpec, step: StepLog, values: dict[str, Any]) -> dict[str, Any]:
    """Each written field's value after `step`; `values` stay as they were if a fold raises."""
    grouped = group_writes(applied_writes(graph.fields, step.tasks, step.merged))
    staged = {name: isolate(values.get(name, MISSING)) for name in grouped}  # (in write order)
    apply_writes(graph.fields, staged, grouped, step.step, pinned=step.afters)
    return staged
