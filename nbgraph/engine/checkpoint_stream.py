"""`stream_mode="checkpoints"`: each checkpoint a run saves, as LangGraph streams it.

A chunk is the shape of `get_state()` as a dict (`config`, `parent_config`, `values`,
`metadata`, `next`, `tasks`), read back from the thread through the one snapshot builder
(`engine.persistence.snapshots`).

Only a run with a checkpointer streams checkpoints, as in LangGraph. Under
`durability="exit"` nothing is saved while the run goes, so no checkpoint is streamed
(LangGraph streams each one as it goes).
"""

from __future__ import annotations

from typing import Any

from nbgraph.engine.nested.states import with_subgraph_states
from nbgraph.engine.persistence.snapshots import state_snapshot

__all__ = ["CheckpointStream"]


class CheckpointStream:
    """The checkpoints a run's thread has saved since the last ones streamed."""

    def __init__(self, run: Any, resumed: bool = False) -> None:
        self.run = run
        thread = run.thread
        latest = None if thread is None else thread.saver.get(thread.thread_id)
        self.last: str | None = None if latest is None else latest.checkpoint_id
        start = None if thread is None else thread.start_id or self.last
        self.before = {self.last, start} - {None}
        """Checkpoints the thread had before the run (where walking back stops)."""
        self.again = start if resumed else None
        """A resumed run streams the checkpoint it resumes from first, as LangGraph does."""

    def chunks(self) -> list[dict[str, Any]]:
        """The new checkpoints, oldest first, each as LangGraph's chunk."""
        thread = self.run.thread
        new = [] if self.again is None else [self.again]
        self.again = None
        if thread is not None and thread.head is not None and thread.head != self.last:
            found = []
            checkpoint_id: str | None = thread.head
            while checkpoint_id is not None and checkpoint_id not in self.before:
                record = thread.saver.get(thread.thread_id, checkpoint_id)
                if record is None:  # (not saved while the run goes: durability="exit")
                    break
                found.append(checkpoint_id)
                checkpoint_id = record.parent_id
            self.last = thread.head
            self.before.add(thread.head)
            new += reversed(found)
        return [self._chunk(checkpoint_id) for checkpoint_id in new]

    def _chunk(self, checkpoint_id: str) -> dict[str, Any]:
        thread = self.run.thread
        restored = thread.restore(checkpoint_id, latest_id=thread.head)
        snapshot = with_subgraph_states(
            thread, state_snapshot(thread.spec, thread, restored), False
        )
        return {
            "config": snapshot.config,
            "parent_config": snapshot.parent_config,
            "values": snapshot.values,
            "metadata": snapshot.metadata,
            "next": list(snapshot.next),
            "tasks": [_task(task) for task in snapshot.tasks],
        }


def _task(task: Any) -> dict[str, Any]:
    """A task that runs from the checkpoint, as a checkpoint chunk lists it when it is
    saved (before the task runs: no result yet): with its error, or its interrupts."""
    shown: dict[str, Any] = {"id": task.id, "name": task.name}
    if task.error:
        return {**shown, "error": task.error, "state": task.state}
    interrupts = tuple(_interrupt(i) for i in task.interrupts)
    return {**shown, "interrupts": interrupts, "state": task.state}


def _interrupt(interrupt: Any) -> Any:
    """An interrupt as LangGraph 1.2's chunk shows it (its `response_schema` too)."""
    return {
        "value": interrupt.value,
        "id": interrupt.id,
        "response_schema": getattr(interrupt, "response_schema", None),
    }
