"""A thread read and written from outside a run: the one `StateSnapshot` builder and the one
"write as a node" step.

A checkpoint is shown as `get_state` and `get_state_history` show it (`StateSnapshot` with its
`PendingTask`s); writing as a node (`write_as_node`, the step `update_state` and the stepper's
`update()` take) has its rules (which node, and which joins stay fired)."""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, NamedTuple

from nbgraph.engine.core.loop import RunLoop
from nbgraph.engine.core.root_state import bare_field, root_value
from nbgraph.engine.core.runlog import StepLog, initial_values
from nbgraph.engine.core.starting import Start
from nbgraph.engine.core.tasks import Task, absorb_output
from nbgraph.engine.persistence.chain import next_task_ids, with_finished
from nbgraph.engine.persistence.persist import Thread
from nbgraph.errors import InvalidUpdateError
from nbgraph.isolation import ATOMS, isolate
from nbgraph.primitives import START, StateSnapshot

__all__ = [
    "PendingTask",
    "Snapshots",
    "checkpoint_config",
    "last_writer",
    "state_snapshot",
    "tasks_from",
    "write_as_node",
    "write_as_nodes",
]

_NONE: dict[str, Any] = {}  # (read only)
_new = tuple.__new__  # (a NamedTuple made from its fields' tuple, without its `__new__`)


def state_snapshot(
    spec: Any,
    thread: Thread,
    restored: Any,
    current: bool = False,
    owned: bool = False,
    snapshots: Snapshots | None = None,
) -> StateSnapshot:
    """A checkpoint as LangGraph shows it; `current` (get_state): with the writes of the
    tasks that finished in a step that failed part-way applied, and only the rest next;
    `owned`: `restored.values` is a fresh copy nobody else holds (the history's);
    `snapshots`: the thread's `Snapshots`, if made already."""
    finished = restored.finished if current and spec.semantics != "branches" else {}
    ids = next_task_ids(restored, spec)
    if finished:  # (LangGraph's: of the checkpoint's tasks, not of those a goto added)
        finished = {task_id: finished[task_id] for task_id, _ in ids if task_id in finished}
    values = with_finished(spec, restored, finished) if finished else restored.values
    asked = restored.asked
    if current and restored.latest:  # (LangGraph's: only the questions still waiting)
        asked = {task_id: said for task_id, said in asked.items() if task_id in restored.paused}
    tasks = tasks_from(restored.control, ids, restored.done, restored.errors, asked)
    return (snapshots or Snapshots(thread)).of(
        restored,
        values,
        tuple(task.name for task in tasks if task.id not in finished),
        tasks,
        tuple(i for task in tasks for i in task.interrupts),  # (LangGraph's: the tasks')
        owned=owned and not finished,
    )


class Snapshots:
    """A thread's checkpoints as `StateSnapshot`s: the one place one is built (`get_state`,
    `get_state_history`), with what every snapshot of the thread shares worked out once."""

    __slots__ = ("known", "ns", "root", "root_id", "time_text")

    def __init__(self, thread: Thread) -> None:
        spec = thread.spec
        self.root_id, self.ns = thread.root_id, thread.ns  # (LangGraph's configurable keys)
        self.known = None if spec.open_schema else spec.fields.keys()  # (None: every key)
        self.root = bare_field(spec)
        self.time_text = TimeText().text  # (`created_at` shown)

    def of(
        self,
        checkpoint: Any,
        values: dict[str, Any],
        next: tuple[str, ...],
        tasks: tuple[Any, ...],
        interrupts: tuple[Any, ...] = (),
        owned: bool = True,
    ) -> StateSnapshot:
        """`checkpoint` (a saver's record or a `Restored`: its id, parent's id, source, step
        and time) shown with `values` (the keys the graph does not know left out; `owned`:
        a fresh copy the snapshot keeps, else copied), the nodes `next`, its `tasks` and the
        `interrupts` it waits on."""
        known = self.known
        if not owned:
            values = {k: isolate(v) for k, v in values.items() if known is None or k in known}
        elif known is not None and not values.keys() <= known:
            values = {k: v for k, v in values.items() if k in known}
        parent_id, checkpoint_id = checkpoint.parent_id, checkpoint.checkpoint_id
        root_id, ns = self.root_id, self.ns
        metadata = {"source": checkpoint.source, "step": checkpoint.step, "parents": {}}
        if ns:  # (a subgraph's: its configs name its parents' checkpoints)
            parents = _parents_of(checkpoint)
            metadata["parents"] = dict(parents)
            config = checkpoint_config(root_id, ns, checkpoint_id, parents)
            parent = (
                None if parent_id is None else checkpoint_config(root_id, ns, parent_id, parents)
            )
        else:  # (`checkpoint_config`'s, inline: a history makes two a checkpoint)
            own = {"thread_id": root_id, "checkpoint_ns": ns, "checkpoint_id": checkpoint_id}
            config = {"configurable": own}
            parent = None
            if parent_id is not None:
                parent = {"configurable": {**own, "checkpoint_id": parent_id}}
        return _new(
            StateSnapshot,
            (
                root_value(values, self.root) if self.root else values,
                next,
                config,
                metadata,
                self.time_text(checkpoint.created_at),
                parent,
                tasks,
                interrupts,
            ),
        )


class TimeText:
    """`datetime.fromtimestamp(created_at, tz=UTC).isoformat()` for a thread's checkpoints:
    the same text, with the date and time of the last whole second shown kept (a history's
    checkpoints share most of their seconds), the microseconds rounded half to even as
    datetime rounds them.

    >>> shown = TimeText().text
    >>> shown(1.5), shown(2.0)
    ('1970-01-01T00:00:01.500000+00:00', '1970-01-01T00:00:02+00:00')
    >>> shown(2.0000025)  # (2.5 microseconds, as a float just under: rounded to 2)
    '1970-01-01T00:00:02.000002+00:00'
    """

    __slots__ = ("second",)

    def __init__(self) -> None:
        self.second: tuple[float, str] = (-1.0, "")  # (the last whole second, as text)

    def text(self, created_at: float) -> str:
        """`created_at` as `datetime.fromtimestamp(created_at, tz=UTC).isoformat()` shows it."""
        if 0.0 <= created_at < _LATEST:
            fraction, whole = math.modf(created_at)
            micros = round(fraction * 1e6)
            if micros < 1_000_000:  # (else the next second's: datetime's own way)
                second, text = self.second
                if whole != second:
                    text = datetime.fromtimestamp(whole, tz=UTC).isoformat()[:-6]
                    self.second = (whole, text)
                return f"{text}.{micros:06d}+00:00" if micros else f"{text}+00:00"
        return datetime.fromtimestamp(created_at, tz=UTC).isoformat()


_LATEST = 253_402_300_799.0  # (9999-12-31T23:59:59Z: datetime's last whole second)


def checkpoint_config(
    root_id: str, ns: str, checkpoint_id: str | None, parents: dict[str, str]
) -> dict[str, Any]:
    """The config of a checkpoint of thread `root_id` (namespace `ns`), as LangGraph gives
    it; a subgraph's (`parents`: the checkpoints its parents ran it from) names them too,
    LangGraph's `checkpoint_map`: invoking the parent with it travels there."""
    own = {"thread_id": root_id, "checkpoint_ns": ns, "checkpoint_id": checkpoint_id}
    if parents:
        own["checkpoint_map"] = {**parents, ns: checkpoint_id}
    return {"configurable": own}


def _parents_of(checkpoint: Any) -> dict[str, str]:
    """The checkpoints a subgraph's checkpoint was made under, by namespace (`""`: the
    root's), from a saver's record or a `Restored`."""
    payload = getattr(checkpoint, "payload", None)
    if payload is not None:
        return payload.get("parents", _NONE)
    return getattr(checkpoint, "parents", _NONE)


class PendingTask(NamedTuple):
    """A task that runs from a checkpoint (`StateSnapshot.tasks`), like LangGraph's
    `PregelTask`: its id and node name, its path (`("__pregel_pull", node)`, or
    `("__pregel_push", index)` for a `Send`), the error it raised (its repr, as LangGraph
    reads it back from a checkpoint), the interrupts it asked, `state` (None: no
    subgraphs), and `result`, the writes it made if it finished."""

    id: str
    name: str
    path: tuple[Any, ...] = ()
    error: str | None = None
    interrupts: tuple[Any, ...] = ()
    state: Any = None
    result: dict[str, Any] | None = None


def tasks_from(
    control: dict[str, Any],
    ids: list[tuple[str, str]],
    done: dict[str, dict[str, Any]],
    errors: dict[str, Any] = _NONE,
    asked: dict[str, Any] = _NONE,
) -> tuple[PendingTask, ...]:
    """The tasks that run from a checkpoint, from its parts: its control (`next`), the tasks'
    ids, what finished tasks wrote, the errors they raised and what they asked, by task id."""
    pushed = 0
    tasks = []
    push = "push" in control and control["push"]  # (the Sends come after the pulled nodes;
    pulls = len(ids) - len(push) if push else None  # None: no Sends, all pulled)
    for position, (task_id, name) in enumerate(ids):
        if pulls is None or position < pulls:
            path: tuple[Any, ...] = ("__pregel_pull", name)
        else:
            path, pushed = ("__pregel_push", pushed), pushed + 1
        saved = done.get(task_id)
        if saved is None and name == START:  # an input checkpoint: its input, to be applied
            saved = {"writes": control.get("input", [])}
        result = None
        if saved is not None:  # (each field's first write, a copy: a payload may be shared)
            result = {}
            for key, value in saved["writes"]:
                if key not in result:
                    result[key] = value if type(value) in ATOMS else isolate(value)
        error = errors.get(task_id) if errors else None  # (none asked of a history's: its
        interrupts = tuple(asked.get(task_id, ())) if asked else ()  # maps are empty)
        tasks.append(_new(PendingTask, (task_id, name, path, error, interrupts, None, result)))
    if pushed and len(tasks) > pushed:  # LangGraph lists a step's Sends first
        tasks.sort(key=lambda task: task.path[0] != "__pregel_push")
    return tuple(tasks)


def last_writer(restored: Any) -> str:
    """The node `update_state` writes as when no `as_node` is given (LangGraph's rule): the
    one node whose task made this checkpoint (START for the input checkpoint).

    Raises:
        InvalidUpdateError: several nodes (or none) made it, so which edges fire is ambiguous.
    """
    names = sorted({task["node"] for task in restored.tasks})
    if not names and restored.source == "input":
        return START
    if len(names) != 1:
        raise InvalidUpdateError(
            f"Ambiguous update, specify as_node: checkpoint {restored.checkpoint_id!r} (step "
            f"{restored.step}) was made by {names or 'no node'}, so which node's edges fire "
            "next is not clear; pass update_state(config, values, as_node=...)."
        )
    return names[0]


def write_as_node(
    loop: RunLoop,
    node: str,
    values: Any,
    due: Mapping[str, Sequence[str]] | None = None,
    replace_due: bool = False,
) -> StepLog:
    """The "update" step of `update_state` and of the stepper's `update()`: `values` written
    as if `node` had returned them, through the reducers, its edges and routers deciding
    what runs next; committed (on a thread, saved) with source "update".

    Args:
        loop: the run, between two steps (a branch run grows the update from its
            `resumed_point`, the live lineages merged).
        due: what was due before the update (by node, its sources), when `loop` started
            afresh from it: a waiting edge that fired stays fired (`_keep_fired_joins`).
        replace_due: the update stands in for the due step: what was due does not run.
    """
    return write_as_nodes(loop, [(node, values)], due, replace_due)


def write_as_nodes(
    loop: RunLoop,
    writes: Sequence[tuple[str, Any]],
    due: Mapping[str, Sequence[str]] | None = None,
    replace_due: bool = False,
) -> StepLog:
    """`write_as_node` for several `(node, values)` writes in one step (one task each, in
    order; `bulk_update_state`'s superstep), committed as one checkpoint."""
    step = loop.update_step()
    tasks = []
    for index, (node, values) in enumerate(writes):
        task = Task(step, index, node, "update", started=time.time())
        if loop.spec.semantics == "branches":
            loop.hand(task, loop.resumed_point)  # type: ignore[attr-defined]
        if bare_field(loop.spec) == "output" and node in loop.spec.nodes:  # an entrypoint's
            values = {"output": values, "previous": values}  # (LangGraph's: returned, saved)
        absorb_output(loop.spec, loop.spec.nodes.get(node), task, values)
        if due is not None:
            _keep_fired_joins(loop, due, node)
        tasks.append(task)
    if replace_due:  # (LangGraph: the update stands in for the due step)
        loop.schedule.drop_due()
    for task in tasks:
        loop.route(task)
        task.ended = time.time()
    return loop.commit(tasks, source="update")


def start_empty(loop: RunLoop) -> None:
    """Start `update_state` on a thread that has no checkpoint yet from the schema's empty
    values: LangGraph writes the update as the thread's first checkpoint (step 0, source
    "update"), and a run of the thread goes on from there."""
    loop.start(Start(initial_values(loop.spec), -1, loop.limit))


def _keep_fired_joins(run: RunLoop, pending: Mapping[str, Sequence[str]], node: str) -> None:
    """A waiting edge `[a, b] -> q` that fired, with `q` not run yet (`pending`: what was
    due, by node, with its sources), stays fired when the update writes as one of its
    sources (LangGraph: the join's barrier is still full, so `q` runs next)."""
    for index in run.spec.waits_by_source.get(node, ()):
        edge = run.spec.waiting[index]
        if set(edge.sources) <= set(pending.get(edge.target, ())):
            run.schedule.fire_again(index, node)
