"""Supersteps: `RunLoop`, one run of a compiled graph — what runs next, and each finished
step's writes committed.

`RunLoop` is the one synchronous state machine: `begin(input)`, then `next_tasks()` /
`execute(task)` / `commit(tasks)` until `next_tasks()` returns None. The sync and async
drivers (`engine.drive`) only decide how the tasks of a step are executed.

It is one class in one file, composed of objects that own their part: its `schedule`
(`engine.core.schedule`: the queues of what runs next), its `runner`
(`engine.core.attempt`: the one path a task runs on), and its node `plans`
(`engine.core.plans`). How a run starts (`engine.core.starting`), the states handed to a
merging node (`engine.core.merging`) and what callers see of its values
(`engine.core.outputs`) are functions of the run.
"""

from __future__ import annotations

import contextlib
import time
import warnings
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

from nbgraph.blueprint import GraphSpec
from nbgraph.blueprint.validate import expand
from nbgraph.engine.core import outputs, starting
from nbgraph.engine.core.attempt import TaskRunner
from nbgraph.engine.core.caching import serve_from_cache
from nbgraph.engine.core.calls import StepCalls
from nbgraph.engine.core.columns import SEALS, StepColumns
from nbgraph.engine.core.config import DEFAULT_RECURSION_LIMIT as DEFAULT_RECURSION_LIMIT
from nbgraph.engine.core.config import run_config
from nbgraph.engine.core.merging import merged_resets
from nbgraph.engine.core.nesting import caller_now
from nbgraph.engine.core.plans import plans_of
from nbgraph.engine.core.runlog import RootReset, RunLog, StepLog
from nbgraph.engine.core.schedule import Schedule
from nbgraph.engine.core.tasks import Task, state_for
from nbgraph.engine.core.writes import (
    applied_before_conflict,
    applied_writes,
    apply_writes,
    clear_ephemeral,
    group_writes,
    merge_unreduced,
)
from nbgraph.errors import GraphRecursionError
from nbgraph.isolation import isolate
from nbgraph.primitives import MISSING, START, Interrupt, Send
from nbgraph.schema import managed_value

__all__ = ["DEFAULT_RECURSION_LIMIT", "Hooks", "RunLoop"]

_NO_MANAGED: dict[str, Any] = {}


class Hooks(NamedTuple):
    """What hears a run, handed to it in one piece (`RunLoop.hook`) before it begins, as
    Burr's lifecycle hooks are: the run calls them, nothing else sets them. None leaves a
    hook as it was.

    Attributes:
        tap: `tap(task, output)` hears each node's output (`engine.streaming.streams`).
        observer: hears what a task does between its start and its end: each router's
            call (`routed(task, branch, state, result)`) and each retry (`retrying(task,
            error)`); a run whose config has langchain callbacks (`chain_events`).
        sink: where a streamed run's live chunks go (`engine.streaming`).
        relay: a streamed run's namespaces (`engine.streaming.namespaces`).
        task_path: `(execute, aexecute)`, how a `@task` call runs (a streamed run's scope
            swaps in its own, to stream chat tokens).
        call_ended: called when a `@task` call ends (a streamed run's: `engine.drive`).
    """

    tap: Callable[[Task, Any], None] | None = None
    observer: Any = None
    sink: Any = None
    relay: Any = None
    task_path: tuple[Callable, Callable] | None = None
    call_ended: Callable[[], None] | None = None


def _start(run: RunLoop, start: starting.Start) -> None:
    """`RunLoop.start`: take what starting the run worked out (`starting.Start`; MISSING:
    as it was). Field by field, without a loop of `setattr`: every `invoke` starts a run.
    (A function of this module, the run's one writer: the class stays readable.)"""
    if start.values is not MISSING:
        run.values = run.log.final = start.values
    if start.step is not MISSING:
        run.step, run.stop = start.step, start.stop
    if start.finished is not MISSING:
        run.finished = start.finished
    if start.answers is not MISSING:
        run.answers = start.answers
    if start.call_places is not MISSING:
        run.call_places = start.call_places
    if start.resumed is not MISSING:
        run.resumed = start.resumed
    if start.past_breakpoint is not MISSING:
        run.past_breakpoint = start.past_breakpoint
    if start.resumes_step is not MISSING:
        run.resumes_step = start.resumes_step
    if start.root_updated is not MISSING:
        run.root_updated = start.root_updated


def _waiting_for(run: RunLoop, rest: Callable[[], object]) -> Iterator[None]:
    """`RunLoop.waiting_for`: while a stopped step waits for its nodes, `rest()` waits for
    them, should the wait itself be cut short (a second Ctrl-C): it stays set then, for
    `app._running` to call."""
    run.unsettled = rest
    yield
    run.unsettled = None


class RunLoop:
    """One run of a compiled graph, one superstep at a time.

    Attributes:
        execute: `execute(task)` runs a task (`TaskRunner.execute`); `aexecute` on the
            event loop; `route(task)` runs its routers outside an attempt.
        schedule: what runs next (`Schedule`).
    """

    __slots__ = (
        "__weakref__", "aexecute", "answers", "asks_parent", "at_breakpoint", "breaks_after",
        "breaks_before", "call_ended", "call_places", "caller", "calls", "config", "context",
        "ephemeral", "execute", "finished", "joins", "limit", "log", "managed", "observer",
        "past_breakpoint", "paused", "pending_resets", "plans", "relay", "resumed", "resumes_step",
        "root_updated", "route", "runner", "schedule", "sink", "spec", "step", "step_size", "stop",
        "store", "stream_keys", "tap", "task_path", "thread", "unsettled", "values",
    )  # fmt: skip
    # (a run's every attribute read is a slot's: the engine reads them at every task)
    lineages = False  # each task reads its own lineage's values (`read`: branch runs)

    def __init__(self, spec: GraphSpec, config: dict[str, Any], thread: Any = None,
                 caller: Any = MISSING, *, store: Any = None, context: Any = None,
                 keys: frozenset[str] | None = None) -> None:  # fmt: skip
        self.spec = spec
        self.config = config
        self.joins: list[Any] | tuple[()] = ()  # the merges the step's tasks read (branches)
        self.tap = self.observer = self.sink = self.relay = self.call_ended = None  # (`Hooks`)
        self.context: Any = context  # invoke(..., context=...), as the nodes' runtime gives it
        self.store: Any = store  # compile(store=...)
        self.thread = thread  # a persistence Thread when the graph has a checkpointer
        self.calls: StepCalls | None = None  # the `@task` calls of the step running
        self.finished: dict[str, dict[str, Any]] = {}  # restored tasks' writes, by task id
        self.answers: dict[str, list[Any]] = {}  # answers to interrupts, by task id
        self.call_places: dict[str, int] = {}  # restored `@task` calls: call key -> index
        self.resumes_step = -2  # the step a resumed thread's run goes on with (its subgraphs
        # go on from their own checkpoints then, as LangGraph's do: engine.nested)
        self.resumed: dict[str, tuple[str, Any]] = {}  # this run's answers: id -> (task, value)
        self.paused: list[Interrupt] = []  # why the run stopped for an answer
        self.at_breakpoint = ""  # "before" / "after" when a static breakpoint stopped it
        self.past_breakpoint = False
        # the nodes it stops before / after: the compiled graph's, or `invoke`'s (`breakpoints`)
        self.breaks_before, self.breaks_after = spec.interrupt_before, spec.interrupt_after
        self.limit = limit = run_config(config)["recursion_limit"]  # (checks every value)
        self.step = -1
        self.stop = self.step + limit + 1
        self.values: dict[str, Any] = {}
        self.plans = plans = plans_of(spec)  # per node: what running it takes, and what
        # every run of the graph reads (engine.core.plans)
        self.schedule = Schedule(spec, self._state_after, plans)
        self.managed = plans.managed
        self.ephemeral = spec.ephemeral
        self.stream_keys = plans.shown if keys is None else keys  # (`output_keys=`)
        self.log = RunLog(spec, MISSING, config, StepColumns(spec.fields))
        self.log.context = context
        self.pending_resets: list[RootReset] | tuple[()] = ()
        self.root_updated = False  # a resuming Command's update: the next step records it
        self.step_size = 0  # tasks in the step being run
        self.unsettled: Callable[[], object] | None = None  # see `engine.drive`: stopped
        # mid-step, the run could not wait for all its nodes; this waits for the rest
        # the node that started this run, if one did (asked once: engine.core.nesting); a run
        # inside a node without a checkpointer asks its questions in the calling node's scope,
        # and a question pauses this run too (engine.nested.subruns)
        self.caller = caller = caller_now() if caller is MISSING else caller
        self.asks_parent = thread is None and caller is not None  # (its questions pause it)
        self.runner = runner = TaskRunner(self)
        self.execute, self.aexecute, self.route = runner.execute, runner.aexecute, runner.route
        self.task_path = (runner.execute, runner.aexecute)  # how a `@task` call runs

    # --- what others hand the run (it is their one way in: tests/test_layers.py) ----------

    def hook(self, hooks: Hooks) -> None:
        """Take the run's observers (`Hooks`; None leaves one as it was), before it begins."""
        for name, hook in zip(Hooks._fields, hooks, strict=True):
            if hook is not None:
                setattr(self, name, hook)

    start = _start  # (take a `starting.Start`)

    def restore(self, task: Task) -> bool:
        """Take a task's writes from the checkpoint instead of running it again (`finished`
        hands each once: `next_tasks`, the task path, a `@task` call)."""
        done = self.finished.pop(task.id, None)
        if done is None:
            return False
        task.writes = [tuple(write) for write in done["writes"]]
        task.routes = list(done["routes"])
        task.ended = task.started
        return True

    def answer(self, task_id: str, interrupt_id: str, value: Any) -> None:
        """An answer to interrupt `interrupt_id`, asked by task `task_id`: the task reads it
        (`answers`), and a graph run inside it finds it by id (`resumed`)."""
        self.answers.setdefault(task_id, []).append(value)
        self.resumed[interrupt_id] = (task_id, value)

    def reset_values(self, values: dict[str, Any]) -> None:
        """The run's state replaced: a merging node's reset (`engine.core.merging`), the
        merged end of branch lineages (`engine.branches.joins`)."""
        self.values = self.log.final = values

    def add_reset(self, reset: RootReset) -> None:
        """A reset the next step's tasks read (a branch run's merge: `branches.routing`)."""
        self.pending_resets = [*self.pending_resets, reset]

    def update_step(self) -> int:
        """The step an update is written in (`update_state`): the next one."""
        self.step += 1
        return self.step

    def step_calls(self) -> StepCalls:
        """The `@task` calls of the step running, opened by its first call (a resumed
        step's saved places, used once)."""
        if self.calls is None:
            self.calls, self.call_places = StepCalls(self.call_places), {}
        return self.calls

    waiting_for = contextlib.contextmanager(_waiting_for)  # (a stopped step's wait)

    def release(self) -> None:
        """The run has ended, every task and call of it settled: drop its links back to
        itself (its runner's methods, its schedule's `state_after`), so it is freed as soon
        as its caller lets go of it rather than left to the cyclic collector (a graph run
        inside a node ends on every call of the node)."""
        self.runner = self.execute = self.aexecute = self.route = self.task_path = None
        self.schedule.release()

    @property
    def pulls(self) -> int:
        """The step's tasks that are not Sends: they come first, a Send's index after."""
        return self.schedule.pulls

    # --- choosing the next step ------------------------------------------------------------

    def next_tasks(self) -> list[Task] | None:
        """The next superstep's tasks in write order, or None when the run is over.

        Raises:
            GraphRecursionError: the step would pass `recursion_limit` (checked first,
                as LangGraph does, even when nothing is left to run).
        """
        if self.paused or self.at_breakpoint:  # (`advance`'s first question)
            return None
        self.step += 1
        if self.step > self.stop:
            self.step -= 1
            self.advance()  # (raises GraphRecursionError)
        schedule = self.schedule
        taken = schedule.take(self.step)
        if taken is None:
            self.step -= 1
            steps = self.log.steps
            if type(steps) is StepColumns and steps.columns is not None:
                steps.settle()  # (the run's own, unless replaced; a short run has no columns)
            return None
        pull, push, tasks = taken
        if self.breaks_before and self._stop_before(pull, push):
            schedule.put_back(pull, push)
            self.step -= 1
            return None
        resets = merged_resets(self, pull) if schedule.incoming else ()
        if self.root_updated:  # the state a resuming Command updated: the step starts there
            self.root_updated = False
            recorded = {k: isolate(v) for k, v in self.values.items()}
            resets = [RootReset(self.step, START, "command", (), (), recorded), *resets]
        self.pending_resets = resets
        self.step_size = len(tasks)
        if self.finished:  # tasks that finished before a pause or a failure are not run again
            for task in tasks:
                task.started = time.time()
                task.cached = self.restore(task)
        if self.spec.cache is not None:  # cache_policy=: a seen input's writes, not run again
            serve_from_cache(self.spec, tasks, self.runner.node_input)
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
        before = self.breaks_before
        if not before:
            return False
        if self.past_breakpoint:
            self.past_breakpoint = False
            return False
        if any(name in before for name in pull) or any(s.node in before for _, s in push):
            self.at_breakpoint = "before"
            return True
        return False

    def read(self, task: Task) -> dict[str, Any]:
        """The values `task` reads (supersteps: the step's starting state, for every task)."""
        return self.values

    def managed_values(self) -> dict[str, Any]:
        """Managed fields as a node at this step sees them."""
        if not self.managed:
            return _NO_MANAGED
        return {f.name: managed_value(f, self.stop - self.step) for f in self.managed}

    # --- committing a step -----------------------------------------------------------------

    def commit(self, tasks: list[Task], source: str = "loop") -> StepLog:
        """Apply a finished step's writes in write order and work out what runs next.

        Raises:
            The first failed task's exception (in write order), after recording the step.
        """
        if self.calls is not None:  # the step's task calls are tasks of it, after its own
            tasks, self.calls = self.calls.joined(tasks), None
        log = self.open_step(tasks)
        if self.paused or self.at_breakpoint:
            return log  # not applied: the step runs again, answered, on resume
        try:
            if len(tasks) == 1:  # a lone task (a loop's step): its writes, in one pass
                task = tasks[0]
                plan = self.plans.nodes.get(task.node)
                if plan is not None and plan.plain:
                    self.schedule.trigger_plain(task, plan.targets)
                else:
                    self.schedule.trigger(tasks)
                written = apply_writes(
                    self.spec.fields, self.values, task.writes, self.step, task.node
                )
            else:
                written = self._apply_step(tasks, log)
        except Exception as error:
            error.add_note(f"nbgraph: while applying the writes of step {self.step}")
            if self.thread is not None and self.thread.ends_at_exit:  # (LangGraph's "exit")
                self._failed_at_exit(tasks, log)
            raise
        log.written = self.schedule.shared[written]  # (a long run keeps each tuple once)
        if self.ephemeral:
            log.cleared = clear_ephemeral(self.ephemeral, self.values, log.written)
        log.applied = True
        if self.thread is not None:
            thread = self.thread
            thread.save(self.step, source, thread.payload(self, log), self.values)
        if self.breaks_after:  # (compiled or `invoke`'s, with or without a saver)
            self.stop_after(tasks)
        return log

    def _failed_at_exit(self, tasks: list[Task], log: StepLog) -> None:
        """Under durability "exit", a step whose writes failed to apply: what LangGraph's
        checkpoint holds then (its channels updated one at a time, in first-write order, up
        to the conflicting one): the fields written before it (`applied_before_conflict`),
        the nodes triggered by the tasks before the first that wrote it (their edges and
        routes come after their writes), and the step's new Sends if one of those tasks sent
        one (else the step's own Sends stay due). `Thread.step_failed` keeps them."""
        writes = group_writes(applied_writes(self.spec.fields, tasks, log.merged))
        values, field = applied_before_conflict(self.spec.fields, self.values, writes, self.step)
        first = next((i for i, t in enumerate(tasks) for w in t.writes if w[0] == field), 0)
        before = {task.node for task in tasks[:first]}
        pulled = {k: list(v) for k, v in self.schedule.pull.items() if before & set(v)}
        sent = any(isinstance(r, Send) for task in tasks[:first] for r in task.routes)
        pushed = [[s, send.node, send.arg] for s, send in self.schedule.push] if sent else None
        self.thread.step_failed(values, pulled, pushed)

    def _apply_step(self, tasks: list[Task], log: StepLog) -> tuple[str, ...]:
        """A step of several tasks: its writes applied in write order (a `state_merger`
        folding its parallel plain writes first); the fields written."""
        fields = self.spec.fields
        if self.spec.state_merger is not None:
            per_task = [(t.node, t.writes) for t in tasks]
            log.merged = merge_unreduced(self.spec.state_merger, fields, self.values, per_task)
        grouped = group_writes(applied_writes(fields, tasks, log.merged))
        self.schedule.trigger([task for task in tasks if task.kind != "call"])
        return apply_writes(fields, self.values, grouped, self.step)

    def open_step(self, tasks: list[Task], joins: list[Any] | tuple[()] = ()) -> StepLog:
        """Record a finished step (its resets, joins and tasks) before its writes are
        applied; raise its first failed task's exception; note the questions that pause it.

        Raises:
            The first failed task's exception, in write order.
        """
        # (a step without resets or joins keeps no empty list: long runs record many steps;
        # and the common step's log is made without keyword arguments)
        log = StepLog(self.step, tasks, self.spec.fields)
        if self.pending_resets:
            log.resets, self.pending_resets = self.pending_resets, ()
        if joins:
            log.joins = joins
        steps = self.log.steps
        steps.append(log)  # (a `StepColumns`' is a list's: sealed here, at steps 63, 127...)
        if (self.step & SEALS) == SEALS and type(steps) is StepColumns:
            steps.seal()
        for task in tasks:  # (a `@task` call's error is its caller's to raise, or catch)
            if task.error is not None and task.kind != "call":
                raise task.error
        # the questions that pause the run (one without a checkpointer too, as LangGraph's),
        # and a graph run in a node stopped at its breakpoint (`held`)
        if len(tasks) == 1:
            task = tasks[0]
            if task.interrupts:
                self.paused = list(task.interrupts)
            if task.held:
                self.at_breakpoint = "subgraph"
            return log
        # (a `@task` call's question is asked again by the node that waited for it)
        self.paused = [i for t in tasks if t.kind != "call" for i in t.interrupts]
        if any(task.held for task in tasks):
            self.at_breakpoint = "subgraph"
        return log

    def record_stopped(self, tasks: list[Task]) -> StepLog:
        """Record a step stopped before its commit (Ctrl-C, a cancelled `ainvoke`): the tasks
        that finished, their writes not applied (a checkpointed run kept them as pending
        writes, so a resume takes them instead of running those tasks again)."""
        if self.calls is not None:
            tasks, self.calls = self.calls.joined(tasks), None
        finished = [task for task in tasks if task.ended]
        resets, joins = self.pending_resets or (), self.joins or ()
        log = StepLog(self.step, finished, self.spec.fields, resets=resets, joins=joins)
        self.pending_resets = ()
        self.log.steps.append(log)
        return log

    def breakpoints(self, before: Any, after: Any) -> None:
        """Stop at `invoke(..., interrupt_before=, interrupt_after=)`'s nodes (`"*"`: all)
        instead of the compiled graph's, as LangGraph does (None or empty: the graph's)."""
        nodes = self.spec.nodes
        if before:
            self.breaks_before = expand(before, nodes)
        if after:
            self.breaks_after = expand(after, nodes)

    def stop_after(self, tasks: list[Task]) -> None:
        """Stop at an `interrupt_after` breakpoint once one of its nodes has run."""
        after = self.breaks_after
        if after and any(task.node in after for task in tasks):
            self.at_breakpoint = "after"

    def _state_after(self, task: Task) -> Any:
        """The state as `task` left it: the step's start plus its own writes (isolated)."""
        values = {k: isolate(v) for k, v in self.values.items()}
        apply_writes(self.spec.fields, values, task.writes, self.step, task.node)
        return state_for(self.spec.state, values, {}, whole=True)

    # --- starting, and what callers see (engine.core.starting, engine.core.outputs) --------

    def begin(self, input: Any) -> StepLog:
        """Record the input and apply it; or resume a checkpoint (`starting.begin` says
        which, and what the run starts from: this applies it)."""
        start = starting.begin(self, input)
        self.start(start)
        if start.writes is None:
            return start.log
        return starting.input_step(self, start.writes)

    def resume(self, restored: Any, keep_next: bool = True) -> StepLog:
        """Start from a checkpoint (`starting.resume`; branch runs start from lineages)."""
        start = starting.resume(self, restored, keep_next)
        self.start(start)
        self.log.steps.append(start.log)
        return start.log

    def warn(self, message: str, stacklevel: int = 7) -> None:
        """Warn the caller (and keep the warning in the run's log): the default stack level
        points past begin/next_tasks, the driver and invoke/stream at the caller's line."""
        self.log.warnings.append(message)
        warnings.warn(message, UserWarning, stacklevel=stacklevel)

    def stream_values(self) -> dict[str, Any]:
        """Every stored field (isolated), as `stream_mode="values"` shows it."""
        return outputs.stream_values(self)

    def output(self) -> dict[str, Any]:
        """What `invoke` returns (`outputs.output`)."""
        return outputs.output(self)

    def paused_values(self) -> dict[str, Any] | None:
        """The last `"values"` chunk of a run paused by `interrupt()` (`outputs`)."""
        return outputs.paused_values(self)

    def output_of(self, values: dict[str, Any]) -> dict[str, Any]:
        """`values` as `invoke` returns them: the output schema's fields (isolated)."""
        return outputs.output_of(self, values)

    def touched_stream_keys(self, log: StepLog) -> bool:
        """Whether the step wrote (or cleared) a field that `"values"` shows."""
        return outputs.touched_stream_keys(self, log)
