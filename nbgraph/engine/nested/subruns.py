"""Subruns: the run of a graph invoked inside a node of another run.

Whichever way a graph runs inside a node — added as the node (`add_node("name", app)`) or
called by the node's function (`app.invoke(...)`) — its `RunLog` is kept on the parent's
task (`Task.subruns`, in start order), which is where the record finds it
(`nbgraph.Run.subruns`).

A subgraph without a checkpointer of its own keeps its checkpoints in its parent's saver
(LangGraph's `checkpointer=None` default; `engine.nested.checkpoints`): an `interrupt()`
inside pauses it and its parent (`pass_pause_up`: the parent's task carries the questions),
and the resumed parent resumes it at the node that asked. A subgraph compiled with
`checkpointer=False` keeps none: it asks through its parent's interrupt scope (the one
`interrupt()` finds while the calling task runs; `RunLoop.asks_parent`), and the resumed
parent runs it again from its start, its `interrupt()` calls answered in order, as LangGraph
does.

A subgraph node returning `Command(graph=Command.PARENT, ...)` stops the subgraph
(`engine.core.tasks.ParentCommand`), and the parent's task that ran it takes the command as
its own output.

Whether a run is nested is asked once, as it starts: its `caller` (`engine.core.nesting`).
"""

from __future__ import annotations

from typing import Any

from nbgraph.engine.core.interrupts import GraphInterrupt

__all__ = ["keep_subrun", "pass_pause_up"]


def keep_subrun(run: Any) -> None:
    """Keep `run`'s log on the task of the node that started it, if a node did."""
    caller = run.caller
    if caller is None:
        return
    task = caller.task
    if task.subruns:
        task.subruns.append(run.log)
    else:
        task.subruns = [run.log]


def pass_pause_up(run: Any) -> None:
    """A paused subrun pauses the parent's task: one that asked on its parent's scope
    (`checkpointer=False`), or one with checkpoints in its parent's saver (its questions
    are the task's, and the resumed task resumes it).

    Raises:
        GraphInterrupt: `run` paused and runs inside a node of a checkpointed parent.
    """
    if not run.paused:
        return
    if run.asks_parent:
        raise GraphInterrupt(*run.paused)
    if run.thread is not None and run.thread.ns and run.caller is not None:
        raise GraphInterrupt(*run.paused)  # (a subgraph with checkpoints of its own)
