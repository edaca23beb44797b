"""Many runs read together: each run's path through the graph, and the tables of a batch
(`Runs.table`, `Runs.paths()`, `Runs.effects`) built from their records.

A run's path is its node sequence, one entry per superstep that ran tasks: `"a → b → c"`;
nodes that ran in the same superstep are joined by `+` (`"a → b+c → d"`), and a superstep
repeated back to back is counted (`"a → b×3 → c"`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from nbgraph.engine.facts import task_nodes
from nbgraph.record.text import safe_str

if TYPE_CHECKING:
    import pandas as pd

    from nbgraph.record.run import RunRecord

__all__ = ["batch_effects", "batch_table", "paths_frame", "run_summary"]

_ARROW = " → "

_BASE_COLUMNS = ("index", "status", "error_type", "error", "duration", "steps", "path")
"""The columns of `Runs.table` before the output's fields."""


def _step_nodes(run: RunRecord) -> list[str]:
    """Per superstep that ran tasks, its nodes (sorted, joined by `+`), in step order."""
    names, seen = [], {}  # (a run's steps repeat a few node tuples: each joined once)
    for nodes in task_nodes(run.log.steps, 1):  # (from the columns: no step made)
        joined = seen.get(nodes)
        if joined is None:
            joined = seen[nodes] = "+".join(sorted(dict.fromkeys(nodes)))
        if joined:
            names.append(joined)
    return names


def _run_path(run: RunRecord) -> str:
    """The compact path of a run: its supersteps' nodes joined by arrows, repeats counted.

    An empty string for a run that ran no node (it failed on its input, say).
    """
    parts: list[str] = []
    last, count = None, 0
    for nodes in [*_step_nodes(run), None]:
        if nodes == last:
            count += 1
            continue
        if last is not None:
            parts.append(last if count == 1 else f"{last}×{count}")
        last, count = nodes, 1
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


def run_summary(run: RunRecord) -> dict[str, Any]:
    """What a batch's table and paths need of one run, as plain data (a worker sends it with
    the run, so the batch's table is built without reading every run back): `status`,
    `error_type`, `error`, `steps`, `path`, and `output` (its scalar fields, flattened)."""
    error_type, error = _error_cells(run.error)
    return {
        "status": run.status,
        "error_type": error_type,
        "error": error,
        "steps": len(_step_nodes(run)),
        "path": _run_path(run),
        "output": _flat_output(run.output),
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


def batch_effects(indexes: Iterable[int], runs: Iterable[RunRecord]) -> pd.DataFrame:
    """Every run's `effects` in one DataFrame, a `run` column (the input's index) first."""
    import pandas as pd

    frames = []
    for index, run in zip(indexes, runs, strict=True):
        effects = run.effects
        frames.append(effects.assign(run=index)[["run", *effects.columns]])
    if not frames:
        return pd.DataFrame(columns=["run"])
    return pd.concat(frames, ignore_index=True).astype({"run": "int64"})
