"""`saver.list()`'s states: a thread's states rebuilt from its deltas, for savers that never
import the engine.

The states are rebuilt with the engine's replay and the graph the thread's first checkpoint
describes; this module registers the rebuild with the savers
(`nbgraph.checkpoint.tuples.rebuild_states_with`)."""

from __future__ import annotations

from typing import Any

from nbgraph.blueprint.description import graph_from_description
from nbgraph.checkpoint.tuples import rebuild_states_with
from nbgraph.engine.persistence.persist import Thread

__all__ = ["ThreadStates"]


class ThreadStates:
    """The thread's states, newest first, rebuilt lazily with the engine's own replay."""

    def __init__(self, saver: Any, thread_id: str) -> None:
        first = saver.history(thread_id)[-1]
        description = first.payload.get("graph") if isinstance(first.payload, dict) else None
        if description is None:
            raise ValueError(
                f"Thread {thread_id!r} does not describe its graph in its first checkpoint, so "
                "its states cannot be rebuilt; read them with app.get_state_history(config)."
            )
        spec = graph_from_description(description)
        self.thread = Thread(saver, spec, {"configurable": {"thread_id": thread_id}})
        self.history = self.thread.history()
        self.seen: dict[str, Any] = {}

    def values_at(self, checkpoint_id: str) -> dict[str, Any]:
        while checkpoint_id not in self.seen:
            restored = next(self.history, None)
            if restored is None:
                return self.thread.restore(checkpoint_id).values
            self.seen[restored.checkpoint_id] = restored.values
        return self.seen.pop(checkpoint_id)


rebuild_states_with(ThreadStates)
