"""Time travel and stateful subgraphs: which of a subgraph's checkpoints a replay starts from.

A run of a checkpointed graph that picks its thread up at a checkpoint its config names (a
replay, or a fork `update_state` made: `invoke(None, config)`, or a `Command` that answers
no interrupt) travels back in time. A
subgraph that keeps its state across its parent's runs (`compile(checkpointer=True)`) then
starts, the first time it runs in that run, from its state as it was when the parent's
checkpoint was made — not from its latest state, which a later run of the parent grew — as
LangGraph does. Its later runs in the same parent run (a loop) start from its latest state,
the one this run made.

The point in time is the named checkpoint's (a fork's: the checkpoint it forked from, made
before the subgraph's checkpoints of the runs it replays); a subgraph's checkpoint belongs
to it if made before it (`created_at`, which `Thread.save` keeps strictly increasing).
"""

from __future__ import annotations

import time
from typing import Any

__all__ = ["Replay", "now", "replay_of"]

_last = 0.0


def now() -> float:
    """`time.time()`, strictly increasing in this process (a checkpoint's `created_at`:
    two checkpoints are never made at the same instant, so "made before" is exact)."""
    global _last
    stamp = time.time()
    if stamp <= _last:
        stamp = _last + 1e-6
    _last = stamp
    return stamp


class Replay:
    """A parent run that travels back to `bound` (a checkpoint's `created_at`).

    Attributes:
        bound: the time the subgraphs go back to.
        visited: the subgraph namespaces that have started from their past state already.
    """

    __slots__ = ("bound", "visited")

    def __init__(self, bound: float) -> None:
        self.bound = bound
        self.visited: set[str] = set()

    def first_visit(self, ns: str) -> bool:
        """Whether the subgraph of namespace `ns` runs for the first time in this run."""
        if ns in self.visited:
            return False
        self.visited.add(ns)
        return True

    def checkpoint_before(self, saver: Any, key: str) -> str | None:
        """The id of the newest checkpoint of stored thread `key` made before `bound`
        (None: it had none then)."""
        for record in saver.history(key):
            if record.created_at < self.bound:
                return record.checkpoint_id
        return None


def replay_of(thread: Any, restored: Any) -> Replay | None:
    """The time travel a run on `thread` makes, picking it up at `restored` (None: it
    does not travel: it names no checkpoint, or starts from new input, or answers an
    interrupt; LangGraph's subgraphs then load their latest state too)."""
    if restored is None or thread.start_id is None:
        return None
    bound = restored.created_at
    if restored.source in ("update", "fork") and restored.parent_id is not None:
        parent = thread.saver.get(thread.thread_id, restored.parent_id)
        if parent is not None:
            bound = parent.created_at
    return Replay(bound)
