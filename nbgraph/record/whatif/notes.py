"""What a remerge changes downstream (`RemergedRun.remerge_notes` and `routing_changes`): the
nodes that ran on a state that now differs, the routers that would choose otherwise, and how
the run ends.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from nbgraph.engine.facts import (
    Task,
    apply_writes,
    initial_values,
    replay_step,
    routes_again,
)
from nbgraph.isolation import isolate
from nbgraph.primitives import MISSING
from nbgraph.record.effects import same

if TYPE_CHECKING:
    from nbgraph.blueprint import GraphSpec
    from nbgraph.record.run import RunRecord  # (two runs compared; run.py calls this module)
    from nbgraph.record.whatif.remerge import RemergedRun

__all__ = ["consequences"]


_MAX_NOTES = 10
"""Notes of one kind listed before the rest are counted (`routing_changes` has every row)."""


@dataclass(slots=True)
class _Findings:
    """What `consequences` found, step by step."""

    first: list[str] = field(default_factory=list)
    resets: list[str] = field(default_factory=list)
    routes: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    rows: list[tuple] = field(default_factory=list)
    inputs: dict[str, tuple[list[int], dict[str, None]]] = field(default_factory=dict)

    def ran_on(self, node: str, step: int, differing: Sequence[str]) -> None:
        steps, fields = self.inputs.setdefault(node, ([], {}))
        steps.append(step)
        fields.update(dict.fromkeys(differing))

    def notes(self) -> list[str]:
        notes = self.first + _capped(self.resets, "root resets")
        notes += _capped(self.routes, "routing changes, listed in routing_changes")
        notes += _capped(self.unknown, "routings are unknown")
        if self.inputs:
            each = [
                f"{node!r} at {_steps(steps)} (in {_names(list(fields))})"
                for node, (steps, fields) in self.inputs.items()
            ]
            notes.append(
                f"Nodes ran on a state that differs: {'; '.join(each)}. What they wrote was "
                "replayed as recorded, though with this input they might have written "
                "something else."
            )
        return notes


def consequences(source: RunRecord, new: RemergedRun) -> tuple[list[str], list[tuple]]:
    """The notes on a re-merged run, and its routing changes as rows."""
    changes = ", ".join(f"{n!r} {a} -> {b}" for n, (a, b) in new.reducers.items())
    head = (
        f"Replayed the recorded writes of steps 0-{new.log.steps[-1].step} with other reducers "
        f"({changes or 'none changed'}); no node was run again."
    )
    found = _Findings()
    before: list[str] = []  # fields that differ after the previous step
    old_after, new_after = initial_values(source.graph), initial_values(new.graph)
    for recorded, step in zip(source.log.steps, new.log.steps, strict=False):
        number = step.step
        old_start, new_start = old_after, new_after  # read here, advanced by replay_step below
        if step.resets:  # the tasks read the last reset's state
            old_start = new_start = {k: isolate(v) for k, v in step.resets[-1].values.items()}
            found.resets += [
                f"Step {number}: the {reset.reason} for {reset.node!r} (a root reset) was "
                "replayed as recorded, though the state it was made from differs."
                for reset in (step.resets if before else ())
            ]
        start_diff = _differing(old_start, new_start)
        for task in step.tasks:
            if _input_differs(new.graph, task, start_diff):
                found.ran_on(task.node, number, start_diff)
        if not step.applied:
            break
        for task in step.tasks:  # a router's view differs only by the start or own writes
            own = {name for name, _ in task.writes}
            if new.graph.branches.get(task.node) and (start_diff or own & new.reducers.keys()):
                _check_routes(source, new, task, (old_start, new_start), found)
        old_after = replay_step(source.graph, old_after, recorded)
        new_after = replay_step(new.graph, new_after, step)
        before = _differing(old_after, new_after)
        if before and not found.first:
            found.first.append(f"The state first differs after step {number}, in {_names(before)}.")
    ending = _ending(source, new, bool(found.first))
    return [head, *found.notes(), *ending], found.rows


def _capped(notes: list[str], what: str) -> list[str]:
    if len(notes) <= _MAX_NOTES:
        return notes
    return [*notes[:_MAX_NOTES], f"... and {len(notes) - _MAX_NOTES} more {what}."]


def _steps(steps: list[int]) -> str:
    """`step 3`, or `steps 2-5, 8` (runs of consecutive steps folded)."""
    spans: list[list[int]] = []
    for step in steps:
        if spans and step == spans[-1][1] + 1:
            spans[-1][1] = step
        else:
            spans.append([step, step])
    shown = ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in spans[:_MAX_NOTES])
    more = ", ..." if len(spans) > _MAX_NOTES else ""
    return f"step {steps[0]}" if len(steps) == 1 else f"steps {shown}{more}"


def _ending(source: RunRecord, new: RunRecord, differs: bool) -> list[str]:
    last, recorded_last = new.log.steps[-1], source.log.steps[-1].step
    if new.status == "failed" and not last.applied and not last.failed:
        went_on = (
            f"the recorded run went on to step {recorded_last}"
            if recorded_last > last.step
            else "it was the recorded run's last step"
        )
        return [
            f"Step {last.step} fails under the new reducers ({_error(new.error)}); the "
            f"re-merged run stops there ({went_on})."
        ]
    if last.failed:
        return [
            f"Step {last.step}: {_names([t.node for t in last.failed])} raised in the recorded "
            f"run ({_error(last.failed[0].error)}); the re-merged run fails there too."
        ]
    if new.status == "running":
        return [
            f"Step {last.step} failed in the recorded run ({_error(source.error)}) but applies "
            "under the new reducers; the record ends there, so what would have run next is "
            "unknown (status 'running': the run did not end)."
        ]
    if not differs:
        return ["Nothing differs: the state after every step is the same as recorded."]
    return []


def _differing(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[str]:
    names = [*a, *(n for n in b if n not in a)]
    return [n for n in names if not same(a.get(n, MISSING), b.get(n, MISSING))]


def _names(names: Sequence[str]) -> str:
    return ", ".join(repr(n) for n in dict.fromkeys(names))


def _input_differs(graph: GraphSpec, task: Task, differing: Sequence[str]) -> bool:
    """Whether a node's input differed (a send's input is its recorded argument)."""
    if task.kind != "edge" or not differing:
        return False
    node = graph.nodes.get(task.node)
    if node is None or node.input is None:
        return True
    return any(name in node.input.fields for name in differing)


def _check_routes(
    source: RunRecord,
    new: RunRecord,
    task: Task,
    starts: tuple[dict[str, Any], dict[str, Any]],
    found: _Findings,
) -> None:
    """Call the task's routers on the new view if it differs; note or list what they say."""
    where = f"Step {task.step}: the routing after {task.node!r}"
    try:
        old_view = _router_values(source.graph, task, starts[0])
        new_view = _router_values(new.graph, task, starts[1])
    except Exception as error:
        found.unknown.append(f"{where} is unknown: its view cannot be rebuilt ({_error(error)}).")
        return
    if not _differing(old_view, new_view):
        return
    old, why_old = routes_again(source.graph, task, starts[0], source.log)
    now, why_now = routes_again(new.graph, task, starts[1], source.log)
    if old is None or now is None:
        found.unknown.append(f"{where} is unknown: {why_old or why_now}.")
        return
    recorded = list(task.routes)
    cut = len(recorded) - len(old)
    if cut < 0 or not same(recorded[cut:], old):
        found.unknown.append(
            f"{where} is unknown: on the recorded state its routers choose {old}, but the "
            f"record says {recorded[max(cut, 0) :]} (they are not a pure function of the state)."
        )
        return
    would = recorded[:cut] + now
    if not same(would, recorded):
        found.rows.append((task.step, task.node, recorded, would))
        found.routes.append(
            f"{where} changes: its routers would now choose {now} instead of {old}, so after "
            f"step {task.step} the run would have gone another way (what follows was replayed "
            "as recorded)."
        )


def _router_values(graph: GraphSpec, task: Task, start: dict[str, Any]) -> dict[str, Any]:
    """What the task's routers see: the step's start plus only its own writes, folded."""
    values = dict(start)
    for name in dict(task.writes):  # (copies of their own: a reducer may extend one in place)
        if name in values:
            values[name] = isolate(values[name])
    apply_writes(graph.fields, values, task.writes, task.step, task.node)
    return values


def _error(error: BaseException | None) -> str:
    return f"{type(error).__name__}: {str(error).rstrip('.')}"
