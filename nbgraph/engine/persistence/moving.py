"""A resumed task's new id: the checkpoints of the graphs it ran follow it.

A task id holds the task's place in its step's write order (`step:index:node`), and a
subgraph's checkpoints are kept under its task's id (`node:<task id>`, see
`engine.nested.checkpoints`). When a resuming `Command(goto=...)` adds a node that sorts
before a paused task, the task's id changes; its subgraphs' threads are copied to the new
id's namespaces so the subgraph resumes where it paused (LangGraph's task ids do not hang on
the order, so its subgraph namespaces never move).
"""

from __future__ import annotations

from typing import Any

from nbgraph.checkpoint.subthreads import split_key, sub_key
from nbgraph.engine.persistence.durability import Deferred

__all__ = ["copy_task_threads"]


def copy_task_threads(saver: Any, root_id: str, outer_ns: str, moved: dict[str, str]) -> None:
    """Copy the threads of the graphs each task in `moved` (`{old id: new id}`) ran, any
    depth, from the old id's namespaces to the new id's (same checkpoints, same ids).

    Args:
        saver: the run's saver (a `Deferred` is flushed, and the copy goes to its saver).
        root_id: the run's thread id (a config's `thread_id`).
        outer_ns: the run's own namespace (`""` at the root).
        moved: the tasks whose ids changed.
    """
    if isinstance(saver, Deferred):
        saver.flush()
        saver = saver.saver
    prefix = f"{outer_ns}|" if outer_ns else ""
    renames = {}
    for old, new in moved.items():
        node = old.split(":", 2)[2]
        renames[f"{prefix}{node}:{old}"] = f"{prefix}{node}:{new}"
    for key in list(saver.threads()):
        root, ns = split_key(key)
        if root != root_id:
            continue
        for old_ns, new_ns in renames.items():
            if ns == old_ns or ns.startswith(old_ns + "|"):
                _copy_thread(saver, key, sub_key(root_id, new_ns + ns[len(old_ns) :]))


def _copy_thread(saver: Any, source: str, target: str) -> None:
    """Every checkpoint of thread `source` and its pending writes, oldest first, into
    `target` (left as it is when it has checkpoints already)."""
    if saver.get(target) is not None:
        return
    for record in reversed(saver.history(source)):
        saver.put(record._replace(thread_id=target))
        for write in saver.pending_writes(source, record.checkpoint_id):
            saver.put_write(target, record.checkpoint_id, write.task_id, write.payload)
