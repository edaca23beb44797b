"""Subruns in a run file: each subrun's own run document, under the id of the task that
started it, so `Run.load` / `Run.from_json` rebuild `run.subruns` (nested ones too).

A subrun's document is read as any run file is (its graph from its description: the
subgraph's functions are stand-ins in a loaded run).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from nbgraph.record.files.log_shape import check_document
from nbgraph.record.files.step_decoding import BrokenDocument
from nbgraph.record.subruns.runs import subrun_logs

if TYPE_CHECKING:
    from nbgraph.engine.facts import RunLog

__all__ = ["attach_subruns", "encode_subruns"]


def encode_subruns(
    log: RunLog, document_of: Callable[[RunLog], dict[str, Any]]
) -> list[dict[str, Any]]:
    """`[{"task": id, "document": the subrun's run document}, ...]`, in start order."""
    return [{"task": task, "document": document_of(sub)} for task, sub in subrun_logs(log)]


def attach_subruns(log: RunLog, entries: Any, decode: Callable[[dict[str, Any]], RunLog]) -> None:
    """Put each saved subrun back on its task of `log`, in the saved order.

    Raises:
        BrokenDocument: an entry is not `{"task": id, "document": {...}}`, or names a task
            the run does not have.
        LogShapeError: a subrun's document is not a run document.
    """
    if type(entries) is not list:
        raise BrokenDocument(
            f"the run's 'subruns' should be a list, found {type(entries).__name__}"
        )
    tasks = {task.id: task for task in log.tasks()}
    for position, entry in enumerate(entries):
        where = f"subrun {position} of the run"
        if type(entry) is not dict or type(entry.get("document")) is not dict:
            raise BrokenDocument(f"{where} should be an object with a 'document' object")
        task = tasks.get(entry.get("task"))  # type: ignore[arg-type]
        if task is None:
            raise BrokenDocument(f"{where} names task {entry.get('task')!r}, not a task of the run")
        check_document(entry["document"])
        task.subruns = [*task.subruns, decode(entry["document"])]
