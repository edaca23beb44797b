"""The interrupt scope: the answers a node call's `interrupt()`s get (the function a node
calls is the node API's, `nbgraph.engine.node_api.interrupt`).

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

__all__ = [
    "GraphInterrupt",
    "Scope",
    "SubgraphStopped",
    "current_scope",
    "enter_scope",
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
    """Make `interrupt()` (`engine.node_api`) in this context answer from `scope` (None: no
    checkpointer)."""
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


current_scope = _SCOPE.get
"""`current_scope()`: the interrupt scope of the node running now (None: none, or no
checkpointer). The context variable's own `get`: a graph run inside a node asks it as it
starts (`engine.core.nesting.caller_now`)."""
