"""Subruns rebuilt from a saver: `Run.from_checkpointer`'s subgraph threads hung on the tasks
that ran them.

`Run.from_checkpointer` finds the threads its subgraphs kept in the same saver
(`engine.subgraph_checkpoints`: the parent's thread id and a `checkpoint_ns` of `<node>:<task
id>`) and hangs each one's rebuilt log on the task that ran it, as a live run keeps them
(`Task.subruns`), down to any depth."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from nbgraph.blueprint.subgraphs import subgraph_of
from nbgraph.checkpoint.subthreads import SEP

__all__ = ["attach_subruns"]


def _child_threads(saver: Any, key: str) -> dict[str, list[str]]:
    """`{namespace part: keys}` of the subgraph threads one level inside thread `key`: per
    `node:<task id>`, the keys of the graphs that task ran, in order (its k-th after the
    first is kept under `node:<task id>|k`)."""
    prefix = f"{key}|" if SEP in key else f"{key}{SEP}"
    found: dict[str, list[tuple[int, str]]] = {}
    for stored in saver.threads():
        if stored.startswith(prefix):
            part, _, count = stored[len(prefix) :].partition("|")
            if count == "" or count.isdigit():
                found.setdefault(part, []).append((int(count or 0), stored))
    return {part: [stored for _, stored in sorted(keys)] for part, keys in found.items()}


def attach_subruns(log: Any, saver: Any, key: str, spec: Any, rebuild: Callable[..., Any]) -> None:
    """Put on each task of `log` the rebuilt logs of the subgraph threads it ran.

    Args:
        log: the thread's rebuilt `RunLog`.
        saver, key: where the thread is kept (its storage key).
        spec: the thread's graph (its subgraph nodes give the subgraphs' own graphs; a
            graph rebuilt from its description gives none, and each subgraph thread's own
            description is used).
        rebuild: `log_from_checkpointer`, called as `rebuild(saver, key, None, spec)`.
    """
    children = _child_threads(saver, key)
    if not children:
        return
    for task in log.tasks():
        keys = children.get(f"{task.node}:{task.id}")  # (not checkpointer=True threads)
        if keys is None:
            continue
        app = subgraph_of(spec, task.node)
        inner = app.spec if app is not None else None
        task.subruns = [rebuild(saver, child, None, inner) for child in keys]
