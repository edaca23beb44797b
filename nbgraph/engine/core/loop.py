"""Supersteps: what runs next, running a task, and committing a step's writes.

`RunLoop` is the one synchronous state machine: `begin(input)`, then `next_tasks()` /
`execute(task)` / `commit(tasks)` until `next_tasks()` returns None. The sync and async
drivers (`engine.drive`) only decide how the tasks of a step are executed.

This module holds the step machine itself (choosing the next step, running a task); the
loop's other parts are mixed in from their own modules: `engine.starting` (the input step,
resuming a checkpoint or a `Command`), `engine.committing` (applying a step's writes and
queueing what they trigger) and `engine.showing` (the values `invoke` and `stream` show).
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Callable
from typing import Any

from nbgraph.engine.branches.lineage import fold_states, state_pairs
from nbgraph.engine.core.caching import keep_in_cache, serve_from_cache
from nbgraph.engine.core.committing import _NO_RESET, Committing
from nbgraph.engine.core.config import DEFAULT_RECURSION_LIMIT as DEFAULT_RECURSION_LIMIT
from nbgraph.engine.core.config import run_config
from nbgraph.engine.core.injection import TaskEnv, acall, call, call_in
from nbgraph.engine.core.interrupts import (
    GraphInterrupt,
    Scope,
    enter_scope,
    interrupt_scope,
    leave_scope,
)
from nbgraph.engine.core.outputs import Showing
from nbgraph.engine.core.retrying import next_attempt
from nbgraph.engine.core.runlog import RootReset, RunLog
from nbgraph.engine.core.runtime import enter_task, leave_task
from nbgraph.engine.core.starting import Starting
from nbgraph.engine.core.tasks import (
    VIEWED,
    Task,
    absorb_output,
    absorb_route,
    absorb_update,
    node_input,
    note_failure,
    router_state,
    warn_dropped,
)
from nbgraph.engine.nested.subruns import parent_scope
from nbgraph.errors import GraphRecursionError
from nbgraph.graph import GraphSpec
from nbgraph.isolation import StateView, isolate
from nbgraph.types import MISSING, START, Command, Interrupt, Send

_NO_MANAGED: dict[str, Any] = {}
_PLAIN_OUTPUTS = frozenset({dict, type(None), str, list, tuple, Command, Send})


class RunLoop(Starting, Committing, Showing):
    """One run of a compiled graph, one superstep at a time."""

    _joins: list[Any] | tuple[()] = ()  # the merges the step's tasks read (branch lineages)
    tap: Callable[[Task, Any], None] | None = None  # hears each node's output (streams)
    pulls = 0  # the step's tasks that are not Sends: they come first, a Send's index after
    context: Any = None  # invoke(..., context=...), as the nodes' runtime gives it
    store: Any = None  # compile(store=...)

    def __init__(self, spec: GraphSpec, config: dict[str, Any], thread: Any = None) -> None:
        self.spec = spec
        self.config = config
        self.thread = thread  # an engine.persist.Thread when the graph has a checkpointer
        self.finished: dict[str, dict[str, Any]] = {}  # restored tasks' writes, by task id
        self.answers: dict[str, list[Any]] = {}  # answers to interrupts, by task id
        self.resumed: dict[str, tuple[str, Any]] = {}  # this run's answers: id -> (task, value)
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
        self.viewed = not self.managed and not spec.beyond_state and spec.state.kind in VIEWED
        # (a node of the state schema gets a `StateView` of the values: `tasks.node_input`)
        self.log = RunLog(spec, MISSING, config)
        self._pending_resets: list[RootReset] | tuple[()] = ()
        self.root_updated = False  # a resuming Command's update: the next step records it
        self.step_size = 0  # tasks in the step being run
        self.unsettled: Callable[[], object] | None = None  # see `engine.drive`: stopped
        # mid-step, the run could not wait for all its nodes; this waits for the rest
        self._shared: dict[tuple[str, ...], tuple[str, ...]] = {}

    # --- choosing the next step ------------------------------------------------------------

    def next_tasks(self) -> list[Task] | None:
        """The next superstep's tasks in write order, or None when the run is over.

        Raises:
            GraphRecursionError: the step would pass `recursion_limit` (checked first,
                as LangGraph does, even when nothing is left to run).
        """
        if self.paused or self.at_breakpoint:  # (`advance`, kept short)
            return None
        self.step += 1
        if self.step > self.stop:
            self.step -= 1
            self.advance()  # (raises GraphRecursionError)
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
        if len(pull) == 1 and not push:  # a lone task (a loop's step): kept short
            ((name, sources),) = pull.items()
            triggers = tuple(sources)
            triggers = self._shared.setdefault(triggers, triggers)  # (`shared`)
            tasks = [Task(self.step, 0, name, "edge", triggers=triggers)]
            self.pulls = 1
        else:
            tasks = self._step_tasks(pull, push)
        self._pending_resets = resets
        self.step_size = len(tasks)
        if self.finished:  # tasks that finished before a pause or a failure are not run again
            for task in tasks:
                task.started = time.time()
                task.cached = self._restore_task(task)
        if self.spec.cache is not None:  # cache_policy=: a seen input's writes, not run again
            serve_from_cache(self.spec, tasks, self._node_input)
        return tasks

    def _step_tasks(self, pull: dict[str, list[str]], push: list[tuple[str, Send]]) -> list[Task]:
        """A step's tasks in write order: the pulled nodes by name, then the Sends."""
        names = sorted(pull) if len(pull) > 1 else pull
        tasks = [
            Task(self.step, index, name, "edge", triggers=self.shared(tuple(pull[name])))
            for index, name in enumerate(names)
        ]
        offset = self.pulls = len(tasks)
        tasks += [
            Task(self.step, offset + index, send.node, "send", arg=send.arg, triggers=(sender,))
            for index, (sender, send) in enumerate(push)
        ]
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
        """Run a task synchronously: call its node, read its output, run its routers; again
        after a wait while its node's `retry_policy` retries the error it raised.

        An exception is kept on the task (with a note naming node and step), not raised.
        """
        while (wait := self._attempt(task)) is not None:
            time.sleep(wait)
        return task

    def _attempt(self, task: Task) -> float | None:
        """One attempt at a task: the seconds to wait before the next, or None when done."""
        node = self.spec.nodes[task.node]
        task.started = time.time()
        if task.cached or (self.finished and self._restore_task(task)):
            return None
        scope = None if self.thread is None else self._scope(task)
        env = TaskEnv(self, task)
        entered = enter_task(env)  # what get_config() / get_runtime() answer, node and routers
        try:
            values = self.read(task)
            if self.viewed and task.kind == "edge" and node.input is None:
                state = StateView(values)  # (`node_input`'s answer, kept short)
            else:
                managed = self.managed_values() if self.managed else _NO_MANAGED
                state = node_input(self.spec, node, task, values, managed)
            if scope is None:
                output = call_in(env, node.fn, state)
            else:
                token = enter_scope(scope)
                try:
                    output = call_in(env, node.fn, state)
                finally:
                    leave_scope(token)
            if self.tap is not None:
                self.tap(task, output)
            if type(output) not in _PLAIN_OUTPUTS and inspect.isawaitable(output):
                _close(output)
                raise TypeError(
                    f"Node {task.node!r} is async; run the graph with "
                    "`await app.ainvoke(...)` or `app.astream(...)`."
                )
            if type(output) is dict:
                absorb_update(self.spec, node, task, output)
            else:
                absorb_output(self.spec, node, task, output)
            self.route(task, env, values)
            if task.dropped:
                warn_dropped(self.spec, self.log.warnings, task)
        except Exception as error:
            self._caught(task, error)
        finally:
            leave_task(entered)
        if task.error is None:  # (next_attempt's first question, asked here: the hot path)
            self._done(task, scope)
            return None
        wait = next_attempt(task, node)  # retry_policy=: another attempt, after a wait
        if wait is None:
            self._done(task, scope)
        return wait

    def _node_input(self, task: Task) -> Any:
        node = self.spec.nodes[task.node]
        return node_input(self.spec, node, task, self.read(task), self.managed_values())

    def _caught(self, task: Task, error: Exception) -> None:
        """Keep what stopped a task: a question for a person, or its exception (with a note)."""
        if isinstance(error, GraphInterrupt):
            task.interrupts = error.interrupts
        else:
            note_failure(error, task)
            task.error = error

    def shared(self, names: tuple[str, ...]) -> tuple[str, ...]:
        """One tuple object per distinct tuple of node names: a long run records the same
        triggers and routes every step, and keeps each of them once."""
        return self._shared.setdefault(names, names)

    def _done(self, task: Task, scope: Scope | None) -> Task:
        task.ended = time.time()
        if task.cache_key is not None:
            keep_in_cache(self.spec, task)
        routes = task.routes
        if routes and (
            (len(routes) == 1 and type(routes[0]) is str)
            or all(type(route) is str for route in routes)
        ):
            shared = tuple(routes)
            task.routes = self._shared.setdefault(shared, shared)  # type: ignore[arg-type]
        if self.thread is not None and (self.step_size > 1 or task.interrupts or task.error):
            # a sibling may fail: keep what this one wrote (a lone task's writes go into the
            # step's checkpoint right after it; a question for a person is kept always)
            self.thread.save_task(task, scope.answers if scope else None)
        return task

    def _scope(self, task: Task) -> Scope | None:
        if self.thread is None:
            return parent_scope(self)  # (a subgraph asks its parent's thread)
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
        """Run a task on the event loop (async nodes and routers are awaited); again after
        an `asyncio.sleep` while its node's `retry_policy` retries the error it raised."""
        while (wait := await self._aattempt(task)) is not None:
            await asyncio.sleep(wait)
        return task

    async def _aattempt(self, task: Task) -> float | None:
        """One attempt at a task on the event loop: the wait before the next, or None."""
        node = self.spec.nodes[task.node]
        task.started = time.time()
        if task.cached or (self.finished and self._restore_task(task)):
            return None
        scope = self._scope(task)
        try:
            state = node_input(self.spec, node, task, self.read(task), self.managed_values())
            with interrupt_scope(scope):
                output = await acall(node.fn, state, self, task)
            if self.tap is not None:
                self.tap(task, output)
            absorb_output(self.spec, node, task, output)
            if task.dropped:
                warn_dropped(self.spec, self.log.warnings, task)
            for branch in self.spec.branches.get(task.node, ()):
                state = router_state(
                    self.spec, task, self.read(task), self.managed_values(), branch
                )
                result = await acall(branch.router, state, self, task)
                absorb_route(self.spec, branch, task, result)
        except Exception as error:
            self._caught(task, error)
        wait = next_attempt(task, node)  # retry_policy=: another attempt, after a wait
        if wait is None:
            self._done(task, scope)
        return wait

    def route(self, task: Task, env: TaskEnv | None = None, values: Any = None) -> None:
        """Run the routers after `task` (in `env` when the task's own is entered already;
        `values`: what the task read, when known)."""
        for branch in self.spec.branches.get(task.node, ()):
            managed = self.managed_values() if self.managed else _NO_MANAGED
            if values is None:
                values = self.read(task)
            state = router_state(self.spec, task, values, managed, branch)
            if env is None:
                result = call(branch.router, state, self, task)
            else:
                result = call_in(env, branch.router, state)
                if type(result) is str and result in self.spec.nodes and branch.path_map is None:
                    if task.routes:  # (`absorb_route`'s common case, kept short)
                        task.routes.append(result)  # type: ignore[union-attr]
                    else:
                        task.routes = [result]
                    continue
            if type(result) not in _PLAIN_OUTPUTS and inspect.isawaitable(result):
                _close(result)
                raise TypeError(
                    f"The router after {task.node!r} is async; use `await app.ainvoke(...)`."
                )
            absorb_route(self.spec, branch, task, result)


def _close(awaitable: Any) -> None:
    close = getattr(awaitable, "close", None)
    if close is not None:
        close()
