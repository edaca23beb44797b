"""What nodes wrote with `get_stream_writer()`: a run's custom chunks, task by task.

Each task keeps its chunks in order (`Task.custom`), whether or not the run was streamed with
`stream_mode="custom"`; run files keep them. `Run.custom` is this module's table.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from nbgraph.engine.facts import RunLog

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["custom_frame"]

_CUSTOM_COLUMNS = ("step", "node", "task_id", "index", "chunk")


class _CustomChunk(NamedTuple):
    """One chunk a node wrote: its task's step, node and id, its place among the task's
    chunks, and the chunk itself (the object the node wrote)."""

    step: int
    node: str
    task_id: str
    index: int
    chunk: Any


def _custom_chunks(log: RunLog) -> list[_CustomChunk]:
    """Every custom chunk of the run, step by step, each task's in the order it wrote them.

    >>> from nbgraph import START, StateGraph, get_stream_writer
    >>> def node(state):
    ...     get_stream_writer()({"progress": 1})
    ...     return {}
    >>> app = StateGraph(dict).add_node("node", node).add_edge(START, "node").compile()
    >>> _ = app.invoke({})
    >>> _custom_chunks(app.last_log)
    [_CustomChunk(step=1, node='node', task_id='1:0:node', index=0, chunk={'progress': 1})]
    """
    return [
        _CustomChunk(task.step, task.node, task.id, index, chunk)
        for step in log.steps
        for task in step.tasks
        for index, chunk in enumerate(task.custom)
    ]


def custom_frame(log: RunLog) -> pd.DataFrame:
    """`_custom_chunks` as a DataFrame (columns: step, node, task_id, index, chunk)."""
    from nbgraph.record.tables import frame

    return frame(_custom_chunks(log), _CUSTOM_COLUMNS).astype({"index": "int64"})
