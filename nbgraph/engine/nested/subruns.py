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

from nbgraph.engine.core.node_context.interrupts import GraphInterrupt, SubgraphStopped

__all__ = ["keep_subrun", "pass_pause_up", "stops_caller"]


def keep_subrun(run: Any) -> None:
    """Keep `run`'s log on the task of the node that started it, if a node did."""
    caller = run.caller
    if caller is None:
        return
    task = caller.env.task  # (`caller.task`, without the property's call)
    if task.subruns:
        task.subruns.append(run.log)
    else:
        task.subruns = [run.log]


def pass_pause_up(run: Any) -> None:
    """A paused subrun pauses the parent's task: one that asked on its parent's scope
    (`checkpointer=False`), or one with checkpoints in its parent's saver (its questions
    are the task's, and the resumed task resumes it).

    A subrun stopped at one of its static breakpoints (`interrupt_before/after`) stops the
    parent's task as LangGraph does, with no question: its parent stops (a checkpointed one
    keeps the task as paused), and resuming the parent resumes the subrun past that
    breakpoint (one with `checkpointer=False` runs again from its start).

    Raises:
        GraphInterrupt: `run` paused and runs inside a node of a checkpointed parent.
        SubgraphStopped: `run` stopped at a breakpoint inside a node (unless it keeps
            checkpoints in a saver of its own).
    """
    if not run.paused:
        if run.at_breakpoint and stops_caller(run):  # (most runs: neither, nothing asked)
            raise SubgraphStopped()
        return
    if run.asks_parent:
        raise GraphInterrupt(*run.paused)
    if run.thread is not None and run.thread.ns and run.caller is not None:
        raise GraphInterrupt(*run.paused)  # (a subgraph with checkpoints of its own)


def stops_caller(run: Any) -> bool:
    """Whether `run` stopped at a static breakpoint inside a node whose task it stops (it
    keeps no checkpoints in a saver of its own): LangGraph then streams the stop once, as
    the caller's `__interrupt__`, not the subrun's."""
    return bool(
        run.at_breakpoint and run.caller is not None and (run.thread is None or run.thread.ns)
    )
