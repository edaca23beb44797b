"""A LangGraph thread's history read into nbgraph's `RunLog` through LangGraph's public API
(`Run.from_langgraph`).

It reads `app.get_state_history(config)` (each checkpoint's values, metadata, parent and planned
tasks with their errors and interrupts) and the checkpointer's `list(config)` (each checkpoint's
pending writes: every task's writes in order). langgraph is never imported.

A LangGraph checkpoint at step `s` is nbgraph's state after step `s` (`merge:s`); the tasks
run from it (its pending writes) are nbgraph's step `s + 1`. The thread's input checkpoint
(step -1) gives step 0, the input applied by `__start__`. Checkpoints off the chain that
ends at the config's checkpoint (forks, replays) are the tree's `fork:` branches.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

from nbgraph.engine.facts import RunLog, StepLog, Task, initial_values, replay_step
from nbgraph.isolation import isolate
from nbgraph.primitives import MISSING, Overwrite
from nbgraph.record.langgraph.graph import (
    LangGraphHistoryError,
    channel_notes,
    check_langgraph_app,
    spec_from_langgraph,
)
from nbgraph.record.langgraph.pauses import Pause, read_pauses
from nbgraph.record.langgraph.subruns import attach_langgraph_subruns
from nbgraph.record.langgraph.tasks import NULL_TASK, Triggers, step_tasks, writes_by_task
from nbgraph.record.langgraph.updates import update_tasks

__all__ = ["Checkpoint", "Checkpoints", "log_from_langgraph", "read_checkpoints"]

_NOTE_STOPPED = (
    "LangGraph's history shows the run stopped with tasks still to run ({next}) and no "
    "error, interrupt or breakpoint recorded: it does not say why (a recursion limit, or an "
    "error raised while applying the step's writes)."
)


@dataclass
class Checkpoint:
    """One LangGraph checkpoint as the import reads it (also a `fork:` node's record)."""

    checkpoint_id: str
    parent_id: str | None
    step: int
    source: str
    snapshot: Any
    writes: dict[str, list[tuple[str, Any]]]
    thread_id: str = ""
    payload: dict[str, Any] = field(default_factory=dict)


class Checkpoints:
    """A thread's checkpoints by id: what the tree asks of a record's `source`; and the
    pauses of the chain the record shows (`pauses_of`)."""

    def __init__(self, found: dict[str, Checkpoint], pauses: list[Pause] | None = None) -> None:
        self.found = found
        self.pauses = pauses or []

    def get(self, thread_id: str, checkpoint_id: str | None) -> Checkpoint | None:
        return self.found.get(checkpoint_id or "")

    def values(self, checkpoint_id: str) -> dict[str, Any]:
        """The state at one of the thread's checkpoints, as LangGraph shows it (a copy)."""
        shown = self.found[checkpoint_id].snapshot.values
        return {k: isolate(v) for k, v in shown.items()} if isinstance(shown, dict) else {}


def log_from_langgraph(app: Any, config: Any) -> RunLog:
    """The `RunLog` of a LangGraph thread, from its first checkpoint to the config's
    checkpoint (default: the latest), with the runs of its subgraphs on the tasks that ran
    them (`Task.subruns`, read from their namespaces: `record.langgraph_subruns`).

    Raises:
        NotALangGraphError: `app` is not a compiled LangGraph graph.
        LangGraphHistoryError: no checkpointer, no thread id, no checkpoints, no task results.
    """
    check_langgraph_app(app, "Run.from_langgraph")
    thread_id, head_id, thread = _thread(app, config)
    found = read_checkpoints(app, thread, thread_id)
    origins: list[tuple[Any, Any]] = []
    log = _thread_log(app, found, thread_id, head_id, origins)
    attach_langgraph_subruns(log, origins, app, app, namespace_log)
    return log


def namespace_log(
    graph: Any, root: Any, thread: dict[str, Any], thread_id: str, origins: list[tuple[Any, Any]]
) -> RunLog | None:
    """The `RunLog` of the checkpoint namespace `thread` names, run by `graph` (a subgraph)
    and read through `root` (the thread's app); None when it kept no checkpoint."""
    try:
        found = read_checkpoints(root, thread, thread_id)
    except LangGraphHistoryError:
        return None
    return _thread_log(graph, found, thread_id, None, origins)


def _thread_log(
    graph: Any, found: dict[str, Checkpoint], thread_id: str, head_id: str | None,
    origins: list[tuple[Any, Any]] | None = None,
) -> RunLog:  # fmt: skip
    """The `RunLog` of one namespace's checkpoints `found` (newest first) run by `graph`
    (the thread's graph, or a subgraph's), ending at `head_id` (default: the newest);
    `origins` gets each task with the LangGraph task it was read from."""
    if head_id is not None and head_id not in found:
        raise LangGraphHistoryError(
            f"Thread {thread_id!r} has no checkpoint {head_id!r} ({len(found)} checkpoints)."
        )
    head = found[head_id] if head_id else next(iter(found.values()))
    chain = [head]
    while chain[-1].parent_id in found:
        chain.append(found[chain[-1].parent_id])
    chain.reverse()
    spec = spec_from_langgraph(graph)
    log = RunLog(spec, {}, {"configurable": {"thread_id": thread_id}})
    log.warnings.extend(channel_notes(graph))
    log.warnings.extend(_gaps(chain))
    _fill(log, chain, origins)
    on_chain = {c.checkpoint_id for c in chain}
    log.branches = [c for c in reversed(found.values()) if c.checkpoint_id not in on_chain]
    for record in log.branches:
        record.payload = {"tasks": _fork_tasks(record, found, spec)}
    log.source = Checkpoints(found, read_pauses(chain))
    return log


_NOTE_FIRST = (
    "The first checkpoint LangGraph kept of this thread is step {step}'s (a run with "
    "durability='exit' keeps only the checkpoint it ends on): the record starts there, its "
    "values given as the run's input, without the tasks of steps 0 to {step}."
)
_NOTE_SEEDED = (
    "The thread starts with a {source!r} checkpoint (update_state on a thread with no input, "
    "say), not with an input: the record takes its values as the run's input, set by a "
    "__start__ task at step {step}."
)
_NOTE_GAP = (
    "LangGraph kept no checkpoint between steps {here} and {child} (a run with "
    "durability='exit' keeps only the checkpoint it ends on): the record shows the tasks of "
    "step {next} with the writes LangGraph kept of them, then the values of step {child} "
    "set by a __start__ task; the steps between are not shown (nor the answers given there)."
)


def _gaps(chain: list[Checkpoint]) -> list[str]:
    """A note for each run of steps the chain has no checkpoint of (oldest first)."""
    notes = []
    if chain and chain[0].step > -1:
        first = _NOTE_FIRST if chain[0].source == "loop" else _NOTE_SEEDED
        notes.append(first.format(step=chain[0].step, source=chain[0].source))
    for here, child in itertools.pairwise(chain):
        if child.source == "loop" and child.step > here.step + 1:
            notes.append(_NOTE_GAP.format(here=here.step, next=here.step + 1, child=child.step))
    return notes


def _thread(app: Any, config: Any) -> tuple[str, str | None, dict[str, Any]]:
    saver = getattr(app, "checkpointer", None)
    if saver is None or isinstance(saver, bool):
        raise LangGraphHistoryError(
            "This LangGraph app was compiled without a checkpointer, so it keeps no history "
            "to import. Compile it with one (compile(checkpointer=InMemorySaver())), or run "
            "it through nbgraph.trace(app, input) to record a run."
        )
    configurable = (config or {}).get("configurable") or {}
    thread_id = configurable.get("thread_id")
    if thread_id is None:
        raise LangGraphHistoryError(
            "The config names no thread: pass {'configurable': {'thread_id': ...}} (and "
            "optionally 'checkpoint_id') as given to app.invoke."
        )
    thread_id = str(thread_id)  # LangGraph files a thread under its id as text (a UUID too)
    ns = configurable.get("checkpoint_ns", "")
    thread = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns}}
    return thread_id, configurable.get("checkpoint_id"), thread


def read_checkpoints(app: Any, thread: dict[str, Any], thread_id: str) -> dict[str, Checkpoint]:
    """Every checkpoint of the thread, newest first, with its snapshot and pending writes."""
    try:
        snapshots = list(app.get_state_history(thread))
    except Exception as exc:  # LangGraph itself cannot rebuild a snapshot (a bad input)
        raise LangGraphHistoryError(
            f"LangGraph could not read thread {thread_id!r}'s history (get_state_history "
            f"raised {type(exc).__name__}: {exc}); nothing can be imported from it."
        ) from exc
    if not snapshots:
        raise LangGraphHistoryError(
            f"Thread {thread_id!r} has no checkpoints in {type(app.checkpointer).__name__}: "
            "run the app on it first (app.invoke(input, config)), or check the thread id."
        )
    pending = {}
    for item in app.checkpointer.list(thread):
        if not hasattr(item, "pending_writes"):
            raise LangGraphHistoryError(_NO_RESULTS.format(what="pending writes"))
        pending[item.config["configurable"]["checkpoint_id"]] = item.pending_writes or []
    found = {}
    for snap in snapshots:
        if any(not hasattr(task, "result") for task in snap.tasks):
            raise LangGraphHistoryError(_NO_RESULTS.format(what="task results"))
        ckpt_id = snap.config["configurable"]["checkpoint_id"]
        parent = snap.parent_config["configurable"]["checkpoint_id"] if snap.parent_config else None
        metadata = snap.metadata or {}
        found[ckpt_id] = Checkpoint(
            ckpt_id, parent, int(metadata.get("step", -1)), str(metadata.get("source", "")),
            snap, writes_by_task(pending.get(ckpt_id, ())), thread_id,
        )  # fmt: skip
    return found


_NO_RESULTS = (
    "This LangGraph version's history has no {what} (StateSnapshot.tasks[i].result and "
    "CheckpointTuple.pending_writes are needed): upgrade langgraph to 0.3 or later, or record "
    "the run with nbgraph.trace(app, input)."
)


def _fill(log: RunLog, chain: list[Checkpoint], origins: list | None = None) -> None:
    """Steps, input, status and final values of the chain (oldest first)."""
    spec = log.graph
    triggers = Triggers(frozenset(name for name, node in spec.nodes.items() if node.defer))
    values = initial_values(spec)  # as the timeline starts: LangGraph's empty channels
    if chain[0].step > -1:  # no input checkpoint kept: start from the first one's values
        values = _kept_step(log, chain[0], values)
    for here, child in zip(chain, [*chain[1:], None], strict=True):
        planned = list(here.snapshot.tasks)
        gap = child is not None and child.source == "loop" and child.step > here.step + 1
        if child is not None and child.source in ("fork", "input"):
            continue  # a copy to run again, or a new input over a paused thread: no step
        if child is not None and child.source == "update":
            last = log.steps[-1].tasks[-1].node if log.steps and log.steps[-1].tasks else None
            made, notes = update_tasks(child.step, here, child, values, spec, triggers, last)
            log.warnings.extend(notes)
        else:
            step = child.step if child is not None and not gap else here.step + 1
            made = step_tasks(
                step, planned, here.writes, spec, triggers, head=child is None, origins=origins
            )
        if not made:
            continue
        if here.step == -1 and here.source == "input" and not log.steps:
            log.input = {k: isolate(v) for k, v in made[0][0].writes}
        for task, raw in made:
            triggers.note(task, raw)
        tasks = [task for task, _ in made]
        step_log = StepLog(made[0][0].step, tasks, spec.fields, applied=child is not None)
        written = {name for task in tasks for name, _ in task.writes}
        step_log.cleared = tuple(n for n in spec.ephemeral if n in values and n not in written)
        log.steps.append(step_log)
        values = replay_step(spec, values, step_log)
        if gap:  # the steps up to the child's are not kept: go on from its values
            values = _kept_step(log, child, values)
        elif child is not None:
            _check_values(log, step_log, values, child)
    log.final = values
    _status(log, chain[-1])


def _kept_step(log: RunLog, kept: Checkpoint, values: dict[str, Any]) -> dict[str, Any]:
    """A checkpoint kept after steps that were not (`durability="exit"`): its values set by
    a `__start__` task at its step (each field written past its reducer); the first one is
    the record's input."""
    shown = kept.snapshot.values if isinstance(kept.snapshot.values, dict) else {}
    fields = log.graph.fields
    task = Task(kept.step, 0, "__start__", kind="input")
    task.writes = [
        (name, Overwrite(isolate(v)) if fields[name].reducer is not None else isolate(v))
        for name, v in shown.items()
        if name in fields
    ]
    if not log.steps:
        log.input = {k: isolate(v) for k, v in shown.items()}
    step = StepLog(kept.step, [task], fields, applied=True)
    log.steps.append(step)
    return replay_step(log.graph, values, step)


def _check_values(log: RunLog, step: StepLog, values: dict[str, Any], child: Checkpoint) -> None:
    """Where folding the writes does not give LangGraph's values, LangGraph's win (pinned in
    the step's `afters`) and a warning names the field."""
    shown = child.snapshot.values
    if not isinstance(shown, dict):
        return
    for name in {change.field for change in step.changes}:
        if name not in shown:
            continue
        ours = values.get(name, MISSING)
        if _differs(ours, shown[name]):
            step.afters = {**(step.afters or {}), name: isolate(shown[name])}
            values[name] = isolate(shown[name])
            if not _differs(_without_ids(ours), _without_ids(shown[name])):
                _adopt_ids(step, name, ours, shown[name])
                continue  # message ids LangGraph made as it folded: kept, nothing else differs
            log.warnings.append(
                f"step {step.step}: folding the writes to {name!r} through its reducer does "
                "not give LangGraph's value; the record shows LangGraph's."
            )


def _adopt_ids(step: StepLog, name: str, ours: Any, theirs: Any) -> None:
    """The ids our fold gave messages that LangGraph's fold gave other ids: the step's
    writes to `name` take LangGraph's (a message written without an id shows the id
    LangGraph's reducer gave it, as in nbgraph's own record)."""
    if not isinstance(ours, list) or not isinstance(theirs, list):
        return
    renamed = {
        a.id: b.id
        for a, b in zip(ours, theirs, strict=False)
        if getattr(a, "id", None) and getattr(b, "id", None) and a.id != b.id
    }
    for task in step.tasks:
        for written, value in task.writes:
            items = value if isinstance(value, list) else [value]
            for item in items if written == name else ():
                if getattr(item, "id", None) in renamed:
                    item.id = renamed[item.id]


def _without_ids(value: Any) -> Any:
    """A list of messages as what they say, without the ids a reducer gave them."""
    if not isinstance(value, list):
        return value
    return [
        item.model_dump(exclude={"id"}) if hasattr(item, "model_dump") and hasattr(item, "id")
        else item
        for item in value
    ]  # fmt: skip


def _differs(ours: Any, theirs: Any) -> bool:
    try:
        return bool(ours != theirs)
    except Exception:
        return True


def _status(log: RunLog, head: Checkpoint) -> None:
    last = log.steps[-1] if log.steps else None
    if last is not None and not last.applied:
        failed = [t for t in last.tasks if t.error is not None]
        if failed:
            log.status, log.error = "failed", failed[0].error
            return
        if any(t.interrupts for t in last.tasks):
            log.status = "interrupted"
            return
    snap_next = tuple(head.snapshot.next or ())
    if not snap_next:
        log.status = "done"
        return
    log.status = "interrupted"
    spec = log.graph
    if not set(snap_next) & {*spec.interrupt_before, *spec.interrupt_after}:
        log.warnings.append(_NOTE_STOPPED.format(next=", ".join(snap_next)))


def _fork_tasks(record: Checkpoint, found: dict[str, Checkpoint], spec: Any) -> list[dict]:
    """What made a checkpoint off the chain: its parent's tasks (or update), as plain data."""
    parent = found.get(record.parent_id or "")
    if parent is None:
        return []
    planned = list(parent.snapshot.tasks)
    if record.source == "fork":
        return []
    if record.source == "update":
        made, _ = update_tasks(record.step, parent, record, {}, spec, Triggers(), None)
    else:
        writes = {k: v for k, v in parent.writes.items() if k != NULL_TASK}
        made = step_tasks(record.step, planned, writes, spec, Triggers(), head=False)
    return [{"node": task.node, "writes": list(task.writes)} for task, _ in made]
