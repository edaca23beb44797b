"""Supersteps: what runs next, running a task, and committing a step's writes.

`RunLoop` is the one synchronous state machine: `begin(input)`, then `next_tasks()` /
`execute(task)` / `commit(tasks)` until `next_tasks()` returns None. The sync and async
drivers (`engine.drive`) only decide how the tasks of a step are executed.
"""

from __future__ import annotations

import inspect
import time
import warnings
from collections.abc import Callable, Mapping
from typing import Any

from nbgraph.engine.config import DEFAULT_RECURSION_LIMIT as DEFAULT_RECURSION_LIMIT
from nbgraph.engine.config import run_config
from nbgraph.engine.interrupts import (
    GraphInterrupt,
    Scope,
    enter_scope,
    interrupt_scope,
    leave_scope,
)
from nbgraph.engine.lineage import fold_states, state_pairs
from nbgraph.engine.persist import checkpoint_payload
from nbgraph.engine.runlog import RootReset, RunLog, StepLog, initial_values
from nbgraph.engine.tasks import (
    Task,
    absorb_output,
    absorb_route,
    node_input,
    note_failure,
    router_state,
    state_for,
)
from nbgraph.engine.view import isolate
from nbgraph.engine.writes import (
    applied_writes,
    apply_grouped,
    apply_step,
    clear_ephemeral,
    field_spec,
    group_writes,
    merge_unreduced,
    reduce_field,
)
from nbgraph.errors import EmptyInputError, GraphRecursionError, InvalidUpdateError
from nbgraph.graph import GraphSpec
from nbgraph.schema import pydantic_updates
from nbgraph.types import END, MISSING, START, Command, Interrupt, Send

_NO_MANAGED: dict[str, Any] = {}
_NO_RESET = (None, "delta")  # supersteps: one shared state, nothing to merge
_PLAIN_OUTPUTS = frozenset({dict, type(None), str, list, tuple, Command, Send})


class RunLoop:
    """One run of a compiled graph, one superstep at a time."""

    _joins: list[Any] | tuple[()] = ()  # the merges the step's tasks read (branch lineages)

    def __init__(self, spec: GraphSpec, config: dict[str, Any], thread: Any = None) -> None:
        self.spec = spec
        self.config = config
        self.thread = thread  # an engine.persist.Thread when the graph has a checkpointer
        self.finished: dict[str, dict[str, Any]] = {}  # restored tasks' writes, by task id
        self.answers: dict[str, list[Any]] = {}  # answers to interrupts, by task id
        self.paused: list[Interrupt] = []  # why the run stopped for an answer
        self.at_breakpoint = ""  # "before" / "after" when a static breakpoint stopped it
        self._past_breakpoint = False
        self.limit = limit = run_config(config)["recursion_limit"]  # (checks every value)
        self.step = -1
        self.stop = self.step + limit + 1
        self.values: dict[str, Any] = {}
        self.pull: dict[str, list[str]] = {}
        self.push: list[tuple[str, Send]] = []
        self.deferred: dict[str, list[str]] = {}
        self.seen: list[set[str]] = [set() for _ in spec.waiting]
        self.incoming: dict[str, list[tuple[str, Any]]] = {}
        self.managed = tuple(n for n, f in spec.fields.items() if f.managed)
        self.ephemeral = spec.ephemeral
        self.stream_keys = frozenset(n for n, f in spec.fields.items() if not f.managed)
        self.log = RunLog(spec, MISSING, config)
        self._pending_resets: list[RootReset] | tuple[()] = ()
        self.root_updated = False  # a resuming Command's update: the next step records it
        self.step_size = 0  # tasks in the step being run
        self.unsettled: Callable[[], object] | None = None  # see `engine.drive`: stopped
        # mid-step, the run could not wait for all its nodes; this waits for the rest
        self._shared: dict[tuple[str, ...], tuple[str, ...]] = {}

    # --- the input -------------------------------------------------------------------------

    def begin(self, input: Any) -> StepLog:
        """Record the input and apply it through the reducers (step 0 of a new thread).

        With a checkpointer: `None` resumes the thread where its last checkpoint stopped, and
        new input on a thread that has checkpoints is applied on top of its state.
        """
        restored = self.thread.restore() if self.thread is not None else None
        if input is None:
            if restored is None:
                raise EmptyInputError(
                    "Received no input: invoke(None) resumes a checkpointed thread, and this "
                    "one has no checkpoint; pass a dict of initial values."
                )
            if START in restored.control["pull"]:  # an input checkpoint: apply its input
                self._resume(restored, keep_next=False)
                if not restored.latest:  # a replay grows a new branch, as any replay does
                    self.thread.branch(restored)
                    self.step += 1
                return self._input_step(restored.control.get("input", []))
            return self._resume(restored)
        if isinstance(input, Command):
            if restored is None or not restored.paused:
                raise InvalidUpdateError(
                    "Command(resume=...) answers a run paused by interrupt(); this thread "
                    "has no pending interrupt."
                )
            log = self._resume(restored)
            self._take_command(input, restored.paused)
            return log
        self.log.input = isolate(input)
        if restored is not None:
            self._resume(restored, keep_next=False)
        else:
            self.values = initial_values(self.spec)
            self.log.final = self.values
        writes = []
        for key, value in self._input_pairs(input):
            field = self.spec.fields.get(key)
            prepare = field.reducer.prepare if field and field.reducer else None
            writes.append((key, prepare(isolate(value)) if prepare else isolate(value)))
        if self.thread is not None:  # LangGraph's input checkpoint: the input, not yet applied
            self.step += restored is not None
            self.thread.save_input(self.step, writes, restored, self.values)
        return self._input_step(writes)

    def _input_step(self, writes: list[tuple[str, Any]]) -> StepLog:
        """The step that applies the input's `writes` (the START task) and routes from it."""
        self.step += 1
        self.stop = self.step - 1 + self.limit + 1
        task = Task(step=self.step, index=0, node=START, kind="input", started=time.time())
        task.writes.extend(tuple(w) for w in writes)
        self._route(task)
        task.ended = task.started
        return self.commit([task], source="loop")

    def _resume(self, restored: Any, keep_next: bool = True) -> StepLog:
        """Start from a checkpoint: its values (as a root reset of this run's record) and,
        unless new input replaces it, what was to run next and what had already finished."""
        self.values = self.log.final = restored.values
        self.step, self.stop = restored.step, restored.step + self.limit + 1
        self.thread.head = restored.checkpoint_id
        if keep_next and not restored.latest:
            self.thread.branch(restored)  # a replay grows a new branch from the past
            self.step += 1  # (its fork checkpoint is a step, as in LangGraph)
        if keep_next:
            control = restored.control
            self.pull = {k: list(v) for k, v in control["pull"].items()}
            push = control.get("push", ())
            self.push = [(sender, Send(node, arg)) for sender, node, arg in push]
            seen = control.get("seen") or [() for _ in self.spec.waiting]
            self.seen = [set(names) for names in seen]
            self.deferred = {k: list(v) for k, v in control.get("deferred", {}).items()}
            incoming = control.get("incoming", {})
            self.incoming = {k: [tuple(p) for p in v] for k, v in incoming.items()}
            self.finished = dict(restored.finished)
            self.answers = {k: list(v["answers"]) for k, v in restored.paused.items()}
            self._past_breakpoint = True  # resuming steps over the breakpoint it stopped at
            if restored.updates:  # a Command's update and goto, kept while paused
                self.root_updated = True
                routes = [r for update in restored.updates for r in update["routes"]]
                self._take_gotos([Send(*r) if isinstance(r, list) else r for r in routes])
        recorded = {k: isolate(v) for k, v in restored.values.items()}
        reset = RootReset(restored.step, restored.checkpoint_id, "resume", (), (), recorded)
        log = StepLog(restored.step, [], self.spec.fields, resets=[reset], applied=True)
        self.log.steps.append(log)
        return log

    def _take_command(self, command: Command, paused: dict[str, dict[str, Any]]) -> None:
        """Resume with a `Command`, as LangGraph does: its `update` goes into the state before
        the paused step runs again (through the reducers, as the graph's input), its `goto`
        adds nodes to that step, and its `resume` (unless None) answers the interrupts.

        The update and goto are kept with the paused checkpoint until the step commits (the
        next checkpoint starts from the updated state), so `get_state` shows them and a run
        that pauses again keeps them.
        """
        if command.graph == Command.PARENT:
            raise InvalidUpdateError(
                "Command(graph=Command.PARENT) was given as graph input; there is no parent "
                "graph to send it to."
            )
        update, goto = command.update, command.goto_targets()
        if (update is not None or goto) and self.spec.semantics != "supersteps":
            raise InvalidUpdateError(
                "Command(update=..., goto=...) when resuming is not supported with semantics="
                f'"{self.spec.semantics}" yet; use update_state(config, values, as_node=...).'
            )
        if command.resume is not None:
            self._answer(command.resume, paused)
        if update is not None or goto:
            task = Task(self.step, 0, START, "update", started=time.time())
            absorb_output(self.spec, None, task, Command(update=update, goto=goto))
            if task.dropped:
                self._warn(
                    f"Command(update=...) wrote keys the state does not have; they were "
                    f"dropped: {[key for key, _, _ in task.dropped]}."
                )
            apply_step(self.spec.fields, self.values, applied_writes(self.spec.fields, [task]),
                       self.step)  # fmt: skip
            self.thread.save_update(task)
            self._take_gotos(task.routes)
            self.root_updated = True

    def _take_gotos(self, routes: Any) -> None:
        """Add a resuming Command's `goto` targets to the step that runs next."""
        for route in routes:
            if isinstance(route, Send):
                self.push.append((START, route))
            elif route != END:
                self.pull.setdefault(route, []).append(START)

    def _answer(self, resume: Any, paused: dict[str, dict[str, Any]]) -> None:
        """Give the paused tasks their answers: one value for one pending interrupt, or
        `{interrupt_id: value}` for several."""
        pending = {i.id: task_id for task_id, p in paused.items() for i in p["interrupts"]}
        if isinstance(resume, dict) and resume and set(resume) <= set(pending):
            for interrupt_id, value in resume.items():
                self.answers.setdefault(pending[interrupt_id], []).append(value)
            return
        if len(pending) != 1:
            raise InvalidUpdateError(
                f"{len(pending)} interrupts are waiting; answer each by id: "
                f"Command(resume={{{', '.join(repr(i) + ': ...' for i in pending)}}})."
            )
        (task_id,) = pending.values()
        self.answers.setdefault(task_id, []).append(resume)

    def _input_pairs(self, input: Any) -> list[tuple[str, Any]]:
        schema = self.spec.input
        if schema.kind == "pydantic":
            if isinstance(input, schema.cls):
                return pydantic_updates(input)
            model = schema.cls.model_validate(input)  # raises pydantic's ValidationError
            given = input.keys() if isinstance(input, Mapping) else type(model).model_fields
            return [(k, getattr(model, k)) for k in given if k in type(model).model_fields]
        pairs = schema.updates_from(input)
        if pairs is None:
            if not isinstance(input, Mapping):
                raise InvalidUpdateError(
                    f"Expected dict as graph input, got {type(input).__name__} {input!r}."
                )
            pairs = list(input.items())
        if self.spec.open_schema:
            return pairs
        accepted = schema.fields
        kept = [(k, v) for k, v in pairs if k in accepted and not accepted[k].managed]
        dropped = [k for k, _ in pairs if k not in accepted]
        if dropped:
            self._warn(
                f"Input key(s) {dropped} are not in the input schema "
                f"{getattr(schema.cls, '__name__', schema.cls)!s} and were dropped."
            )
        return kept

    def _warn(self, message: str) -> None:
        self.log.warnings.append(message)
        # _warn < _input_pairs < begin < drive < invoke/stream < the caller's line
        warnings.warn(message, UserWarning, stacklevel=6)

    # --- choosing the next step ------------------------------------------------------------

    def next_tasks(self) -> list[Task] | None:
        """The next superstep's tasks in write order, or None when the run is over.

        Raises:
            GraphRecursionError: the step would pass `recursion_limit` (checked first,
                as LangGraph does, even when nothing is left to run).
        """
        if not self.advance():
            return None
        pull, push = self.pull, self.push
        if not pull and not push:
            if not self.deferred:
                self.step -= 1
                return None
            pull, self.deferred = self.deferred, {}
        if self.spec.interrupt_before and self._stop_before(pull, push):
            self.step -= 1
            return None
        self.pull, self.push = {}, []
        resets = self._resets(pull) if self.incoming else ()
        if self.root_updated:  # the state a resuming Command updated: the step starts there
            self.root_updated = False
            recorded = {k: isolate(v) for k, v in self.values.items()}
            resets = [RootReset(self.step, START, "command", (), (), recorded), *resets]
        names = sorted(pull) if len(pull) > 1 else pull
        tasks = [
            Task(self.step, index, name, "edge", triggers=self.shared(tuple(pull[name])))
            for index, name in enumerate(names)
        ]
        offset = len(tasks)
        tasks += [
            Task(self.step, offset + index, send.node, "send", arg=send.arg, triggers=(sender,))
            for index, (sender, send) in enumerate(push)
        ]
        self._pending_resets = resets
        self.step_size = len(tasks)
        if self.finished:  # tasks that finished before a pause or a failure are not run again
            for task in tasks:
                task.started = time.time()
                task.cached = self._restore_task(task)
        return tasks

    def advance(self) -> bool:
        """Move to the next step, unless the run is paused; refuse to pass the limit.

        Raises:
            GraphRecursionError: the step would pass `recursion_limit` (checked first,
                as LangGraph does, even when nothing is left to run).
        """
        if self.paused or self.at_breakpoint:
            return False
        self.step += 1
        if self.step > self.stop:
            raise GraphRecursionError(
                f"Recursion limit of {self.limit} reached without hitting a stop condition "
                f"(step {self.step}). If the loop is meant to run longer, raise the limit: "
                f"app.invoke(inputs, {{'recursion_limit': {self.limit * 2}}})."
            )
        return True

    def _stop_before(self, pull: dict[str, list[str]], push: list) -> bool:
        """Whether an `interrupt_before` breakpoint stops the run before this step."""
        before = self.spec.interrupt_before
        if not before or self.thread is None:
            return False
        if self._past_breakpoint:
            self._past_breakpoint = False
            return False
        if any(name in before for name in pull) or any(s.node in before for _, s in push):
            self.at_breakpoint = "before"
            return True
        return False

    def _resets(self, pull: dict[str, list[str]]) -> list[RootReset]:
        resets = []
        for name in sorted(pull):
            states = self.incoming.pop(name, None)
            if not states:
                continue
            node = self.spec.nodes[name]
            if node.merge not in _NO_RESET:
                try:
                    if node.merge == "fold":
                        given = [self._values_of(state) for _, state in states]
                        merged = fold_states(self.spec.fields, given, self.step)
                    else:
                        merged = node.merge([state for _, state in states])
                except Exception as error:
                    error.add_note(
                        f"nbgraph: while merging the states for {name!r} at step "
                        f"{self.step} (its merge= strategy)"
                    )
                    raise
                reason = "merge"
            else:
                merged = states[-1][1]
                reason = "state_filter"
            resets.append(self._reset(name, reason, tuple(s for s, _ in states), merged))
        return resets

    def _values_of(self, state: Any) -> dict[str, Any]:
        return dict(state_pairs(self.spec.state, state, "A state"))

    def _reset(self, node: str, reason: str, sources: tuple[str, ...], state: Any) -> RootReset:
        pairs = state_pairs(self.spec.state, state, f"The {reason} for node {node!r}")
        fields = self.spec.fields
        new = {
            k: isolate(v)
            for k, v in pairs
            if (k in fields and not fields[k].managed) or self.spec.open_schema
        }
        unknown = [k for k, _ in pairs if k not in new]
        if unknown:
            self._warn(
                f"The {reason} for node {node!r} at step {self.step} returned keys the "
                f"state does not have; they were dropped: {unknown}."
            )
        dropped = tuple(k for k in self.values if k not in new)
        self.values = self.log.final = new
        recorded = {k: isolate(v) for k, v in new.items()}  # the engine may extend `new` in place
        return RootReset(self.step, node, reason, sources, dropped, recorded)

    # --- running a task --------------------------------------------------------------------

    def read(self, task: Task) -> dict[str, Any]:
        """The values `task` reads (supersteps: the step's starting state, for every task)."""
        return self.values

    def managed_values(self) -> dict[str, Any]:
        """Managed fields as a node at this step sees them."""
        if not self.managed:
            return _NO_MANAGED
        return {name: self.stop - self.step for name in self.managed}

    def execute(self, task: Task) -> Task:
        """Run a task synchronously: call its node, read its output, run its routers.

        An exception is kept on the task (with a note naming node and step), not raised.
        """
        node = self.spec.nodes[task.node]
        task.started = time.time()
        if task.cached or (self.finished and self._restore_task(task)):
            return task
        scope = None if self.thread is None else self._scope(task)
        try:
            state = node_input(self.spec, node, task, self.read(task), self.managed_values())
            if scope is None:
                output = node.fn(state, self.config) if node.takes_config else node.fn(state)
            else:
                token = enter_scope(scope)
                try:
                    output = node.fn(state, self.config) if node.takes_config else node.fn(state)
                finally:
                    leave_scope(token)
            if type(output) not in _PLAIN_OUTPUTS and inspect.isawaitable(output):
                _close(output)
                raise TypeError(
                    f"Node {task.node!r} is async; run the graph with "
                    "`await app.ainvoke(...)` or `app.astream(...)`."
                )
            absorb_output(self.spec, node, task, output)
            self._route(task)
            if task.dropped:
                self._warn_dropped(task)
        except Exception as error:
            self._caught(task, error)
        return self._done(task, scope)

    def _caught(self, task: Task, error: Exception) -> None:
        """Keep what stopped a task: a question for a person, or its exception (with a note)."""
        if isinstance(error, GraphInterrupt):
            task.interrupts = (error.interrupt,)
        else:
            note_failure(error, task)
            task.error = error

    def shared(self, names: tuple[str, ...]) -> tuple[str, ...]:
        """One tuple object per distinct tuple of node names: a long run records the same
        triggers and routes every step, and keeps each of them once."""
        return self._shared.setdefault(names, names)

    def _done(self, task: Task, scope: Scope | None) -> Task:
        task.ended = time.time()
        if task.routes and all(type(route) is str for route in task.routes):
            task.routes = self.shared(tuple(task.routes))  # type: ignore[arg-type]
        if self.thread is not None and (self.step_size > 1 or task.interrupts or task.error):
            # a sibling may fail: keep what this one wrote (a lone task's writes go into the
            # step's checkpoint right after it; a question for a person is kept always)
            self.thread.save_task(task, scope.answers if scope else None)
        return task

    def _scope(self, task: Task) -> Scope | None:
        if self.thread is None:
            return None
        answers = self.answers.get(task.id) if self.answers else None
        return Scope(self.thread.thread_id, task, answers)

    def _restore_task(self, task: Task) -> bool:
        """Take a task's writes from the checkpoint instead of running it again."""
        done = self.finished.pop(task.id, None)
        if done is None:
            return False
        task.writes = [tuple(write) for write in done["writes"]]
        task.routes = list(done["routes"])
        task.ended = task.started
        return True

    async def aexecute(self, task: Task) -> Task:
        """Run a task on the event loop (async nodes and routers are awaited)."""
        node = self.spec.nodes[task.node]
        task.started = time.time()
        if task.cached or (self.finished and self._restore_task(task)):
            return task
        scope = self._scope(task)
        try:
            state = node_input(self.spec, node, task, self.read(task), self.managed_values())
            with interrupt_scope(scope):
                output = node.fn(state, self.config) if node.takes_config else node.fn(state)
                if inspect.isawaitable(output):
                    output = await output
            absorb_output(self.spec, node, task, output)
            if task.dropped:
                self._warn_dropped(task)
            for branch in self.spec.branches.get(task.node, ()):
                result = self._call_router(branch, task)
                if inspect.isawaitable(result):
                    result = await result
                absorb_route(self.spec, branch, task, result)
        except Exception as error:
            self._caught(task, error)
        return self._done(task, scope)

    def _warn_dropped(self, task: Task) -> None:
        message = (
            f"Node {task.node!r} at step {task.step} wrote keys that were dropped: "
            f"{', '.join(f'{key!r} ({why})' for key, _, why in task.dropped)}."
        )
        self.log.warnings.append(message)
        code = getattr(self.spec.nodes[task.node].fn, "__code__", None)
        if code is None:
            warnings.warn(message, UserWarning, stacklevel=2)
        else:  # point at the node that wrote them, not at the engine
            warnings.warn_explicit(message, UserWarning, code.co_filename, code.co_firstlineno)

    def _route(self, task: Task) -> None:
        for branch in self.spec.branches.get(task.node, ()):
            result = self._call_router(branch, task)
            if type(result) not in _PLAIN_OUTPUTS and inspect.isawaitable(result):
                _close(result)
                raise TypeError(
                    f"The router after {task.node!r} is async; use `await app.ainvoke(...)`."
                )
            absorb_route(self.spec, branch, task, result)

    def _call_router(self, branch: Any, task: Task) -> Any:
        state = router_state(self.spec, task, self.read(task), self.managed_values(), branch)
        return branch.router(state, self.config) if branch.takes_config else branch.router(state)

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
            if self.spec.state_merger is not None and len(tasks) > 1:
                per_task = [(t.node, t.writes) for t in tasks]
                log.merged = merge_unreduced(
                    self.spec.state_merger, self.spec.fields, self.values, per_task
                )
            writes = applied_writes(self.spec.fields, tasks, log.merged)
            self._trigger(tasks)
            grouped = group_writes(writes)
            apply_grouped(self.spec.fields, self.values, grouped, self.step)
        except Exception as error:
            error.add_note(f"nbgraph: while applying the writes of step {self.step}")
            raise
        log.written = tuple(grouped)
        log.cleared = clear_ephemeral(self.ephemeral, self.values, log.written)
        log.applied = True
        if self.thread is not None:
            self.thread.save(self.step, source, checkpoint_payload(self, log, writes), self.values)
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
        if self.thread is not None:  # only a checkpointed run can pause
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
                if isinstance(route, Send):
                    self.push.append((source, route))
                else:
                    self._add(route, source, task, None)

    def _add(
        self, target: str, source: str, task: Task, state_filter: Any, capture: bool = True
    ) -> None:
        if target == END:
            return
        node = self.spec.nodes[target]
        queue = self.deferred if node.defer else self.pull
        queue.setdefault(target, []).append(source)
        if capture:
            self._capture(target, source, task, state_filter)

    def _capture(self, target: str, source: str, task: Task, state_filter: Any) -> None:
        """Keep the state `source` hands `target` when `target` merges or filters it."""
        if target == END or (self.spec.nodes[target].merge in _NO_RESET and state_filter is None):
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
            apply_grouped(
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


def _close(awaitable: Any) -> None:
    close = getattr(awaitable, "close", None)
    if close is not None:
        close()
