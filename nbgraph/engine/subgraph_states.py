"""A subgraph's thread read from outside a run, through its parent graph, as LangGraph does.

- A config with a `checkpoint_ns` (`{"thread_id": "t", "checkpoint_ns": "node:<task id>"}`,
  as a task's `state` gives it) names a subgraph's thread: `get_state`,
  `get_state_history` and `update_state` of the parent app read and write it with the
  subgraph's own graph (`named_thread`).
- In a snapshot, a task of a subgraph node (one that inherits its parent's checkpointer) has
  as `state` the config of its thread, or with `get_state(config, subgraphs=True)` that
  thread's snapshot, down to any depth (`with_subgraph_states`).
"""

from __future__ import annotations

from typing import Any

from nbgraph.engine.persist import Thread, thread_id_of
from nbgraph.engine.snapshots import state_snapshot
from nbgraph.engine.subgraph_checkpoints import SubThread, join_ns, ns_part
from nbgraph.graph.subgraphs import is_compiled_graph
from nbgraph.types import StateSnapshot


def subgraph_of(spec: Any, node: str) -> Any:
    """The compiled graph added as `node` of `spec` (None: not a subgraph node)."""
    found = spec.nodes.get(node)
    app = getattr(found.fn, "app", None) if found is not None else None
    return app if is_compiled_graph(app) else None


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
    graph, stored = app, ""
    for part in ns.split("|"):
        node, _, task_id = part.partition(":")
        inner = subgraph_of(graph.spec, node)
        if inner is None:
            if strict:
                raise ValueError(
                    f"Subgraph {node} not found: checkpoint_ns {ns!r} names node {node!r}, "
                    "which is not a compiled graph added to this graph's nodes "
                    f"({list(graph.spec.nodes)})."
                )
            graph, stored = app, ns  # (read as a thread with no checkpoints)
            break
        graph, stored = inner, join_ns(stored, ns_part(node, task_id, inner.checkpointer))
    thread = SubThread(app.checkpointer, graph.spec, thread_id_of(config), stored)
    thread.start_id = configurable.get("checkpoint_id")
    return thread


def with_subgraph_states(thread: Thread, snapshot: StateSnapshot, deep: bool) -> StateSnapshot:
    """`snapshot` with each subgraph task's `state`: the config of its thread, or (`deep`)
    the snapshot of that thread (the config still, if it has no checkpoint yet)."""
    if not snapshot.tasks:
        return snapshot
    tasks = []
    for task in snapshot.tasks:
        app = subgraph_of(thread.spec, task.name)
        mode = getattr(app, "checkpointer", False)
        if app is None or not (mode is None or mode is True):
            tasks.append(task)
            continue
        shown = join_ns(thread.ns, f"{task.name}:{task.id}")  # (with checkpointer=True too)
        state: Any = {"configurable": {"thread_id": thread.root_id, "checkpoint_ns": shown}}
        if deep:
            ns = join_ns(thread.ns, ns_part(task.name, task.id, mode))
            inner = SubThread(thread.saver, app.spec, thread.root_id, ns)
            restored = inner.restore()
            if restored is not None:
                inner_snapshot = state_snapshot(app.spec, inner, restored, current=True)
                state = with_subgraph_states(inner, inner_snapshot, True)
        tasks.append(task._replace(state=state))
    return snapshot._replace(tasks=tuple(tasks))
