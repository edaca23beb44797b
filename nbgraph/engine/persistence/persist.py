"""Checkpoints: a run's supersteps saved to a checkpointer as deltas, and a thread picked up again.

A checkpoint holds what its step wrote (and what runs next), not the whole state; a full
snapshot is added only when the writes since the last one outweigh the state, so storage
grows with the writes. The checkpointer is any object with the `nbgraph.checkpoint` saver
methods; the engine never imports a saver module.

This module writes a thread (`Thread.save*`, a committed step as a delta); reading one back
(`Thread.restore`/`history`, `apply_delta`) is `engine.restoring`, mixed into `Thread`.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable, Iterator, Sized
from typing import Any

from nbgraph.blueprint import GraphSpec
from nbgraph.checkpoint.tuples import asked_entry, asked_interrupt
from nbgraph.engine.core.pinned import growth, kept_copy, pinned_data
from nbgraph.engine.core.retrying import attempts_data
from nbgraph.engine.core.runlog import initial_values, reset_data
from nbgraph.engine.core.tasks import Task
from nbgraph.engine.core.writes import apply_step
from nbgraph.engine.persistence.chain import parent_chain
from nbgraph.engine.persistence.checkpoint_shape import checked_saver
from nbgraph.engine.persistence.durability import Deferred, deferred
from nbgraph.engine.persistence.history_fold import history_states
from nbgraph.engine.persistence.moving import copy_task_threads
from nbgraph.engine.persistence.restoring import (
    LINEAGES,
    Restored,
    apply_delta,
    restore_branches,
)
from nbgraph.engine.persistence.travel import now, replay_of
from nbgraph.errors import CheckpointFileError
from nbgraph.isolation import isolate
from nbgraph.primitives import MISSING, START, Interrupt, Mutation, Send
from nbgraph.reducers import callable_anywhere

__all__ = [
    "Thread",
    "checkpoint_payload",
    "task_data",
    "thread_id_of",
    "transient_fields",
    "without",
]

_NONE: dict[str, Any] = {}  # (read only)

_MIN_SNAPSHOT_COST = 64
_IDS = random.Random()  # checkpoint ids' random part: a private generator (no system call per
if hasattr(os, "register_at_fork"):  # id; a node's random.seed() does not touch it), new in a fork
    os.register_at_fork(after_in_child=_IDS.seed)


def thread_id_of(config: dict[str, Any]) -> str:
    """The run's thread id, or a clear error saying where it goes."""
    thread_id = (config.get("configurable") or {}).get("thread_id")
    if thread_id is None or thread_id == "":
        raise ValueError(
            "This graph has a checkpointer, so each run needs a thread id: "
            "app.invoke(inputs, {'configurable': {'thread_id': 'my-thread'}})."
        )
    return str(thread_id)


def _size(value: Any) -> int:
    kind = type(value)
    if kind in _SIZED:
        return len(value)
    if kind in _ONES:
        return 1
    return len(value) if isinstance(value, Sized) and not isinstance(value, str) else 1


_SIZED = frozenset({list, dict, tuple, set})
_ONES = frozenset({int, str, float, bool, type(None)})


def checkpoint_payload(run: Any, log: Any) -> dict[str, Any]:
    """A committed step as a checkpoint's delta: resets, tasks with their writes, clears,
    and what runs next.

    A `Mutation` cannot be stored to run again, so a field it wrote is kept as its value
    after the step instead (`afters`).
    """
    skip = transient_fields(run.spec)
    mutated = set()  # (the step's applied writes keep every Mutation its tasks wrote)
    for task in log.tasks:
        for name, value in task.writes:
            if isinstance(value, Mutation) and name not in skip:
                mutated.add(name)
    for _, name, value in log.merged:
        if isinstance(value, Mutation) and name not in skip:
            mutated.add(name)
    payload: dict[str, Any] = {
        "tasks": [task_data(task, skip) for task in log.tasks],
        "next": _control_of(run),
    }
    if log.resets:  # the rest only when there is something: most steps have none of it
        payload["resets"] = [reset_data(r, without(skip)) for r in log.resets]
    if log.merged:
        payload["merged"] = [list(w) for w in log.merged]
    if mutated:
        payload["afters"] = {
            name: isolate(run.values[name]) for name in mutated if name in run.values
        }
    if log.cleared:
        payload["cleared"] = list(log.cleared)
    kept = _kept_values(run, log, skip | mutated) if run.thread.pinned else None
    if kept:  # (without pinned fields, there is nothing to keep)
        payload["kept"] = kept
    if run.thread.head is None:  # a thread's first checkpoint describes its graph
        from nbgraph.blueprint.description import describe_graph  # plain data, for other processes

        payload["graph"] = describe_graph(run.spec)
    return payload


class Thread:
    """One run's link to its checkpointer: reads the thread, appends its checkpoints.

    Attributes:
        thread_id: the key its checkpoints are stored under.
        root_id: the thread id a config names (a subgraph's thread: its parent's).
        ns: the checkpoint namespace (`""`; a subgraph's thread: see
            `engine.subgraph_checkpoints`).
        parents: a subgraph's thread: the checkpoint each of its parents ran it from, by
            namespace (kept with each of its checkpoints; LangGraph's `checkpoint_map`).
        targets: the subgraph checkpoints the run starts its subgraphs from, by namespace
            (a config naming a subgraph's checkpoint through its parent).
        replay: the run's time travel (`engine.persistence.travel.Replay`), or None.
    """

    ns = ""

    def __init__(self, saver: Any, spec: GraphSpec, config: dict[str, Any]) -> None:
        self.saver, self.spec = checked_saver(saver), spec  # what it reads back is checked
        self.thread_id = thread_id_of(config)
        configurable = config.get("configurable") or {}
        self.start_id: str | None = configurable.get("checkpoint_id")
        self.parents: dict[str, str] = {}
        self.targets: dict[str, str] = {}
        if configurable.get("checkpoint_ns"):  # a subgraph's checkpoint, named to its parent:
            mapped = dict(configurable.get("checkpoint_map") or {})  # (LangGraph's config)
            self.start_id, self.targets = mapped.pop("", None), mapped  # the parent's run
            # starts from the checkpoint that ran it, the subgraph from the one named
        self.head: str | None = None
        self._cost = 0
        self.kept: dict[str, Any] = {}  # pinned fields' values at the head, to see growth
        self.pinned = _pinned_fields(spec)
        self.root_id = self.thread_id
        self.replay: Any = None
        self._set_put()

    def defer(self, mode: str) -> None:
        """Write this run's checkpoints as durability `mode` says (`engine.durability`); a
        subgraph's thread made later shares its parent's."""
        self.saver = checked_saver(deferred(self.saver.saver, mode))
        self._set_put()

    def _set_put(self) -> None:
        target = self.saver.saver
        self._exit = isinstance(target, Deferred) and target.mode == "exit"
        from nbgraph.checkpoint.base import CheckpointRecord  # the saver's record type

        self._record = CheckpointRecord  # (imported once, not at each step)
        self._whole: tuple[dict, Any] = ({}, None)
        self._put = self.saver.put

    def whole(self) -> dict[str, Any]:
        """The state at the last checkpoint saved, whole (durability "exit"'s last one)."""
        values, lineages = self._whole
        if lineages is not None:
            return {LINEAGES: lineages()}
        skip = transient_fields(self.spec)
        return {k: isolate(v) for k, v in values.items() if k not in skip}

    def enter(self, run: Any) -> Any:
        """A subgraph's thread resumes its run where it paused (see `SubThread.enter`)."""
        return None

    def travel(self, restored: Restored | None) -> None:
        """Note whether the run picking up the thread at `restored` (None: it starts from
        new input, or answers an interrupt) travels back in time, as it does when its config
        names a checkpoint: its stateful subgraphs then start from their past state
        (`engine.persistence.travel`). A subgraph's thread keeps its parent's."""
        self.replay = replay_of(self, restored)

    @property
    def ends_at_exit(self) -> bool:
        """Whether the run's checkpoints reach the saver only when it ends (durability
        "exit")."""
        return self._exit

    def step_failed(
        self, values: dict[str, Any], pulled: dict[str, list[str]], pushed: list | None
    ) -> None:
        """Durability "exit", a step whose writes conflict: the run's one checkpoint is the
        last one it saved, as LangGraph's is then: holding `values` (the fields applied
        before the conflicting one: `applied_before_conflict`), with `pulled` to run next
        (the nodes triggered before it) and the step's own Sends, with their writes, unless
        it sent new ones before it (`pushed`: those, without writes). LangGraph marked the
        triggers of the nodes it pulled seen. See `Deferred.step_failed`."""
        if self._exit and self.saver.saver.step_failed(self.thread_id, pulled, pushed):
            self._whole = (values, None)

    # --- writing -----------------------------------------------------------------------------

    payload = staticmethod(checkpoint_payload)
    """`payload(run, log)`: a step `run` just committed (`log`) as a checkpoint's delta, for
    `save` (a run asks its thread for it, and never imports this module)."""

    def save(
        self,
        step: int,
        source: str,
        payload: dict[str, Any],
        values: dict,
        lineages: Callable[[], list[dict[str, Any]]] | None = None,
        force_snapshot: bool = False,
    ) -> str:
        """Append one checkpoint after the current head; return its id.

        Args:
            step, source, payload: the checkpoint's step, source and delta.
            values: the state (a snapshot of it is kept when the writes since the last one
                outweigh it).
            lineages: for a branch run, makes its lineage snapshot instead of `values`'.
            force_snapshot: take a snapshot now (a branch run's new root).
        """
        cost = self._cost + 1
        if self.parents:  # a subgraph's checkpoint: the checkpoints its parents ran it from
            payload["parents"] = self.parents
        for task in payload["tasks"]:
            for _, value in task["writes"]:
                kind = type(value)  # (`_size`, its common cases inline: every step)
                cost += 1 if kind in _ONES else len(value) if kind in _SIZED else _size(value)
        self._cost = cost
        snapshot = None
        due = self.head is None or (cost >= _MIN_SNAPSHOT_COST and cost >= _state_size(values))
        if self._exit:  # only the run's last checkpoint is written, whole (see `whole`)
            due, self._whole = False, (values, lineages)
        if due or force_snapshot:
            skip = transient_fields(self.spec)
            if lineages is not None:
                snapshot = {LINEAGES: lineages()}
            else:
                snapshot = {k: isolate(v) for k, v in values.items() if k not in skip}
            self._cost = 0
        checkpoint_id = f"{step:08d}-{_IDS.getrandbits(48):012x}"
        record = self._record(
            self.thread_id, checkpoint_id, self.head, step, source, now(), payload, snapshot
        )
        if self._exit:
            self.saver.saver.put(record, self)
        else:
            self._put(record)
        self.head = checkpoint_id
        return checkpoint_id

    def save_input(
        self, step: int, writes: list, restored: Restored | None, values: dict[str, Any]
    ) -> None:
        """LangGraph's input checkpoint (source "input"): the thread's state before the
        input, and the input waiting to be applied by the START task."""
        control: dict[str, Any] = {"pull": {START: []}, "input": [list(w) for w in writes]}
        payload: dict[str, Any] = {"tasks": [], "next": control}
        if self.head is None:  # a thread's first checkpoint describes its graph
            from nbgraph.blueprint.description import describe_graph  # plain data

            payload["graph"] = describe_graph(self.spec)
        lineages = None
        if self.spec.semantics == "branches":
            live = [] if restored is None else restored.control["lineages"]["live"]
            control["lineages"] = {"arrivals": {}, "later": {}, "sends": [], "captured": [],
                                   "ended": [], "live": list(live)}  # fmt: skip
            payload["points"] = []
            if self.head is None:
                lineages = list
        self.save(step, "input", payload, values, lineages=lineages)

    def branch(self, restored: Restored) -> None:
        """Start a new branch from a past checkpoint: an empty-delta checkpoint after it
        (source "fork", the next step), so what this run saves — and a pause — grows from there."""
        payload = {"resets": [], "tasks": [], "merged": [], "afters": {}, "cleared": [],
                   "points": [], "next": restored.control}  # fmt: skip
        self.save(restored.step + 1, "fork", payload, restored.values)

    def copy(self, restored: Restored) -> str:
        """LangGraph's `update_state(config, None, as_node="__copy__")`: a copy of the
        checkpoint `restored` as its sibling (the same parent and state, what runs next the
        same, source "fork", the next step), without its pending writes: a question it had
        asked, or a task that had finished there, runs again from the copy. Returns its id.
        """
        payload = {"resets": [], "tasks": [], "merged": [], "afters": {}, "cleared": [],
                   "points": [], "next": restored.control}  # fmt: skip
        self.head = restored.parent_id  # (its delta is empty: its snapshot is its state)
        return self.save(restored.step + 1, "fork", payload, restored.values, force_snapshot=True)

    def save_update(self, task: Task, moved: dict[str, str] | None = None) -> None:
        """Keep a resuming `Command`'s update and goto with the paused checkpoint (LangGraph
        keeps them as pending writes): `get_state` shows the updated state, and a resume
        that pauses again still has them. The next checkpoint starts from the updated state.

        `moved`: the paused step's tasks whose ids the goto changed (`{old: new}`); their
        entries at this checkpoint are read under the new ids from here on, and the graphs
        they ran keep their checkpoints under them too (`engine.persistence.moving`).
        """
        if self.head is None:
            return
        if moved:
            copy_task_threads(self.saver.saver, self.root_id, self.ns, moved)
        kept = sum(1 for w in self.saver.pending_writes(self.thread_id, self.head)
                   if "update" in w.payload)  # fmt: skip
        skip = transient_fields(self.spec)
        writes = [list(w) for w in task.writes if w[0] not in skip]
        routes = [[r.node, r.arg] if isinstance(r, Send) else r for r in task.routes]
        payload = {"update": writes, "routes": routes}
        if moved:
            payload["moved"] = dict(moved)
        self.saver.put_write(self.thread_id, self.head, f"command:{kept}", payload)

    def save_task(self, task: Task, answers: list[Any] | None = None) -> None:
        """Keep a finished task's writes and routes, so a resume does not run it again;
        a paused task's question and the answers it had, so a resume can answer it; or a
        failed task's error (its repr), for the checkpoint's `tasks`."""
        if self.head is None:
            return
        if task.error is not None:  # shown in the checkpoint's tasks, as LangGraph does
            error = repr(task.error)  # LangGraph's task.error, read back from a checkpoint
            entry = {"writes": [], "routes": [], "error": error}  # (shaped as a task's writes)
            self.saver.put_write(self.thread_id, self.head, task.id, entry)
            return
        if task.interrupts or task.held:  # (held: paused with no question, `SubgraphStopped`)
            asked = [asked_entry(i) for i in task.interrupts]
            payload = {"interrupts": asked, "answers": list(answers or ())}
            if task.kind == "call":  # (answered by id; its caller shows the question)
                payload["call"] = True
        else:
            skip = transient_fields(self.spec)
            writes = [w for w in task.writes if w[0] not in skip]
            payload = {"writes": writes, "routes": list(task.routes)}
        if task.kind == "call" and task.arg.key:  # (a resume finds the call by its place,
            payload["key"] = task.arg.key  # not its index)
        self.saver.put_write(self.thread_id, self.head, task.id, payload)

    # --- reading the thread back (a state at a checkpoint: engine.persistence.restoring) ---

    def restore(
        self, checkpoint_id: str | None = None, latest_id: str | None = None, listed: bool = False
    ) -> Restored | None:
        """The thread at `checkpoint_id` (default: the run's, else the latest); None if empty.

        Args:
            checkpoint_id: the checkpoint to restore.
            latest_id: the thread's latest checkpoint id, if the caller knows it already.
            listed: the id is one the saver listed for the thread (not a user's).

        Raises:
            ValueError: a checkpoint id the thread does not have.
            CheckpointFileError: a `listed` checkpoint the saver cannot read.
        """
        wanted = checkpoint_id or self.start_id
        record = self.saver.get(self.thread_id, wanted)
        if record is None:
            if listed:
                raise CheckpointFileError(
                    f"Thread {self.thread_id!r} lists checkpoint {wanted!r} but it cannot be "
                    "read: the checkpoint file is damaged."
                )
            if wanted is not None:
                raise ValueError(
                    f"Thread {self.thread_id!r} has no checkpoint {wanted!r}; "
                    "see app.get_state_history(config) for the ones it has."
                )
            return None
        chain = parent_chain(self.saver, record, lambda r: r.snapshot is not None)
        snapshot = chain[-1].snapshot
        lineages = None
        if self.spec.semantics == "branches":
            lineages, values = restore_branches(self.spec, chain, snapshot)
        else:
            values = dict(snapshot) if snapshot is not None else initial_values(self.spec)
            for older in reversed(chain if snapshot is None else chain[:-1]):
                values = apply_delta(self.spec, values, older.payload, older.step)
        if latest_id is None and wanted is not None:
            latest_id = self.saver.get(self.thread_id).checkpoint_id
        latest = wanted is None or latest_id == wanted
        return self._restored(record, values, latest, lineages)

    def history(self) -> Iterator[Restored]:
        """Every checkpoint of the thread, newest first, each with its full state, read
        lazily: the first costs one checkpoint's rebuild (from its nearest snapshot).

        Then the rest of the thread is read at once and folded forward from its snapshots,
        each delta applied about twice, about 2 sqrt(k) states held for k checkpoints
        between snapshots (`engine.history_fold`; a thread with forks: `HistoryWalk`).
        """
        newest = self.saver.get(self.thread_id)
        if newest is None:
            return
        latest = newest.checkpoint_id
        if self.spec.semantics == "branches":
            for checkpoint_id in self._ids_from(latest):
                yield self.restore(checkpoint_id, latest_id=latest, listed=True)  # type: ignore[misc]
            return
        for record, values, writes, done in self.history_parts(newest):
            restored = self._restored(record, values, record.checkpoint_id == latest, None, writes)
            for task_id, saved in done.items():
                restored.done.setdefault(task_id, saved)
            yield restored

    def history_parts(
        self, newest: Any, shared: bool = False
    ) -> Iterator[tuple[Any, dict[str, Any], Any, dict[str, dict[str, Any]]]]:
        """`(record, values, writes, done)` of every checkpoint of a thread without branch
        semantics, from `newest` back: `writes` its pending writes (None: not read yet),
        `done` the writes its tasks made, read from the checkpoint they made; `shared`: the
        records may be shared (`history_states`): their payloads, and `done`, read only."""
        ran: dict[str, dict[str, Any]] = {}  # by parent: what its tasks wrote (shown as results)
        states = history_states(self, newest, self._ids_from, apply_delta, shared)
        for record, values, writes in states:
            done = ran.pop(record.checkpoint_id, _NONE)
            parent_id = record.parent_id
            if record.source == "loop" and parent_id is not None:
                made = record.payload["tasks"]
                if len(made) == 1 and parent_id not in ran:  # (a line's: one task a step)
                    ran[parent_id] = {made[0]["id"]: {"writes": made[0]["writes"]}}
                else:
                    tasks = ran.setdefault(parent_id, {})
                    for task in made:
                        tasks.setdefault(task["id"], {"writes": task["writes"]})
            yield record, values, writes, done

    def _ids_from(self, latest: str) -> Iterator[str]:
        """`latest`, then the thread's other checkpoint ids newest first (listed only when
        the walk goes past the first)."""
        yield latest
        listing = getattr(self.saver, "history_ids", None)  # (a duck-typed saver may lack it)
        if listing is not None:
            ids = listing(self.thread_id)
        else:
            ids = [record.checkpoint_id for record in self.saver.history(self.thread_id)]
        yield from ids[ids.index(latest) + 1 :] if latest in ids else ids

    def _restored(
        self, record: Any, values: dict[str, Any], latest: bool, lineages: Any, writes: Any = None
    ) -> Restored:
        """`record` restored with `values`; `writes`: its pending writes, if read already."""
        for name, spec in self.spec.fields.items():
            if spec.transient is not None:  # never saved: rebuilt fresh
                values[name] = spec.transient()
        head = (record.checkpoint_id, record.step, record.source, record.created_at,
                record.parent_id, values, record.payload["next"])  # fmt: skip
        tasks = record.payload.get("tasks", [])
        parents = record.payload.get("parents", _NONE)  # (a subgraph's checkpoint's)
        if writes is not None and not writes:  # (the history's: nothing pending here)
            return Restored(*head, tasks=tasks, latest=latest, lineages=lineages, parents=parents)
        if writes is None:
            writes = self.saver.pending_writes(self.thread_id, record.checkpoint_id)
        saved, errors, asked, moved = _entries(writes)
        done = {k: v for k, v in saved.items() if "writes" in v}
        # a step that stopped part-way resumes with what its finished tasks wrote (a copy:
        # a resume takes them out one by one); a replay of a past checkpoint runs them again
        finished = dict(done) if latest else {}
        paused = {
            k: {**v, "interrupts": [asked_interrupt(i) for i in v["interrupts"]]}
            for k, v in saved.items()
            if "interrupts" in v
        }
        updates = [v for v in saved.values() if "update" in v]
        base = {k: isolate(v) for k, v in values.items()} if updates else None
        for update in updates:  # what a resuming Command wrote while this checkpoint was head
            writes = [(START, key, value) for key, value in update["update"]]
            apply_step(self.spec.fields, values, writes, record.step)
        return Restored(
            *head,
            finished,
            paused,
            tasks,
            latest,
            lineages,
            updates=updates,
            done=done,
            errors=errors,
            asked=asked,
            moved=moved,
            parents=parents,
            base=base,
        )


def _entries(writes: list[Any]) -> tuple[dict, dict[str, str], dict[str, list], dict[str, str]]:
    """A checkpoint's pending writes by task: each task's latest entry, the errors failed
    tasks raised (kept apart: a resume's success does not hide them), what paused tasks
    asked, and the task ids a resuming goto changed (their entries read under the new ids)."""
    saved: dict[str, dict[str, Any]] = {}
    errors: dict[str, str] = {}
    asked: dict[str, list[Interrupt]] = {}
    moved: dict[str, str] = {}
    for write in writes:
        if "error" in write.payload:
            errors[write.task_id] = write.payload["error"]
            continue
        if "interrupts" in write.payload and "call" not in write.payload:  # what was
            # asked, for the snapshot's tasks (a `@task` call's: its caller's task shows it)
            asked[write.task_id] = [asked_interrupt(i) for i in write.payload["interrupts"]]
        renames = write.payload.get("moved", {})
        moved.update(renames)
        for entries in (saved, asked, errors):  # all at once: a new id may be another's old
            taken = {new: entries.pop(old) for old, new in renames.items() if old in entries}
            entries.update(taken)
        saved[write.task_id] = write.payload  # a task's latest entry wins
    return saved, errors, asked, moved


def _state_size(values: dict[str, Any]) -> int:
    size = 0
    for value in values.values():
        kind = type(value)
        size += 1 if kind in _ONES else len(value) if kind in _SIZED else _size(value)
    return size


def _pinned_fields(spec: GraphSpec) -> frozenset[str]:
    """Fields whose reducer another process may not be able to call (a lambda, the user's
    own function or registered name): checkpoints keep their values after each step."""
    return frozenset(
        name
        for name, field in spec.fields.items()
        if field.reducer is not None and not callable_anywhere(field.reducer)
    )


def _kept_values(run: Any, log: Any, skip: frozenset[str] | set[str]) -> dict[str, Any]:
    """The values after this step of the pinned fields it wrote, as plain data: each as
    what it added to the value before when it only grew (so an append-like field costs
    what was appended), else whole."""
    thread, spec = run.thread, run.spec
    if spec.semantics == "branches":
        return {}
    if log.resets:  # the values before are the reset's; other fields' are unknown now
        thread.kept = {k: kept_copy(v) for k, v in log.resets[-1].values.items()}
    kept: dict[str, Any] = {}
    for name in log.written:
        if name not in thread.pinned or name in skip or name not in run.values:
            continue
        after = run.values[name]
        grown = growth(thread.kept.get(name, MISSING), after)
        kept[name] = pinned_data(grown if grown is not None else isolate(after))
        thread.kept[name] = kept_copy(after)
    for name in log.cleared:
        thread.kept.pop(name, None)
    return kept


def without(skip: frozenset[str]) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """A state minus the fields in `skip` (transient ones: never checkpointed)."""
    return lambda values: {k: v for k, v in values.items() if k not in skip}


def transient_fields(spec: GraphSpec) -> frozenset[str]:
    """Fields marked `Transient`: never written to a checkpoint."""
    return spec.transient


def task_data(task: Task, skip: frozenset[str] = frozenset()) -> dict[str, Any]:
    """A task as plain data a checkpoint can hold (writes to `skip` fields left out)."""
    data: dict[str, Any] = {
        "id": task.id,
        "node": task.node,
        "kind": task.kind,
        "triggers": list(task.triggers),
        "writes": [list(w) for w in task.writes if w[0] not in skip]
        if skip
        else list(map(list, task.writes)),
        "routes": list(task.routes),
        "started": task.started,
        "ended": task.ended,
    }
    if task.kind == "call":  # a `@task` call: what it was called with, `[args, kwargs]`
        data["arg"] = list(getattr(task.arg, "input", task.arg))
    elif task.arg is not MISSING:
        data["arg"] = task.arg
    if task.dropped:
        data["dropped"] = [list(d) for d in task.dropped]
    if task.parent:
        data["parent"] = task.parent
    if task.attempts or task.from_cache:
        data.update(attempts_data(task))  # a retried task's failed attempts, a cached task
    return data


def _control_of(run: Any) -> dict[str, Any]:
    """What runs after the step just committed, as plain data a checkpoint can hold (only
    `pull` always; the other parts when they hold something)."""
    queued = run.schedule
    control: dict[str, Any] = {"pull": {name: list(t) for name, t in queued.pull.items()}}
    if queued.push:
        control["push"] = [[sender, send.node, send.arg] for sender, send in queued.push]
    if any(queued.seen):
        control["seen"] = [sorted(seen) for seen in queued.seen]
    if queued.deferred:
        control["deferred"] = {name: list(t) for name, t in queued.deferred.items()}
    if queued.incoming:
        control["incoming"] = {
            name: [list(pair) for pair in states] for name, states in queued.incoming.items()
        }
    return control
