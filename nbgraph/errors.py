"""The errors nbgraph raises: one base, each also the built-in error it refines.


LangGraph's `langgraph.errors` names are here too, so `from langgraph.errors import X` becomes
`from nbgraph.errors import X` and an `except` clause written for LangGraph's class catches
what nbgraph raises: `GraphInterrupt` is the one `interrupt()` raises, `ParentCommand` the one
a `Command(graph=Command.PARENT)` raises (`nbgraph.engine.core.tasks`, a subclass of this
module's base of that name).
"""

from __future__ import annotations

import uuid
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from nbgraph.warnings import LangGraphDeprecatedSinceV10

__all__ = [
    "AmbiguousResumeError",
    "CheckpointFileError",
    "EmptyChannelError",
    "EmptyInputError",
    "ErrorCode",
    "GraphBubbleUp",
    "GraphBuildError",
    "GraphInterrupt",
    "GraphMismatchError",
    "GraphRecursionError",
    "InvalidArgumentError",
    "InvalidUpdateError",
    "NbgraphError",
    "NodeInterrupt",
    "NotebookFileError",
    "ParentCommand",
    "ReplayLimitError",
    "TaskNotFound",
    "UnknownInterruptError",
    "create_error_message",
    "is_invalid_resume",
]


class NbgraphError(Exception):
    """Base of every error nbgraph raises itself."""


class GraphBuildError(NbgraphError, ValueError):
    """A graph could not be compiled; the message lists every problem found."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = list(problems)
        lines = "\n".join(f"  - {p}" for p in self.problems)
        noun = "problem" if len(self.problems) == 1 else "problems"
        super().__init__(f"The graph has {len(self.problems)} {noun}:\n{lines}")


class InvalidUpdateError(NbgraphError, ValueError):
    """A node or the input tried to write something the state cannot take."""


class GraphRecursionError(NbgraphError, RecursionError):
    """The run took more supersteps than `recursion_limit` allows."""


class AmbiguousResumeError(NbgraphError, RuntimeError):
    """One plain `Command(resume=value)` was given while several interrupts wait; each must
    be answered by its id. A `RuntimeError`, as LangGraph's error for the same call is."""


class EmptyInputError(NbgraphError, ValueError):
    """A run was started with no input and nothing to resume."""


class InvalidArgumentError(NbgraphError, ValueError):
    """An argument cannot be used: a run's `recursion_limit` or `max_concurrency`, a
    saver's path. The message names the argument, the value given and what is expected."""


class CheckpointFileError(NbgraphError, ValueError):
    """A checkpoint database (or one of its rows) is malformed: which file, which
    checkpoint, what was expected."""


class NotebookFileError(NbgraphError, ValueError):
    """A file given as a Jupyter notebook is missing or is not one: which file, what was
    found instead."""


class GraphMismatchError(NbgraphError, ValueError):
    """The graph passed with `graph=` is not the one a run file or thread recorded."""


class ReplayLimitError(NbgraphError, ValueError):
    """Replaying a file's writes would build a value past the bound a file may ask for
    (docs/VALUES.md, "What loading a file may cost")."""


def wrong_argument(call: str, expected: str, value: object) -> InvalidArgumentError:
    """The error for `call`'s argument (`"compile(store=)"`) given `value`, naming what is
    expected.

    >>> str(wrong_argument("compile(store=)", "a store or None", 5))
    'compile(store=): expected a store or None, got int 5.'
    """
    shown = repr(value)
    shown = shown if len(shown) <= 60 else shown[:59] + "…"
    return InvalidArgumentError(f"{call}: expected {expected}, got {type(value).__name__} {shown}.")


def check_names(call: str, value: object, *, allow_none: bool = True) -> None:
    """Refuse `value` unless it is node names: a str or an iterable of str (or None)."""
    if value is None and allow_none:
        return
    if isinstance(value, str):
        return
    if isinstance(value, (list, tuple, set, frozenset)) and all(isinstance(v, str) for v in value):
        return
    raise wrong_argument(call, "a node name or a list of node names", value)


class ErrorCode(Enum):
    """The codes of LangGraph's troubleshooting pages (`create_error_message`)."""

    GRAPH_RECURSION_LIMIT = "GRAPH_RECURSION_LIMIT"
    INVALID_CONCURRENT_GRAPH_UPDATE = "INVALID_CONCURRENT_GRAPH_UPDATE"
    INVALID_GRAPH_NODE_RETURN_VALUE = "INVALID_GRAPH_NODE_RETURN_VALUE"
    MULTIPLE_SUBGRAPHS = "MULTIPLE_SUBGRAPHS"
    INVALID_CHAT_HISTORY = "INVALID_CHAT_HISTORY"


def create_error_message(*, message: str, error_code: ErrorCode) -> str:
    """`message` followed by the address of LangGraph's page on `error_code`.

    >>> create_error_message(message="Too deep.", error_code=ErrorCode.GRAPH_RECURSION_LIMIT)
    'Too deep.\\nFor troubleshooting, visit: https://docs.langchain.com/oss/python/langgraph/errors/GRAPH_RECURSION_LIMIT'
    """
    return (
        f"{message}\nFor troubleshooting, visit: "
        f"https://docs.langchain.com/oss/python/langgraph/errors/{error_code.value}"
    )


class GraphBubbleUp(Exception):
    """What a node raises to stop its task and pass something up to the run (a question for
    a person, a command for the parent graph), not a failure."""


@dataclass(frozen=True, slots=True)
class Interrupt:
    """A pause requested by a node (answered with `Command(resume=...)`): the question a
    `GraphInterrupt` carries, so it lives here, below `nbgraph.primitives` (which imports this
    module: a `Command` refuses a wrong argument with `wrong_argument`). Users import it from
    `nbgraph.types`, as LangGraph's `langgraph.types.Interrupt`."""

    value: Any
    id: str = ""
    response_schema: Any = field(default=None, kw_only=True)
    """The JSON schema of the answer `interrupt(value, response_schema=...)` asked for, or
    None."""


class GraphInterrupt(GraphBubbleUp):
    """Raised by `interrupt()` when its answer is not there yet; the engine catches it.

    Made as nbgraph's engine makes it, `GraphInterrupt(interrupt, *more)`, or as LangGraph's,
    `GraphInterrupt([interrupt, ...])`.

    Attributes:
        interrupt: the (first) question, or None.
        interrupts: every question it carries (a paused subgraph passes all of its up).
    """

    def __init__(self, *interrupts: Any) -> None:
        if len(interrupts) == 1 and isinstance(interrupts[0], Sequence):
            interrupts = tuple(interrupts[0])
        super().__init__(interrupts[0].value if interrupts else None)
        self.interrupt = interrupts[0] if interrupts else None
        self.interrupts = tuple(interrupts)


class NodeInterrupt(GraphInterrupt):
    """Raised by a node to pause the run with `value` as its question (LangGraph's older
    form of `interrupt(value)`, deprecated there since 1.0; the node runs again from its
    first line when the run is resumed, and raises again unless it asks no more)."""

    def __init__(self, value: Any, id: str | None = None) -> None:
        warnings.warn(
            "NodeInterrupt is deprecated. Please use `nbgraph.types.interrupt` instead.",
            LangGraphDeprecatedSinceV10,
            stacklevel=2,
        )
        super().__init__(Interrupt(value, id or uuid.uuid4().hex))


class ParentCommand(GraphBubbleUp):
    """A `Command(graph=Command.PARENT)` on its way to the parent graph (what nbgraph raises
    is `nbgraph.engine.core.tasks.ParentCommand`, a subclass)."""


class EmptyChannelError(Exception):
    """LangGraph's error for reading a channel that holds no value (nbgraph's state fields
    read as missing instead; kept so `except` clauses naming it still import)."""


class TaskNotFound(Exception):
    """A task named by a resume or a write is not in the run (LangGraph's distributed mode)."""


class UnknownInterruptError(Exception):
    """A resume that does not match the pending questions, as LangGraph's strict resume mode
    raises it: `reason` is `"not_pending"` (it names the ids in `interrupt_ids`, not
    pending), `"empty_map"` or `"ambiguous"` (one value for several questions);
    `pending_ids` are the questions still waiting."""

    def __init__(
        self,
        message: str,
        *,
        reason: str,
        interrupt_ids: Sequence[str] = (),
        pending_ids: Sequence[str] = (),
    ) -> None:
        super().__init__(message)
        self.reason = reason
        self.interrupt_ids = tuple(interrupt_ids)
        self.pending_ids = tuple(pending_ids)


def is_invalid_resume(error: BaseException) -> bool:
    """Whether `error` says a resume value did not fit (LangGraph's check, used by tool
    wrappers to let such errors through): nbgraph raises none of that kind, so False unless
    the error carries LangGraph's marker."""
    return bool(getattr(error, "invalid_resume", False))
