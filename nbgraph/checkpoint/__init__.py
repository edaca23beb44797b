"""Checkpoint savers: where a thread's checkpoints and pending writes are kept (memory, SQLite).

The SQLite saver (with `sqlite3` and `socket`) is imported on first use of its names.
"""

import importlib
from typing import TYPE_CHECKING, Any

from nbgraph.checkpoint.base import BaseSaver, CheckpointRecord, PendingWrite, ThreadBusyError
from nbgraph.checkpoint.memory import InMemorySaver, MemorySaver
from nbgraph.checkpoint.tuples import CheckpointTuple
from nbgraph.errors import CheckpointFileError

if TYPE_CHECKING:
    from nbgraph.checkpoint.sqlite import ReadOnlyCheckpointError, SqliteSaver

__all__ = [
    "BaseSaver",
    "CheckpointFileError",
    "CheckpointRecord",
    "CheckpointTuple",
    "InMemorySaver",
    "MemorySaver",
    "PendingWrite",
    "ReadOnlyCheckpointError",
    "SqliteSaver",
    "ThreadBusyError",
]

_SQLITE = ("ReadOnlyCheckpointError", "SqliteSaver")
"""The names `nbgraph.checkpoint.sqlite` gives on first use."""


def __getattr__(name: str) -> Any:
    if name in _SQLITE:
        return getattr(importlib.import_module("nbgraph.checkpoint.sqlite"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_SQLITE})
