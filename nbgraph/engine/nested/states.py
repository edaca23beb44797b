"""A subgraph's thread read from outside a run, through its parent graph, as LangGraph does.

- A config with a `checkpoint_ns` (`{"thread_id": "t", "checkpoint_ns": "node:<task id>"}`,
  as a task's `state` gives it) names a subgraph's thread: `get_state`,
  `get_state_history` and `update_state` of the parent app read and write it with the
  subgraph's own graph (`named_thread`).
- In a snapshot, a task of a subgraph node (one that inherits its parent's checkpointer) has
  as `state` the config of its thread, or with `get_state(config, subgraphs=True)` that
  thread's snapshot, down to any depth (`with_subgraph_states`). So does a paused task of a
  node function that invoked a graph which kept checkpoints (its graph is then the one the
  thread's first checkpoint describes).
"""

from __future__ import annotations

import operator
from typing import Any

from nbgraph.blueprint.subgraphs import subgraph_of
from nbgraph.checkpoint.subthreads import sub_key
from nbgraph.engine.nested.checkpoints import SubThread, join_ns, subgraph_mode, task_ns
from nbgraph.engine.persistence.persist import Thread, thread_id_of
from nbgraph.engine.persistence.snapshots import state_snapshot
from nbgraph.primitives import StateSnapshot

__all__ = ["held_tasks", "named_thread", "with_subgraph_states"]


def _described_spec(saver: Any, key: str) -> Any:
    """The graph a subgraph thread's first checkpoint describes (None: no such thread)."""
    from nbgraph.blueprint.description import graph_from_description  # (rarely needed)

    ids = saver.history_ids(key)
    first = saver.get(key, ids[-1]) if ids else None
    described = first.payload.get("graph") if first is not None else None
    return graph_from_description(described) if described is not None else None


def named_thread(app: Any, config: dict[str, Any], strict: bool) -> SubThread | None:
    """The subgraph thread `config`'s `checkpoint_ns` names (None: no namespace).

    Each part of the namespace (`node:<task id>`, `|`-separated) names a subgraph node one
    level down. An unknown one reads as an empty thread, as in LangGraph, unless `strict`.

    Raises:
        ValueError: `strict`, and a part names no subgraph node.
    """
    configurable = config.get("configurable") or {}
    ns = configurable.get("checkpoint_ns") or ""
    if not ns:
        return None
    root = thread_id_of(config)
    spec, stored = app.spec, ""
    for part in ns.split("|"):
        node, _, task_id = part.partition(":")
        inner = subgraph_of(spec, node)
        if inner is not None:
            spec, stored = inner.spec, task_ns(stored, node, task_id, subgraph_mode(inner))
            continue
        stored = join_ns(stored, part)  # a node function that invoked a graph: as described
        spec = _described_spec(app.checkpointer, sub_key(root, stored))
        if spec is None:
            if strict:
                raise ValueError(
                    f"Subgraph {node} not found: checkpoint_ns {ns!r} names node {node!r}, "
                    "which ran no graph with checkpoints in this thread."
                )
            spec, stored = app.spec, ns  # (read as a thread with no checkpoints)
            break
    thread = SubThread(app.checkpointer, spec, root, stored)
    thread.start_id = configurable.get("checkpoint_id")
    record = thread.saver.get(thread.thread_id, thread.start_id)
    if record is not None:  # (an update made here is made under the same parents)
        thread.parents = dict(record.payload.get("parents", ()))
    return thread


def held_tasks(restored: Any) -> frozenset[str]:
    """The ids of a checkpoint's tasks stopped with no question: a graph run in their node
    stopped at its breakpoint (`engine.nested.subruns`)."""
    return frozenset(k for k, v in restored.paused.items() if not v["interrupts"])


def with_subgraph_states(
    thread: Thread, snapshot: StateSnapshot, deep: bool, held: frozenset[str] = frozenset()
) -> StateSnapshot:
    """`snapshot` with each subgraph task's `state`: the config of its thread, or (`deep`)
    the snapshot of that thread (the config still, if it has no checkpoint yet); `held`:
    the tasks whose graph stopped at a breakpoint (`held_tasks`)."""
    if not snapshot.tasks:
        return snapshot
    tasks = []
    for task in snapshot.tasks:
        app = subgraph_of(thread.spec, task.name)
        asked = task.interrupts or task.id in held
        if app is None and not asked:  # a plain node (the common case)
            tasks.append(task)
            continue
        shown = join_ns(thread.ns, f"{task.name}:{task.id}")  # (with checkpointer=True too)
        mode = subgraph_mode(app) if app is not None else False
        if mode is not False:
            ns, spec = task_ns(thread.ns, task.name, task.id, mode), app.spec
        else:  # a paused node function that invoked a graph, if it kept checkpoints here
            ns, key = shown, sub_key(thread.root_id, shown)
            spec = _described_spec(thread.saver, key) if asked else None
            if spec is None:
                tasks.append(task)
                continue
        state: Any = {"configurable": {"thread_id": thread.root_id, "checkpoint_ns": shown}}
        if deep:
            inner = SubThread(thread.saver, spec, thread.root_id, ns)
            restored = inner.restore()
            if restored is not None:
                inner_snapshot = state_snapshot(spec, inner, restored, current=True)
                state = with_subgraph_states(inner, inner_snapshot, True, held_tasks(restored))
        tasks.append(task._replace(state=state))
    if all(map(operator.is_, tasks, snapshot.tasks)):
        return snapshot
    return snapshot._replace(tasks=tuple(tasks))
