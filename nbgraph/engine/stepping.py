"""Stepping a run one superstep at a time (`app.stepper(...)`), with the state machine
`invoke` uses.

A `StepDriver` holds the same `drive` generator `invoke` runs to the end, and takes one
committed step from it per `step()`: between two calls the run is suspended just after a
commit, where the state is whole (and, with a checkpointer, saved). `update()` writes there
as LangGraph's `update_state` writes to the latest checkpoint: through the reducers, as a
node whose edges add what they trigger to what was already due — unless that node is due
itself, when the update stands in for the due step (its other tasks do not run).

The run's thread stays claimed while the driver holds a started run, as it is during
`invoke`; `close()` (or finishing, or dropping the driver) lets it go.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from nbgraph.engine.core.runlog import RunLog, StepLog
from nbgraph.engine.drive import STEP_MODE, drive
from nbgraph.engine.nested.subruns import pass_pause_up
from nbgraph.engine.persistence.snapshots import write_as_node
from nbgraph.errors import InvalidArgumentError, InvalidUpdateError
from nbgraph.isolation import isolate
from nbgraph.primitives import START, Command

__all__ = ["StepDriver"]


class StepDriver:
    """One run of `app`, advanced a superstep at a time.

    Attributes:
        app: the compiled graph.
        loop: the `RunLoop` of the current segment (a resume starts a new one).
        logs: the `RunLog` of each segment, oldest first (one unless the run was resumed).
    """

    def __init__(self, app: Any, input: Any, config: dict[str, Any] | None, kwargs: dict) -> None:
        self.app = app
        self._config = config
        self._kwargs = {"durability": "sync", **kwargs}  # (each step shown is saved)
        self.logs: list[RunLog] = []
        self._begin(input)

    def _begin(self, input: Any) -> None:
        self.loop = self.app._start(self._config, dict(self._kwargs))
        self.logs.append(self.loop.log)
        self._steps: Iterator[StepLog] | None = None
        self._input = input
        self.done = False  # the current segment ended (finished, paused or failed)

    # --- where the run is ------------------------------------------------------------------

    @property
    def log(self) -> RunLog:
        """The record of the current segment."""
        return self.loop.log

    @property
    def started(self) -> bool:
        """Whether the first step (the input) ran."""
        return self._steps is not None

    @property
    def paused(self) -> bool:
        """Whether the run stopped for a person: `interrupt()` or a breakpoint."""
        return bool(self.loop.paused or self.loop.at_breakpoint)

    @property
    def state(self) -> dict[str, Any]:
        """The state now (before the first step: the graph's initial values, no input yet)."""
        return dict(self.loop.output()) if self.started else {}

    def values_now(self) -> dict[str, Any] | None:
        """A copy of the whole state now (managed fields too), for a replay of the next
        steps' effects; None before the first step (the replay starts from the graph's
        initial values)."""
        if not self.started:
            return None
        return {name: isolate(value) for name, value in self.loop.values.items()}

    @property
    def next(self) -> tuple[str, ...]:
        """The nodes the next step runs (`("__start__",)` before the input is applied;
        empty when the run is over or waits for an answer)."""
        if not self.started:
            return (START,)
        if self.done and not self.paused:
            return ()
        if self.done and (self.loop.paused or self.loop.at_breakpoint == "subgraph"):
            # (the paused step's tasks run again on resume; "subgraph": one stopped at its
            # graph's breakpoint)
            return tuple(dict.fromkeys(task.node for task in self.loop.log.steps[-1].tasks))
        return _next_names(self.loop)

    # --- moving ----------------------------------------------------------------------------

    def step(self) -> StepLog | None:
        """Run exactly one superstep (the first applies the input); its log, or None when
        the run is over or paused.

        Raises:
            Exception: what a node raised (the record keeps the failed step).
        """
        if self.done:
            return None
        if self._steps is None:
            self._steps = self._drive()
        try:
            log = next(self._steps)
            loop = self.loop
            if loop.paused or loop.at_breakpoint or not _next_names(loop):
                next(self._steps, None)  # (nothing runs: the run ends, paused or over)
                self.done = True
            return log
        except StopIteration:
            self.done = True
            return None
        except BaseException:
            self.done = True
            raise

    def _drive(self) -> Iterator[StepLog]:
        app, loop = self.app, self.loop
        with app._running(loop), contextlib.closing(drive(loop, self._input, STEP_MODE)) as steps:
            for _, log in steps:
                yield log
        pass_pause_up(loop)

    def run_until(
        self,
        node: str | None = None,
        field: str | None = None,
        when: Callable[[dict[str, Any]], bool] | None = None,
    ) -> list[StepLog]:
        """Step until `node` is about to run, a step changes `field`, or `when(state)` is
        true after a step (whichever comes first), or the run ends; the steps taken.

        Raises:
            InvalidArgumentError: no condition, or an unknown node or field.
        """
        self._check_until(node, field, when)
        taken: list[StepLog] = []
        while not (node is not None and node in self.next and self.started):
            log = self.step()
            if log is None:
                break
            taken.append(log)
            if field is not None and any(change.field == field for change in log.changes):
                break
            if when is not None and when(self.state):
                break
        return taken

    def _check_until(self, node: Any, field: Any, when: Any) -> None:
        spec = self.app.spec
        if node is None and field is None and when is None:
            raise InvalidArgumentError(
                "run_until needs a condition: node='name' (stop before it runs), "
                "field='key' (stop after a step that changes it) or when=lambda state: ...; "
                "finish() runs to the end."
            )
        if node is not None and node not in spec.nodes:
            raise InvalidArgumentError(
                f"run_until(node={node!r}): no such node; nodes: {list(spec.nodes)}."
            )
        if field is not None and field not in spec.fields:
            raise InvalidArgumentError(
                f"run_until(field={field!r}): no such field; fields: {list(spec.fields)}."
            )

    def finish(self) -> None:
        """Run the rest of the current segment (to the end, a pause or a failure)."""
        while self.step() is not None:
            pass

    def resume(self, answer: Any = None) -> None:
        """Answer the pause (`Command(resume=answer)`; at a breakpoint, just go on) and start
        the run's next segment on its thread.

        Raises:
            InvalidUpdateError: the run is not paused.
        """
        if not self.paused:
            raise InvalidUpdateError(
                "resume() answers a run paused by interrupt() or a breakpoint; this stepper "
                f"is {'finished' if self.done else 'not paused'}."
            )
        input = None if self.loop.at_breakpoint and answer is None else Command(resume=answer)
        self._begin(input)

    def close(self) -> None:
        """Stop the run here (the thread's claim goes); what ran stays recorded."""
        if self._steps is not None:
            self._steps.close()  # type: ignore[attr-defined]
        self.done = True

    # --- changing the state ----------------------------------------------------------------

    def update(self, values: Any, as_node: str | None = None) -> StepLog:
        """Write `values` before the next step, as LangGraph's `update_state` writes them:
        through the reducers, as `as_node` (default: the node that wrote last, as LangGraph
        picks), whose edges add what they trigger to what was already due; when `as_node` is
        itself due, the update stands in for the due step (its other tasks do not run).
        Recorded as an "update" step.

        Raises:
            InvalidUpdateError: before the first step, after the end, or no `as_node` while
                several nodes wrote last.
            InvalidArgumentError: an unknown `as_node`.
        """
        loop, spec = self.loop, self.app.spec
        if not self.started or (self.done and not self.paused):
            when = "before the first step" if not self.started else "after the run ended"
            raise InvalidUpdateError(
                f"update() {when}: call step() first; the state exists from the input on, "
                "and a finished run is changed with app.update_state on its thread."
            )
        node = as_node or _last_writer(loop.log)
        if node not in spec.nodes and node != START:
            raise InvalidArgumentError(
                f"update(as_node={node!r}): no such node; nodes: {list(spec.nodes)}."
            )
        if not isinstance(values, Mapping) and not hasattr(values, "model_dump"):
            raise InvalidUpdateError(
                f"update() takes a dict of field values, got {type(values).__name__}."
            )
        if spec.semantics == "branches":
            return _update_lineages(loop, node, values)
        log = write_as_node(loop, node, values, replace_due=node in _next_names(loop))
        loop.schedule.queue_once()  # (what was due stays due, once: as in LangGraph, an update
        return log  # adds)


def _update_lineages(loop: Any, node: str, values: Any) -> StepLog:
    """`update()` in a branch-lineage run, as `app.update_state` does on a branch thread:
    the live lineages merged into one, from which the update grows; what was due is
    dropped, a waiting edge that fired for a node not run yet stays fired when the update
    writes as one of its sources, and the update's edges decide what runs next."""
    from nbgraph.engine.lineages.checkpoints import merged_values

    live = loop.live()
    due = {name: [s for srcs, _ in items for s in srcs] for name, items in loop.arrivals.items()}
    merged = merged_values(loop.spec, live, loop.step) if live else loop.values
    for queue in (loop.arrivals, loop.later):
        queue.clear()
    loop.sends.clear()
    loop.ended.clear()
    loop.captured = [[] for _ in loop.captured]
    loop.schedule.forget_seen()
    loop.start_merged(merged, loop.step + 1)
    return write_as_node(loop, node, values, due=due)


def _last_writer(log: RunLog) -> str:
    """The node of the last step that ran nodes, if it ran one (LangGraph's default
    `as_node`); START right after the input."""
    for step in reversed(log.steps):
        nodes = {task.node for task in step.tasks}
        if not nodes:
            continue
        if len(nodes) > 1:
            raise InvalidUpdateError(
                f"Step {step.step} ran several nodes ({', '.join(sorted(nodes))}): say which "
                "one writes with update(values, as_node=...)."
            )
        return nodes.pop()
    return START


def _next_names(loop: Any) -> tuple[str, ...]:
    """The nodes `loop`'s next superstep runs, in task order (edges, then Sends; the deferred
    nodes when nothing else is left)."""
    pulled = getattr(loop, "arrivals", None)  # (branch lineages keep arrivals, not pulls)
    if pulled is None:
        pulled, sent = loop.schedule.pull, [send.node for _, send in loop.schedule.push]
        deferred = loop.schedule.deferred
    else:
        sent = [send.node for _, send, _ in loop.sends]
        deferred = loop.later
    if not pulled and not sent:
        pulled = deferred
    return tuple(sorted(pulled)) + tuple(sent)
