"""`Runs`: the runs of one graph over many inputs (what `app.run_many` returns), in input order.

Each is a full `Run`; the batch has its tables, paths, a picker in front of the inspector, and a
folder of run files."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

from nbgraph.errors import NbgraphError
from nbgraph.notebook.run import Run
from nbgraph.record.batch import batch_effects, batch_table, paths_frame, run_summary
from nbgraph.record.text import plural

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["RunSlot", "Runs", "RunsFolderError"]

_INDEX_FILE = "runs.json"
_FORMAT = "nbgraph.runs"
_FORMAT_VERSION = 1


class RunsFolderError(NbgraphError, ValueError):
    """A folder is not one `Runs.save` wrote (or is incomplete); the message says why."""


class RunSlot:
    """One run of a batch: the `Run`, or how to read it (run JSON from a worker, read when
    first asked for), and its `run_summary` (sent by the worker, or made from the run)."""

    __slots__ = ("_read", "_run", "_summary")

    def __init__(
        self,
        run: Run | None = None,
        read: Callable[[], Run] | None = None,
        summary: dict[str, Any] | None = None,
    ) -> None:
        self._run, self._read, self._summary = run, read, summary

    @property
    def run(self) -> Run:
        if self._run is None:
            self._run = self._read()  # type: ignore[misc]
            self._read = None
        return self._run

    @property
    def summary(self) -> dict[str, Any]:
        if self._summary is None:
            self._summary = run_summary(self.run)
        return self._summary


class Runs:
    """The runs of a graph over many inputs, in input order (`runs[i]` is input `i`'s).

    A subset (`runs.failed`, `runs.where(...)`) keeps each run's input index: its table's
    `index` column and `runs.indexes` give them, while `subset[k]` is its `k`-th run.

    Runs that came back from worker processes are read from their run JSON when first asked
    for (`runs[i]`, iteration, `effects`, `where`); `table`, `paths()` and `failed` read
    the summary each worker sent with its run.

    >>> from nbgraph import START, StateGraph
    >>> app = (StateGraph(dict).add_node("double", lambda s: {"x": s["x"] * 2})
    ...        .add_edge(START, "double").compile())
    >>> runs = app.run_many([{"x": 1}, {"x": 2}], progress=False)
    >>> len(runs), runs[1].output, runs.table["x"].tolist()
    (2, {'x': 4}, [2, 4])

    Attributes:
        indexes: each run's input index.
        durations: each run's wall time in seconds as its worker measured it (None for a
            run whose worker failed before it ended).
    """

    def __init__(
        self,
        runs: Sequence[Run | RunSlot],
        *,
        durations: Sequence[float | None] | None = None,
        indexes: Sequence[int] | None = None,
    ) -> None:
        self._slots = [r if isinstance(r, RunSlot) else RunSlot(r) for r in runs]
        self.indexes = list(range(len(self._slots)) if indexes is None else indexes)
        self.durations = list([None] * len(self._slots) if durations is None else durations)
        if not len(self._slots) == len(self.indexes) == len(self.durations):
            raise ValueError("Runs: runs, indexes and durations must be of the same length")

    # --- a sequence of runs ------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._slots)

    def __iter__(self) -> Iterator[Run]:
        return (slot.run for slot in self._slots)

    @overload
    def __getitem__(self, position: int) -> Run: ...
    @overload
    def __getitem__(self, position: slice) -> Runs: ...
    def __getitem__(self, position: int | slice) -> Run | Runs:
        """The run at `position`; a slice gives a subset (`Runs`, input indexes kept)."""
        if isinstance(position, slice):
            return self._subset(range(len(self))[position])
        return self._slots[position].run

    def _subset(self, keep: Iterable[int]) -> Runs:
        keep = list(keep)
        return Runs(
            [self._slots[k] for k in keep],
            durations=[self.durations[k] for k in keep],
            indexes=[self.indexes[k] for k in keep],
        )

    def _summaries(self) -> list[dict[str, Any]]:
        return [slot.summary for slot in self._slots]

    @property
    def failed(self) -> Runs:
        """The runs that failed (their input indexes kept)."""
        summaries = self._summaries()
        return self._subset(k for k, s in enumerate(summaries) if s["status"] == "failed")

    def where(self, keep: Callable[[Run], Any]) -> Runs:
        """The runs for which `keep(run)` is true, e.g. `runs.where(lambda r: r.output["x"])`."""
        return self._subset(k for k, slot in enumerate(self._slots) if keep(slot.run))

    # --- tables ------------------------------------------------------------------------------

    @cached_property
    def table(self) -> pd.DataFrame:
        """One row per run: `index`, `status`, `error_type`, `error`, `duration`, `steps`,
        `path` (the nodes of each superstep, e.g. `"a → b+c → d"`), then the output's scalar
        fields (nested dicts flattened as `"a.b"`)."""
        return batch_table(self.indexes, self._summaries(), self.durations)

    def paths(self) -> pd.DataFrame:
        """Each distinct path through the graph: `path`, `count`, `inputs` (the input
        indexes that took it) and `failed`; the most common first."""
        return paths_frame(self.indexes, self._summaries())

    @cached_property
    def effects(self) -> pd.DataFrame:
        """Every run's reducer effects (`Run.effects`) in one DataFrame, with a `run` column:
        the input index."""
        return batch_effects(self.indexes, list(self))

    # --- looking ---------------------------------------------------------------------------

    def inspect(self) -> Any:
        """A run picker (filter by status and path, then pick a run) in front of the
        inspector of the picked run (an ipywidgets `VBox`)."""
        from nbgraph.views.run_picker import RunPicker

        summaries = self._summaries()
        return RunPicker(
            self.indexes,
            [s["status"] for s in summaries],
            [s["path"] for s in summaries],
            self.__getitem__,
        )

    def __repr__(self) -> str:
        summaries = self._summaries()
        failed = sum(s["status"] == "failed" for s in summaries)
        paths = len({s["path"] for s in summaries})
        count, distinct = plural(len(self), "run"), plural(paths, "distinct path")
        return f"<Runs: {count}, {failed} failed, {distinct}>"

    def _repr_html_(self) -> str:
        from nbgraph.views.runs_html import runs_html

        return runs_html(repr(self), self.paths(), self.table)

    # --- files -------------------------------------------------------------------------------

    def save(self, directory: str | Path) -> Path:
        """Write every run to `directory` (made if needed) as `run-<index>.json` (`Run.save`),
        with `runs.json` listing them in order and their durations; returns the folder."""
        folder = Path(directory)
        folder.mkdir(parents=True, exist_ok=True)
        entries = []
        for index, run, duration in zip(self.indexes, self, self.durations, strict=True):
            name = f"run-{index:05d}.json"
            run.save(folder / name)
            entries.append({"index": index, "file": name, "duration": duration})
        document = {"format": _FORMAT, "version": _FORMAT_VERSION, "runs": entries}
        (folder / _INDEX_FILE).write_text(json.dumps(document, indent=1), encoding="utf-8")
        return folder

    @classmethod
    def load(
        cls, directory: str | Path, models: Iterable[type] | None = None, graph: Any = None
    ) -> Runs:
        """The runs `save` wrote to `directory`; `models` and `graph` as for `Run.load`.

        Raises:
            RunsFolderError: no `runs.json` there, or not one `save` wrote.
            RunFileError: a run file is not a complete run (naming it).
        """
        folder = Path(directory)
        entries = _index_entries(folder)
        models = list(models) if models is not None else None
        runs = [Run.load(folder / entry["file"], models=models, graph=graph) for entry in entries]
        return cls(
            runs,
            durations=[entry.get("duration") for entry in entries],
            indexes=[entry["index"] for entry in entries],
        )


def _seconds(value: Any) -> bool:
    """Whether `value` is a run's duration as `Runs.save` writes it: seconds, or null."""
    return value is None or (type(value) in (int, float) and 0 <= value < float("inf"))


def _index_entries(folder: Path) -> list[dict[str, Any]]:
    index = folder / _INDEX_FILE
    if not index.is_file():
        raise RunsFolderError(
            f"{str(folder)!r} holds no {_INDEX_FILE}: expected a folder written by Runs.save()."
        )
    try:
        document = json.loads(index.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise RunsFolderError(f"{str(index)!r} is not JSON ({error}).") from None
    if not isinstance(document, dict) or document.get("format") != _FORMAT:
        raise RunsFolderError(
            f'{str(index)!r} is not a Runs index: expected "format": "{_FORMAT}".'
        )
    if document.get("version") != _FORMAT_VERSION:
        raise RunsFolderError(
            f"{str(index)!r} has format version {document.get('version')!r}; this nbgraph "
            f"reads version {_FORMAT_VERSION}."
        )
    entries = document.get("runs")
    good = isinstance(entries, list) and all(
        isinstance(e, dict)
        and type(e.get("index")) is int
        and isinstance(e.get("file"), str)
        and "/" not in e["file"]
        and "\\" not in e["file"]
        and not e["file"].startswith(".")
        and _seconds(e.get("duration"))
        for e in entries
    )
    if not good:
        raise RunsFolderError(
            f'{str(index)!r} is incomplete: expected "runs": a list of {{"index": int, '
            '"file": name in the folder, "duration": seconds or null}.'
        )
    return entries
