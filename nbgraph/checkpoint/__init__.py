"""Checkpoint savers: where a thread's checkpoints and pending writes are kept (memory, SQLite)."""

from nbgraph.checkpoint.base import (
    BaseSaver,
    CheckpointFileError,
    CheckpointRecord,
    PendingWrite,
    ThreadBusyError,
)
from nbgraph.checkpoint.memory import InMemorySaver, MemorySaver
from nbgraph.checkpoint.sqlite import ReadOnlyCheckpointError, SqliteSaver

__all__ = [
    "BaseSaver",
    "CheckpointFileError",
    "CheckpointRecord",
    "InMemorySaver",
    "MemorySaver",
    "PendingWrite",
    "ReadOnlyCheckpointError",
    "SqliteSaver",
    "ThreadBusyError",
]
