"""Committing a step: a finished superstep's writes applied, its checkpoint saved, and the
edges, waiting edges and routes it triggers queued for the next step.

`Committing` is mixed into `engine.loop.RunLoop` (whose `__init__` sets the state it uses).
"""

from __future__ import annotations

from typing import Any

from nbgraph.engine.core.plans import NO_RESET
from nbgraph.engine.core.runlog import StepLog
from nbgraph.engine.core.tasks import Task, state_for
from nbgraph.engine.core.writes import (
    applied_writes,
    apply_grouped,
    apply_task_writes,
    clear_ephemeral,
    field_spec,
    group_writes,
    merge_unreduced,
    reduce_field,
)
from nbgraph.engine.persistence.persist import checkpoint_payload
from nbgraph.isolation import isolate
from nbgraph.types import END, MISSING, Send


class Committing:
    """`RunLoop.commit` and the bookkeeping of which nodes a step triggers."""

    # --- committing a step -----------------------------------------------------------------

    def commit(self, tasks: list[Task], source: str = "loop") -> StepLog:
        """Apply a finished step's writes in write order and work out what runs next.

        Raises:
            The first failed task's exception (in write order), after recording the step.
        """
        log = self.open_step(tasks)
        if self.paused:
            return log  # not applied: the step runs again, answered, on resume
        try:
            if len(tasks) == 1:  # a lone task (a loop's step): its writes, in one pass
                task = tasks[0]
                plan = self.plans.nodes.get(task.node)
                if plan is not None and plan.plain:
                    self._trigger_plain(task, plan.targets)
                else:
                    self._trigger(tasks)
                written = apply_task_writes(self.spec.fields, self.values, task, self.step)
            else:
                if self.spec.state_merger is not None:
                    per_task = [(t.node, t.writes) for t in tasks]
                    log.merged = merge_unreduced(
                        self.spec.state_merger, self.spec.fields, self.values, per_task
                    )
                grouped = group_writes(applied_writes(self.spec.fields, tasks, log.merged))
                self._trigger(tasks)
                apply_grouped(self.spec.fields, self.values, grouped, self.step)
                written = tuple(grouped)
        except Exception as error:
            error.add_note(f"nbgraph: while applying the writes of step {self.step}")
            raise
        log.written = written
        if self.ephemeral:
            log.cleared = clear_ephemeral(self.ephemeral, self.values, log.written)
        log.applied = True
        if self.thread is not None:
            self.thread.save(self.step, source, checkpoint_payload(self, log), self.values)
            self.stop_after(tasks)
        return log

    def open_step(self, tasks: list[Task], joins: list[Any] | tuple[()] = ()) -> StepLog:
        """Record a finished step (its resets, joins and tasks) before its writes are
        applied; raise its first failed task's exception; note the questions that pause it.

        Raises:
            The first failed task's exception, in write order.
        """
        log = StepLog(
            self.step, tasks, self.spec.fields, resets=self._pending_resets or (), joins=joins
        )  # (a step without resets keeps no empty list: long runs record thousands of steps)
        self._pending_resets = ()
        self.log.steps.append(log)
        for task in tasks:
            if task.error is not None:
                raise task.error
        if self.thread is not None or self.asks_parent:  # (asks_parent: engine.nested)
            self.paused = [i for task in tasks for i in task.interrupts]
        return log

    def record_stopped(self, tasks: list[Task]) -> StepLog:
        """Record a step stopped before its commit (Ctrl-C, a cancelled `ainvoke`): the tasks
        that finished, their writes not applied (a checkpointed run kept them as pending
        writes, so a resume takes them instead of running those tasks again)."""
        finished = [task for task in tasks if task.ended]
        resets, joins = self._pending_resets or (), self._joins or ()
        log = StepLog(self.step, finished, self.spec.fields, resets=resets, joins=joins)
        self._pending_resets = ()
        self.log.steps.append(log)
        return log

    def stop_after(self, tasks: list[Task]) -> None:
        """Stop at an `interrupt_after` breakpoint once one of its nodes has run."""
        after = self.spec.interrupt_after
        if after and any(task.node in after for task in tasks):
            self.at_breakpoint = "after"

    def _trigger(self, tasks: list[Task]) -> None:
        spec = self.spec
        for task in tasks:
            source = task.node
            for target in spec.edges.get(source, ()):
                if target != END:
                    self._add(target, source, task, spec.filters.get((source, target)))
            for index in spec.waits_by_source.get(source, ()):
                seen = self.seen[index]
                seen.add(source)
                edge = spec.waiting[index]
                self._capture(edge.target, source, task, None)
                if seen.issuperset(edge.sources):
                    seen.clear()
                    for waited in edge.sources:  # every source it waited for triggered it
                        self._add(edge.target, waited, task, None, capture=False)
            for route in task.routes:
                self._take_route(source, task, route)

    def _trigger_plain(self, task: Task, targets: tuple[str, ...]) -> None:
        """`_trigger` for a lone task whose node's edges are plain (no filter, waiting edge,
        defer or merge at their targets: `NodePlan.plain`)."""
        source, pull = task.node, self.pull
        for target in targets:
            queued = pull.get(target)
            if queued is None:
                pull[target] = [source]
            else:
                queued.append(source)
        for route in task.routes:
            self._take_route(source, task, route)

    def _take_route(self, source: str, task: Task, route: Any) -> None:
        """Queue one route a task chose: a `Send`, END, or a node."""
        if isinstance(route, Send):
            self.push.append((source, route))
        elif route == END:
            return
        elif (node := self.spec.nodes[route]).defer or node.merge not in NO_RESET:
            self._add(route, source, task, None)
        else:
            queued = self.pull.get(route)
            if queued is None:
                self.pull[route] = [source]
            else:
                queued.append(source)

    def _add(
        self, target: str, source: str, task: Task, state_filter: Any, capture: bool = True
    ) -> None:
        if target == END:
            return
        node = self.spec.nodes[target]
        queue = self.deferred if node.defer else self.pull
        queue.setdefault(target, []).append(source)
        if capture and (state_filter is not None or node.merge not in NO_RESET):
            self._capture(target, source, task, state_filter)

    def _capture(self, target: str, source: str, task: Task, state_filter: Any) -> None:
        """Keep the state `source` hands `target` when `target` merges or filters it."""
        if target == END or (self.spec.nodes[target].merge in NO_RESET and state_filter is None):
            return
        state = self._state_after(task)
        if state_filter is not None:
            state = state_filter(state)
        self.incoming.setdefault(target, []).append((source, state))

    def _state_after(self, task: Task) -> Any:
        """The state as `task` left it: the step's start plus its own writes (isolated)."""
        values = {k: isolate(v) for k, v in self.values.items()}
        grouped: dict[str, list[tuple[str, Any]]] = {}
        for key, value in task.writes:
            grouped.setdefault(key, []).append((task.node, value))
        for key, key_writes in grouped.items():
            spec = field_spec(self.spec.fields, key)
            values[key] = reduce_field(spec, values.get(key, MISSING), key_writes, self.step)
        return state_for(self.spec.state, values, {}, whole=True)
