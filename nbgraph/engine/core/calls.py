"""Task calls: a `@task` function called inside a running task runs as a `"call"` task of the
same step, returning a future.

A function decorated with `@task` (`nbgraph.func`) runs on the one task path
(`TaskRunner.execute` / `aexecute`), started at once.

The call task's id holds its step and its position among the step's tasks (the calling
node's first, then its calls in call order), so a run that reruns the node after a pause or
an error gives each call the same id and takes a finished call's result from the
checkpoint's pending writes instead of running it again. What a call returns is its one
write, `("calls", [value])`, a field of the entrypoint's state (`EntrypointState`) that lives
one step (in any other graph `("__return__", [value])`, which no field takes): the record
shows each call as a task with what it returned.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import operator
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as wait_all
from typing import Annotated, Any, TypedDict

from nbgraph.blueprint import NodeSpec
from nbgraph.engine.core.caching import serve_call_from_cache
from nbgraph.engine.core.interrupts import GraphInterrupt
from nbgraph.engine.core.runtime import running_task_env
from nbgraph.engine.core.tasks import Task
from nbgraph.policies import retry_policies
from nbgraph.primitives import Ephemeral

__all__ = [
    "CALLS",
    "RETURN",
    "Call",
    "CallFuture",
    "EntrypointState",
    "Returned",
    "StepCalls",
    "call_task",
    "result_write",
    "returned_value",
]

CALLS = "calls"
"""The field of an entrypoint's state a call task writes what it returned to (a list of one
value)."""
RETURN = "__return__"
"""Where a call task in any other graph keeps what it returned: a write no state field takes
(`engine.core.writes.applied_writes` keeps a call's writes only to fields the state has), so
a graph's own `calls` field is never written by a call."""


class EntrypointState(TypedDict, total=False):
    """The state an entrypoint's graph keeps: its run's `input`, what its function returned
    (`output`: what `invoke` returns and `get_state().values` shows), what it saved
    (`previous`: what the next run on the thread is handed as `previous`), and what the
    step's task calls returned (`calls`, in the order they finished; cleared after the step).
    """

    input: Any
    output: Any
    previous: Any
    calls: Annotated[list, operator.add, Ephemeral]


class Returned:
    """A call's function returned `value` (the plan's function wraps it, so the task path
    reads it as a call's result, not as a state update)."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


class Call:
    """What a task call runs: `fn(*args, **kwargs)` with the task's retry and cache policies;
    also the plan the task path reads (`fn`, `afn`, `wanted`, `awanted`, `viewed`, `routers`,
    `node`). Its `key` is its place among the step's calls: its caller's task id (or key),
    `>`, and how many calls that caller made before it (the same on every run of the step,
    whatever order calls on threads start in)."""

    __slots__ = ("args", "cache", "fn", "key", "kwargs", "node", "user_fn")
    wanted: tuple[()] = ()
    awanted: tuple[()] = ()
    viewed = False
    routers: tuple[()] = ()

    def __init__(
        self, name: str, fn: Callable[..., Any], args: tuple, kwargs: dict, retry: Any, cache: Any
    ) -> None:
        self.user_fn, self.args, self.kwargs, self.cache = fn, args, kwargs, cache
        self.key = ""  # (`StepCalls.new_task`'s; kept here, not on its Task: every task
        # of every run would carry the slot)
        is_async = inspect.iscoroutinefunction(fn)
        self.fn = self._acall if is_async else self._call
        self.node = NodeSpec(name, fn, is_async=is_async, retry=_policies(retry))

    def _call(self, _state: Any) -> Returned:
        return Returned(self.user_fn(*self.args, **self.kwargs))

    async def _acall(self, _state: Any) -> Returned:
        return Returned(await self.user_fn(*self.args, **self.kwargs))

    @property
    def afn(self) -> Callable[..., Any]:
        """The async run's form (a node plan's `afn`): the same call."""
        return self.fn

    @property
    def input(self) -> tuple[tuple, dict]:
        """What the call was made with: `(args, kwargs)` (LangGraph's `Call.input`)."""
        return self.args, self.kwargs

    @property
    def is_async(self) -> bool:
        return self.node.is_async


def _policies(retry: Any) -> tuple[Any, ...]:
    return retry_policies(retry) or ()  # (checked when the task was made: nbgraph.func)


def returned_value(task: Task) -> Any:
    """What a finished call task returned; raises its error, or its question for a person."""
    if task.error is not None:
        raise task.error
    if task.interrupts:
        raise GraphInterrupt(*task.interrupts)
    for key, value in task.writes:
        if key in (CALLS, RETURN):
            return value[0]
    return None


def result_write(spec: Any, value: Any) -> tuple[str, list[Any]]:
    """The write that keeps what a call returned (`value`, isolated by the caller)."""
    return (CALLS if spec.state.cls is EntrypointState else RETURN, [value])


class CallFuture:
    """A task call's result to come: `.result()` waits for it; an async entrypoint awaits it.

    Raises (from `.result()` or `await`): the call's error, or `GraphInterrupt` when it
    asked a person (the calling node pauses too).
    """

    __slots__ = ("future", "task")

    def __init__(self, task: Task, future: Any) -> None:
        self.task, self.future = task, future

    def __repr__(self) -> str:
        state = "done" if self.done() else "running"
        return f"<task call {self.task.node!r} ({self.task.id}): {state}>"

    def done(self) -> bool:
        return self.future.done()

    def result(self, timeout: float | None = None) -> Any:
        """Wait for the call and return what it returned."""
        if isinstance(self.future, asyncio.Future):
            if not self.future.done():
                raise RuntimeError(
                    f"The call of task {self.task.node!r} runs on the event loop: "
                    "`await` it in an async entrypoint instead of calling .result()."
                )
            return returned_value(self.future.result())
        return returned_value(self.future.result(timeout))

    def __await__(self) -> Any:
        future = self.future
        if not isinstance(future, asyncio.Future):
            future = asyncio.wrap_future(future)
        task = yield from future.__await__()
        return returned_value(task)


class StepCalls:
    """The calls started in a run's current step: their tasks (joined to the step's at its
    commit), their futures, and the threads sync calls run on."""

    __slots__ = ("counts", "futures", "lock", "next_index", "places", "pool", "reported", "tasks")

    def __init__(self, places: dict[str, int] | None = None) -> None:
        self.tasks: list[Task] = []
        self.futures: list[Any] = []
        self.lock = threading.Lock()
        self.pool: ThreadPoolExecutor | None = None
        self.reported: set[int] = set()  # (ids of) the calls already streamed as updates
        self.places = places or {}  # a resumed step's saved calls: call key -> index
        self.counts: dict[str, int] = {}  # calls made so far, by caller (its key)
        self.next_index = 0

    def new_task(self, step: int, first: int, name: str, parent: Task, call: Call) -> Task:
        """The task of a call `parent` makes: its index is the one the same call had when
        the step ran before (`places`: so it finds its saved result and answers), else the
        next one no saved call holds."""
        caller = parent.arg.key if parent.kind == "call" else parent.id
        with self.lock:
            count = self.counts.get(caller, 0)
            self.counts[caller] = count + 1
            key = f"{caller}>{count}"
            index = self.places.get(key)
            if index is None:
                index = max(first + len(self.tasks), self.next_index)
                taken = set(self.places.values())
                while index in taken:
                    index += 1
                self.next_index = index + 1
            task = Task(step, index, name, kind="call", arg=call, triggers=(parent.node,))
            call.key = key
            self.tasks.append(task)
        return task

    def unreported(self) -> list[Task]:
        """The calls that finished and were not streamed yet, in the order they finished."""
        with self.lock:
            done = [t for t in self.tasks if (t.ended or t.cached) and id(t) not in self.reported]
            self.reported.update(map(id, done))
        return sorted(done, key=lambda task: task.ended)

    def settle(self) -> None:
        """Wait for the calls running on threads (a call no one waited for: the step waits
        for it, as LangGraph's does)."""
        wait_all([f for f in self.futures if isinstance(f, Future)])

    async def asettle(self) -> None:
        """`settle`, and wait for the calls running on the event loop too."""
        running = [f for f in self.futures if isinstance(f, asyncio.Future) and not f.done()]
        if running:
            await asyncio.wait(running)
        threads = [asyncio.wrap_future(f) for f in self.futures if isinstance(f, Future)]
        if threads:
            await asyncio.wait(threads)

    def joined(self, tasks: list[Task]) -> list[Task]:
        """The step's tasks with its calls after them, once every call has ended (a call
        no one waited for is waited for here, as LangGraph's step waits)."""
        self.settle()
        if self.pool is not None:
            self.pool.shutdown(wait=False)
        return [*tasks, *self.tasks]


def call_task(name: str, fn: Callable[..., Any], args: tuple, kwargs: dict, policies: Any) -> Any:
    """Start a call of task `name` (`fn(*args, **kwargs)`) in the running task's step.

    Returns:
        A `CallFuture`.

    Raises:
        RuntimeError: called outside a running task (LangGraph's error and message).
    """
    env = running_task_env("get_config")  # (LangGraph's message)
    run, parent = env.run, env.task
    if run.lineages:
        raise NotImplementedError(
            f"Task {name!r} was called in node {parent.node!r} of a graph compiled with "
            'semantics="branches"; @task calls run in supersteps graphs (and entrypoints) only.'
        )
    retry, cache = policies
    call = Call(name, fn, args, kwargs, retry, cache)
    calls = run.calls
    if calls is None:  # (the step's first call opens them: `RunLoop.step_calls`)
        calls = run.step_calls()
    task = calls.new_task(parent.step, run.step_size, name, parent, call)
    task.started = time.time()
    if run.finished:  # it finished before a pause or a failure: its result is kept
        task.cached = run.restore(task)
    if not task.cached and cache is not None and run.spec.cache is not None:
        serve_call_from_cache(run.spec.cache, task, call)
    future = _start(run, calls, task, call, parent)
    calls.futures.append(future)
    return CallFuture(task, future)


def _start(run: Any, calls: StepCalls, task: Task, call: Call, parent: Task) -> Any:
    """Run the call task on the task path: an async task on the event loop of the async
    node that called it; a sync one on a thread of the step's pool (also when its caller
    runs on an event loop: a sync node in a notebook's kernel, say)."""
    if call.is_async:
        if not _runs_async(run, parent):
            raise TypeError(
                f"Task {task.node!r} is async; call it from an async entrypoint (or node) run "
                "with `await app.ainvoke(...)`."
            )
        return asyncio.ensure_future(_aexecute(run, task))
    with calls.lock:
        if calls.pool is None:
            calls.pool = ThreadPoolExecutor(thread_name_prefix="nbgraph-call")
        pool = calls.pool
    return pool.submit(contextvars.copy_context().run, _execute, run, task)


def _runs_async(run: Any, parent: Task) -> bool:
    """Whether the calling task runs on the event loop (its node, or its task, is async)."""
    if parent.kind == "call":
        return parent.arg.is_async
    return run.plans.of(parent.node).is_async


def _execute(run: Any, task: Task) -> Task:
    run.task_path[0](task)  # (`TaskRunner.execute`, through a streamed run's scope; it
    # keeps a call with a cache key in the cache: `caching.keep_in_cache`)
    if run.call_ended is not None:
        run.call_ended()
    return task


async def _aexecute(run: Any, task: Task) -> Task:
    await run.task_path[1](task)
    if run.call_ended is not None:
        run.call_ended()
    return task
