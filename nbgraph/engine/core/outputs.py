"""Reading a run's state as callers see it: `stream_mode="values"` chunks, `invoke`'s output
(with a paused step's finished writes), and whether a step changed what is shown.

`Showing` is mixed into `engine.loop.RunLoop` (whose `__init__` sets the state it uses).
"""

from __future__ import annotations

from typing import Any

from nbgraph.engine.core.runlog import StepLog
from nbgraph.engine.core.writes import applied_writes, apply_writes, group_writes
from nbgraph.errors import InvalidUpdateError
from nbgraph.isolation import isolate


class Showing:
    """What `invoke` returns and `stream` shows of the loop's values."""

    # --- reading the state -----------------------------------------------------------------

    def stream_values(self) -> dict[str, Any]:
        """Every stored field (isolated), as `stream_mode="values"` shows it."""
        return {k: isolate(v) for k, v in self.values.items() if k in self.stream_keys}

    def output(self) -> dict[str, Any]:
        """The output schema's fields that have a value (isolated); while paused by
        `interrupt()`, with the paused step's finished tasks' writes applied (LangGraph's)."""
        pending = self._with_paused_writes() if self.paused else None
        return self.output_of(self.values if pending is None else pending)

    def paused_values(self) -> dict[str, Any] | None:
        """While paused by `interrupt()`: the shown fields with the writes of the paused
        step's finished tasks applied, as LangGraph's last `"values"` chunk shows them (the
        checkpoint keeps those writes apart, and the resumed step applies them); None if
        they wrote no shown field."""
        tasks = self.log.steps[-1].tasks if self.paused and self.log.steps else ()
        keys = self.stream_keys
        if not any(key in keys for t in tasks if not t.interrupts for key, _ in t.writes):
            return None
        values = self._with_paused_writes()
        return None if values is None else {k: v for k, v in values.items() if k in keys}

    def _with_paused_writes(self) -> dict[str, Any] | None:
        done = [t for t in self.log.steps[-1].tasks if not t.interrupts and t.writes]
        if not done or self.spec.semantics != "supersteps":
            return None
        values = {k: isolate(v) for k, v in self.values.items()}
        try:
            apply_writes(
                self.spec.fields,
                values,
                group_writes(applied_writes(self.spec.fields, done)),
                self.step,
            )
        except InvalidUpdateError:  # their conflict is raised when the step runs again
            return None
        return values

    def output_of(self, values: dict[str, Any]) -> dict[str, Any]:
        """`values` as `invoke` returns them: the output schema's fields (isolated)."""
        fields = self.spec.fields
        keys = self.spec.output.fields if not self.spec.open_schema else values
        return {
            k: isolate(values[k])
            for k in keys
            if k in values and (k not in fields or fields[k].transient is None)
        }

    def touched_stream_keys(self, log: StepLog) -> bool:
        """Whether the step wrote (or cleared) a field that `"values"` shows."""
        keys = self.stream_keys
        return bool(log.cleared) or any(f in keys for f in log.written) or bool(log.resets)
