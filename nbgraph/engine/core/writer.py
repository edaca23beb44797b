"""A task's writer: what `get_stream_writer()` (`engine.node_api`), a node's `writer`
parameter and `runtime.stream_writer` are.

The chunks a node writes are kept on its task (`Task.custom`, for the record) and handed to the
run's live sink when the caller streams `"custom"` (`engine.streaming.streams`).

A task's writer is found through its environment (`engine.core.injection.TaskEnv`, the one
context variable a running task sets: `TaskRunner.execute`), made the first time something
asks for it (most nodes never do).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from nbgraph.engine.core.runtime import current_task_env
from nbgraph.engine.core.tasks import Task

__all__ = [
    "StreamWriter",
    "TaskStream",
    "current_writer",
]

StreamWriter = Callable[[Any], None]
"""The type of `get_stream_writer()`'s writer (and of a node's `writer` parameter)."""


class TaskStream:
    """A task's writer: `get_stream_writer()` inside the task's node returns it.

    Calling it keeps the chunk on the task (`task.custom`) and, when the caller streams
    `"custom"`, sends it at once.
    """

    __slots__ = ("metadata", "relay", "sink", "task")

    def __init__(self, task: Task, sink: Any, relay: Any = None) -> None:
        self.task, self.sink, self.relay = task, sink, relay  # (relay: engine.namespaces)
        self.metadata: dict[str, Any] | None = None  # (messages mode: the node's metadata)

    def __call__(self, chunk: Any) -> None:
        custom = self.task.custom
        if custom:
            custom.append(chunk)
        else:
            self.task.custom = [chunk]
        sink = self.sink
        if sink is not None and sink.custom:
            sink.put("custom", chunk)

    def __repr__(self) -> str:
        return f"<stream writer of {self.task.node!r} at step {self.task.step}>"


def current_writer() -> TaskStream | None:
    """The writer of the task running in this context, or None outside a task.

    A node's `writer` parameter and `runtime.stream_writer` are this writer
    (`nbgraph.engine.core.injection`), so all three forms write to the same stream and record.
    """
    env = current_task_env()
    return None if env is None else env.writer()
