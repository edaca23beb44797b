"""Running a task: the one path every task of every run takes, from its node's plan
(`engine.core.plans`).

Its node is called with the state it reads and what its signature asks for, its output read into
writes and routes, its routers run, and all again after a wait while its retry policy retries.

`TaskRunner.execute` runs a task synchronously; `aexecute` takes the same steps on the event
loop and differs only where it awaits what an async node or router returned. A lone task's
step (a loop's) takes the same path: its short cuts (a viewed node, a router's view made in
one pass) are branches of it, chosen by the plan. After a router returned, both take
`_routed`; the few questions `execute` asks inline first each name the budget in
`benchmarks/budgets.json` that shows they pay.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from typing import Any

from nbgraph.engine.core.caching import keep_in_cache
from nbgraph.engine.core.calls import Returned, result_write
from nbgraph.engine.core.injection import OWN_WRITER, TaskEnv, awaited, call_with
from nbgraph.engine.core.interrupts import (
    GraphInterrupt,
    Scope,
    enter_scope,
    interrupt_scope,
    leave_scope,
)
from nbgraph.engine.core.plans import NodePlan, RouterPlan
from nbgraph.engine.core.retrying import next_attempt
from nbgraph.engine.core.runtime import enter_task, leave_task
from nbgraph.engine.core.tasks import (
    Task,
    absorb_output,
    absorb_route,
    absorb_update,
    node_input,
    note_failure,
    router_state,
    router_view,
    warn_dropped,
)
from nbgraph.engine.core.writer import TaskStream
from nbgraph.isolation import StateView, isolate
from nbgraph.primitives import Command, Send

__all__ = ["TaskRunner"]

_NO_MANAGED: dict[str, Any] = {}
_PLAIN_OUTPUTS = frozenset({dict, type(None), str, list, tuple, Command, Send})


class TaskRunner:
    """Runs the tasks of one run (`run`, a `RunLoop`): reads what they read through
    `run.read(task)`, keeps what they wrote on the task; `RunLoop` commits them."""

    __slots__ = ("run",)

    def __init__(self, run: Any) -> None:
        self.run = run

    def execute(self, task: Task, stream: TaskStream | None = None) -> Task:
        """Run a task synchronously: call its node, read its output, run its routers; again
        after a wait while its node's `retry_policy` retries the error it raised.

        This is the one way a task runs (`aexecute` takes the same steps, awaiting what an
        async node or router returns). An exception is kept on the task (with a note naming
        node and step), not raised.
        """
        run = self.run
        if task.kind == "call":  # a `@task` called inside a node (engine.core.calls)
            plan = task.arg
        else:
            plan = run.plans.nodes.get(task.node) or run.plans.of(task.node)
        writer = OWN_WRITER if stream is None else stream
        while True:  # an attempt, then another while the retry policy asks for one
            task.started = time.time()
            if task.cached or (run.finished and run.restore(task)):
                return task
            scope = None if run.thread is None else self._scope(task)
            env = TaskEnv(run, task, writer)
            entered = enter_task(env)  # what get_config(), get_runtime(), the writer answer
            try:
                values = run.read(task) if run.lineages else run.values
                # Inline first questions of `_input`, `_took` and `_attempted` below: each saves a
                # frame a task, which every call budget in benchmarks/budgets.json shows (the
                # 1,000 Sends' too, but for `_input`'s: send tasks are not viewed).
                if plan.viewed and task.kind == "edge":  # (`_input`'s first question)
                    state = StateView(values)
                else:
                    state = self._input(task, plan, values)
                if scope is None:
                    output = call_with(env, plan.fn, plan.wanted, state)
                else:
                    inside = enter_scope(scope)
                    try:
                        output = call_with(env, plan.fn, plan.wanted, state)
                    finally:
                        leave_scope(inside)
                if type(output) is dict and run.tap is None:  # (`_took`'s first question)
                    absorb_update(run.spec, plan.node, task, output)
                else:
                    self._took(task, plan, output)
                if plan.routers:
                    self._route(task, plan, env, values)
            except Exception as error:
                self._caught(task, error)
            finally:
                leave_task(entered)
            if task.error is None:  # (`_attempted`'s first question)
                self._done(task, scope)
                return task
            wait = self._attempted(task, plan, scope)
            if wait is None:
                return task
            time.sleep(wait)

    def _input(self, task: Task, plan: NodePlan, values: dict[str, Any]) -> Any:
        """What the node is called with (`tasks.node_input`; a `StateView` of `values` for
        an edge task of a viewed node, the common case)."""
        run = self.run
        if plan.viewed and task.kind == "edge":
            return StateView(values)
        if task.kind == "call":  # (a call reads no state: its arguments are its own)
            return None
        managed = run.managed_values() if run.managed else _NO_MANAGED
        return node_input(run.spec, plan.node, task, values, managed)

    def _took(self, task: Task, plan: NodePlan, output: Any) -> None:
        """Read the node's `output` into the task's writes and routes."""
        run = self.run
        if run.tap is not None:
            run.tap(task, output)
        if type(output) is dict:
            absorb_update(run.spec, plan.node, task, output)
            return
        if type(output) is Returned:  # a task call's result: its one write
            task.writes = [result_write(run.spec, isolate(output.value))]
            return
        if type(output) not in _PLAIN_OUTPUTS and inspect.isawaitable(output):
            _close(output)
            raise TypeError(
                f"Node {task.node!r} is async; run the graph with "
                "`await app.ainvoke(...)` or `app.astream(...)`."
            )
        absorb_output(run.spec, plan.node, task, output)

    def _attempted(self, task: Task, plan: NodePlan, scope: Scope | None) -> float | None:
        """After an attempt: done (None), or the wait before the node's retry policy tries
        it again."""
        if task.error is None:  # (`execute` asks this inline first)
            self._done(task, scope)
            return None
        error = task.error
        wait = next_attempt(task, plan.node)  # retry_policy=: another attempt, after a wait
        if wait is None:
            self._done(task, scope)
        elif self.run.observer is not None:
            self.run.observer.retrying(task, error)
        return wait

    def node_input(self, task: Task) -> Any:
        run = self.run
        node = run.spec.nodes[task.node]
        return node_input(run.spec, node, task, run.read(task), run.managed_values())

    def _caught(self, task: Task, error: Exception) -> None:
        """Keep what stopped a task: a question for a person, or its exception (with a note)."""
        if isinstance(error, GraphInterrupt):
            task.interrupts = error.interrupts
            task.held = not error.interrupts  # (a subgraph at its breakpoint: SubgraphStopped)
        else:
            note_failure(error, task)
            task.error = error

    def _done(self, task: Task, scope: Scope | None) -> Task:
        """After a task's last attempt: its end, its cache entry, its routes shared, what it
        wrote kept where a sibling may fail; a warning if an attempt that raised nothing
        dropped keys."""
        run = self.run
        task.ended = time.time()
        if task.dropped and task.error is None and not task.interrupts and not task.held:
            warn_dropped(run.spec, run.log.warnings, task)
        if task.cache_key is not None:
            keep_in_cache(run.spec, task)
        routes = task.routes
        if routes and (
            (len(routes) == 1 and type(routes[0]) is str)
            or all(type(route) is str for route in routes)
        ):
            shared = tuple(routes)
            task.routes = run.schedule.shared[shared]  # type: ignore[arg-type]
        if run.thread is not None and (
            run.step_size > 1 or task.interrupts or task.error or task.held or task.kind == "call"
        ):
            # a sibling may fail: keep what this one wrote (a lone task's writes go into the
            # step's checkpoint right after it; a question for a person is kept always)
            run.thread.save_task(task, scope.answers if scope else None)
        return task

    def _scope(self, task: Task) -> Scope:
        """The interrupt scope of `task` in a checkpointed run (without a checkpointer, a
        node's `interrupt()` asks the scope it finds — a calling run's — or, with none,
        pauses the run it is in: `interrupts.interrupt`)."""
        run = self.run
        answers = run.answers.get(task.id) if run.answers else None
        return Scope(run.thread.thread_id, task, answers)

    async def aexecute(self, task: Task, stream: TaskStream | None = None) -> Task:
        """`execute` on the event loop: the same steps, awaiting what an async node or
        router returns; again after an `asyncio.sleep` while its retry policy retries."""
        run = self.run
        plan = task.arg if task.kind == "call" else run.plans.of(task.node)
        writer = OWN_WRITER if stream is None else stream
        while (wait := await self._aattempt(task, plan, writer)) is not None:
            await asyncio.sleep(wait)
        return task

    async def _aattempt(self, task: Task, plan: NodePlan, writer: Any) -> float | None:
        """An attempt of `execute`, awaiting the node's and its routers' results where they are
        awaitable (the only difference)."""
        run = self.run
        task.started = time.time()
        if task.cached or (run.finished and run.restore(task)):
            return None
        scope = None if run.thread is None else self._scope(task)
        env = TaskEnv(run, task, writer)
        entered = enter_task(env)
        try:
            values = run.read(task) if run.lineages else run.values
            state = self._input(task, plan, values)
            with interrupt_scope(scope):
                output = call_with(env, plan.afn, plan.awanted, state)
                if inspect.isawaitable(output):
                    output = await awaited(output)
            self._took(task, plan, output)
            for router in plan.routers:
                state = self._router_input(task, router, values)
                result = call_with(env, router.fn, router.wanted, state)
                if inspect.isawaitable(result):
                    result = await awaited(result)
                self._routed(task, router, state, result)
        except Exception as error:
            self._caught(task, error)
        finally:
            leave_task(entered)
        return self._attempted(task, plan, scope)

    def route(self, task: Task) -> None:
        """Run the routers after `task` outside its attempt (a node's writes applied from
        outside a run: `update_state`, the stepper, a resuming `Command`)."""
        run = self.run
        plan = run.plans.of(task.node)
        if not plan.routers:
            return
        env = TaskEnv(run, task)
        entered = enter_task(env)
        try:
            self._route(task, plan, env, run.read(task))
        finally:
            leave_task(entered)

    def _route(self, task: Task, plan: NodePlan, env: TaskEnv, values: dict[str, Any]) -> None:
        """Run the routers after `task`, in its entered `env`; `values`: what it read."""
        run = self.run
        spec, known = run.spec, run.plans.known
        nodes = spec.nodes
        for router in plan.routers:
            state = router_view(spec, task, values, known) if router.viewed else None
            if state is None:  # (`_router_input`'s first question, inline: see below)
                state = self._router_state(task, router, values)
            result = call_with(env, router.fn, router.wanted, state)
            if (  # `_routed` for a router naming a node, inline, as `router_view` above: they
                # save 5 frames and 1 a router call, which the self-loop (all three), agent and
                # subgraph budgets show (benchmarks/budgets.json)
                type(result) is str
                and run.observer is None
                and result in nodes
                and router.branch.path_map is None
            ):
                task.returned = (*task.returned, result)
                if task.routes:
                    task.routes.append(result)  # type: ignore[union-attr]
                else:
                    task.routes = [result]
                continue
            if type(result) not in _PLAIN_OUTPUTS and inspect.isawaitable(result):
                _close(result)
                raise TypeError(
                    f"The router after {task.node!r} is async; use `await app.ainvoke(...)`."
                )
            self._routed(task, router, state, result)

    def _routed(self, task: Task, router: RouterPlan, state: Any, result: Any) -> None:
        """After a router returned `result` (awaited, in an async run) given `state`: the
        callbacks told, the task's `returned` and routes take it (`execute` and `aexecute`)."""
        run = self.run
        if run.observer is not None:  # (a run whose config has callbacks)
            run.observer.routed(task, router.branch, state, result)
        if type(result) is not list or not _all_sends(result):  # (the views show why it
            task.returned = (*task.returned, result)  # went there; Sends: its routes)
        absorb_route(run.spec, router.branch, task, result)

    def _router_input(self, task: Task, router: RouterPlan, values: dict[str, Any]) -> Any:
        """The state a router sees: the step's start plus only this task's writes (a viewed
        router's view made in one pass when the task wrote each field once: `router_view`)."""
        if router.viewed:
            view = router_view(self.run.spec, task, values, self.run.plans.known)
            if view is not None:
                return view
        return self._router_state(task, router, values)

    def _router_state(self, task: Task, router: RouterPlan, values: dict[str, Any]) -> Any:
        """`router_state` for `task`'s router: with the run's managed values."""
        run = self.run
        managed = run.managed_values() if run.managed else _NO_MANAGED
        return router_state(run.spec, task, values, managed, router.branch)


def _close(awaitable: Any) -> None:
    close = getattr(awaitable, "close", None)
    if close is not None:
        close()


def _all_sends(result: list[Any]) -> bool:
    """A router's list of `Send`s: the task's routes keep them, so `Task.returned` does not
    (a fan-out of thousands would keep every argument twice)."""
    return bool(result) and all(type(item) is Send for item in result)
