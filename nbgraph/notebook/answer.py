"""`Run.answer`: a run paused at `interrupt()` answered with `Command(resume=...)`, and the
thread so far as one record.

The answer goes on the run's thread through the app's own `run` (what the inspector's answer
panel does); the record holds the paused run's steps, then the resumed ones.

A paused run's questions are its paused step's interrupts, one or more per task
(`questions`); one question is answered with its value, several by interrupt id
(`{interrupt_id: value}`; those left out keep waiting).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from nbgraph.errors import NbgraphError
from nbgraph.notebook.fork import attach_app, fork_problem

if TYPE_CHECKING:
    from nbgraph.notebook.run import Run

__all__ = [
    "AnswerError",
    "Question",
    "answer",
    "answer_problem",
    "questions",
    "resume_problem",
    "thread_of",
]


class AnswerError(NbgraphError, ValueError):
    """A run cannot be answered: not paused, no checkpointer, an unknown interrupt id."""


@dataclass(frozen=True)
class Question:
    """One interrupt a paused run waits on.

    Attributes:
        node: the node that asked.
        task_id: its task (`run.steps.task_id`).
        id: the interrupt's id (answer it with `{id: value}` when several wait).
        value: what `interrupt(value)` was given: the question.
    """

    node: str
    task_id: str
    id: str
    value: Any


def questions(run: Run) -> list[Question]:
    """The interrupts `run` waits on, in task order ([] unless it is paused at one).

    >>> from nbgraph import START, StateGraph, interrupt
    >>> from nbgraph.checkpoint import MemorySaver
    >>> app = (StateGraph(dict).add_node("ask", lambda s: {"a": interrupt("name?")})
    ...        .add_edge(START, "ask").compile(checkpointer=MemorySaver()))
    >>> run = app.run({}, {"configurable": {"thread_id": "doc"}})
    >>> [(q.node, q.value) for q in questions(run)]
    [('ask', 'name?')]
    """
    if run.log.status != "interrupted" or not run.log.steps:
        return []
    paused = run.log.steps[-1]
    asked = [
        Question(task.node, task.id, asked.id, asked.value)
        for task in paused.tasks
        for asked in task.interrupts
    ]
    if asked or getattr(run, "app", None) is None or run.checkpoint_head is None:
        return asked
    # a record rebuilt from checkpoints (a fork's branch) ends before the paused step:
    # its questions are those of the checkpoint it ends at, as the thread keeps them
    config = {"configurable": {"thread_id": thread_of(run), "checkpoint_ns": ""}}
    config["configurable"]["checkpoint_id"] = run.checkpoint_head
    snapshot = run.app.get_state(config)
    return [Question(t.name, t.id, i.id, i.value) for t in snapshot.tasks for i in t.interrupts]


def answer_problem(run: Run) -> str | None:
    """Why `run` cannot be answered now (a sentence for a person), or None if it can."""
    if run.log.status != "interrupted":
        return f"This run is not paused at an interrupt (it is {run.log.status})."
    if not questions(run):
        return (
            "This run stopped at a breakpoint (interrupt_before/interrupt_after), not at an "
            "interrupt() with a question: continue it with app.run(None, config)."
        )
    return resume_problem(run)


def resume_problem(run: Run) -> str | None:
    """Why the thread of paused `run` cannot be resumed from it (a sentence), or None."""
    if getattr(run, "app", None) is None:
        return (
            "This run has no app to resume it with (a subrun, or a run read from a file): "
            "answer from code, app.invoke(Command(resume=...), config)."
        )
    if fork_problem(run) is not None:  # (no checkpointer or thread: it could not pause)
        return "This run cannot be resumed: its app has no checkpointer or it has no thread."
    head = run.app.checkpointer.get(thread_of(run))
    if head is not None and head.checkpoint_id != run.checkpoint_head:
        return (
            f"Thread {thread_of(run)!r} has moved on since this run paused (another call ran "
            "or resumed it): answer from its latest run (app.last_run)."
        )
    return None


def answer(run: Run, resume: Any, interrupt_id: str | None = None) -> Run:
    """Resume `run`'s thread with `Command(resume=resume)` and return the thread so far.

    Args:
        run: a run paused at `interrupt()` (made by an app with a checkpointer).
        resume: the answer; with several questions waiting, `{interrupt_id: answer}`.
        interrupt_id: answer this one question with `resume` (`{interrupt_id: resume}`).

    Returns:
        A `Run` of the thread so far: `run`'s steps, then the resumed call's (which may
        pause again). Branch-lineage runs give the resumed call's own run.

    Raises:
        AnswerError: the run cannot be answered now, or `interrupt_id` is not one it waits on.
    """
    from nbgraph.primitives import Command

    problem = answer_problem(run)
    if problem is not None:
        raise AnswerError(problem)
    if interrupt_id is not None:
        waiting = [q.id for q in questions(run)]
        if interrupt_id not in waiting:
            raise AnswerError(
                f"interrupt_id {interrupt_id!r} is not one this run waits on; it waits on "
                f"{waiting}."
            )
        resume = {interrupt_id: resume}
    config = {"configurable": {"thread_id": thread_of(run), "checkpoint_ns": ""}}
    resumed = run.app.run(Command(resume=resume), config)
    if run.log.semantics == "branches" or resumed.log.semantics == "branches":
        return resumed
    return attach_app(type(run)(joined(run.log, resumed.log)), run.app)


def joined(first: Any, resumed: Any) -> Any:
    """One log of a thread: `first`'s steps but the step it paused at, then `resumed`'s
    steps after its resume step (a reset to the values `first` had after its last step)."""
    log = copy.copy(resumed)
    kept = first.steps[:-1] if first.steps and not first.steps[-1].applied else first.steps
    rest = resumed.steps
    if rest and not rest[0].tasks and any(r.reason == "resume" for r in rest[0].resets):
        rest = rest[1:]
    log.steps = [*kept, *rest]
    log.input, log.context = first.input, first.context
    log.store_ops = [*first.store_ops, *resumed.store_ops]
    log.warnings = [*first.warnings, *resumed.warnings]
    return log


def thread_of(run: Run) -> str:
    """The thread id of `run`'s config."""
    return str(((run.log.config or {}).get("configurable") or {}).get("thread_id"))
