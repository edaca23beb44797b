"""What the engine's checkpoints look like, checked as they are read back from a saver.

A saver stores whatever it is given; the engine reads back the deltas it wrote
(`persist.checkpoint_payload`, `task_data`, `control_of`) and the pending writes of
`Thread.save_task`. A file may have been damaged or crafted since, so what is read is checked
here, and anything not shaped as the engine writes it raises `CheckpointFileError` naming
the saver, the thread, the checkpoint and what was expected, before the engine indexes it.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

from nbgraph.codec.shapes import NAMES, STR, ListOf, MapOf, Obj, Pair
from nbgraph.engine.core.retrying import attempts_problems
from nbgraph.errors import CheckpointFileError, NbgraphError, ReplayLimitError

__all__ = ["checked_saver", "replayed_from_a_file"]

_F = TypeVar("F", bound=Callable[..., Any])

_TASK_ID = re.compile(r"-?\d+:\d+:")
_ARRIVALS = MapOf(ListOf(Pair(NAMES, NAMES)))
_LINEAGE_CONTROL = Obj(
    {"arrivals": _ARRIVALS, "live": NAMES, "later": _ARRIVALS, "sends": NAMES,
     "captured": ListOf(ListOf(Pair(STR, STR))), "ended": ListOf(Pair(STR, STR))},
)  # fmt: skip
"""What a branch checkpoint's `next` says of its lineages (`lineages.checkpoints.control_ids`)."""


def replayed_from_a_file(apply: _F) -> _F:
    """Marks `apply(spec, values, payload, step)`, which replays a checkpoint's writes: an
    error it raises (other than nbgraph's own) means the saved writes no longer fold, and
    becomes a `CheckpointFileError` naming the step."""

    @functools.wraps(apply)
    def replay(spec: Any, values: Any, payload: Any, step: Any) -> Any:
        try:
            return apply(spec, values, payload, step)
        except ReplayLimitError as error:  # (a reducer the file names: name the step)
            raise ReplayLimitError(f"step {step}, {error}") from None
        except NbgraphError:
            raise
        except Exception as error:
            raise CheckpointFileError(
                f"The writes saved for step {step} cannot be applied again "
                f"({type(error).__name__}: {error}): the checkpoint file is damaged, or the "
                "graph's reducers changed since it was written."
            ) from error

    return replay  # type: ignore[return-value]


def checked_saver(saver: Any) -> Any:
    """`saver`, with every checkpoint and pending write it returns checked (idempotent)."""
    return saver if isinstance(saver, _CheckedSaver) else _CheckedSaver(saver)


class _CheckedSaver:
    """Reads through a saver, checking each checkpoint and pending write it returns; any
    other attribute is the saver's own."""

    def __init__(self, saver: Any) -> None:
        self.saver = saver

    def __getattr__(self, name: str) -> Any:
        return getattr(self.saver, name)

    def __repr__(self) -> str:
        return repr(self.saver)

    def get(self, thread_id: str, checkpoint_id: str | None = None) -> Any:
        record = self.saver.get(thread_id, checkpoint_id)
        return None if record is None else _check_checkpoint(record, self.saver)

    def history(self, thread_id: str, *args: Any, **kwargs: Any) -> Any:
        records = self.saver.history(thread_id, *args, **kwargs)
        if isinstance(records, list):
            return _checked(records, self.saver)
        return (_check_checkpoint(record, self.saver) for record in records)

    def history_slice(self, thread_id: str, start: int, stop: int | None = None) -> list[Any]:
        """The saver's `history_slice`, checked (`history(...)[start:stop]` if it has none)."""
        reader = getattr(self.saver, "history_slice", None)
        if reader is None:
            return self.history(thread_id)[start:stop]
        return _checked(reader(thread_id, start, stop), self.saver)

    def shared_slice(self, thread_id: str, start: int, stop: int | None = None) -> list[Any]:
        """`history_slice`'s records, checked, from the saver's `shared_slice` when it has
        one: records decoded and checked once, shared with every later read (never change
        their payloads or snapshots); else fresh ones."""
        reader = getattr(self.saver, "shared_slice", None)
        if reader is None:
            return self.history_slice(thread_id, start, stop)
        saver = self.saver
        return reader(thread_id, start, stop, lambda record: _check_checkpoint(record, saver))

    def pending_writes(self, thread_id: str, checkpoint_id: str) -> list[Any]:
        writes = self.saver.pending_writes(thread_id, checkpoint_id)
        where = f"checkpoint {checkpoint_id!r} of thread {thread_id!r} in {self.saver!r}"
        for write in writes:
            _check_write(write.payload, f"The pending write {write.seq} of task "
                         f"{write.task_id!r} to {where}")  # fmt: skip
        return writes

    def thread_writes(self, thread_id: str) -> dict[str, list[Any]] | None:
        """The saver's pending writes of every checkpoint of a thread, each checked; None if
        the saver cannot read them at once (then `pending_writes`, checkpoint by checkpoint)."""
        reader = getattr(self.saver, "thread_writes", None)
        if reader is None:
            return None
        found = reader(thread_id)
        for checkpoint_id, writes in found.items():
            where = f"checkpoint {checkpoint_id!r} of thread {thread_id!r} in {self.saver!r}"
            for write in writes:
                _check_write(write.payload, f"The pending write {write.seq} of task "
                             f"{write.task_id!r} to {where}")  # fmt: skip
        return found


def _checked(records: Iterable[Any], saver: Any) -> list[Any]:
    """`records` (what a saver returned) in a new list, each checked as `_check_checkpoint`
    checks it (the common case in this loop, without a call a record)."""
    records = list(records)
    for record in records:
        snapshot = record.snapshot
        if not (
            fits_plain_payload(record.payload)
            and (snapshot is None or type(snapshot) is dict)
            and type(record.step) is int
        ):
            _check_checkpoint(record, saver)
    return records


def _check_checkpoint(record: Any, saver: Any = None) -> Any:
    """`record` if its payload and snapshot are shaped as the engine writes them.

    Raises:
        CheckpointFileError: naming the checkpoint, the thread, the saver and the problem.
    """
    snapshot = record.snapshot
    if (
        fits_plain_payload(record.payload)
        and (snapshot is None or type(snapshot) is dict)
        and type(record.step) is int
    ):
        return record  # the common case, checked fast
    where = f"checkpoint {record.checkpoint_id!r} of thread {record.thread_id!r}"
    if saver is not None:
        where += f" in {saver!r}"
    problems = list(_payload_problems(record.payload))
    if record.snapshot is not None and type(record.snapshot) is not dict:
        problems.append(f"its state snapshot should be an object, found {_kind(record.snapshot)}")
    if type(record.step) is not int:
        problems.append(f"its step should be an int, found {record.step!r}")
    if problems:
        raise CheckpointFileError(
            f"The {where} is malformed: {'; '.join(problems[:5])}. It was not written by "
            "nbgraph as it is now (damaged, or edited)."
        )
    return record


def fits_plain_payload(payload: Any) -> bool:
    """Whether `payload` is a loop step's usual delta (`tasks` and `next`, tasks without
    extras), well shaped: a fast yes for most checkpoints; `False` means "look closer"."""
    if type(payload) is not dict or len(payload) != 2:
        return False
    tasks, control = payload.get("tasks"), payload.get("next")
    if type(tasks) is not list or type(control) is not dict or len(control) != 1:
        return False
    pull = control.get("pull")
    if type(pull) is not dict:
        return False
    for waiting in pull.values():
        if type(waiting) is not list:
            return False
    if len(tasks) == 1:  # (a loop's step)
        return _fits_plain_task(tasks[0])
    for task in tasks:  # noqa: SIM110 - a plain loop: faster than all() over a generator
        if not _fits_plain_task(task):
            return False
    return True


_TASK_KEYS = frozenset(("id", "node", "kind", "triggers", "writes", "routes", "started", "ended"))


def _fits_plain_task(task: Any) -> bool:
    if type(task) is not dict or task.keys() != _TASK_KEYS:
        return False
    task_id, triggers, writes = task["id"], task["triggers"], task["writes"]
    started, ended = task["started"], task["ended"]
    if not (
        type(task_id) is str
        and type(task["node"]) is str
        and type(task["kind"]) is str
        and type(triggers) is list
        and type(writes) is list
        and type(task["routes"]) is list
        and type(started) is float
        and type(ended) is float
        and -(2**62) < started < 2**62  # (NaN: not between)
        and -(2**62) < ended < 2**62
        and _TASK_ID.match(task_id) is not None
    ):
        return False
    for name in triggers:
        if type(name) is not str:
            return False
    for write in writes:  # (plain loops: faster than all() over a generator)
        if type(write) is not list or len(write) != 2 or type(write[0]) is not str:
            return False
    return True


def _kind(value: Any) -> str:
    return f"a {type(value).__name__} ({str(value)[:40]!r})"


def _payload_problems(payload: Any) -> Iterator[str]:
    if type(payload) is not dict:
        yield f"its payload should be an object with 'tasks' and 'next', found {_kind(payload)}"
        return
    for key in ("tasks", "next"):
        if key not in payload:
            yield f"its payload has no {key!r} entry"
    tasks = payload.get("tasks", [])
    if type(tasks) is not list:
        yield f"'tasks' should be a list, found {_kind(tasks)}"
    else:
        for index, task in enumerate(tasks):
            for problem in _task_problems(task):
                yield f"task {index}: {problem}"
    if "next" in payload:
        yield from _control_problems(payload["next"])
    yield from _optional_problems(payload)


def _task_problems(task: Any) -> Iterator[str]:
    if type(task) is not dict:
        yield f"should be an object, found {_kind(task)}"
        return
    for key, kind in (("id", str), ("node", str), ("kind", str), ("triggers", list),
                      ("writes", list), ("routes", list)):  # fmt: skip
        if type(task.get(key)) is not kind:
            yield f"{key!r} should be a {kind.__name__}, found {task.get(key)!r}"
    if type(task.get("id")) is str and not _TASK_ID.match(task["id"]):
        yield f"'id' should be 'step:index:node', found {task['id']!r}"
    for key in ("started", "ended"):
        value = task.get(key)
        if type(value) not in (int, float) or not math.isfinite(value) or abs(value) > 2**62:
            yield f"{key!r} should be a time (a number), found {value!r}"
    if type(task.get("triggers")) is list and any(type(t) is not str for t in task["triggers"]):
        yield "'triggers' should hold node names"
    yield from _pairs_problems(task.get("writes"), "writes", 2)
    if type(task.get("writes")) is list and any(
        type(w) in (list, tuple) and len(w) == 2 and type(w[0]) in (list, dict)
        for w in task["writes"]
    ):
        yield "each entry of 'writes' should start with a field name"
    yield from _pairs_problems(task.get("dropped", []), "dropped", 3)
    if type(task.get("parent", "")) is not str:
        yield f"'parent' should be a str, found {task['parent']!r}"
    yield from attempts_problems(task)


def _pairs_problems(entries: Any, key: str, size: int) -> Iterator[str]:
    if type(entries) is not list:
        if key != "writes":  # already said
            yield f"{key!r} should be a list, found {_kind(entries)}"
        return
    if any(type(e) not in (list, tuple) or len(e) != size for e in entries):
        yield f"each entry of {key!r} should be a list of {size}"


def _control_problems(control: Any) -> Iterator[str]:
    if type(control) is not dict or type(control.get("pull")) is not dict:
        yield f"'next' should be an object with a 'pull' object, found {_kind(control)}"
        return
    for key in ("pull", "deferred", "incoming"):
        part = control.get(key, {})
        if type(part) is not dict or any(type(v) is not list for v in part.values()):
            yield f"'next'.{key!r} should map node names to lists"
    push = control.get("push", [])
    if type(push) is not list or any(type(p) is not list or len(p) != 3 for p in push):
        yield "'next'.'push' should be a list of [sender, node, arg]"
    shown = control.get("shown", [])  # (pulled nodes a resume does not run)
    if type(shown) is not list or any(type(name) is not str for name in shown):
        yield "'next'.'shown' should be a list of node names"
    seen = control.get("seen", [])
    if type(seen) is not list or any(
        type(s) is not list or any(type(name) is not str for name in s) for s in seen
    ):
        yield "'next'.'seen' should be a list of lists of node names"
    given = control.get("input", [])  # an input checkpoint's input, to be applied
    if type(given) is not list or any(
        type(w) is not list or len(w) != 2 or type(w[0]) is not str for w in given
    ):
        yield "'next'.'input' should be a list of [field, value]"
    if "lineages" in control:
        yield from _LINEAGE_CONTROL.problems(control["lineages"], "'next'.'lineages'")


def _optional_problems(payload: dict[str, Any]) -> Iterator[str]:
    for key in ("resets", "merged", "cleared", "points", "joins", "heads"):
        if type(payload.get(key, [])) is not list:
            yield f"{key!r} should be a list, found {_kind(payload[key])}"
    for key in ("afters", "graph", "parents"):
        if type(payload.get(key, {})) is not dict:
            yield f"{key!r} should be an object, found {_kind(payload[key])}"
    if type(payload.get("graph")) is dict:
        from nbgraph.blueprint.description import graph_problems  # the run files' graph schema

        yield from graph_problems(payload["graph"], "the graph it describes")
    if payload.get("end") is not None and type(payload["end"]) is not dict:
        yield f"'end' should be an object, found {_kind(payload['end'])}"
    resets = payload.get("resets", [])
    for index, reset in enumerate(resets if type(resets) is list else ()):
        if type(reset) is not dict or type(reset.get("values")) is not dict:
            yield f"reset {index} should be an object with a 'values' object"
    yield from _pairs_problems(payload.get("merged", []), "merged", 3)


def _check_write(payload: Any, where: str) -> None:
    if type(payload) is dict and "interrupts" in payload:
        asked, answers = payload["interrupts"], payload.get("answers", [])
        good = type(asked) is list and type(answers) is list
        good = good and all(type(i) is dict and {"value", "id"} <= set(i) for i in asked)
        expected = "'interrupts' (a list of {'value', 'id'}) and 'answers' (a list)"
    elif type(payload) is dict and "update" in payload:  # a Command(update=) kept for resume
        writes, routes = payload["update"], payload.get("routes", [])
        good = type(writes) is list and type(routes) is list
        good = good and all(
            type(w) in (list, tuple) and len(w) == 2 and type(w[0]) is str for w in writes
        )
        moved = payload.get("moved", {})  # (task ids a resuming goto changed: old -> new)
        good = good and type(moved) is dict and all(type(v) is str for v in moved.values())
        expected = (
            "'update' (a list of [field, value]), 'routes' (a list) and maybe 'moved' "
            "(an object of task ids)"
        )
    else:
        writes = payload.get("writes") if type(payload) is dict else None
        routes = payload.get("routes") if type(payload) is dict else None
        good = type(writes) is list and type(routes) is list
        good = good and all(
            type(w) in (list, tuple) and len(w) == 2 and type(w[0]) is str for w in writes
        )
        expected = "'writes' (a list of [field, value]) and 'routes' (a list)"
    if not good:
        raise CheckpointFileError(
            f"{where} is malformed: expected an object with {expected}, found {_kind(payload)}."
        )
