"""A thread's run record rebuilt from its checkpoints (in this process or another one)."""

from __future__ import annotations

from typing import Any

from nbgraph.blueprint.description import check_graph, graph_from_description
from nbgraph.engine.facts import (
    RunLog,
    StepLog,
    apply_delta,
    checked_saver,
    parent_chain,
    pinned_map,
    restored_values,
    task_from_data,
)
from nbgraph.errors import CheckpointFileError, InvalidArgumentError
from nbgraph.isolation import isolate
from nbgraph.record.log_data import join_from_data, reset_from_data
from nbgraph.record.subruns.checkpoints import attach_subruns

__all__ = ["log_from_checkpointer"]


def log_from_checkpointer(
    saver: Any, thread_id: str, checkpoint_id: str | None = None, graph: Any = None
) -> RunLog:
    """The record of a thread, from its first checkpoint to `checkpoint_id` (default: latest).

    Args:
        saver: a `MemorySaver` or `SqliteSaver` holding the thread.
        thread_id: the thread.
        checkpoint_id: where the history ends (a fork's checkpoint gives that branch).
        graph: the compiled graph's spec, if at hand; else the one the thread describes.

    Raises:
        ValueError: an unknown thread or checkpoint.
        CheckpointFileError: the checkpoints' parent links loop or break.
    """
    saver = checked_saver(saver)  # each checkpoint read back is checked
    head = saver.get(thread_id, checkpoint_id)
    if head is None:
        what = f"checkpoint {checkpoint_id!r}" if checkpoint_id else "checkpoints"
        raise InvalidArgumentError(
            f"Thread {thread_id!r} has no {what}; threads: {saver.threads()}."
        )
    chain = parent_chain(saver, head)
    chain.reverse()
    spec = _graph_of(chain[0], thread_id, graph)
    log = RunLog(spec, _input_of(chain[0]), {"configurable": {"thread_id": thread_id}})
    values: dict[str, Any] = {}  # replayed as a resume replays them
    branches = spec.semantics == "branches"
    for record in chain:
        if record.payload["tasks"] or record.payload.get("resets"):  # a branch point adds none
            log.steps.append(_step(spec, record, kept=graph is None))
        if not branches:
            values = apply_delta(spec, values, record.payload, record.step)
    if branches:
        log.semantics = "branches"
        end = chain[-1].payload.get("end")
        log.end = join_from_data(end) if end else None
        config = {"configurable": {"thread_id": thread_id}}
        values = restored_values(saver, spec, config, chain[-1].checkpoint_id)
    log.final = values
    on_chain = {record.checkpoint_id for record in chain}
    log.branches = [
        r for r in reversed(saver.history(thread_id)) if r.checkpoint_id not in on_chain
    ]
    log.source = saver.saver
    attach_subruns(log, saver, thread_id, spec, log_from_checkpointer)  # (its subgraphs')
    log.status = (
        "interrupted"
        if head.payload["next"]["pull"] or head.payload["next"].get("push")
        else "done"
    )
    return log


def _graph_of(first: Any, thread_id: str, graph: Any) -> Any:
    """The graph given (checked against the one the thread describes), else the described one."""
    if graph is None:
        return _described(first, thread_id)
    description = first.payload.get("graph")
    if description is not None:
        check_graph(description, graph, f"thread {thread_id!r}")
    return graph


def _described(first: Any, thread_id: str) -> Any:
    description = first.payload.get("graph")
    if description is None:
        raise CheckpointFileError(
            f"Thread {thread_id!r} does not describe its graph (its first checkpoint has none: "
            "damaged, or not written by nbgraph); pass graph=app."
        )
    return graph_from_description(description)


def _input_of(first: Any) -> dict[str, Any]:
    if "input" in first.payload["next"]:  # LangGraph's input checkpoint
        return {k: isolate(v) for k, v in first.payload["next"]["input"]}
    tasks = first.payload["tasks"]
    return {k: isolate(v) for k, v in tasks[0]["writes"]} if tasks else {}


def _kept(payload: dict[str, Any], record: Any) -> dict[str, Any]:
    where = f"checkpoint {record.checkpoint_id!r} (step {record.step})"
    return pinned_map(payload.get("kept"), where)


def _step(spec: Any, record: Any, kept: bool = True) -> StepLog:
    payload = record.payload
    tasks = [task_from_data(data) for data in payload["tasks"]]
    resets = [reset_from_data(record.step, reset) for reset in payload.get("resets", ())]
    return StepLog(
        record.step,
        tasks,
        spec.fields,
        written=(),
        resets=resets,
        cleared=tuple(payload.get("cleared", ())),
        merged=[tuple(w) for w in payload.get("merged", ())],
        applied=True,
        afters={**payload.get("afters", {}), **(_kept(payload, record) if kept else {})} or None,
        joins=[join_from_data(data) for data in payload.get("joins", ())] or (),
        heads=tuple(payload.get("heads", ())),
    )
