"""The pauses of an imported LangGraph thread: each `interrupt()` a task raised, with the
answer the thread was resumed with (`Command(resume=...)`).

A task that paused and was answered runs again from the start; its step in the record
shows what it wrote the last time (as nbgraph's own record of a thread does). What asked
and what was answered is still in LangGraph's history: a planned task keeps its
`interrupts` after the thread moved on, and the checkpoint it was planned on keeps the
answers among its pending writes (`__resume__`: a task's own answers in the order its
`interrupt()` calls asked, and a thread-wide one under LangGraph's null task id: a value,
or answers keyed by interrupt id). A task that called `interrupt()` more than once keeps all its
answers but only its last question. `pauses_of(run)` gives them, oldest first.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from nbgraph.errors import InvalidArgumentError
from nbgraph.primitives import MISSING

__all__ = ["Pause", "pauses_of", "read_pauses"]

_RESUME = "__resume__"
_NULL_TASK = "00000000-0000-0000-0000-000000000000"


@dataclass(frozen=True)
class Pause:
    """One `interrupt()` of an imported LangGraph run and its answer.

    Attributes:
        step: the record's step of the task that paused (the step its writes are in once
            it was answered and finished).
        node: the task's node (`"HumanInTheLoopMiddleware.after_model"`, `"tools"`, ...).
        task_id: LangGraph's id of the task.
        interrupt_id: LangGraph's id of the interrupt (what a `Command(resume={id: ...})`
            names).
        value: what the interrupt asked (the value given to `interrupt()`); `MISSING` for
            a question LangGraph no longer keeps (a task that called `interrupt()` more than
            once keeps only its last question, and every answer).
        resume: the answer it was resumed with; `MISSING` while it waits for one (or when
            LangGraph kept no answer: a run with `durability="exit"`).
    """

    step: int
    node: str
    task_id: str
    interrupt_id: str
    value: Any
    resume: Any = MISSING

    @property
    def answered(self) -> bool:
        """Whether the thread was resumed past this pause."""
        return self.resume is not MISSING


def read_pauses(chain: list[Any]) -> list[Pause]:
    """The pauses of a chain of imported checkpoints (oldest first): for every planned task
    with interrupts, one per `interrupt()` it called, each with its answer where the
    checkpoint keeps one."""
    found: list[Pause] = []
    for position, here in enumerate(chain):
        thread_wide = [v for c, v in here.writes.get(_NULL_TASK, ()) if c == _RESUME]
        waiting = position == len(chain) - 1  # nothing after it: its tasks still wait
        for planned in here.snapshot.tasks:
            asked = tuple(getattr(planned, "interrupts", ()) or ())
            if asked:
                found.extend(
                    _task_pauses(here.step + 1, planned, asked, here.writes, thread_wide, waiting)
                )
    return found


def _task_pauses(
    step: int, planned: Any, asked: tuple[Any, ...], writes: dict[str, list[tuple[str, Any]]],
    thread_wide: list[Any], waiting: bool,
) -> list[Pause]:  # fmt: skip
    """One task's pauses. LangGraph keeps a task's answers in the order its `interrupt()`
    calls asked (its `__resume__` write) but only the last question it asked: the ones
    before it come back with their answers and `value=MISSING`."""
    own = [v for c, v in writes.get(planned.id, ()) if c == _RESUME]
    answers = own[-1] if own else _thread_answers(asked[-1], thread_wide)
    answers = list(answers) if isinstance(answers, list) else [answers]
    last = asked[-1]
    questions: list[Any] = [MISSING] * len(answers)
    if (waiting and not getattr(planned, "error", None)) or not answers:
        questions.append(last.value)  # still waiting, or answered where LangGraph kept no answer
        answers.append(MISSING)
    else:
        questions[-1] = last.value
    return [
        Pause(step, planned.name, str(planned.id), str(last.id), question, answer)
        for question, answer in zip(questions, answers, strict=True)
    ]


def _thread_answers(interrupt: Any, thread_wide: list[Any]) -> list[Any]:
    """A task's answer from a thread-wide resume: the one naming its interrupt's id, else
    a plain one (none: an empty list)."""
    for given in reversed(thread_wide):
        if isinstance(given, dict) and str(interrupt.id) in given:
            return [given[str(interrupt.id)]]
    plain = [g for g in thread_wide if not _keyed_by_ids(g)]
    return plain[-1:]


def _keyed_by_ids(given: Any) -> bool:
    """A thread-wide answer keyed by interrupt ids (32 hex digits each)."""
    return isinstance(given, dict) and bool(given) and all(
        isinstance(k, str) and len(k) == 32 and all(c in "0123456789abcdef" for c in k)
        for k in given
    )  # fmt: skip


def pauses_of(run: Any) -> list[Pause]:
    """Every `interrupt()` of a run imported from LangGraph (`nbgraph.trace`,
    `Run.from_langgraph`), oldest first, each with the answer it was resumed with.

    Args:
        run: the imported `Run` (or its `RunRecord` or `RunLog`).

    Raises:
        InvalidArgumentError: `run` was not imported from LangGraph.
    """
    log = getattr(run, "log", run)
    pauses = getattr(getattr(log, "source", None), "pauses", None)
    if pauses is None:
        raise InvalidArgumentError(
            f"pauses_of takes a run imported from LangGraph (nbgraph.trace or "
            f"Run.from_langgraph), got a {type(run).__name__} without LangGraph's history: an "
            "nbgraph run (its pauses are its tasks' interrupts), or an imported run loaded "
            "from a file (run files do not keep them: import the thread again)."
        )
    return list(pauses)
