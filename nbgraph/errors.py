"""The errors nbgraph raises: one base, each also the built-in error it refines."""

from __future__ import annotations

__all__ = [
    "CheckpointFileError",
    "EmptyInputError",
    "GraphBuildError",
    "GraphMismatchError",
    "GraphRecursionError",
    "InvalidArgumentError",
    "InvalidUpdateError",
    "NbgraphError",
    "NotebookFileError",
    "ReplayLimitError",
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
