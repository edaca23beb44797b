"""A lone task's step, fused: `invoke()`'s common step (one task, nothing streamed; with
or without a checkpointer) run from a per-node plan in two frames instead of a dozen.

`engine.drive` asks `LoneStep.plan(tasks)` for each step; a plan is made once per graph and
node (its function's and routers' injections, whether its edges are plain) and None means the
step takes the general path (`StreamScope.execute` → `RunLoop._attempt` → `RunLoop.commit`).
`execute` and `commit` do what those do, in the same order, with the same helpers for every
uncommon turn (a non-dict output, an error, a retry, a router's list or path_map, a dropped
write), so the record is the same: `tests/test_fused_step.py` runs programs both ways
(`ENABLED = False` forces the general path).
"""

from __future__ import annotations

import inspect
import time
from typing import Any

from nbgraph.engine.core.committing import _NO_RESET
from nbgraph.engine.core.injection import TaskEnv, _explain, injections
from nbgraph.engine.core.interrupts import enter_scope, leave_scope
from nbgraph.engine.core.loop import _PLAIN_OUTPUTS, RunLoop
from nbgraph.engine.core.retrying import next_attempt
from nbgraph.engine.core.runlog import StepLog
from nbgraph.engine.core.runtime import current_task_env, enter_task, leave_task
from nbgraph.engine.core.tasks import (
    Task,
    _Fresh,
    absorb_output,
    absorb_route,
    absorb_update,
    router_state,
    warn_dropped,
)
from nbgraph.engine.core.writes import (
    _PLAIN,
    apply_grouped,
    clear_ephemeral,
    group_task_writes,
    reduce_field,
)
from nbgraph.engine.nested.subruns import ParentCommand, parent_scope
from nbgraph.engine.persistence.persist import checkpoint_payload
from nbgraph.engine.streaming.streams import _STREAM, TaskStream
from nbgraph.isolation import StateView, isolate
from nbgraph.schema import FieldSpec
from nbgraph.types import END, MISSING, Mutation, Overwrite, Send

ENABLED = True  # False: every step takes the general path (the tests compare the two)

_NO_MANAGED: dict[str, Any] = {}


class LoneStep:
    """The fused step of one run, or None from `for_run` when the run needs the general
    path for every step (a stream, a node cache, managed fields...). The plans, and the
    fields a router's view shows, are kept per compiled graph (`_per_graph`)."""

    __slots__ = ("known", "plans", "run", "spec")

    def __init__(self, run: Any) -> None:
        self.run, self.spec = run, run.spec
        self.plans, self.known = _per_graph(run.spec)

    @classmethod
    def for_run(cls, run: Any, scope: Any, modes: frozenset[str]) -> LoneStep | None:
        if not ENABLED or modes or type(run) is not RunLoop:
            return None
        if scope.sink is not None or scope.relay is not None or scope.chat is not None:
            return None
        if run.tap is not None or run.spec.cache is not None or not run.viewed:
            return None
        return cls(run)

    def plan(self, tasks: list[Task]) -> tuple | None:
        """The plan for this step's lone task, or None: the general path takes the step."""
        if len(tasks) != 1 or self.run.finished:
            return None
        task = tasks[0]
        if task.kind != "edge" or task.cached:
            return None
        plans = self.plans
        if task.node not in plans:
            plans[task.node] = self._make_plan(task.node)
        return plans[task.node]

    def _make_plan(self, name: str) -> tuple | None:
        spec = self.spec
        node = spec.nodes[name]
        if node.input is not None or node.is_async:
            return None
        branches = tuple(spec.branches.get(name, ()))
        routers = []
        for branch in branches:
            if branch.is_async or branch.input is not None:
                return None
            routers.append((branch, branch.router, injections(branch.router)))
        targets = [t for t in spec.edges.get(name, ()) if t != END]
        plain = not spec.waits_by_source.get(name) and all(
            spec.filters.get((name, t)) is None
            and not spec.nodes[t].defer
            and spec.nodes[t].merge in _NO_RESET
            for t in targets
        )
        return node, node.fn, injections(node.fn), tuple(routers), plain, tuple(targets)

    def execute(self, task: Task, plan: tuple) -> None:
        """`StreamScope.execute(task)` and its attempts (`RunLoop._attempt`), in one frame."""
        run, spec = self.run, self.spec
        node, fn, wanted = plan[0], plan[1], plan[2]
        thread = run.thread
        token = _STREAM.set(TaskStream(task, None, None))
        try:
            while True:
                task.started = time.time()
                scope = None if thread is None else run._scope(task)
                env = TaskEnv(run, task)
                entered = enter_task(env)
                try:
                    values = run.values
                    if scope is not None:
                        inside = enter_scope(scope)
                    try:  # (`injection.call_in`, its injections known)
                        if wanted:
                            output = fn(StateView(values), **_kwargs(env, wanted))
                        else:
                            output = fn(StateView(values))
                    except TypeError as error:
                        _explain(error, fn)
                        raise
                    except ParentCommand as up:
                        output = up.command
                    finally:
                        if scope is not None:
                            leave_scope(inside)
                    if type(output) is dict:
                        absorb_update(spec, node, task, output)
                    else:
                        _awaited(output, f"Node {task.node!r} is async; run the graph with")
                        absorb_output(spec, node, task, output)
                    if plan[3]:
                        _route(spec, env, task, values, plan[3], self.known)
                    if task.dropped:
                        warn_dropped(spec, run.log.warnings, task)
                except Exception as error:
                    run._caught(task, error)
                finally:
                    leave_task(entered)
                if task.error is not None:
                    wait = next_attempt(task, node)
                    if wait is not None:
                        time.sleep(wait)
                        continue
                task.ended = time.time()
                routes = task.routes
                if routes and (
                    (len(routes) == 1 and type(routes[0]) is str)
                    or all(type(route) is str for route in routes)
                ):
                    shared = tuple(routes)
                    task.routes = run._shared.setdefault(shared, shared)  # type: ignore
                if thread is not None and (task.interrupts or task.error):
                    thread.save_task(task, scope.answers if scope else None)  # (`_done`)
                return
        finally:
            _STREAM.reset(token)

    def commit(self, tasks: list[Task], plan: tuple) -> StepLog:
        """`RunLoop.commit(tasks)` for a lone task, in one frame."""
        run, spec = self.run, self.spec
        task = tasks[0]
        log = StepLog(run.step, tasks, spec.fields, resets=run._pending_resets or (), joins=())
        run._pending_resets = ()
        run.log.steps.append(log)
        if task.error is not None:
            raise task.error
        if run.thread is not None or (current_task_env() and parent_scope(run)):  # (`open_step`)
            run.paused = list(task.interrupts)
        if run.paused:
            return log
        try:
            if plan[4]:
                _trigger(run, task, plan[5])
            else:
                run._trigger(tasks)
            written = _apply(spec.fields, run.values, task, run.step)
        except Exception as error:
            error.add_note(f"nbgraph: while applying the writes of step {run.step}")
            raise
        log.written = written
        if run.ephemeral:
            log.cleared = clear_ephemeral(run.ephemeral, run.values, log.written)
        log.applied = True
        if run.thread is not None:
            run.thread.save(run.step, "loop", checkpoint_payload(run, log), run.values)
            run.stop_after(tasks)
        return log


def _apply(fields: Any, values: dict, task: Task, step: int) -> tuple[str, ...]:
    """`writes.apply_grouped` for one task's writes; the fields written, in order."""
    writes, source = task.writes, task.node
    if len(writes) > 1 and _twice(writes):  # a field written twice
        grouped = group_task_writes({}, source, writes)
        apply_grouped(fields, values, grouped, step)
        return tuple(grouped)
    for name, new in writes:  # (one write a field: `apply_grouped`'s short case)
        spec = fields.get(name) or FieldSpec(name)
        if type(new) in _PLAIN:
            reducer = spec.reducer
            if reducer is None:
                values[name] = new
                continue
            old = values.get(name, MISSING)
            if old is not MISSING or reducer.takes_missing:
                result = (reducer.in_place or reducer.fn)(old, new)
                values[name] = isolate(result) if result is new else result
                continue
        values[name] = reduce_field(spec, values.get(name, MISSING), [(source, new)], step)
    if len(writes) == 2:  # (no field written twice here: the keys, in order)
        return writes[0][0], writes[1][0]
    return tuple(dict(writes))


def _trigger(run: Any, task: Task, targets: tuple[str, ...]) -> None:
    """`Committing._trigger` for a node whose edges are plain (no filter, wait, defer or
    merge at their targets)."""
    source, pull = task.node, run.pull
    for target in targets:
        queued = pull.get(target)
        if queued is None:
            pull[target] = [source]
        else:
            queued.append(source)
    for route in task.routes:
        if isinstance(route, Send):
            run.push.append((source, route))
        elif route == END:
            continue
        elif (node := run.spec.nodes[route]).defer or node.merge not in _NO_RESET:
            run._add(route, source, task, None)
        else:
            queued = pull.get(route)
            if queued is None:
                pull[route] = [source]
            else:
                queued.append(source)


def _route(spec: Any, env: TaskEnv, task: Task, values: dict, routers: tuple, known: dict) -> None:
    """`RunLoop._route` with the routers' injections known."""
    writes = task.writes
    for branch, router, wanted in routers:
        state = _router_view(spec, task, values, branch, known) if writes else StateView(values)
        try:
            result = router(state, **_kwargs(env, wanted)) if wanted else router(state)
        except TypeError as error:
            _explain(error, router)
            raise
        except ParentCommand as up:
            result = up.command
        if type(result) is str and result in spec.nodes and branch.path_map is None:
            if task.routes:
                task.routes.append(result)  # type: ignore[union-attr]
            else:
                task.routes = [result]
            continue
        _awaited(result, f"The router after {task.node!r} is async; use")
        absorb_route(spec, branch, task, result)


def _per_graph(spec: Any) -> tuple[dict[str, tuple | None], dict[str, FieldSpec]]:
    """A compiled graph's plans (filled as its nodes run) and `_viewed_fields`, made once
    per graph, not per run: kept in the spec's `__dict__`, as its `cached_property`s are
    (so they live as long as the graph)."""
    kept = spec.__dict__.get("_lone_step")
    if kept is None:
        kept = spec.__dict__["_lone_step"] = ({}, _viewed_fields(spec))
    return kept


def _router_view(spec: Any, task: Task, values: dict, branch: Any, known: dict) -> Any:
    """`tasks.router_state` for a router of the state's schema (no managed fields): a field
    written once holds its value (copied when read), a reduced one a lazy `_Fresh`; a field
    written twice, or anything unusual, takes `router_state` itself. `known`: the fields
    a view can hold (`_viewed_fields`)."""
    writes = task.writes
    if len(writes) > 1 and _twice(writes):  # a field written twice
        return router_state(spec, task, values, _NO_MANAGED, branch)
    view = StateView(values)
    node = task.node
    for key, value in writes:
        info = known.get(key)
        if info is None:
            if key not in spec.state.fields and not spec.open_schema:
                continue
            return router_state(spec, task, values, _NO_MANAGED, branch)
        if (
            info.reducer is None
            and type(value) is not Overwrite
            and not isinstance(value, Mutation)
        ):
            dict.__setitem__(view, key, value)  # (copied when read)
        else:
            dict.__setitem__(view, key, _Fresh((info, values, [(node, value)], task)))
    return view


def _viewed_fields(spec: Any) -> dict[str, FieldSpec]:
    """The fields whose writes a router's view shows (of the state's schema, or any with
    an open schema), by name: `_router_view` asks one dict instead of two."""
    names = spec.state.fields
    return {
        k: f for k, f in spec.fields.items() if f is not None and (k in names or spec.open_schema)
    }


def _twice(writes: list) -> bool:
    """Whether a field is written twice (two writes: their keys compared, no dict made)."""
    if len(writes) == 2:
        return writes[0][0] == writes[1][0]
    return len(dict(writes)) != len(writes)


def _kwargs(env: TaskEnv, wanted: tuple) -> dict[str, Any]:
    return {name: env.value(what) for name, what in wanted}


def _awaited(output: Any, what: str) -> None:
    """Refuse an awaitable (an async node or router) in a sync run, as `RunLoop` does."""
    if type(output) in _PLAIN_OUTPUTS or not inspect.isawaitable(output):
        return
    close = getattr(output, "close", None)
    if close is not None:
        close()
    how = " `await app.ainvoke(...)` or `app.astream(...)`." if what.startswith("Node") else ""
    raise TypeError(what + (how or " `await app.ainvoke(...)`."))
