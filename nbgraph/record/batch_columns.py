"""One run's tables as columns (plain lists, one per column), made when the run finishes, and a
batch's frames built from them by joining each column once, never by a loop over runs.

A run's columns are `{"effects": {column: [cells]}, "tasks": {column: [cells]}}`: the rows of
`Run.effects` and `Run.steps`, column by column. Every column is plain data but three of the
effects' (`before`, `writes`, `after`: the state's values); to travel to another process or into
a batch's index file those three are encoded with the value codec (`encode_values`), a list
that grows step by step encoded once for all its cells (`ListPrefix`), and decoded when a table
first needs them (`decode_values`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import chain
from operator import itemgetter
from typing import TYPE_CHECKING, Any

from nbgraph.codec.decoding import decode_value
from nbgraph.codec.values import encode_value
from nbgraph.record.cells import ListPrefix, TextPrefix
from nbgraph.record.effects import EFFECT_COLUMNS, collector_paused
from nbgraph.record.tables import TASK_COLUMNS, task_rows

if TYPE_CHECKING:
    import pandas as pd

    from nbgraph.record.run import RunRecord

__all__ = [
    "VALUE_COLUMNS",
    "BrokenColumns",
    "batch_frame",
    "check_columns",
    "decode_values",
    "encode_values",
    "run_columns",
]

VALUE_COLUMNS = ("before", "writes", "after")
"""The effects' columns that hold the state's values (encoded to travel, as `"values"`)."""

_NUMBERS = {"step": "int64", "duration": "float64", "attempts": "int64"}
_FLAGS = ("changed", "applied", "conflict", "overwrite_bypass", "dropped_key", "root_reset")


class BrokenColumns(ValueError):
    """A run's columns are not what `run_columns` makes (a damaged index file, say)."""


def _transposed(rows: Sequence[tuple], columns: Sequence[str]) -> dict[str, Sequence]:
    """The rows' cells column by column, each column a tuple (smaller than a list)."""
    if not rows:
        return dict.fromkeys(columns, ())
    return dict(zip(columns, zip(*rows, strict=True), strict=True))


def run_columns(run: RunRecord) -> dict[str, dict[str, Sequence]]:
    """The rows of `run.effects` and `run.steps` as columns: the same cells, same order.

    The run keeps neither its effect rows nor its state tree for this (a batch of many runs
    would hold them all): made here and dropped, unless the run has them already."""
    from nbgraph.record.run import RunRecord
    from nbgraph.record.subruns.trees import subrun_positions
    from nbgraph.record.tree import build_tree

    cached = vars(run)
    effects = cached.get("effect_list") or RunRecord.effect_list.func(run)
    tree = cached.get("tree")
    with collector_paused():  # (many small acyclic objects, as `run.tree`)
        nodes = (tree or build_tree(run.log)).tasks()
        tasks = task_rows(nodes, subrun_positions(run.log))
        return {
            "effects": _transposed(effects, EFFECT_COLUMNS),
            "tasks": _transposed(tasks, TASK_COLUMNS),
        }


# --- the values, encoded to travel ---------------------------------------------------------


_BARE = (str, int, bool, type(None))
"""Values a cell holds as themselves (JSON keeps them as they are)."""


def encode_values(columns: dict[str, dict[str, Sequence]]) -> dict[str, dict[str, Any]]:
    """`columns` with the effects' value columns encoded as JSON data in `"values"`:
    `{"trails": [list, ...], "cells": [cell, ...]}`, the cells of `before`, `writes` and
    `after` one column after the other. A cell is a str, int, bool or null as itself,
    `["v", value]` for any other value (encoded by the value codec), `["p", trail, length]`
    for a `ListPrefix` (the first `length` items of trail number `trail`, encoded once), and
    `["w", [cell, ...]]` for a row's writes (the values written; the writers are the row's
    `writers`).

    Raises:
        ValueTooDeepError: a value nests deeper than a file may hold.
    """
    trails: dict[int, int] = {}  # id of a shared list -> its number in "trails"
    encoded_trails: list[Any] = []

    def cell(value: Any) -> Any:
        kind = type(value)
        if kind in _BARE:
            return value
        if kind is ListPrefix:
            items = value._items
            number = trails.get(id(items))
            if number is None:
                number = trails[id(items)] = len(encoded_trails)
                encoded_trails.append(encode_value(items))
            return ["p", number, len(value)]
        return ["v", encode_value(value.copy() if kind is TextPrefix else value)]

    effects = columns["effects"]
    with collector_paused():  # (many small acyclic containers: see `collector_paused`)
        writes = [["w", [cell(value) for _, value in row]] for row in effects["writes"]]
        cells = [*map(cell, effects["before"]), *writes, *map(cell, effects["after"])]
    plain = {name: cells for name, cells in effects.items() if name not in VALUE_COLUMNS}
    return {
        "effects": {**plain, "values": {"trails": encoded_trails, "cells": cells}},
        "tasks": columns["tasks"],
    }


def decode_values(columns: dict[str, dict[str, Any]]) -> dict[str, dict[str, Sequence]]:
    """The columns `encode_values` made, their values decoded (a list shared by several
    cells comes back as one list, its cells `ListPrefix`es of it, as in `run.effects`);
    columns whose values are not encoded are returned as they are.

    Raises:
        BrokenColumns: the encoded values are not what `encode_values` makes.
    """
    effects = columns["effects"]
    if "values" not in effects:
        return columns
    try:
        with collector_paused():  # (many small acyclic containers: see `collector_paused`)
            split = _value_columns(effects["values"], effects["writers"], len(effects["step"]))
    except (KeyError, TypeError, ValueError, IndexError) as error:
        why = f"{type(error).__name__}: {error}"
        raise BrokenColumns(f"its effects' values are damaged ({why})") from None
    plain = {name: cells for name, cells in effects.items() if name != "values"}
    return {"effects": {**plain, **split}, "tasks": columns["tasks"]}


def _value_columns(values: dict[str, Any], writers: Sequence, rows: int) -> dict[str, list]:
    trails = [decode_value(items) for items in values["trails"]]
    cells = values["cells"]
    if len(cells) != rows * len(VALUE_COLUMNS):
        raise ValueError(f"{len(cells)} value cells for {rows} effects (3 a row expected)")
    return {
        "before": [_decoded(cell, trails) for cell in cells[:rows]],
        "writes": [
            _decoded_writes(cell, names, trails)
            for cell, names in zip(cells[rows : 2 * rows], writers, strict=True)
        ],
        "after": [_decoded(cell, trails) for cell in cells[2 * rows :]],
    }


def _decoded(cell: Any, trails: list[list]) -> Any:
    if type(cell) is not list:
        return cell
    kind = cell[0]
    if kind == "v" and len(cell) == 2:
        return decode_value(cell[1])
    if kind == "p" and len(cell) == 3 and type(cell[2]) is int:
        trail = trails[cell[1]]
        if type(trail) is not list or not 0 <= cell[2] <= len(trail):
            raise ValueError(f"a cell reads {cell[2]} items of trail {cell[1]}")
        return ListPrefix(trail, cell[2])
    raise ValueError(f"a value cell is {cell!r:.60}; expected ['v', value] or ['p', trail, n]")


def _decoded_writes(cell: Any, writers: list[str], trails: list[list]) -> list[tuple]:
    if not (type(cell) is list and len(cell) == 2 and cell[0] == "w"):
        raise ValueError(f"a writes cell is {cell!r:.60}; expected ['w', [value, ...]]")
    if len(cell[1]) != len(writers):
        raise ValueError(f"{len(cell[1])} values written by {len(writers)} writers")
    return [
        (writer, _decoded(value, trails)) for writer, value in zip(writers, cell[1], strict=True)
    ]


def check_columns(columns: Any) -> None:
    """Raise `BrokenColumns` unless `columns` has every column of both tables, as lists of
    one length per table (what is cheap to check; the values are checked when decoded)."""
    if not isinstance(columns, dict):
        raise BrokenColumns(f"its columns are a {type(columns).__name__}, not an object")
    expected = {
        "effects": [n for n in EFFECT_COLUMNS if n not in VALUE_COLUMNS],
        "tasks": list(TASK_COLUMNS),
    }
    for table, names in expected.items():
        data = columns.get(table)
        if not isinstance(data, dict):
            raise BrokenColumns(f"it has no {table!r} columns")
        missing = [n for n in names if not isinstance(data.get(n), list)]
        if missing:
            raise BrokenColumns(f"its {table!r} lack the column(s) {missing}")
        if len({len(data[n]) for n in names}) > 1:
            raise BrokenColumns(f"its {table!r} columns are of different lengths")
    effects = columns["effects"]
    if "values" not in effects and not all(isinstance(effects.get(n), list) for n in VALUE_COLUMNS):
        raise BrokenColumns("its effects have neither value columns nor encoded values")


# --- a batch's frame -------------------------------------------------------------------------


def batch_frame(
    indexes: Sequence[int],
    tables: Sequence[dict[str, Sequence]],
    columns: Sequence[str],
    typed: Callable[[str], str | None] | None = None,
) -> pd.DataFrame:
    """One DataFrame of many runs' tables (each a dict of columns): a `run` column (each
    table's index, repeated for its rows) then `columns`, every column joined once.

    Cells stay the Python objects in the columns; steps, durations and attempts are numbers,
    flags bools (as in a run's own tables).
    """
    import numpy as np
    import pandas as pd

    first = columns[0]
    counts = np.fromiter((len(table[first]) for table in tables), dtype="int64", count=len(tables))
    total = int(counts.sum())
    data = {"run": pd.Series(np.repeat(np.asarray(indexes, dtype="int64"), counts))}
    for name in columns:
        dtype = _NUMBERS.get(name) or ("bool" if name in _FLAGS else object)
        cells = chain.from_iterable(map(itemgetter(name), tables))
        # fromiter: numpy must not look inside list-like cells for a shape
        data[name] = pd.Series(np.fromiter(cells, dtype=dtype, count=total), dtype=dtype)
    return pd.DataFrame(data, columns=["run", *columns])
