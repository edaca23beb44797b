"""`Runs`: the runs of one graph over many inputs (what `app.run_many` returns), in input order.

Each is a full `Run`; the batch has its tables (one frame each over all runs, built from the
columns each run's summary holds), paths, a picker in front of the inspector, a drawing of the
paths taken, and a folder of run files."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

from nbgraph.codec import nesting
from nbgraph.codec.classes import named_classes
from nbgraph.notebook.run import Run
from nbgraph.notebook.runs_folder import RunsFolderError, read_folder, write_folder
from nbgraph.record.batch import batch_table, path_edges, paths_frame, run_summary
from nbgraph.record.batch_columns import (
    BrokenColumns,
    batch_frame,
    decode_values,
    run_columns,
)
from nbgraph.record.effects import EFFECT_COLUMNS, collector_paused
from nbgraph.record.tables import TASK_COLUMNS
from nbgraph.record.text import plural

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["RunSlot", "Runs", "RunsFolderError"]


class RunSlot:
    """One run of a batch: the `Run`, or how to read it (run JSON from a worker, a run file:
    read when first asked for), and its `run_summary` (sent by the worker, read from a
    batch's index, or made from the run).

    Attributes:
        text: the run's JSON as a worker sent it, until the run is read (then None).
        where: how errors name the summary's source (a batch's index file), or None.
    """

    __slots__ = ("_models", "_read", "_run", "_summary", "text", "where")

    def __init__(
        self,
        run: Run | None = None,
        read: Callable[[], Run] | None = None,
        summary: dict[str, Any] | None = None,
        *,
        text: str | None = None,
        models: Iterable[type] | None = None,
        where: str | None = None,
    ) -> None:
        self._run, self._read, self._summary = run, read, summary
        self.text, self.where = text, where
        self._models = None if models is None else list(models)

    @property
    def run(self) -> Run:
        if self._run is None:
            self._run = self._read()  # type: ignore[misc]
            self._read = self.text = None
        return self._run

    @property
    def summary(self) -> dict[str, Any]:
        if self._summary is None:  # (its columns made when a table first asks: `columns`)
            self._summary = run_summary(self.run, columns=False)
        return self._summary

    def columns(self) -> dict[str, dict[str, Sequence]]:
        """The run's effects and tasks as columns (`batch_columns.run_columns`): from its
        summary (values decoded on first use), else from the run itself.

        Raises:
            RunsFolderError: the summary came from an index whose values are damaged.
        """
        summary = self.summary
        columns = summary.get("columns")
        if columns is None:  # (made from the run: a value too deep to send, an old index, ...)
            columns = summary["columns"] = run_columns(self.run)
        if isinstance(columns, str):  # as a worker sent them
            columns = nesting.loads(columns)
        if "values" in columns["effects"]:
            try:
                with named_classes(self._models):
                    columns = summary["columns"] = decode_values(columns)
            except BrokenColumns as error:
                raise RunsFolderError(f"{self.where or 'A run of the batch'}: {error}.") from None
        return columns


class Runs:
    """The runs of a graph over many inputs, in input order (`runs[i]` is input `i`'s).

    A subset (`runs.failed`, `runs.where(...)`) keeps each run's input index: its table's
    `index` column and `runs.indexes` give them, while `subset[k]` is its `k`-th run.

    Runs that came back from worker processes are read from their run JSON when first asked
    for (`runs[i]`, iteration, `where`); `table`, `paths()`, `failed`, `effects` and `steps`
    read the summary each worker sent with its run (its tables as columns), never a run.

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
        """Every run's reducer effects (`Run.effects`) in one DataFrame, a `run` column (the
        input index) first: each run's rows as its own table has them, in input order."""
        with collector_paused():  # (each run's columns: many small acyclic containers)
            tables = [slot.columns()["effects"] for slot in self._slots]
            return batch_frame(self.indexes, tables, EFFECT_COLUMNS)

    @cached_property
    def steps(self) -> pd.DataFrame:
        """Every run's tasks (`Run.steps`) in one DataFrame, a `run` column (the input index)
        first."""
        with collector_paused():
            tables = [slot.columns()["tasks"] for slot in self._slots]
            return batch_frame(self.indexes, tables, TASK_COLUMNS)

    # --- looking ---------------------------------------------------------------------------

    def inspect(self) -> Any:
        """A run picker (filter by status and path, then pick a run) in front of the
        inspector of the picked run (an ipywidgets `VBox`)."""
        from nbgraph.views.inspector.run_picker import RunPicker

        summaries = self._summaries()
        return RunPicker(
            self.indexes,
            [s["status"] for s in summaries],
            [s["path"] for s in summaries],
            self.__getitem__,
        )

    def draw_paths(self) -> Any:
        """The paths the runs took, drawn as one graph (a `graphviz.Digraph`): each way from a
        superstep's nodes to the next's, its width and label the number of runs that took it;
        the ways into a run's end are drawn to END, or to its status (`failed` in red, with
        how many of the runs on each way failed)."""
        from nbgraph.views.drawings.paths import paths_drawing

        return paths_drawing(path_edges(self._summaries()), len(self))

    def __repr__(self) -> str:
        summaries = self._summaries()
        failed = sum(s["status"] == "failed" for s in summaries)
        paths = len({s["path"] for s in summaries})
        count, distinct = plural(len(self), "run"), plural(paths, "distinct path")
        return f"<Runs: {count}, {failed} failed, {distinct}>"

    def _repr_html_(self) -> str:
        from nbgraph.views.share.runs_html import runs_html

        return runs_html(repr(self), self.paths(), self.table)

    # --- files -------------------------------------------------------------------------------

    def save(self, directory: str | Path) -> Path:
        """Write every run to `directory` (made if needed) as `run-<index>.json` (the run file
        of `Run.save`), with `runs.json` listing them in order with their durations and
        summaries (the batch's tables, read back by `load` without reading a run file);
        returns the folder."""
        return write_folder(Path(directory), self._slots, self.indexes, self.durations)

    @classmethod
    def load(
        cls, directory: str | Path, models: Iterable[type] | None = None, graph: Any = None
    ) -> Runs:
        """The runs `save` wrote to `directory`; `models` and `graph` as for `Run.load`.

        Only the index is read here: a run's file when the run is first asked for.

        Raises:
            RunsFolderError: no such folder, no `runs.json` there, or not one `save` wrote,
                or damaged (naming the entry), or a run file it lists is missing.
            RunFileError: a run file is not a complete run (naming it), when it is read.
        """
        folder = Path(directory)
        entries, reads = read_folder(folder, models, graph)
        where = f"{str(folder / 'runs.json')!r} is damaged: run"
        slots = [
            RunSlot(read=read, summary=e["summary"], models=models, where=f"{where} {e['index']}")
            for e, read in zip(entries, reads, strict=True)
        ]
        return cls(
            slots,
            durations=[entry.get("duration") for entry in entries],
            indexes=[entry["index"] for entry in entries],
        )
