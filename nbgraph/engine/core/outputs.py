"""Reading a run's state as callers see it: `stream_mode="values"` chunks, `invoke`'s output
(with a paused step's finished writes), and whether a step changed what is shown.

Functions of a `RunLoop`, whose methods of these names call them (branch runs replace some).
"""

from __future__ import annotations

from typing import Any

from nbgraph.engine.core.calls import EntrypointState
from nbgraph.engine.core.runlog import StepLog
from nbgraph.engine.core.writes import applied_writes, apply_writes, group_writes
from nbgraph.isolation import ATOMS, isolate

__all__ = ["output", "output_of", "paused_values", "stream_values", "touched_stream_keys"]


def stream_values(run: Any) -> dict[str, Any]:
    """Every stored field (isolated), as `stream_mode="values"` shows it: in the order the
    schemas declare them, as LangGraph's (not the order they were first written in)."""
    values, keys = run.values, run.stream_keys
    return {k: isolate(values[k]) for k in run.spec.fields if k in keys and k in values}


def output(run: Any) -> dict[str, Any]:
    """The output schema's fields that have a value (isolated); while paused by
    `interrupt()`, with the paused step's finished tasks' writes applied (LangGraph's)."""
    pending = _with_paused_writes(run) if run.paused or run.at_breakpoint == "subgraph" else None
    return output_of(run, run.values if pending is None else pending)


def paused_values(run: Any) -> dict[str, Any] | None:
    """While paused by `interrupt()`: the shown fields with the writes of the paused
    step's finished tasks applied, as LangGraph's last `"values"` chunk shows them (the
    checkpoint keeps those writes apart, and the resumed step applies them); None if
    they wrote no shown field."""
    tasks = run.log.steps[-1].tasks if run.paused and run.log.steps else ()
    keys = run.stream_keys
    if not any(key in keys for t in tasks if not t.interrupts for key, _ in t.writes):
        return None
    values = _with_paused_writes(run)
    return None if values is None else {k: v for k, v in values.items() if k in keys}


def _with_paused_writes(run: Any) -> dict[str, Any] | None:
    done = [t for t in run.log.steps[-1].tasks if not t.interrupts and t.writes]
    if not done or run.spec.semantics != "supersteps":
        return None
    values = {k: isolate(v) for k, v in run.values.items()}
    # (writes that conflict raise InvalidUpdateError here, as LangGraph's output raises it)
    apply_writes(run.spec.fields, values, group_writes(applied_writes(run.spec.fields, done)),
                 run.step)  # fmt: skip
    return values


def output_of(run: Any, values: dict[str, Any]) -> dict[str, Any]:
    """`values` as `invoke` returns them: the output schema's fields (isolated)."""
    fields = run.spec.fields
    keys = run.spec.output.fields if not run.spec.open_schema else values
    shown = {}
    for k in keys:  # (a loop, no comprehension: every `invoke` ends here; an atom as it is)
        if k in values and (k not in fields or fields[k].transient is None):
            value = values[k]
            shown[k] = value if type(value) in ATOMS else isolate(value)
    return shown


def touched_stream_keys(run: Any, log: StepLog) -> bool:
    """Whether the step wrote (or cleared) a field that `"values"` shows."""
    keys = run.stream_keys
    if any(f in keys for f in log.written) or any(f in keys for f in log.cleared):
        return True
    if run.spec.state.cls is EntrypointState:  # (as LangGraph: a resumed thread's output
        return bool(log.resets) and not log.written  # is shown, a new input's run starts bare)
    return bool(log.resets)
