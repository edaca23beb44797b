"""The runs of a LangGraph thread's subgraphs, imported as subruns.

LangGraph keeps a subgraph's checkpoints in its parent's saver and thread, under
`checkpoint_ns = "<node>:<task id>"` (a subgraph of a subgraph: `"a:<id>|b:<id>"`), and a
snapshot's task that runs a subgraph carries that namespace (`PregelTask.state`, a config).
Each such namespace's history is read through the thread's app (`get_state_history` of a
config naming the namespace, and the checkpointer's `list` of it), with the subgraph's own
graph (`get_subgraphs()`) for its fields and reducers, and hung on the task that ran it
(`Task.subruns`), as nbgraph's own record keeps a live subrun; nested to any depth.

Not imported, and said in `run.warnings`: a subgraph compiled with `checkpointer=True` (its
one namespace per node spans every run of the parent) or `checkpointer=False` (no
checkpoints). A graph a node's function runs is imported when LangGraph detects it as the
node's subgraph (`get_subgraphs()`: a compiled graph the function refers to); one it does
not detect (one built inside the function) keeps checkpoints that cannot be read without
its graph: not imported, and said too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["attach_langgraph_subruns"]


def attach_langgraph_subruns(
    log: Any,
    origins: list[tuple[Any, Any]],
    root: Any,
    graph: Any,
    build: Callable[..., Any],
    namespaces: list[str] | None = None,
) -> None:
    """Put on each task of `log` the imported runs of the subgraphs it ran, if any.

    Args:
        log: the imported `RunLog` of one namespace.
        origins: `(task, PregelTask)` for each of its tasks (`step_tasks`' `origins`).
        root: the thread's app (its history and checkpointer read every namespace).
        graph: the graph `log` is a run of (the root, or a subgraph).
        build: `record.langgraph.history.namespace_log`, called as
            `build(subgraph, root, thread, thread_id, origins)`: the namespace's `RunLog`, or
            None when it kept no checkpoint (history imports this module, not the reverse).
        namespaces: the thread's checkpoint namespaces (read from the checkpointer if None).
    """
    thread_id = str(log.config["configurable"]["thread_id"])
    here = str(log.config["configurable"].get("checkpoint_ns", ""))
    if namespaces is None:
        namespaces = _namespaces(root, thread_id)
    subgraphs = _subgraphs(graph)
    for task, planned in origins if namespaces != [""] else ():  # (else no subgraph kept one)
        ns = _namespace(planned) or _join(here, f"{task.node}:{planned.id}")
        sub = subgraphs.get(task.node)
        if sub is not None and getattr(sub, "checkpointer", None) is True:
            _warn(log, _NOT_IMPORTED.format(node=task.node, why=_OWN_THREAD))
        elif ns in namespaces and sub is None:
            _warn(log, _NOT_IMPORTED.format(node=task.node, why=_UNDETECTED))
        elif ns in namespaces and not task.subruns:
            runs = [
                _subrun(root, sub, thread_id, n, build, namespaces)
                for n in _runs_of(ns, namespaces)
            ]
            task.subruns = [run for run in runs if run is not None]
    _note_unkept(log, graph, subgraphs)


def _join(outer: str, part: str) -> str:
    return f"{outer}|{part}" if outer else part


def _subrun(
    root: Any, sub: Any, thread_id: str, ns: str, build: Callable[..., Any], namespaces: list[str]
) -> Any:
    """The imported run kept under namespace `ns` (None: it kept no checkpoint)."""
    thread = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns}}
    inner: list[tuple[Any, Any]] = []
    sublog = build(sub, root, thread, thread_id, inner)
    if sublog is None:
        return None  # the subgraph kept no checkpoint (it had not started)
    sublog.config = thread
    attach_langgraph_subruns(sublog, inner, root, sub, build, namespaces)
    return sublog


def _namespaces(root: Any, thread_id: str) -> list[str]:
    """Every checkpoint namespace of the thread (the checkpointer's `list` of it)."""
    seen: dict[str, None] = {}
    for item in root.checkpointer.list({"configurable": {"thread_id": thread_id}}):
        seen[str(item.config["configurable"].get("checkpoint_ns", ""))] = None
    return list(seen)


def _runs_of(ns: str, namespaces: list[str]) -> list[str]:
    """A task's subgraph runs: its namespace, then `ns|1`, `ns|2`, ... (LangGraph keeps a
    node function's k-th run of its subgraph after the first there), in order."""
    more = [n for n in namespaces if n.startswith(f"{ns}|") and n[len(ns) + 1 :].isdigit()]
    return [ns, *sorted(more, key=lambda n: int(n[len(ns) + 1 :]))]


def _warn(log: Any, note: str) -> None:
    if note not in log.warnings:
        log.warnings.append(note)


_NOT_IMPORTED = "node {node!r} runs a LangGraph subgraph whose own steps are not imported: {why}"
_OWN_THREAD = (
    "it was compiled with checkpointer=True, so its checkpoints (namespace = the node's "
    "name) span every run of the parent thread; its writes to this graph are imported."
)
_UNDETECTED = (
    "LangGraph does not detect the graph it runs as its subgraph (get_subgraphs(): one "
    "built inside the node's function, say), so its checkpoints cannot be read with its own "
    "graph; its writes to this graph are imported. Build the graph once, outside the "
    "function, to have it imported."
)
_NO_CHECKPOINTS = (
    "it was compiled with checkpointer=False, so LangGraph kept no checkpoints of it; its "
    "writes to this graph are imported."
)


def _namespace(planned: Any) -> str | None:
    """The checkpoint namespace a LangGraph task's subgraph keeps (None: not a subgraph)."""
    state = getattr(planned, "state", None)
    if isinstance(state, dict):
        ns = (state.get("configurable") or {}).get("checkpoint_ns")
        return str(ns) if ns else None
    config = getattr(state, "config", None)  # a StateSnapshot (get_state(subgraphs=True))
    if isinstance(config, dict):
        return (config.get("configurable") or {}).get("checkpoint_ns") or None
    return None


def _subgraphs(graph: Any) -> dict[str, Any]:
    """`{node: compiled subgraph}` of the nodes LangGraph detects as subgraphs."""
    try:
        return dict(graph.get_subgraphs())
    except Exception:  # a graph that cannot list them: no subruns, said nowhere better
        return {}


def _note_unkept(log: Any, graph: Any, subgraphs: dict[str, Any]) -> None:
    """Say which nodes that ran are compiled graphs that keep no checkpoints."""
    ran = {task.node for task in log.tasks()}
    for name, node in getattr(graph.builder, "nodes", {}).items():
        runnable = getattr(node, "runnable", None)
        if name in ran and name not in subgraphs and hasattr(runnable, "get_state_history"):
            _warn(log, _NOT_IMPORTED.format(node=name, why=_NO_CHECKPOINTS))
