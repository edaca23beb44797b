"""`interrupt(value)`: pause a run inside a node, for a person's answer.

The engine opens a scope around each node call holding the answers given so far; the i-th
`interrupt()` a node makes returns the i-th answer, and one with no answer yet stops the node
(by raising `GraphInterrupt`, which the engine catches) so the run can pause and be resumed
with `Command(resume=...)`. The node then runs again from its first line.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from nbgraph.errors import GraphInterrupt
from nbgraph.primitives import Interrupt

__all__ = [
    "GraphInterrupt",
    "Scope",
    "SubgraphStopped",
    "current_scope",
    "enter_scope",
    "interrupt",
    "interrupt_scope",
    "leave_scope",
]


class SubgraphStopped(GraphInterrupt):
    """Raised by a run inside a node that stopped at its own static breakpoint
    (`interrupt_before/after`): the calling task stops too, with no question (LangGraph's
    empty `GraphInterrupt`), and runs again when its run is resumed (`engine.nested`)."""

    def __init__(self) -> None:
        Exception.__init__(self, "a subgraph stopped at its breakpoint")
        self.interrupt = None
        self.interrupts = ()


class Scope:
    """One node call's interrupt answers, and how many `interrupt()` calls it has made.

    `key` (thread and task) names its interrupts; it is worked out only if one is asked.
    """

    __slots__ = ("answers", "asked", "task", "thread_id")

    def __init__(self, thread_id: str, task: Any, answers: list[Any] | None = None) -> None:
        self.thread_id, self.task = thread_id, task
        self.answers = answers if answers is not None else []
        self.asked = 0

    @property
    def key(self) -> str:
        return f"{self.thread_id}|{self.task.id}"


_SCOPE: ContextVar[Scope | None] = ContextVar("nbgraph_interrupt_scope", default=None)


@contextmanager
def interrupt_scope(scope: Scope | None) -> Iterator[Scope | None]:
    """Make `interrupt()` in this context answer from `scope` (None: no checkpointer)."""
    token = _SCOPE.set(scope)
    try:
        yield scope
    finally:
        _SCOPE.reset(token)


def enter_scope(scope: Scope | None) -> Any:
    """`interrupt_scope` without the context manager (the engine's hot path): returns the
    token `leave_scope` needs."""
    return _SCOPE.set(scope)


def leave_scope(token: Any) -> None:
    _SCOPE.reset(token)


def current_scope() -> Scope | None:
    """The interrupt scope of the node running now (None: none, or no checkpointer)."""
    return _SCOPE.get()


def _interrupt_id(key: str, index: int) -> str:
    """A stable id for the `index`-th interrupt of a task (same on every re-run)."""
    import hashlib  # here: an interrupt is rare, and hashlib slows `import nbgraph`

    return hashlib.sha1(f"{key}|{index}".encode()).hexdigest()[:16]


def _unsaved_scope() -> Scope:
    """The scope of a question asked where no checkpointed run set one: the outermost
    calling task of the runs without a checkpointer the node is in (its run pauses, with
    nothing kept to resume, as LangGraph's does). Made only when asked: a run without a
    checkpointer sets no scope for its tasks."""
    from nbgraph.engine.core.runtime import current_task_env  # (a question is rare)

    env = current_task_env()
    if env is None:
        raise RuntimeError(
            "interrupt() pauses a run, so it only works inside a node of a running graph "
            "(with a checkpointer, compile(checkpointer=MemorySaver()), to resume it)."
        )
    run, task = env.run, env.task
    while run.caller is not None:
        run, task = run.caller.run, run.caller.task
    return Scope("", task)


def interrupt(value: Any, *, response_schema: Any = None) -> Any:
    """Pause the run here until a person answers; return their answer once resumed.

    Call it inside a node. The run stops and `invoke` returns the state with
    `"__interrupt__": [Interrupt(value, id)]`; in a graph compiled with a checkpointer,
    `invoke(Command(resume=answer), config)` runs the node again from its first line, and
    this call returns `answer` (without one, nothing is kept to resume).

    With `response_schema` (a type pydantic can read, or a JSON schema as a dict), the
    question carries its JSON schema (`Interrupt.response_schema`), and a type's answer is
    returned validated (a pydantic model made from a dict, say), as in LangGraph.

    Raises:
        RuntimeError: called outside a node of a running graph.
        pydantic.ValidationError: the answer does not fit `response_schema`'s type.
    """
    scope = _SCOPE.get()
    if scope is None:
        scope = _unsaved_scope()
    index = scope.asked
    scope.asked += 1
    adapter = _adapter(response_schema)
    if index < len(scope.answers):
        answer = scope.answers[index]
        return answer if adapter is None else _validated(adapter, answer)
    schema = adapter.json_schema() if adapter is not None else response_schema
    raise GraphInterrupt(Interrupt(value, _interrupt_id(scope.key, index), response_schema=schema))


def _adapter(response_schema: Any) -> Any:
    """A pydantic `TypeAdapter` of a type given as `response_schema` (None for none, or for
    a JSON schema given as a dict: that one is shown, not checked, as in LangGraph)."""
    if response_schema is None or isinstance(response_schema, dict):
        return None
    from pydantic import TypeAdapter  # (only for a question that asks for a shape)

    return TypeAdapter(response_schema)


def _validated(adapter: Any, answer: Any) -> Any:
    """`answer` read as the asked type; a `ValidationError` is marked as a wrong answer
    (`nbgraph.errors.is_invalid_resume`), so a tool node lets it through."""
    from pydantic import ValidationError

    try:
        return adapter.validate_python(answer)
    except ValidationError as error:
        error.invalid_resume = True  # type: ignore[attr-defined]
        raise
