"""Checkpoint savers: where a thread's checkpoints and pending writes are kept (memory, SQLite).

The SQLite savers (with `sqlite3` and `socket`) are imported on first use of their names.
"""

import importlib
from typing import TYPE_CHECKING, Any

from nbgraph.checkpoint.base import BaseSaver, CheckpointRecord, PendingWrite, ThreadBusyError
from nbgraph.checkpoint.memory import InMemorySaver, MemorySaver
from nbgraph.checkpoint.tuples import CheckpointTuple
from nbgraph.errors import CheckpointFileError

if TYPE_CHECKING:
    from nbgraph.checkpoint.sqlite import ReadOnlyCheckpointError, SqliteSaver
    from nbgraph.checkpoint.sqlite_async import AsyncSqliteSaver

__all__ = [
    "AsyncSqliteSaver",
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
    if name == "AsyncSqliteSaver":
        return importlib.import_module("nbgraph.checkpoint.sqlite_async").AsyncSqliteSaver
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_SQLITE, "AsyncSqliteSaver"})
