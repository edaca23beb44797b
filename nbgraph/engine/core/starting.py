"""How a run starts: the input step, resuming from a checkpoint, and a resuming `Command`.

Functions of a `RunLoop` that work out what it starts from and return it (`Start`):
`RunLoop.begin` and `RunLoop.resume` apply what they return (the run has one writer, its own
class: tests/test_layers.py). A checkpoint is put back by `RunLoop.resume`, which branch runs
replace.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from nbgraph.engine.core.calls import EntrypointState
from nbgraph.engine.core.runlog import RootReset, StepLog, initial_values
from nbgraph.engine.core.tasks import Task, absorb_output, prepared
from nbgraph.engine.core.writes import applied_writes, apply_step
from nbgraph.errors import AmbiguousResumeError, EmptyInputError, InvalidUpdateError
from nbgraph.isolation import ATOMS, isolate
from nbgraph.primitives import MISSING, START, Command, Send
from nbgraph.schema import pydantic_updates

__all__ = ["Start", "begin", "input_step", "resume"]


class Start:
    """What a run starts from, worked out by `begin` or `resume`, for `RunLoop.start` to
    apply: each of `RunLoop`'s attributes of the same names, MISSING where the start leaves
    it as it was. Then either the start's record (`log`: a resumed run) or the input step's
    `writes`, which `RunLoop.begin` runs (`input_step`). Made once, read once, not changed.

    (A class with slots, not a NamedTuple: a run's start is on every `invoke`'s path, and
    the call budgets count a NamedTuple's `__new__` twice: benchmarks/budgets.json.)
    """

    __slots__ = (
        "answers",  # answers to interrupts, by task id
        "call_places",  # restored `@task` calls: call key -> index
        "finished",  # restored tasks' writes, by task id
        "log",
        "past_breakpoint",
        "resumed",  # this run's answers: interrupt id -> (task id, value)
        "resumes_step",
        "root_updated",
        "step",
        "stop",
        "values",  # (the log's final state too)
        "writes",
    )

    def __init__(
        self,
        values: Any = MISSING,
        step: Any = MISSING,
        stop: Any = MISSING,
        *,
        finished: Any = MISSING,
        answers: Any = MISSING,
        call_places: Any = MISSING,
        resumed: Any = MISSING,
        past_breakpoint: Any = MISSING,
        resumes_step: Any = MISSING,
        root_updated: Any = MISSING,
        log: StepLog | None = None,
        writes: list[tuple[str, Any]] | None = None,
    ) -> None:
        self.values, self.step, self.stop = values, step, stop
        self.finished, self.answers, self.call_places = finished, answers, call_places
        self.resumed, self.past_breakpoint = resumed, past_breakpoint
        self.resumes_step, self.root_updated = resumes_step, root_updated
        self.log, self.writes = log, writes


def begin(run: Any, input: Any) -> Start:
    """How a run begins: the input, recorded and applied through the reducers (step 0 of a
    new thread); or a checkpoint resumed (through `run.resume`, which applies its own).

    With a checkpointer: `None` resumes the thread where its last checkpoint stopped, and
    new input on a thread that has checkpoints is applied on top of its state.
    """
    thread = run.thread
    if thread is not None and thread.ns:  # a subgraph resumed where it paused
        resumed = thread.enter(run)
        if resumed is not None:
            return Start(log=resumed)
    restored = thread.restore() if thread is not None else None
    if thread is not None:  # (a replay: its stateful subgraphs start from their past)
        resumes = input is None or (isinstance(input, Command) and input.resume is None)
        thread.travel(restored if resumes else None)  # (new input, an answer: no)
    if input is None:
        if restored is None:
            raise EmptyInputError(
                "Received no input: invoke(None) resumes a checkpointed thread, and this "
                "one has no checkpoint; pass a dict of initial values."
            )
        if START in restored.control["pull"]:  # an input checkpoint: apply its input
            run.resume(restored, keep_next=False)
            step = run.step
            if not restored.latest:  # a replay grows a new branch, as any replay does
                thread.branch(restored)
                step += 1
            writes = restored.control.get("input", [])
            return Start(MISSING, step + 1, step + run.limit + 1, writes=writes)
        return Start(log=run.resume(restored))
    if isinstance(input, Command):
        if thread is None and input.resume is not None:  # (LangGraph's error and text)
            raise RuntimeError(
                "Cannot use Command(resume=...) without checkpointer: a run without one "
                "keeps nothing to resume (compile(checkpointer=MemorySaver()))."
            )
        if restored is None:
            raise InvalidUpdateError(
                "A Command as input acts on a thread's saved state, and this thread has "
                "none yet; start it with a dict of initial values."
            )
        log = run.resume(restored)
        return _take_command(run, input, restored.paused, log)
    run.log.input = isolate(input)
    values = MISSING
    if restored is not None:
        run.resume(restored, keep_next=False)
    else:  # (most graphs' fields start empty: no values to make)
        values = initial_values(run.spec) if run.plans.initial else {}
    writes = []
    fields = run.spec.fields
    for key, value in _input_pairs(run, input):
        info = fields.get(key)
        if type(value) in ATOMS and (info is None or info.reducer is None or info.reducer.prepare
                                     is None):  # fmt: skip
            writes.append((key, value))  # (what `prepared` makes of an atom: itself)
        else:
            writes.append((key, prepared(info, value)))
    step = run.step
    if thread is not None:  # LangGraph's input checkpoint: the input, not yet applied
        step += restored is not None
        thread.save_input(step, writes, restored, run.values if values is MISSING else values)
    return Start(values, step + 1, step + run.limit + 1, writes=writes)  # (the input step
    # after `step`: its budget counts from there)


def input_step(run: Any, writes: list[tuple[str, Any]]) -> StepLog:
    """The step that applies the input's `writes` (the START task) and routes from it."""
    task = Task(step=run.step, index=0, node=START, kind="input", started=time.time())
    kept = task.writes
    for write in writes:  # (a checkpoint's input writes may be lists)
        kept.append(write if type(write) is tuple else tuple(write))
    run.route(task)
    task.ended = task.started
    return run.commit([task], source="loop")


def resume(run: Any, restored: Any, keep_next: bool = True) -> Start:
    """Start from a checkpoint: its values (as a root reset of this run's record: `log`)
    and, unless new input replaces it, what was to run next and what had already
    finished (`RunLoop.resume` applies it and keeps the log)."""
    # LangGraph's budget: a resumed call counts from the step after its checkpoint
    step, stop = restored.step, restored.step + run.limit + 2
    run.thread.head = restored.checkpoint_id
    if keep_next and not restored.latest:
        run.thread.branch(restored)  # a replay grows a new branch from the past
        step += 1  # (its fork checkpoint is a step, as in LangGraph)
    recorded = {k: isolate(v) for k, v in restored.values.items()}
    reset = RootReset(restored.step, restored.checkpoint_id, "resume", (), (), recorded)
    log = StepLog(restored.step, [], run.spec.fields, resets=[reset], applied=True)
    if not keep_next:
        return Start(restored.values, step, stop, log=log)
    run.schedule.restore(restored.control)
    if restored.updates:  # a Command's update and goto, kept while paused
        routes = [r for update in restored.updates for r in update["routes"]]
        run.schedule.take_gotos([Send(*r) if isinstance(r, list) else r for r in routes])
    return Start(
        restored.values,
        step,
        stop,
        finished=dict(restored.finished),
        answers={k: list(v.get("answers", ())) for k, v in restored.paused.items()},
        call_places={
            entry["key"]: int(task_id.split(":", 2)[1])
            for entries in (restored.finished, restored.paused)
            for task_id, entry in entries.items()
            if "key" in entry
        },
        past_breakpoint=True,  # resuming steps over the breakpoint it stopped at
        # (a task of an update or a fork is a new task on LangGraph: its graphs start anew)
        resumes_step=step + 1 if restored.latest and restored.source == "loop" else MISSING,
        root_updated=True if restored.updates else MISSING,
        log=log,
    )


def _take_command(
    run: Any, command: Command, paused: dict[str, dict[str, Any]], log: StepLog
) -> Start:
    """Resume with a `Command`, as LangGraph does: its `update` goes into the state before
    the paused step runs again (through the reducers, as the graph's input), its `goto`
    adds nodes to that step, and its `resume` (unless None) answers the interrupts.

    The update and goto are kept with the paused checkpoint until the step commits (the
    next checkpoint starts from the updated state), so `get_state` shows them and a run
    that pauses again keeps them. Returns what the run starts from then (the answers and
    task ids a goto renumbered, and the update to record: `root_updated`), and `log`.
    """
    if command.graph == Command.PARENT:
        raise InvalidUpdateError(
            "Command(graph=Command.PARENT) was given as graph input; there is no parent "
            "graph to send it to."
        )
    update, goto = command.update, command.goto_targets()
    if (update is not None or goto) and run.spec.semantics != "supersteps":
        raise InvalidUpdateError(
            "Command(update=..., goto=...) when resuming is not supported with semantics="
            f'"{run.spec.semantics}" yet; use update_state(config, values, as_node=...).'
        )
    if command.resume is not None:
        _answer(run, command.resume, paused)
    if update is not None or goto:
        task = Task(run.step, 0, START, "update", started=time.time())
        absorb_output(run.spec, None, task, Command(update=update, goto=goto))
        if task.dropped:
            run.warn(
                f"Command(update=...) wrote keys the state does not have; they were "
                f"dropped: {[key for key, _, _ in task.dropped]}."
            )
        apply_step(run.spec.fields, run.values, applied_writes(run.spec.fields, [task]),
                   run.step)  # fmt: skip
        before = run.schedule.positions()
        run.schedule.take_gotos(task.routes)
        renamed, moved = _renumber(run, before, run.schedule.positions())
        run.thread.save_update(task, moved)
        return Start(root_updated=True, log=log, **renamed)
    return Start(log=log)


def _renumber(
    run: Any, before: dict[Any, int], after: dict[Any, int]
) -> tuple[dict[str, Any], dict[str, str]]:
    """Give the paused step's answers and finished writes to the same tasks once a `goto`
    has added nodes to that step: a task id holds the task's index (`step:index:node`), and
    a node added before the paused one in write order moves it (as LangGraph, whose task
    ids do not hang on the order, gives them). Returns the run's renamed `answers`,
    `finished` writes and `resumed` ids (for its `Start`), and the ids that changed,
    `{old: new}` (the thread keeps them: `Thread.save_update`)."""
    moved = {old: after[key] for key, old in before.items() if after.get(key, old) != old}
    if not moved:
        return {}, {}

    def renamed(task_id: str) -> str:
        step, index, node = task_id.split(":", 2)
        new = moved.get(int(index))
        return task_id if new is None else f"{step}:{new}:{node}"

    ids = {*run.answers, *run.finished, *(task_id for task_id, _ in run.resumed.values())}
    step, push = run.step + 1, run.schedule.push  # (every task of the step that moved, so
    ids.update(f"{step}:{index}:{key if isinstance(key, str) else push[key[1]][1].node}"
               for key, index in before.items() if index in moved)  # fmt: skip
    renamed_ids = {  # (its snapshot finds them)
        "answers": {renamed(k): v for k, v in run.answers.items()},
        "finished": {renamed(k): v for k, v in run.finished.items()},
        "resumed": {k: (renamed(task_id), v) for k, (task_id, v) in run.resumed.items()},
    }
    return renamed_ids, {k: renamed(k) for k in sorted(ids) if renamed(k) != k}


def _answer(run: Any, resume: Any, paused: dict[str, dict[str, Any]]) -> None:
    """Give the paused tasks their answers: one value for one pending interrupt, or
    `{interrupt_id: value}` for several."""
    pending: dict[str, str] = {}
    calls_first = sorted(paused.items(), key=lambda item: "call" not in item[1])
    for task_id, p in calls_first:  # (a `@task` call's question is the call's to answer,
        for i in p["interrupts"]:  # not the calling node's, which only asks it again)
            pending.setdefault(i.id, task_id)
    if isinstance(resume, dict) and resume and set(resume) <= set(pending):
        for interrupt_id, value in resume.items():
            run.answer(pending[interrupt_id], interrupt_id, value)  # (subgraphs: by id)
        return
    if not pending:  # nothing asks: LangGraph keeps the answer unread and runs on
        return
    if len(pending) != 1:
        raise AmbiguousResumeError(
            f"{len(pending)} interrupts are waiting; answer each by id: "
            f"Command(resume={{{', '.join(repr(i) + ': ...' for i in pending)}}})."
        )
    ((interrupt_id, task_id),) = pending.items()
    run.answer(task_id, interrupt_id, resume)  # (a subgraph's task finds it by id)


def _read_in(field_info: Any, value: Any) -> Any:
    """An input value as its field's reducer reads a write (`prepare`: `add_messages`' makes
    messages of `("user", "hi")` pairs), before a pydantic state validates it."""
    if field_info is None or field_info.reducer is None or field_info.reducer.prepare is None:
        return value
    return prepared(field_info, value)


def _input_pairs(run: Any, input: Any) -> list[tuple[str, Any]]:
    schema = run.spec.input
    if schema.cls is EntrypointState:  # an entrypoint's input is any one value
        return [("input", input)]
    if schema.kind == "pydantic":
        if isinstance(input, schema.cls):
            return pydantic_updates(input)
        if isinstance(input, Mapping):  # (a messages field's pairs and dicts are messages
            fields = run.spec.fields  # first, as its reducer makes them: LangGraph's order)
            input = {k: _read_in(fields.get(k), v) for k, v in input.items()}
        model = schema.cls.model_validate(input)  # raises pydantic's ValidationError
        given = input.keys() if isinstance(input, Mapping) else type(model).model_fields
        return [(k, getattr(model, k)) for k in given if k in type(model).model_fields]
    pairs = schema.updates_from(input) if schema.kind != "typeddict" else None
    if pairs is None:
        if type(input) is not dict and not isinstance(input, Mapping):
            raise InvalidUpdateError(
                f"Expected dict as graph input, got {type(input).__name__} {input!r}."
            )
        pairs = list(input.items())
    if run.spec.open_schema:
        return pairs
    accepted = schema.fields
    kept, dropped = [], []
    for key, value in pairs:  # (a loop, no comprehensions: every run starts here)
        field = accepted.get(key)
        if field is None:
            dropped.append(key)
        elif not field.managed:
            kept.append((key, value))
    if dropped:
        run.warn(
            f"Input key(s) {dropped} are not in the input schema "
            f"{getattr(schema.cls, '__name__', schema.cls)!s} and were dropped."
        )
    return kept
