"""Subruns: the run of a graph invoked inside a node of another run.

Whichever way a graph runs inside a node — added as the node (`add_node("name", app)`) or
called by the node's function (`app.invoke(...)`) — its `RunLog` is kept on the parent's
task (`Task.subruns`, in start order), which is where the record finds it
(`nbgraph.Run.subruns`).

A subgraph without a checkpointer of its own keeps its checkpoints in its parent's saver
(LangGraph's `checkpointer=None` default; `engine.subgraph_checkpoints`): an `interrupt()`
inside pauses it and its parent (`pass_pause_up`: the parent's task carries the questions),
and the resumed parent resumes it at the node that asked. A subgraph compiled with
`checkpointer=False` keeps none: it asks through its parent's interrupt scope
(`parent_scope`), and the resumed parent runs it again from its start, its `interrupt()`
calls answered in order, as LangGraph does.

A subgraph node returning `Command(graph=Command.PARENT, ...)` stops the subgraph
(`ParentCommand`), and the parent's task that ran it takes the command as its own output.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from nbgraph.engine.core.interrupts import GraphInterrupt, Scope, current_scope
from nbgraph.engine.core.runtime import current_task_env
from nbgraph.errors import NbgraphError
from nbgraph.types import Command

if TYPE_CHECKING:
    from nbgraph.engine.core.runlog import RunLog


def keep_subrun(log: RunLog) -> None:
    """Keep `log` on the task of the node running now, if a node is running."""
    env = current_task_env()
    if env is None:
        return
    task = env.task
    if task.subruns:
        task.subruns.append(log)
    else:
        task.subruns = [log]


def parent_scope(run: Any) -> Scope | None:
    """For a run without a checkpointer inside a node: the calling task's interrupt scope
    (so `interrupt()` inside the subgraph asks the parent's thread); else None."""
    if run.thread is not None or current_task_env() is None:
        return None
    return current_scope()


def pass_pause_up(run: Any) -> None:
    """A paused subrun pauses the parent's task: one that asked on its parent's scope
    (`checkpointer=False`), or one with checkpoints in its parent's saver (its questions
    are the task's, and the resumed task resumes it).

    Raises:
        GraphInterrupt: `run` paused and runs inside a node of a checkpointed parent.
    """
    if not run.paused:
        return
    if run.thread is None and parent_scope(run) is not None:
        raise GraphInterrupt(*run.paused)
    if run.thread is not None and run.thread.ns and current_task_env() is not None:
        raise GraphInterrupt(*run.paused)  # (a subgraph with checkpoints of its own)


class ParentCommand(NbgraphError):
    """A node returned `Command(graph=Command.PARENT, ...)`: it stops its graph's run, and
    the parent's task that ran that graph takes the command (LangGraph's `ParentCommand`).
    Raised out of a graph that has no parent.

    Attributes:
        command: the command, as the parent's task takes it (`graph` cleared).
    """

    def __init__(self, command: Command) -> None:
        self.command = Command(update=command.update, goto=command.goto, resume=command.resume)
        super().__init__(self.command)

    def __str__(self) -> str:
        return (
            f"{self.command!r} addresses the parent graph (Command.PARENT): the parent's "
            "task that ran this graph takes it (an error only where there is no parent)."
        )
