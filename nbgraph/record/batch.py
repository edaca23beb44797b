"""Many runs read together: each run's summary (its path through the graph, its outcome, its
tables as columns) and the batch's `Runs.table`, `Runs.paths()` and path counts built from them.

A run's path is its node sequence, one entry per superstep that ran tasks: `"a → b → c"`;
nodes that ran in the same superstep are joined by `+` (`"a → b+c → d"`), and a superstep
repeated back to back is counted (`"a → b×3 → c"`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from nbgraph.record.batch_columns import run_columns
from nbgraph.record.text import safe_str

if TYPE_CHECKING:
    import pandas as pd

    from nbgraph.record.run import RunRecord

__all__ = ["PathEnd", "batch_table", "path_edges", "paths_frame", "run_summary"]

_ARROW = " → "

_BASE_COLUMNS = ("index", "status", "error_type", "error", "duration", "steps", "path")
"""The columns of `Runs.table` before the output's fields."""


def _step_nodes(run: RunRecord) -> list[list[str]]:
    """Per superstep that ran tasks, its nodes (each once, sorted), in step order."""
    names = []
    for step in run.log.steps[1:]:
        nodes = sorted(dict.fromkeys(task.node for task in step.tasks))
        if nodes:
            names.append(nodes)
    return names


def _path_steps(run: RunRecord) -> list[list[Any]]:
    """The run's supersteps that ran tasks as `[nodes, times]`, a superstep repeated back
    to back counted once (`[["b"], 3]`): the path `_run_path` writes out."""
    steps: list[list[Any]] = []
    for nodes in _step_nodes(run):
        if steps and steps[-1][0] == nodes:
            steps[-1][1] += 1
        else:
            steps.append([nodes, 1])
    return steps


def _run_path(steps: list[list[Any]]) -> str:
    """The compact path of a run: its supersteps' nodes joined by arrows, repeats counted.

    An empty string for a run that ran no node (it failed on its input, say).
    """
    parts = ("+".join(nodes) + ("" if times == 1 else f"×{times}") for nodes, times in steps)
    return _ARROW.join(parts)


def _scalar(value: Any) -> bool:
    if value is None or isinstance(value, (str, bool, int)):
        return True
    return isinstance(value, float)


def _flat_output(output: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """The scalar fields of an output, nested dicts flattened with dots (`"a.b"`); lists,
    objects and other containers are left out (they stay on `runs[i].output`)."""
    flat: dict[str, Any] = {}
    for key, value in output.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            flat.update(_flat_output(value, name + "."))
        elif _scalar(value):
            flat[name] = value
    return flat


def _error_cells(error: BaseException | None) -> tuple[str | None, str | None]:
    if error is None:
        return None, None
    return type(error).__name__, safe_str(error)


def run_summary(run: RunRecord, columns: bool = True) -> dict[str, Any]:
    """What a batch needs of one run, as plain data (a worker sends it with the run, so the
    batch's tables are built without reading every run back): `status`, `error_type`,
    `error`, `steps`, `path`, `path_steps` (`[nodes, times]` per superstep: the path as
    data), `output` (its scalar fields, flattened) and `columns`, its effects and tasks
    column by column (`batch_columns.run_columns`; None when `columns` is false)."""
    error_type, error = _error_cells(run.error)
    steps = _path_steps(run)
    return {
        "status": run.status,
        "error_type": error_type,
        "error": error,
        "steps": sum(times for _, times in steps),
        "path": _run_path(steps),
        "path_steps": steps,
        "output": _flat_output(run.output),
        "columns": run_columns(run) if columns else None,
    }


def batch_table(
    indexes: Sequence[int],
    summaries: Sequence[dict[str, Any]],
    durations: Sequence[float | None],
) -> pd.DataFrame:
    """One row per run (from its `run_summary`): `index` (the input's position), `status`,
    `error_type`, `error`, `duration` (seconds, as the worker measured it), `steps`
    (supersteps that ran tasks), `path`, then the output's scalar fields (an output field
    named like one of these columns gets an `output.` prefix)."""
    import pandas as pd

    rows, fields = [], {}
    for index, summary, duration in zip(indexes, summaries, durations, strict=True):
        row = {**summary, "index": index, "duration": duration}
        for name, value in summary["output"].items():
            column = f"output.{name}" if name in _BASE_COLUMNS else name
            fields.setdefault(column, None)
            row[column] = value
        rows.append(row)
    frame = pd.DataFrame(rows, columns=[*_BASE_COLUMNS, *fields])
    for column in fields:  # (nullable dtypes: a missing value keeps ints ints)
        typed = frame[column].convert_dtypes()
        if typed.dtype.kind in "iufb":
            frame[column] = typed
    for column in ("error_type", "error"):  # (None, not NaN, for a run without error)
        frame[column] = frame[column].astype(object).where(frame[column].notna(), None)
    frame["duration"] = frame["duration"].astype("float64")
    frame["steps"] = frame["steps"].astype("int64")
    return frame


def paths_frame(indexes: Sequence[int], summaries: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """Each distinct path with `count`, the `inputs` (indexes) that took it and how many of
    them `failed`; the most common path first (ties: the path first taken first)."""
    import pandas as pd

    taken: dict[str, list[int]] = {}
    failed: dict[str, int] = {}
    for index, summary in zip(indexes, summaries, strict=True):
        path = summary["path"]
        taken.setdefault(path, []).append(index)
        failed[path] = failed.get(path, 0) + (summary["status"] == "failed")
    order = sorted(taken, key=lambda path: -len(taken[path]))  # (stable: first seen first)
    rows = [(path, len(taken[path]), taken[path], failed[path]) for path in order]
    frame = pd.DataFrame(rows, columns=["path", "count", "inputs", "failed"])
    return frame.astype({"count": "int64", "failed": "int64"})


PathEnd = str | tuple[str, str]
"""A node's name, or `("status", status)`: where a run that did not finish ended."""


def path_edges(summaries: Sequence[dict[str, Any]]) -> dict[tuple[PathEnd, PathEnd], list[int]]:
    """Each way from one superstep's nodes to the next's that runs took, with how many runs
    took it and how many of those failed: `{(a, b): [runs, failed]}`. Every path starts at
    `"__start__"` and ends at `"__end__"` (a run done), or at `("status", status)` (`failed`,
    `interrupted`, ...); a superstep repeated back to back is a way from each of its nodes
    to itself. Each distinct path is walked once."""
    by_path: dict[str, list[Any]] = {}
    for summary in summaries:
        seen = by_path.get(summary["path"])
        if seen is None:
            seen = by_path[summary["path"]] = [summary["path_steps"], {}]
        seen[1][summary["status"]] = seen[1].get(summary["status"], 0) + 1
    edges: dict[tuple[PathEnd, PathEnd], list[int]] = {}
    for steps, statuses in by_path.values():
        ways: dict[tuple[PathEnd, PathEnd], None] = {}
        before = ["__start__"]
        for nodes, times in steps:
            ways.update(dict.fromkeys((a, b) for a in before for b in nodes))
            if times > 1:
                ways.update(dict.fromkeys((n, n) for n in nodes))
            before = nodes
        for status, count in statuses.items():
            end: PathEnd = "__end__" if status == "done" else ("status", status)
            for way in [*ways, *((a, end) for a in before)]:
                tally = edges.setdefault(way, [0, 0])
                tally[0] += count
                tally[1] += count if status == "failed" else 0
    return edges
