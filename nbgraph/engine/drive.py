"""Driving a `RunLoop`: executing each step's tasks (inline, on a thread pool, or on the event
loop) and shaping what `stream()` yields for each stream mode.

The step logic is all in `RunLoop`, and what a run streams around it in the `_*_chunks`
functions both drivers call in the same order: the drivers differ only in how a step's tasks
execute and where they wait.

A run stopped in the middle of a step (Ctrl-C, a cancelled `ainvoke`, a stream closed early)
starts no more of the step's tasks and waits for those already running in threads (async
nodes are cancelled); the tasks that finished keep their writes (pending writes, so a resume
does not run them again) and the record shows them in the step, not applied. Only then does
the error reach the caller and the thread's claim go: a resume never runs a node alongside
its first run. A second Ctrl-C during that wait returns at once; the thread stays claimed
until the nodes end (`RunLoop.unsettled` waits for them).
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from concurrent.futures import wait as wait_for
from dataclasses import dataclass, field
from typing import Any

from nbgraph.engine.checkpoint_stream import CheckpointStream
from nbgraph.engine.core.calls import returned_value
from nbgraph.engine.core.loop import Hooks, RunLoop
from nbgraph.engine.core.runlog import StepLog
from nbgraph.engine.core.tasks import Task, update_chunk
from nbgraph.engine.nested.edges import finish_handed
from nbgraph.engine.nested.subruns import stops_caller
from nbgraph.engine.streaming.streams import LiveSink, StreamScope
from nbgraph.engine.streaming.task_events import (
    call_finished,
    call_started,
    task_finished,
    task_started,
)
from nbgraph.primitives import Command

__all__ = [
    "STEP_MODE",
    "STREAM_MODES",
    "Chunk",
    "StepFinished",
    "TaskFinished",
    "TaskStarted",
    "adrive",
    "drive",
]

STREAM_MODES = ("values", "updates", "debug", "custom", "messages", "tasks", "checkpoints")
_INTERRUPT = "__interrupt__"  # the key LangGraph streams a pause under
STEP_MODE = frozenset({"__step__"})  # (`engine.stepping`: each committed step's log)

Chunk = tuple[str, Any]


@dataclass(frozen=True, slots=True)
class TaskStarted:
    """`stream_mode="debug"`: a task is about to run."""

    step: int
    task_id: str
    node: str
    triggers: tuple[str, ...]
    type: str = field(default="task", init=False)


@dataclass(frozen=True, slots=True)
class TaskFinished:
    """`stream_mode="debug"`: a task finished, with its update or its error."""

    step: int
    task_id: str
    node: str
    update: Any
    error: BaseException | None
    interrupts: tuple[Any, ...] = ()
    type: str = field(default="task_result", init=False)


@dataclass(frozen=True, slots=True)
class StepFinished:
    """`stream_mode="debug"`: a step's writes were applied; `values` is the new state."""

    step: int
    fields: tuple[str, ...]
    values: dict[str, Any]
    type: str = field(default="step", init=False)


# --- the step body both drivers share: what each stage of a run streams, in order ---------------
# (Plain functions, not an object: `invoke()` makes none per run, so its call budgets hold.)


def _started_chunks(run: RunLoop, tasks: list[Task], modes: frozenset[str]) -> Iterable[Chunk]:
    if "tasks" in modes:  # (LangGraph's shape: engine.task_events)
        for task in tasks:
            yield "tasks", task_started(run, task)
    if "updates" in modes:  # as LangGraph: restored writes first, marked as cached
        for task in tasks:
            if task.cached:
                written = frozenset(key for key, _ in task.writes)  # (managed ones never are)
                chunk = {task.node: update_chunk(task, written), "__metadata__": {"cached": True}}
                yield "updates", chunk
    if "debug" in modes:
        for task in tasks:
            yield "debug", TaskStarted(task.step, task.id, task.node, task.triggers)


def _task_chunks(
    run: RunLoop, task: Task, modes: frozenset[str], scope: StreamScope
) -> Iterable[Chunk]:
    writes = None if scope.returned is None else scope.returned_writes(task)  # (as returned)
    if run.calls is not None:  # the `@task` calls it waited for
        yield from _call_chunks(run, run.calls.unreported(), modes)
    if task.interrupts:  # as LangGraph: the question, and the state it was asked in
        if "updates" in modes:
            yield "updates", {_INTERRUPT: task.interrupts}
        if "values" in modes:
            yield "values", {**run.stream_values(), _INTERRUPT: task.interrupts}
    elif "updates" in modes and task.error is None and not task.cached and not task.held:
        yield "updates", {task.node: update_chunk(task, run.stream_keys, writes)}
    if "tasks" in modes and not task.cached:
        yield "tasks", task_finished(run, task, writes)
    if "debug" in modes:
        update = update_chunk(task, run.stream_keys)
        yield (
            "debug",
            TaskFinished(task.step, task.id, task.node, update, task.error, task.interrupts),
        )


def _call_chunks(run: RunLoop, calls: list[Task], modes: frozenset[str]) -> Iterable[Chunk]:
    """`"updates"` for finished `@task` calls: `{task name: what it returned}`, marked as
    cached when it came from the node cache; `"tasks"`: each call's start and, when it ran,
    its result. A call restored from the checkpoint (it had finished before the run paused)
    streams its start alone, as in LangGraph (a cache hit its start and its update)."""
    for call in calls:
        if "tasks" in modes:
            yield "tasks", call_started(run, call)
        restored = call.cached and not call.from_cache
        if "updates" in modes and call.error is None and not call.interrupts and not restored:
            chunk = {call.node: returned_value(call)}
            if call.cached:
                chunk["__metadata__"] = {"cached": True}
            yield "updates", chunk
        if "tasks" in modes and not call.cached:
            yield "tasks", call_finished(run, call)


def _step_chunks(
    run: RunLoop, log: StepLog, modes: frozenset[str], scope: StreamScope | None = None
) -> Iterable[Chunk]:
    if "__step__" in modes:
        yield "__step__", log
        return
    saved = scope.checkpoints.chunks() if scope is not None and scope.checkpoints else ()
    for chunk in saved[:-1]:  # (an input checkpoint before the step its input starts)
        yield "checkpoints", chunk
    if "values" in modes and log.applied and run.touched_stream_keys(log):
        yield "values", run.stream_values()
    if saved:  # (LangGraph: a step's checkpoint after its values)
        yield "checkpoints", saved[-1]
    if "debug" in modes:
        changed = tuple(change.field for change in log.changes)
        yield "debug", StepFinished(log.step, changed, run.stream_values())


def _end_chunks(run: RunLoop, modes: frozenset[str]) -> Iterable[Chunk]:
    """What LangGraph streams when a run stops for a person: after `interrupt()`, the state
    with the paused step's finished tasks' writes (if they wrote any shown field); at a
    static breakpoint, an empty `__interrupt__` update."""
    if run.paused and "values" in modes:
        values = run.paused_values()
        if values is not None:
            yield "values", values
    if run.at_breakpoint and "updates" in modes and not stops_caller(run):
        yield "updates", {_INTERRUPT: ()}


def _scope(run: RunLoop, modes: frozenset[str], name: str, input: Any) -> StreamScope:
    """The run's stream scope, with its checkpoint stream when the caller asks for one."""
    scope = StreamScope(run, modes, name)
    if "checkpoints" in modes and run.thread is not None:
        resumed = input is None or isinstance(input, Command)
        scope.checkpoints = CheckpointStream(run, resumed)
    if scope.sink is not None:  # `@task` calls' chunks go live, in order with what they wrote
        run.hook(Hooks(call_ended=functools.partial(_live_call_chunks, run, modes, scope.sink)))
    return scope


def _live_call_chunks(run: RunLoop, modes: frozenset[str], sink: LiveSink) -> None:
    """A `@task` call ended: its chunks join the live ones, after those it streamed itself
    (LangGraph's order: each call's update when it ends, not after its caller's)."""
    if run.calls is not None:
        for mode, chunk in _call_chunks(run, run.calls.unreported(), modes):
            sink.put(mode, chunk)


class _QuietScope:
    """The stream scope of a run that streams nothing, has no relay and no callbacks
    (`invoke()` of a plain run, and of most runs inside a node), for which a `StreamScope`
    would do nothing: one, shared, that holds nothing."""

    __slots__ = ()
    plain = True  # (a task runs as it is: `StreamScope.plain`)
    sink = chat = events = checkpoints = None

    def started(self, graph_input: Any, on_event_loop: bool = False) -> None:
        """The run starts: no chain run to open."""

    def ended(self, error: BaseException | None) -> None:
        """The run ended: no chain run to close."""


_QUIET: Any = _QuietScope()


def _finish(run: RunLoop, error: BaseException | None, scope: StreamScope) -> None:
    """The run's status, and the end of its stream scope (`error`: what stopped it)."""
    if error is not None and finish_handed(run, error):  # Command.PARENT: not a failure
        scope.ended(None)
        return
    if error is not None:
        run.log.status = "failed"
    else:
        run.log.status = "interrupted" if run.paused or run.at_breakpoint else "done"
    run.log.error = error
    if scope.events is not None:  # (its chain run closes)
        scope.ended(error)


def _finished_chunks(
    run: RunLoop, item: Task | Chunk, modes: frozenset[str], scope: StreamScope
) -> Iterable[Chunk]:
    """A live chunk, sent while the step runs, as it is; a finished task's chunks."""
    if type(item) is tuple:
        return (item,)
    return _task_chunks(run, item, modes, scope)  # type: ignore[arg-type]


def _settled_chunks(run: RunLoop, modes: frozenset[str]) -> Iterable[Chunk]:
    """The step's `@task` calls that ended after their caller's chunks (the driver settles
    them first, and commits the step after their chunks)."""
    return () if run.calls is None else _call_chunks(run, run.calls.unreported(), modes)


# --- sync ----------------------------------------------------------------------------------------


class _StepPool:
    """Runs a step's tasks on a thread pool, and stops it: starts none of the tasks still
    waiting, and waits for those running."""

    def __init__(self, max_workers: int | None) -> None:
        self.pool = ThreadPoolExecutor(max_workers, thread_name_prefix="nbgraph")
        self.futures: list[Future[Task]] = []

    def start(
        self, execute: Callable[[Task], Task], tasks: list[Task], sink: LiveSink | None = None
    ) -> Iterator[Task | Chunk]:
        """Submit the tasks; iterate over them as they finish (with `sink`, over the live
        chunks they send as well, as they come)."""
        self.futures = []
        for task in tasks:
            future: Future[Task] = Future()
            self.futures.append(future)  # kept before the pool has it: a stop always finds it
            if sink is not None:
                future.add_done_callback(sink.finished)
            self.pool.submit(_fill, future, execute, task)
        if sink is not None:
            return sink.until_done(len(tasks))
        return (future.result() for future in as_completed(self.futures))

    def stop(self) -> None:
        """Cancel the tasks not started, and wait for the others to end."""
        for future in self.futures:
            future.cancel()  # (only a task that has not started can be cancelled)
        wait_for(self.futures)


def _fill(future: Future[Task], execute: Callable[[Task], Task], task: Task) -> None:
    if not future.set_running_or_notify_cancel():
        return  # the step was stopped before this task started
    try:
        future.set_result(execute(task))
    except BaseException as error:
        future.set_exception(error)


def _inline(
    execute: Callable[[Task], Task], tasks: list[Task], sink: LiveSink
) -> Iterator[Task | Chunk]:
    """The tasks run one at a time in this thread, each followed by the live chunks it sent."""
    for task in tasks:
        done = execute(task)
        yield from sink.drain()
        yield done


def drive(
    run: RunLoop, input: Any, modes: frozenset[str], name: str = "LangGraph"
) -> Iterator[Chunk]:
    """Run to the end, yielding `(mode, chunk)` for the requested modes (`name`: the
    graph's, for the chain run langchain callbacks in its config hear)."""
    max_workers = run.config.get("max_concurrency")
    quiet = not modes and run.relay is None and not run.config.get("callbacks")
    scope = _QUIET if quiet else _scope(run, modes, name, input)
    sink = scope.sink
    execute = run.execute if scope.plain else scope.execute  # (the task's one path)
    pool: _StepPool | None = None
    running: list[Task] | None = None  # the step being executed, until its commit
    try:
        if scope.events is not None:  # (its chain run opens: a config with callbacks)
            scope.started(input)
        if modes:
            yield from _step_chunks(run, run.begin(input), modes - {"debug"}, scope)
        else:  # (invoke(): no chunks to make, none asked of the step)
            run.begin(input)
        while (tasks := run.next_tasks()) is not None:
            if modes:  # (invoke(): no chunks to make)
                yield from _started_chunks(run, tasks, modes)
            running = tasks
            finished: Iterable[Task | Chunk]
            if len(tasks) == 1 or max_workers == 1:  # one at a time: no thread needed
                finished = map(execute, tasks) if sink is None else _inline(execute, tasks, sink)
            else:
                pool = pool or _StepPool(max_workers)
                finished = pool.start(execute, tasks, sink)
            if not modes:  # invoke(): nothing to yield, just run
                for _ in finished:
                    pass
                running = None
                run.commit(tasks)
                continue
            for item in finished:
                yield from _finished_chunks(run, item, modes, scope)
            running = None
            if run.calls is not None:
                run.calls.settle()
            yield from _settled_chunks(run, modes)
            yield from _step_chunks(run, run.commit(tasks), modes, scope)
        if modes:
            yield from _end_chunks(run, modes)
    except BaseException as error:
        try:
            if pool is not None and running is not None:
                with run.waiting_for(pool.stop):  # (should a second Ctrl-C cut it short)
                    pool.stop()
            if running is not None:
                run.record_stopped(running)
        finally:
            _finish(run, error, scope)
        raise
    finally:
        if pool is not None:
            pool.pool.shutdown(wait=False)
    _finish(run, None, scope)


# --- async ---------------------------------------------------------------------------------------


async def adrive(
    run: RunLoop, input: Any, modes: frozenset[str], name: str = "LangGraph"
) -> AsyncIterator[Chunk]:
    """`drive` on the event loop: async nodes are awaited, sync ones run in threads."""
    scope = _scope(run, modes, name, input)
    step = _AsyncStep(scope)
    running: list[asyncio.Future[Task]] = []  # the step being executed, until its commit
    try:
        scope.started(input, on_event_loop=True)
        for chunk in _step_chunks(run, run.begin(input), modes - {"debug"}, scope):
            yield chunk
        while (tasks := run.next_tasks()) is not None:
            for chunk in _started_chunks(run, tasks, modes) if modes else ():
                yield chunk
            running = step.start(tasks)
            async for item in step.finished(running):
                for chunk in _finished_chunks(run, item, modes, scope):
                    yield chunk
            running = []
            if run.calls is not None:
                await run.calls.asettle()
            for chunk in _settled_chunks(run, modes):
                yield chunk
            for chunk in _step_chunks(run, run.commit(tasks), modes, scope):
                yield chunk
        for chunk in _end_chunks(run, modes):
            yield chunk
    except BaseException as error:
        try:
            if running:  # cancel the async tasks (and those not started), wait for the threads
                await step.stop(running)
                run.record_stopped(tasks)
        finally:
            _finish(run, error, scope)
        raise
    finally:
        step.pool.shutdown(wait=False)
    _finish(run, None, scope)


class _AsyncStep:
    """Runs a step's tasks on the event loop (sync nodes in threads), at most
    `max_concurrency` at a time, and stops them."""

    def __init__(self, scope: StreamScope) -> None:
        limit = scope.run.config.get("max_concurrency")
        self.scope = scope
        self.semaphore = asyncio.Semaphore(limit) if limit is not None else None
        self.pool = ThreadPoolExecutor(thread_name_prefix="nbgraph")  # threads start when used
        self.threads: list[asyncio.Future[Task]] = []  # the step's sync nodes, in the pool
        if scope.sink is not None:
            scope.sink.bind()

    def start(self, tasks: list[Task]) -> list[asyncio.Future[Task]]:
        self.threads.clear()
        running = [asyncio.ensure_future(self.execute(task)) for task in tasks]
        if self.scope.sink is not None:
            for future in running:
                future.add_done_callback(self.scope.sink.finished)
        return running

    async def finished(self, running: list[asyncio.Future[Task]]) -> AsyncIterator[Task | Chunk]:
        """The tasks as they finish (and the live chunks they send, as they come)."""
        if self.scope.sink is not None:
            async for item in self.scope.sink.auntil_done(len(running)):
                yield item
            return
        for next_done in asyncio.as_completed(running):
            yield await next_done

    async def execute(self, task: Task) -> Task:
        if self.semaphore is None:
            return await _execute_one(self.scope, task, self.pool, self.threads)
        async with self.semaphore:
            return await _execute_one(self.scope, task, self.pool, self.threads)

    async def stop(self, running: list[asyncio.Future[Task]]) -> None:
        """Cancel the async tasks (and those not started), and wait for the threads."""
        for future in running:
            future.cancel()
        with self.scope.run.waiting_for(functools.partial(self.pool.shutdown, wait=True)):
            await asyncio.wait([*running, *self.threads])


async def _execute_one(
    scope: StreamScope, task: Task, pool: ThreadPoolExecutor, threads: list[asyncio.Future[Task]]
) -> Task:
    spec = scope.run.spec
    if task.kind != "input":
        node = spec.nodes[task.node]
        if node.is_async or node.afn is not None:  # (a node with an async form: `acall`)
            return await scope.aexecute(task)
    if any(b.is_async for b in spec.branches.get(task.node, ())):
        return await scope.aexecute(task)
    call = functools.partial(contextvars.copy_context().run, scope.execute, task)
    thread = asyncio.get_running_loop().run_in_executor(pool, call)
    threads.append(thread)
    return await asyncio.shield(thread)  # cancelling the task does not orphan the thread
