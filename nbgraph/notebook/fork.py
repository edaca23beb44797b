"""`Run.fork`: a checkpointed run forked at one of its steps with edited values, then continued
on the same app.

The fork is `update_state` on that step's checkpoint, then the run continued from there (what
the inspector's "edit and fork here" does).

A `Run` made by an app in this session knows it (`Run.app`) and the thread's checkpoint it
ended at (`Run.checkpoint_head`); a run's step `k` is the checkpoint numbered `k` on the
chain that ends there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from nbgraph.errors import NbgraphError

if TYPE_CHECKING:
    from nbgraph.notebook.run import Run

__all__ = ["Fork", "ForkError", "attach_app", "fork", "fork_problem"]


class ForkError(NbgraphError, ValueError):
    """A run cannot be forked there: no checkpointer, no thread, an unknown step."""


@dataclass(frozen=True)
class Fork:
    """What forking made.

    Attributes:
        run: the continued run (its own steps only, as `app.run(None, config)` returns).
        branch: the fork's branch of the thread, from its first checkpoint to the fork's end
            (`Run.from_checkpointer`): its state tree shows the original as another branch.
        original: the branch forked from, rebuilt the same way (its tree shows the fork).
        config: the config of the checkpoint `update_state` made.
    """

    run: Run
    branch: Run
    original: Run
    config: dict[str, Any]


def attach_app(record: Run, app: Any) -> Run:
    """Let `record` fork: remember `app`, and the thread checkpoint a finished run ended at."""
    record.app = app
    thread = _thread_id(record)
    saver = getattr(app, "checkpointer", None)
    if record.log.status != "running" and thread is not None and saver is not None:
        head = saver.get(thread)
        record.checkpoint_head = None if head is None else head.checkpoint_id
    return record


def fork_problem(run: Run) -> str | None:
    """Why `run` cannot be forked (a sentence for a person), or None if it can."""
    app = getattr(run, "app", None)
    if app is None:
        return (
            "This run has no app to continue a fork with (a subrun, a run read from a file, "
            "or one rebuilt from a checkpointer without graph=app)."
        )
    if getattr(app, "checkpointer", None) is None:
        return (
            "This run has no checkpointer, so there is no checkpoint to fork from: compile "
            "the graph with checkpointer=MemorySaver() and run it with "
            'config={"configurable": {"thread_id": ...}}.'
        )
    if _thread_id(run) is None:
        return 'This run has no thread: run it with config={"configurable": {"thread_id": ...}}.'
    if getattr(run, "checkpoint_head", None) is None:
        return "This run has not finished checkpointing yet (it is still running)."
    return None


def _checkpoint_at(run: Run, step: int) -> dict[str, Any]:
    """The config of the checkpoint made at `step` of `run` (the state after that step).

    Raises:
        ForkError: the run cannot fork, or no checkpoint of its chain has that step.
    """
    problem = fork_problem(run)
    if problem is not None:
        raise ForkError(problem)
    from nbgraph.engine.persistence.chain import parent_chain

    saver, thread = run.app.checkpointer, _thread_id(run)
    head = saver.get(thread, run.checkpoint_head)
    chain = [] if head is None else parent_chain(saver, head)  # newest first
    found = next((r for r in chain if r.step == step and r.source != "input"), None)
    if found is None:
        found = next((r for r in chain if r.step == step), None)
    if found is None:
        steps = sorted({r.step for r in chain})
        raise ForkError(
            f"Step {step} has no checkpoint in thread {thread!r} (its checkpoints have steps "
            f"{steps})."
        )
    return {
        "configurable": {
            "thread_id": thread,
            "checkpoint_ns": "",
            "checkpoint_id": found.checkpoint_id,
        }
    }


def fork(run: Run, step: int, values: dict[str, Any], as_node: str | None = None) -> Fork:
    """Fork `run` at `step`: `update_state` with `values` on that step's checkpoint (as
    `as_node`, default: the node that made it), then run on from the new checkpoint.

    Raises:
        ForkError: the run cannot fork there (no checkpointer, thread or such step).
        InvalidUpdateError, ValueError: what `update_state` refuses (an unknown field, a
            checkpoint made by several nodes without `as_node`).
    """
    config = _checkpoint_at(run, step)
    app, thread = run.app, _thread_id(run)
    new_config = app.update_state(config, values, as_node=as_node)
    forked = app.run(None, new_config)  # (recorded with the app: it can fork again)
    saver = app.checkpointer

    def branch_ending(checkpoint_id: str | None) -> Run:  # (a record of the run's own class)
        record = type(run).from_checkpointer(saver, thread, checkpoint_id, graph=app)
        record.app, record.checkpoint_head = app, checkpoint_id
        return record

    return Fork(
        run=forked,
        branch=branch_ending(forked.checkpoint_head or new_config["configurable"]["checkpoint_id"]),
        original=branch_ending(run.checkpoint_head),
        config=new_config,
    )


def _thread_id(run: Run) -> str | None:
    configurable = (run.log.config or {}).get("configurable") or {}
    thread = configurable.get("thread_id")
    return None if thread is None else str(thread)
