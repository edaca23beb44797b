"""The errors nbgraph raises: one base, each also the built-in error it refines."""

from __future__ import annotations

__all__ = [
    "AmbiguousResumeError",
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
