"""LangGraph's `langgraph.types`, spelled the same: the value types nodes and callers use.

`from langgraph.types import Command, Send, interrupt` becomes `from nbgraph.types import
Command, Send, interrupt`. The types live in `nbgraph.primitives` (the basics layer); this
module adds the names that need the engine, so it sits on the top floor, and the type
aliases LangGraph annotates with (`StreamMode`, `Durability`, `All`, `Checkpointer`,
`StreamWriter`).
"""

from typing import Literal

from nbgraph.checkpoint.base import BaseSaver
from nbgraph.engine.node_api import StreamWriter, interrupt
from nbgraph.engine.persistence.snapshots import PendingTask as PregelTask
from nbgraph.primitives import *  # noqa: F403  (the public names, `primitives.__all__`)
from nbgraph.primitives import __all__ as _primitives

__all__ = [
    *_primitives,
    "All",
    "Checkpointer",
    "Durability",
    "PregelTask",
    "StreamMode",
    "StreamWriter",
    "interrupt",
]

All = Literal["*"]
"""`interrupt_before="*"`: every node."""

StreamMode = Literal["values", "updates", "checkpoints", "tasks", "debug", "messages", "custom"]
"""The stream modes `stream(..., stream_mode=...)` takes."""

Durability = Literal["sync", "async", "exit"]
"""When a run's checkpoints are written: before the next step starts, while it runs, or only
when the run ends (`invoke(..., durability=...)`)."""

Checkpointer = BaseSaver | bool | None
"""What `compile(checkpointer=...)` takes: a saver; True for a subgraph that keeps its own
threads in its parent's saver; False for none even under a checkpointed parent; None to
inherit."""
