"""A saver's checkpoints as LangGraph's `CheckpointTuple`s: `saver.list(config, ...)`.

nbgraph keeps a checkpoint as the delta of its step; a tuple's `checkpoint["channel_values"]`
is the thread's state at that checkpoint, rebuilt from those deltas with the graph its
first checkpoint describes (so no compiled graph is needed, in any process).
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import UTC, datetime
from typing import Any, NamedTuple

from nbgraph.checkpoint.subthreads import split_key, sub_key, with_sub_keys
from nbgraph.errors import InvalidArgumentError
from nbgraph.primitives import Interrupt

__all__ = ["CheckpointTuple", "checkpoint_tuple", "list_checkpoints", "rebuild_states_with"]


class CheckpointTuple(NamedTuple):
    """One checkpoint as LangGraph's savers list it.

    Attributes:
        config: `{"configurable": {"thread_id", "checkpoint_ns": "", "checkpoint_id"}}`.
        checkpoint: `{"id", "ts" (ISO time), "channel_values" (the state there; at an input
            checkpoint with the input under `"__start__"`, as LangGraph's; a thread's first
            has only that), "updated_channels" (the fields its step wrote)}`. Unlike
            LangGraph's, a field no step wrote yet shows its empty value, and there are
            no `channel_versions`/`versions_seen` (nbgraph does not version fields).
        metadata: `{"source", "step", "parents": {}}`, as `StateSnapshot.metadata`.
        parent_config: the config of the checkpoint it follows, None for a thread's first.
        pending_writes: `(task_id, field, value)` of the tasks that ran from it (those of
            the step that followed, and any kept for a step that did not end: a failed
            task's error as `"__error__"`, a paused one's questions as `"__interrupt__"`).
    """

    config: dict[str, Any]
    checkpoint: dict[str, Any]
    metadata: dict[str, Any]
    parent_config: dict[str, Any] | None = None
    pending_writes: list[tuple[str, str, Any]] | None = None


def list_checkpoints(
    saver: Any,
    config: Mapping[str, Any] | None,
    *,
    filter: Mapping[str, Any] | None = None,
    before: Mapping[str, Any] | None = None,
    limit: int | None = None,
) -> Iterator[CheckpointTuple]:
    """The checkpoints of `config`'s thread (every thread's if `config` is None), newest
    first, as LangGraph's `saver.list(...)`: with no `checkpoint_ns` in `config`, those of
    its subgraphs too (the thread's first, then each subgraph thread's, in the order they
    began); only `config`'s `checkpoint_id` if it has one,
    only those older than `before`'s checkpoint, only those whose metadata has every item
    of `filter`, at most `limit`."""
    if limit is not None and (type(limit) is not int or limit < 0):
        raise ValueError(f"limit must be None or an int >= 0; got {limit!r}.")
    for name, given in (("config", config), ("filter", filter), ("before", before)):
        inner = (
            given.get("configurable") if isinstance(given, Mapping) and name != "filter" else None
        )
        if given is not None and (
            not isinstance(given, Mapping) or (inner is not None and not isinstance(inner, Mapping))
        ):
            raise InvalidArgumentError(
                f"saver.list({name}=): expected a dict like "
                f"{{'configurable': {{'thread_id': '1'}}}} or None, got {type(given).__name__} "
                f"{str(given)[:40]!r}."
            )
    configurable = dict((config or {}).get("configurable") or {})
    ns = configurable.get("checkpoint_ns")
    thread_id = configurable.get("thread_id")
    if thread_id is None:  # every thread, subgraphs' too, each shown with its checkpoint_ns
        threads = saver.threads()
    elif ns is None:  # the thread and its subgraphs' threads (LangGraph's: every namespace)
        threads = with_sub_keys(saver.threads(), str(thread_id))
    else:
        threads = [sub_key(str(thread_id), ns)]
    wanted = configurable.get("checkpoint_id")
    before_id = ((before or {}).get("configurable") or {}).get("checkpoint_id")
    count = 0
    listed = [_thread_tuples(saver, thread, wanted, before_id) for thread in threads]
    if getattr(saver, "lists_by_time", False) and len(listed) > 1:  # (LangGraph's SQLite
        items: Iterable[CheckpointTuple] = heapq.merge(*listed, key=_made, reverse=True)
    else:  # saver: newest first across threads; its memory saver: thread by thread)
        items = itertools.chain.from_iterable(listed)
    for item in items:
        if filter and any(item.metadata.get(k, _NONE) != v for k, v in filter.items()):
            continue
        if limit is not None and count >= limit:
            return
        count += 1
        yield item


def _made(item: CheckpointTuple) -> str:
    return item.checkpoint["ts"]  # (ISO times in UTC: they sort as the times do)


_NONE = object()


def checkpoint_tuple(saver: Any, config: Mapping[str, Any]) -> CheckpointTuple | None:
    """LangGraph's `saver.get_tuple(config)`: the checkpoint `config` names, or its thread's
    latest (of its `checkpoint_ns`, `""` if it names none), or None."""
    configurable = dict((config or {}).get("configurable") or {})
    configurable.setdefault("checkpoint_ns", "")
    return next(list_checkpoints(saver, {"configurable": configurable}, limit=1), None)


def _thread_tuples(
    saver: Any, thread_id: str, wanted: str | None, before_id: str | None
) -> Iterator[CheckpointTuple]:
    records = saver.history(thread_id)
    steps: dict[str, Any] = {}  # checkpoint id -> the step that ran from it (its child)
    for record in reversed(records):
        if record.source == "loop" and record.parent_id is not None:
            steps.setdefault(record.parent_id, record)
    if before_id is not None:
        ids = [record.checkpoint_id for record in records]
        if before_id in ids:
            records = records[ids.index(before_id) + 1 :]
        else:
            records = [r for r in records if r.checkpoint_id < before_id]
    if wanted is not None:
        records = [r for r in records if r.checkpoint_id == wanted]
    if not records:
        return
    states = _states(saver, thread_id)
    for record in records:
        step = steps.get(record.checkpoint_id)
        yield _checkpoint_tuple(saver, record, states.values_at(record.checkpoint_id), step)


_REBUILDERS: list[Callable[[Any, str], Any]] = []


def rebuild_states_with(rebuild: Callable[[Any, str], Any]) -> None:
    """Name what rebuilds a thread's states for `saver.list()`: `rebuild(saver, thread_id)`
    returns an object whose `values_at(checkpoint_id)` is the state there, newest first.

    The savers store deltas and know nothing of the engine that replays them; the engine
    (`nbgraph.engine.persistence.listing`) registers its replay here when it is imported.
    """
    _REBUILDERS[:] = [rebuild]


def _states(saver: Any, thread_id: str) -> Any:
    if not _REBUILDERS:  # (import nbgraph registers it: the engine loads with the package)
        raise RuntimeError("saver.list() rebuilds states with nbgraph's engine: import nbgraph")
    return _REBUILDERS[0](saver, thread_id)


def _checkpoint_tuple(
    saver: Any, record: Any, values: dict[str, Any], step: Any = None
) -> CheckpointTuple:
    """A `CheckpointRecord` (and the state at it) as LangGraph's `CheckpointTuple`; `step`
    is the checkpoint made by the step that ran from it, if any: its tasks' writes are the
    pending writes LangGraph keeps against this one."""
    payload = record.payload if isinstance(record.payload, dict) else {}
    channel_values = dict(values) if record.parent_id is not None else {}
    updated = sorted({w[0] for task in payload.get("tasks", ()) for w in task.get("writes", ())})
    done = step.payload.get("tasks", ()) if step is not None else ()
    writes = [(task["id"], w[0], w[1]) for task in done for w in task.get("writes", ())]
    ran = {task["id"] for task in done}
    kept = saver.pending_writes(record.thread_id, record.checkpoint_id)
    writes += _pending_tuples([w for w in kept if w.task_id not in ran])
    if record.source == "input":  # the input waits in __start__ for the START task
        given = [tuple(w) for w in (payload.get("next") or {}).get("input") or ()]
        channel_values["__start__"] = dict(given)
        updated = ["__start__"]
    checkpoint = {
        "id": record.checkpoint_id,
        "ts": datetime.fromtimestamp(record.created_at, tz=UTC).isoformat(),
        "channel_values": channel_values,
        "updated_channels": updated,
    }
    metadata = {"source": record.source, "step": record.step, "parents": {}}
    parent = None if record.parent_id is None else _config(record.thread_id, record.parent_id)
    return CheckpointTuple(
        _config(record.thread_id, record.checkpoint_id), checkpoint, metadata, parent, writes
    )


def _pending_tuples(pending: list[Any]) -> list[tuple[str, str, Any]]:
    """The engine's pending writes as LangGraph's `(task_id, channel, value)` triples."""
    out: list[tuple[str, str, Any]] = []
    for write in pending:
        payload = write.payload if isinstance(write.payload, dict) else {}
        if "error" in payload:
            out.append((write.task_id, "__error__", payload["error"]))
        elif "interrupts" in payload:
            asked = [asked_interrupt(i) for i in payload["interrupts"]]
            out.append((write.task_id, "__interrupt__", asked))
        for field, value in payload.get("writes") or payload.get("update") or ():
            out.append((write.task_id, field, value))
    return out


def _config(key: str, checkpoint_id: str) -> dict[str, Any]:
    thread_id, ns = split_key(key)
    return {
        "configurable": {
            "thread_id": thread_id,
            "checkpoint_ns": ns,
            "checkpoint_id": checkpoint_id,
        }
    }


def asked_entry(interrupt: Interrupt) -> dict[str, Any]:
    """A question as a saver keeps it among a task's pending writes (its answer's schema
    only when it has one)."""
    entry = {"value": interrupt.value, "id": interrupt.id}
    if interrupt.response_schema is not None:
        entry["response_schema"] = interrupt.response_schema
    return entry


def asked_interrupt(entry: Mapping[str, Any]) -> Interrupt:
    """The `Interrupt` of a question `asked_entry` kept."""
    return Interrupt(
        entry.get("value"), entry.get("id", ""), response_schema=entry.get("response_schema")
    )
