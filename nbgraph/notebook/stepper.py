"""`Stepper`: a run advanced one superstep per cell (`app.stepper(input)`), with its record
growing as it goes.

    st = app.stepper({"log": []})
    st.step()                    # the input, through the reducers: that step's effects
    st.step()                    # the first superstep
    st.state, st.next            # the state now; the nodes the next step runs
    st.update({"n": 5})          # change the state before the next step (an "update" step)
    st.run_until(field="answer") # breakpoints: a node about to run, a field written, when(state)
    st.finish()                  # the rest; returns the output, as invoke does
    st.run                       # the `Run` so far: every table, drawing and the inspector

It drives the state machine `invoke` uses (`nbgraph.engine.stepping`), so a stepped run's
record equals the record of the same run done by `invoke`.
"""

from __future__ import annotations

import html
from typing import Any

from nbgraph.engine.core.runlog import StepLog
from nbgraph.engine.stepping import StepDriver
from nbgraph.notebook.fork import attach_app
from nbgraph.notebook.run import Run

__all__ = ["Stepper"]


class Stepper:
    """One run of a compiled graph, one superstep per `step()`.

    Attributes:
        app: the compiled graph.
    """

    def __init__(self, app: Any, input: Any, config: dict[str, Any] | None, kwargs: dict) -> None:
        self.app = app
        self._driver = StepDriver(app, input, config, kwargs)

    # --- where it is -----------------------------------------------------------------------

    @property
    def state(self) -> dict[str, Any]:
        """The state now (empty before the first step applies the input)."""
        return self._driver.state

    @property
    def next(self) -> tuple[str, ...]:
        """The nodes the next `step()` runs (`("__start__",)` before the input)."""
        return self._driver.next

    @property
    def done(self) -> bool:
        """Whether the run is over (finished or failed; a paused run is not)."""
        return self._driver.done and not self._driver.paused

    @property
    def paused(self) -> bool:
        """Whether the run waits for `resume()` (an `interrupt()` or a breakpoint)."""
        return self._driver.done and self._driver.paused

    @property
    def interrupts(self) -> list[Any]:
        """What the paused run asks (`Interrupt`s), else []."""
        return list(self._driver.loop.paused) if self.paused else []

    @property
    def run(self) -> Run:
        """The `Run` so far (of the latest segment: a resume starts a new one, see `runs`)."""
        return attach_app(Run(self._driver.log), self.app)  # (a checkpointed one can fork)

    @property
    def runs(self) -> list[Run]:
        """Every segment's `Run`, oldest first: one, plus one per `resume()`."""
        return [attach_app(Run(log), self.app) for log in self._driver.logs]

    # --- moving ----------------------------------------------------------------------------

    def step(self) -> Any:
        """Run exactly one superstep (the first applies the input) and return its effects
        (a DataFrame that shows the step drawn over the graph above its rows); an empty one
        when the run is over or paused.

        Raises:
            Exception: what a node raised (`run` keeps the failed step).
        """
        before = self._driver.values_now()
        return self._effects([self._driver.step()], before)

    def run_until(self, node: str | None = None, field: str | None = None, when: Any = None) -> Any:
        """Step until `node` is about to run, a step changes `field`, or `when(state)` holds
        after a step — or the run ends; the effects of the steps taken.

        Raises:
            InvalidArgumentError: no condition, an unknown node or field.
        """
        before = self._driver.values_now()
        return self._effects(self._driver.run_until(node=node, field=field, when=when), before)

    def update(self, values: Any, as_node: str | None = None) -> Any:
        """Change the state before the next step, as `update_state` does: `values` go
        through the reducers as `as_node`'s write (default: the node that ran last) and its
        edges decide what runs next. Recorded as an "update" step; returns its effects.

        Raises:
            InvalidUpdateError: before the first step or after the end; no `as_node` while
                several nodes ran last; values that are not a dict.
        """
        before = self._driver.values_now()
        return self._effects([self._driver.update(values, as_node)], before)

    def finish(self) -> Any:
        """Run the rest; return the output as `invoke` does (with `"__interrupt__"` if the
        run paused)."""
        self._driver.finish()
        output = dict(self._driver.loop.output())
        if self.paused and self._driver.loop.paused:
            output["__interrupt__"] = list(self._driver.loop.paused)
        return output

    def resume(self, answer: Any = None) -> None:
        """Answer the pause (`Command(resume=answer)`; at a breakpoint just go on); the next
        `step()` runs the resumed step. Needs the graph's checkpointer, as resuming does.

        Raises:
            InvalidUpdateError: the run is not paused.
        """
        self._driver.resume(answer)

    def close(self) -> None:
        """Stop here; the thread's claim goes and what ran stays in `run`."""
        self._driver.close()

    # --- showing ---------------------------------------------------------------------------

    def _caption(self) -> str:
        driver = self._driver
        done = [s for s in driver.log.steps if s.tasks]
        where = f"step {done[-1].step}" if done else "not started"
        if self.paused:
            asks = "; ".join(repr(getattr(i, "value", i)) for i in self.interrupts)
            return f"{where}: paused{', asks ' + asks if asks else ''} — resume(answer)"
        if self.done:
            return f"{where}: {driver.log.status}"
        return f"{where}; next: {', '.join(self.next) or 'nothing'}"

    def _effects(self, logs: list[StepLog | None], before: dict[str, Any] | None) -> Any:
        """The effects of the steps just taken (`logs`, from the state `before` them), shown
        with the last one drawn over the graph."""
        from nbgraph.record.tails import steps_effects
        from nbgraph.views.inspector.step_view import step_effects

        taken = [log for log in logs if log is not None]
        run = self.run
        picture = run.draw(step=taken[-1].step).source if taken else ""
        return step_effects(steps_effects(run, taken, before), picture, self._caption())

    def __repr__(self) -> str:
        return f"<Stepper {self.app.name or 'graph'!r}: {self._caption()}>"

    def _repr_html_(self) -> str:
        from nbgraph.views.inspector.step_view import stepper_html

        question = "; ".join(repr(getattr(i, "value", i)) for i in self.interrupts)
        return stepper_html(self._caption(), self.state, question) + (
            f"<p>{html.escape('st.step() runs the next superstep')}</p>" if not self.done else ""
        )
