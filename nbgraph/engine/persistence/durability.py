"""Durability modes: when a run's checkpoints reach its saver (LangGraph's `durability=`).

- `"sync"`: each checkpoint and pending write is in the saver before the next step starts.
- `"async"` (the default, as LangGraph's): a saver that writes faster in batches
  (`SqliteSaver`: one transaction for many checkpoints) gets them in batches: at `BATCH`
  writes, or from a writer thread `BATCH_SECONDS` after the first write waiting; others
  are written as in `"sync"`. Everything is in the saver, in the same order and with the
  same content as `"sync"`'s, when the run returns (finished, paused or failed); a killed
  process loses at most the last batches (about `BATCH_SECONDS` of writes; fewer than
  2 * `BATCH`: one being written, one filling). A write the saver refuses fails the run
  with the saver's error, as under `"sync"`; the checkpoints and writes before it are kept,
  none after it.
- `"exit"`: nothing is written while the run goes; when it ends (finished, paused or
  failed) each thread it wrote gets one checkpoint, its last, holding the whole state, with
  that checkpoint's pending writes (a failed task's error, a pause's questions, the tasks
  that finished beside them). A killed process leaves nothing of the run.

A run reads its saver through the `Deferred` it writes to: under `"async"` a read writes
what is waiting first.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from nbgraph.errors import InvalidArgumentError

__all__ = ["BATCH", "BATCH_SECONDS", "Deferred", "deferred", "durability_of", "finish"]

_MODES = ("sync", "async", "exit")
_DEFAULT = "async"
BATCH = 64
"""Under `"async"`, the most writes a batch holds (a killed process loses at most these)."""
BATCH_SECONDS = 0.005
"""Under `"async"`, about the longest a write waits for its batch (a slow node's step too)."""


def durability_of(kwargs: dict[str, Any]) -> str:
    """The run's durability mode, popped from `invoke`'s keyword arguments (`None` or
    absent: `_DEFAULT`).

    Raises:
        InvalidArgumentError: not one of `_MODES`.
    """
    mode = kwargs.pop("durability", None)
    if mode is None:
        return _DEFAULT
    if mode not in _MODES:
        raise InvalidArgumentError(
            f"durability must be one of {list(_MODES)} (or None for {_DEFAULT!r}), got {mode!r}."
        )
    return mode


def deferred(saver: Any, mode: str) -> Any:
    """What a run writes its checkpoints to: `saver` itself under `"sync"` (and under
    `"async"` for a saver that does not batch), else a `Deferred` on it."""
    if mode == "sync" or (mode == "async" and not getattr(saver, "batches", False)):
        return saver
    return Deferred(saver, mode)


class Deferred:
    """A saver seen through a run's durability mode: its writes held back and written in
    batches (`"async"`) or once at the end (`"exit"`); any other attribute is the saver's own
    (read after what waits is written, under `"async"`).

    Attributes:
        saver: the saver written to.
        mode: `"async"` or `"exit"`; `"sync"` once `finish` ran (later writes go straight
            to the saver: a node still running after Ctrl-C).
    """

    def __init__(self, saver: Any, mode: str) -> None:
        self.saver, self.mode = saver, mode
        self.ops: list[tuple[str, tuple]] = []  # ("put", (record,)) / ("write", (args...))
        self.since = 0.0  # when the first of `ops` came
        self.finals: dict[str, tuple[Any, Any]] = {}  # exit: thread key -> (its Thread, last)
        self.bases: dict[str, tuple[str | None, Any]] = {}  # exit: key -> (parent, graph)
        self._lock, self._writing = threading.Lock(), threading.Lock()
        self._wake = threading.Event()
        self._writer: threading.Thread | None = None
        self._failed: BaseException | None = None  # what the writer thread's batch raised

    def __getattr__(self, name: str) -> Any:
        if self.mode == "async":
            self.flush()  # (also waits for a batch the writer thread is writing)
        return getattr(self.saver, name)

    def __repr__(self) -> str:
        return repr(self.saver)

    def put(self, record: Any, thread: Any = None) -> None:
        """Hold a checkpoint back (under `"exit"`: it replaces its thread's last one)."""
        if self.mode == "sync":
            self.saver.put(record)
        elif self.mode == "exit":
            graph = record.payload.get("graph") if isinstance(record.payload, dict) else None
            self.bases.setdefault(record.thread_id, (record.parent_id, graph))
            self.finals[record.thread_id] = (thread, record)
            with self._lock:  # (the thread's writes held so far are against older ones)
                self.ops = [op for op in self.ops if op[1][0] != record.thread_id]
        else:
            self._hold("put", (record,))

    def put_write(self, thread_id: str, checkpoint_id: str, task_id: str, payload: Any) -> None:
        if self.mode == "sync":
            self.saver.put_write(thread_id, checkpoint_id, task_id, payload)
        else:
            self._hold("write", (thread_id, checkpoint_id, task_id, payload))

    def pending_writes(self, thread_id: str, checkpoint_id: str) -> list[Any]:
        """The saver's pending writes of a checkpoint (under `"exit"`, with the ones held)."""
        if self.mode == "async":
            self.flush()
        saved = self.saver.pending_writes(thread_id, checkpoint_id)
        if self.mode != "exit":
            return saved
        from nbgraph.checkpoint.base import PendingWrite  # (the saver's type)

        held = [args for kind, args in self.ops if args[:2] == (thread_id, checkpoint_id)]
        seq = len(saved)
        return saved + [PendingWrite(a[2], seq + i, a[3]) for i, a in enumerate(held, 1)]

    def _hold(self, kind: str, args: tuple) -> None:
        if self._failed is not None:
            raise self._failed
        with self._lock:
            ops = self.ops
            ops.append((kind, args))
            waiting = len(ops)
            if waiting == 1:
                self.since = time.monotonic()
        if self.mode != "async":
            return
        if waiting >= BATCH or time.monotonic() - self.since >= BATCH_SECONDS:
            self.flush()  # (in the run's thread: no handing the GIL to the writer thread)
        elif waiting == 1:
            if self._writer is None:
                self._writer = threading.Thread(target=self._write_late, daemon=True,
                                                name="nbgraph-checkpoints")  # fmt: skip
                self._writer.start()
            self._wake.set()

    def _write_late(self) -> None:
        """The writer thread: writes a batch the run has not written `BATCH_SECONDS` after
        its first write (a slow node runs)."""
        while self.mode == "async":
            self._wake.wait()
            self._wake.clear()
            time.sleep(BATCH_SECONDS)
            if not self.ops or time.monotonic() - self.since < BATCH_SECONDS:
                continue  # (written meanwhile; a newer batch wakes this again)
            try:
                self.flush()
            except BaseException:  # (kept in `_failed`: raised in the run's thread, at its
                return  # next write or when it ends)

    def flush(self) -> None:
        """Write what waits, in order, in one batch (one transaction for `SqliteSaver`).

        A batch the saver refuses part of (a value it cannot save) keeps what came before
        the refused write (`SqliteSaver.put_batch`); its error is raised, here and at every
        later write, and nothing held after it is written (it would hang from a checkpoint
        that is not there).
        """
        with self._writing:
            with self._lock:
                ops, self.ops = self.ops, []
            if ops and self._failed is None:
                try:
                    _write_batch(self.saver, ops)
                except BaseException as error:
                    self._failed = error
                    raise

    def finish(self) -> None:
        """The run ended: write what waits (under `"exit"`: each thread's last checkpoint,
        whole, and its pending writes), and write straight through from now on."""
        if self.mode == "exit":
            self.ops = self._exit_ops()
        self.mode = "sync"
        self._wake.set()  # (the writer thread ends)
        failed = self._failed
        self.flush()
        if failed is not None:
            raise failed

    def step_failed(
        self, thread_id: str, pulled: dict[str, list[str]], pushed: list | None
    ) -> bool:
        """Under "exit": the thread's last checkpoint has `pulled` to run next, and its own
        Sends (or `pushed`, new Sends), and keeps the held writes of the tasks that are due
        again, renumbered to their place in that step (`_due_again`); False if the run saved
        no checkpoint on that thread (`Thread.step_failed`)."""
        if thread_id not in self.finals:
            return False
        thread, record = self.finals[thread_id]
        control, renumbered = _due_again(record.payload["next"], pulled, pushed)
        payload = {**record.payload, "next": control}
        self.finals[thread_id] = (thread, record._replace(payload=payload))
        with self._lock:
            mine = [renumbered(op) for op in self.ops if op[1][0] == thread_id]
            self.ops = [op for op in self.ops if op[1][0] != thread_id]
            self.ops += [op for op in mine if op[1]]
        return True

    def _exit_ops(self) -> list[tuple[str, tuple]]:
        """Each thread's last checkpoint after the one the run started from, holding the
        whole state, then the writes held against the checkpoints the threads end at."""
        ops: list[tuple[str, tuple]] = []
        lasts = set()
        for key, (thread, record) in self.finals.items():
            parent, graph = self.bases[key]
            payload = record.payload
            if graph is not None and parent is None and "graph" not in payload:
                payload = {**payload, "graph": graph}  # (a thread's first describes its graph)
            snapshot = record.snapshot if record.snapshot is not None else thread.whole()
            ops.append(("put", (record._replace(parent_id=parent, payload=payload,
                                                snapshot=snapshot),)))  # fmt: skip
            lasts.add((key, record.checkpoint_id))
        # (a thread the run saved nothing new on keeps what was written against the checkpoint
        # it started from: a resume's answers and update, when it paused again at once)
        ops += [op for op in self.ops if op[1][:2] in lasts or op[1][0] not in self.finals]
        self.finals, self.bases = {}, {}
        return ops


def _due_again(
    control: dict[str, Any], pulled: dict[str, list[str]], pushed: list | None
) -> tuple[dict[str, Any], Any]:
    """A failed step's `control` (what it ran) made what its checkpoint runs next: `pulled`
    and the deferred nodes still waiting (not those that ran), then its Sends (or
    `pushed`); the pulled nodes the step did not run are only shown (`"shown"`: its
    snapshot lists them, a resume does not run them, as LangGraph's). And a function that
    renumbers a held write of a task due again to its index in that step
    (`step:index:node`; pulled nodes by name, Sends by their place: LangGraph's task ids,
    which find pending writes, do not hang on the other tasks) and empties the others'
    (`(kind, ())`)."""
    deferred = control.get("deferred", {}) if control["pull"] else {}
    due = {**control, "pull": pulled, "deferred": deferred}
    shown = sorted(set(pulled) - set(control["pull"] or control.get("deferred", {})))
    if shown:  # (LangGraph's resume looks only at the nodes the last checkpoint triggered)
        due["shown"] = shown
    if pushed is not None:
        due["push"] = pushed

    def places(queues: dict[str, Any]) -> dict[Any, int]:
        names = sorted(queues["pull"] or queues.get("deferred", {}))
        where: dict[Any, int] = {name: index for index, name in enumerate(names)}
        sends = len(queues.get("push", ()))
        where.update({("send", i): len(names) + i for i in range(sends)})
        return where

    old = {index: key for key, index in places(control).items()}
    new = places(due)

    def renumbered(op: tuple[str, tuple]) -> tuple[str, tuple]:
        thread_id, checkpoint_id, task_id, payload = op[1]
        parts = task_id.split(":", 2)
        if len(parts) != 3 or not parts[1].isdigit():  # (a resuming Command's update)
            return op
        key = old.get(int(parts[1]))
        if new.get(key) is None:
            return op[0], ()
        return op[0], (thread_id, checkpoint_id, f"{parts[0]}:{new[key]}:{parts[2]}", payload)

    return due, renumbered


def _write_batch(saver: Any, ops: list[tuple[str, tuple]]) -> None:
    """Write `ops` (checkpoints and pending writes) in order: in one `put_batch` when the
    saver has one, else one at a time."""
    batch = getattr(saver, "put_batch", None)
    if batch is not None:
        batch(ops)
        return
    for kind, args in ops:
        if kind == "put":
            saver.put(*args)
        else:
            saver.put_write(*args)


def finish(thread: Any) -> None:
    """Write what a run's thread holds back (its `Deferred`'s), now that the run ended."""
    saver = getattr(thread, "saver", None)
    target = getattr(saver, "saver", None)  # (the checked saver's)
    if isinstance(target, Deferred):
        target.finish()
