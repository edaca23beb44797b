"""Subruns: the run of a graph invoked inside a node of another run.

Whichever way a graph runs inside a node — added as the node (`add_node("name", app)`) or
called by the node's function (`app.invoke(...)`) — its `RunLog` is kept on the parent's
task (`Task.subruns`, in start order), which is where the record finds it
(`nbgraph.Run.subruns`).

A subgraph without a checkpointer of its own takes its parent's, as LangGraph's
`checkpointer=None` default does, as far as `interrupt()` goes: an `interrupt()` inside it
pauses the parent (its task is the one that waits for the answer), and the resumed parent
runs the subgraph again from its start, answering its `interrupt()` calls in order. (LangGraph
resumes the subgraph at the node that asked; the nodes before it run again here.)

A subgraph node returning `Command(graph=Command.PARENT, ...)` stops the subgraph
(`ParentCommand`), and the parent's task that ran it takes the command as its own output.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from nbgraph.engine.interrupts import GraphInterrupt, Scope, current_scope
from nbgraph.engine.runtime import current_task_env
from nbgraph.errors import NbgraphError
from nbgraph.types import Command

if TYPE_CHECKING:
    from nbgraph.engine.runlog import RunLog


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
    """A subrun paused by `interrupt()` on its parent's scope pauses the parent's task.

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
