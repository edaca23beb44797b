"""A batch's folder (`Runs.save` / `Runs.load`): one run file per run and an index, `runs.json`,
holding each run's summary and table columns, so the batch's tables need no run file read.

The index is checked when the folder is loaded (its shape, each summary's columns, that every
run file it names is there); a run file is read, and checked, when its run is first asked for.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from functools import partial
from pathlib import Path
from typing import Any

from nbgraph.codec import nesting
from nbgraph.codec.nesting import ValueTooDeepError
from nbgraph.errors import NbgraphError
from nbgraph.notebook.run import Run
from nbgraph.record.batch_columns import BrokenColumns, check_columns, encode_values

__all__ = ["INDEX_FILE", "RunsFolderError", "read_folder", "write_folder"]

INDEX_FILE = "runs.json"
_FORMAT = "nbgraph.runs"
_FORMAT_VERSION = 2
_READS = (1, 2)
"""Index versions this nbgraph reads: 1 has no summaries (its tables read every run)."""


class RunsFolderError(NbgraphError, ValueError):
    """A folder is not one `Runs.save` wrote (or is incomplete); the message says why."""


def write_folder(folder: Path, slots: list[Any], indexes: list[int], durations: list) -> Path:
    """Write each slot's run as `run-<index>.json` (a run not read yet: its JSON as it came)
    and the index with the summaries; returns the folder."""
    folder.mkdir(parents=True, exist_ok=True)
    entries = []
    for index, slot, duration in zip(indexes, slots, durations, strict=True):
        name = f"run-{index:05d}.json"
        if slot.text is not None:
            (folder / name).write_text(slot.text, encoding="utf-8")
        else:
            slot.run.save(folder / name)
        entry = {"index": index, "file": name, "duration": duration}
        if slot.summary.get("columns") is None:  # (a run whose tables no one asked for)
            slot.columns()
        entries.append({**entry, "summary": _stored(slot.summary)})
    document = {"format": _FORMAT, "version": _FORMAT_VERSION, "runs": entries}
    (folder / INDEX_FILE).write_text(json.dumps(document), encoding="utf-8")
    return folder


def _stored(summary: dict[str, Any]) -> dict[str, Any]:
    """The summary as the index holds it: the effects' values encoded (or no columns, for a
    value too deep for a file: the tables then read that run's file)."""
    columns = summary.get("columns")
    if isinstance(columns, str):  # (as a worker sent them: JSON text)
        columns = nesting.loads(columns)
    if columns is not None and "values" not in columns["effects"]:
        try:
            columns = encode_values(columns)
        except ValueTooDeepError:
            columns = None
    return {**summary, "columns": columns}


def read_folder(
    folder: Path, models: Iterable[type] | None, graph: Any
) -> tuple[list[dict[str, Any]], list[Any]]:
    """The index's entries and, per entry, how to read its run (`Run.load`, when asked).

    Raises:
        RunsFolderError: no such folder, no index, an index that is not one `save` wrote
            (or damaged: naming the entry), or a run file it names that is not there.
    """
    if not folder.is_dir():
        raise RunsFolderError(
            f"{str(folder)!r} is not a folder: expected a folder written by Runs.save()."
        )
    entries = _index_entries(folder)
    present = set(os.listdir(folder))
    missing = [entry["file"] for entry in entries if entry["file"] not in present]
    if missing:
        more = f" and {len(missing) - 3} more" if len(missing) > 3 else ""
        raise RunsFolderError(
            f"{str(folder)!r} lacks run files its {INDEX_FILE} lists: "
            f"{', '.join(missing[:3])}{more}."
        )
    models = list(models) if models is not None else None
    reads = [partial(Run.load, folder / e["file"], models=models, graph=graph) for e in entries]
    return entries, reads


def _seconds(value: Any) -> bool:
    """Whether `value` is a run's duration as `Runs.save` writes it: seconds, or null."""
    return value is None or (type(value) in (int, float) and 0 <= value < float("inf"))


def _index_entries(folder: Path) -> list[dict[str, Any]]:
    index = folder / INDEX_FILE
    if not index.is_file():
        raise RunsFolderError(
            f"{str(folder)!r} holds no {INDEX_FILE}: expected a folder written by Runs.save()."
        )
    try:
        document = json.loads(index.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise RunsFolderError(f"{str(index)!r} is not JSON ({error}).") from None
    if not isinstance(document, dict) or document.get("format") != _FORMAT:
        raise RunsFolderError(
            f'{str(index)!r} is not a Runs index: expected "format": "{_FORMAT}".'
        )
    version = document.get("version")
    if version not in _READS:
        raise RunsFolderError(
            f"{str(index)!r} has format version {version!r}; this nbgraph reads versions "
            f"{', '.join(map(str, _READS))}."
        )
    entries = document.get("runs")
    if not (isinstance(entries, list) and all(map(_good_entry, entries))):
        raise RunsFolderError(
            f'{str(index)!r} is incomplete: expected "runs": a list of {{"index": int, '
            '"file": name in the folder, "duration": seconds or null, "summary": ...}.'
        )
    for number, entry in enumerate(entries):
        if version > 1:
            _check_summary(index, number, entry)
        else:
            entry["summary"] = None
    return entries


def _good_entry(entry: Any) -> bool:
    return (
        isinstance(entry, dict)
        and type(entry.get("index")) is int
        and isinstance(entry.get("file"), str)
        and "/" not in entry["file"]
        and "\\" not in entry["file"]
        and not entry["file"].startswith(".")
        and _seconds(entry.get("duration"))
    )


_SUMMARY_TYPES = {
    "status": (str,),
    "error_type": (str, type(None)),
    "error": (str, type(None)),
    "steps": (int,),
    "path": (str,),
    "path_steps": (list,),
    "output": (dict,),
}


def _check_summary(index: Path, number: int, entry: dict[str, Any]) -> None:
    """Raise `RunsFolderError` naming the entry unless its summary has every part, typed,
    and its columns are whole (`check_columns`; the values are checked when decoded)."""
    summary = entry.get("summary")
    where = f"{str(index)!r} is damaged: entry {number} (run {entry['index']})"
    if not isinstance(summary, dict):
        raise RunsFolderError(f"{where} has no summary object.")
    wrong = [k for k, kinds in _SUMMARY_TYPES.items() if not isinstance(summary.get(k), kinds)]
    if wrong:
        raise RunsFolderError(f"{where} has a summary without a proper {', '.join(wrong)}.")
    steps = summary["path_steps"]
    if not all(_good_step(step) for step in steps):
        raise RunsFolderError(f"{where} has path_steps that are not [[node, ...], times] pairs.")
    if summary.get("columns") is not None:
        try:
            check_columns(summary["columns"])
        except BrokenColumns as error:
            raise RunsFolderError(f"{where}: {error}.") from None


def _good_step(step: Any) -> bool:
    return (
        isinstance(step, list)
        and len(step) == 2
        and isinstance(step[0], list)
        and all(isinstance(node, str) for node in step[0])
        and type(step[1]) is int
        and step[1] > 0
    )
