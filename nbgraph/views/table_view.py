"""How a run's tables show in a notebook: compact, readable, escaped — the data unchanged.

`run.effects` keeps every column as data; shown, its flags fold into one column, values
keep their quotes (`'1'` and `1` differ), long text is left-aligned, an unapplied step's
`after` says so instead of looking deleted, and tree ids (`task:2:0:b`, `join:3:d`,
`reset:…`) become words. `run.steps` shows durations as "0.12 ms". `shown(frame, html)`
gives a DataFrame (a subclass only in how it displays; slices are plain DataFrames).

`effect_cells` is the one HTML renderer of an effect row (its cells by column name): this
table and the inspector's step panel (`views/panels.py` `effects_html`) both show its cells.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from functools import cache
from typing import Any, ClassVar

from nbgraph.primitives import MISSING
from nbgraph.record.text import NO_VALUE, short
from nbgraph.views.text_diff import changed_text_html
from nbgraph.views.theme import BORDER, CHANGED, FADED

__all__ = [
    "EFFECT_FLAGS",
    "NOT_APPLIED",
    "duration_text",
    "effect_cells",
    "effects_table_html",
    "readable_id",
    "readable_ids",
    "shown",
    "steps_table_html",
]

_CELL = (
    f"border:1px solid {BORDER};padding:2px 6px;text-align:left;vertical-align:top;"
    "max-width:30em;overflow-wrap:anywhere"  # a long value wraps in its column
)
_TABLE = "border-collapse:collapse;font-family:monospace;font-size:12px"
_WIDTH = 60
_MAX_ROWS = 200
NOT_APPLIED = "(not applied: the step failed)"
PAUSED = "(not applied yet: paused for an answer)"
"""An `after` cell of a step paused at `interrupt()`: its writes wait for the answer."""


def ending(tasks: Any) -> str:
    """Why a step's writes never reached the state: "paused" (a task asked with
    `interrupt()` and none failed) or "failed"."""
    tasks = list(tasks)
    if any(t.interrupts for t in tasks) and not any(t.error is not None for t in tasks):
        return "paused"
    return "failed"


def not_applied(tasks: Any) -> str:
    """The `after` cell of a step that was not applied: paused or failed (`ending`)."""
    return PAUSED if ending(tasks) == "paused" else NOT_APPLIED


def readable_id(tree_id: Any) -> str:
    """A state-tree id in words: `task:2:0:b` → "b (step 2)", `join:3:d` → "join before d
    (step 3)", `reset:4:x` → "reset before x (step 4)", `merge:0` → "input"."""
    text = str(tree_id)
    kind, _, rest = text.partition(":")
    parts = rest.split(":")
    if kind == "task" and len(parts) >= 3:
        return f"{':'.join(parts[2:])} (step {parts[0]})"
    if kind == "merge":
        return "input" if rest == "0" else f"merge of step {rest}"
    if text == "join:end":
        return "join at END"
    if kind in ("join", "reset") and len(parts) >= 2 and parts[0].isdigit():
        what = "join of the branches into" if kind == "join" else "reset before"
        return f"{what} {':'.join(parts[1:])} (step {parts[0]})"
    if kind == "reset":
        return f"reset ({rest[:8]}…)" if len(rest) > 8 else f"reset ({rest})"
    if kind == "fork":
        return f"fork from checkpoint {rest[:8]}…"
    return text


def readable_ids(text: str) -> str:
    """Every tree id inside a text (a branch label, a note) in words."""
    return re.sub(r"\b(?:task|join|reset|merge|fork):[\w:.+#-]+", lambda m: readable_id(m[0]), text)


def duration_text(seconds: Any) -> str:
    """Seconds as "0.12 ms", "3.4 s", "2 min 5 s"; "" for none."""
    if seconds is None or seconds != seconds:  # None, NaN
        return ""
    seconds = float(seconds)
    if seconds < 1e-3:
        return f"{seconds * 1e6:.0f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.3g} ms"
    if seconds < 60:
        return f"{seconds:.3g} s"
    return f"{int(seconds // 60)} min {seconds % 60:.0f} s"


def _cell(value: Any, width: int = _WIDTH) -> str:
    """A value's repr (quotes kept), cut to `width`, escaped; `NO_VALUE` for no value."""
    if value is MISSING:
        return NO_VALUE
    return html.escape(short(value, width))  # (reads only what it shows)


def _changed_cell(before: Any, after: Any, width: int = _WIDTH) -> str:
    """An `after` cell: a long text that changed shows its changed part marked
    (`views.text_diff`), anything else as `_cell`."""
    marked = changed_text_html(before, after, width)
    return marked if marked is not None else _cell(after, width)


def _table(header: list[str], rows: list[tuple[str, list[str]]], total: int) -> str:
    """The table, in a box that scrolls sideways when the output is narrower than the
    table: each cell keeps its room (`_room`), no column is squeezed to a letter a line."""
    head = "".join(
        f"<th style='{_CELL};{_room(html.escape(h))}'>{html.escape(h)}</th>" for h in header
    )
    body = "".join(
        f"<tr style='{style}'>"
        + "".join(f"<td style='{_CELL};{_room(c)}'>{c}</td>" for c in cells)
        + "</tr>"
        for style, cells in rows
    )
    more = f"<p><i>first {len(rows)} of {total} rows</i></p>" if total > len(rows) else ""
    return (
        f"<div style='overflow-x:auto'><table style='{_TABLE}'><thead><tr>{head}</tr></thead>"
        f"<tbody>{body}</tbody></table></div>{more}"
    )


_ROOM = 22
"""The characters a line a long cell keeps (at most `max-width`, 30em): at any output width,
its text wraps at 22 characters or more, never a few letters a line."""


def _room(cell: str) -> str:
    """A cell's min-width (a cell's escaped HTML): its longest line, in characters of the
    table's monospace font (`ch`), up to `_ROOM`: a short cell never wraps, a long one wraps
    at `_ROOM` characters or more.

    >>> _room("step"), _room("a: 1<br>b: <i>&#x27;12345&#x27;</i>"), _room("x" * 100)
    ('min-width:4ch', 'min-width:10ch', 'min-width:22ch')
    """
    lines = (html.unescape(re.sub(r"<[^>]*>", "", line)) for line in cell.split("<br>"))
    return f"min-width:{min(max(map(len, lines)), _ROOM)}ch"


EFFECT_FLAGS = ("conflict", "overwrite_bypass", "dropped_key", "root_reset")
"""The flag columns of an effect row its HTML names, in this order (`effect_cells`)."""


def effect_cells(
    effect: Any,
    value: Callable[[Any], str],
    unapplied: str,
    width: int = _WIDTH,
    writes: str | None = None,
    after_value: Callable[[Any], str] | None = None,
) -> dict[str, str]:
    """One effect row's HTML cells, by column name: `field`, `reducer`, `before`, `writes`,
    `after` (a long text's change marked, `views.text_diff`; `unapplied` in italics for a
    step not applied) and `flags` (`EFFECT_FLAGS` it has). The one HTML renderer of an effect
    row: the notebook's `run.effects` table and the inspector's step panel (`panels`) both
    show these cells, each picking the columns it shows.

    Args:
        effect: an `Effect`, or a `run.effects` row read as one (`_FrameRow`).
        value: a value's escaped HTML (`before`, each write's, `after`).
        writes: the writes cell, if the caller draws it (the inspector greys and folds).
        after_value: the `after` value's HTML, if not `value`'s.
    """
    after = f"<i>{html.escape(unapplied)}</i>"
    if effect.applied:  # (the table's cells, if it has them: a text trail not joined)
        cell = getattr(effect, "cell", None)
        old, new = (cell("before"), cell("after")) if cell else (effect.before, effect.after)
        marked = changed_text_html(old, new, width)
        after = marked if marked is not None else (after_value or value)(effect.after)
    if writes is None:
        writes = "<br>".join(f"{html.escape(str(w))}: {value(v)}" for w, v in effect.writes)
    return {
        "field": html.escape(str(effect.field)),
        "reducer": html.escape(str(effect.reducer)),
        "before": value(effect.before),
        "writes": writes or "—",
        "after": after,
        "flags": html.escape(", ".join(name for name in EFFECT_FLAGS if getattr(effect, name))),
    }


class _FrameRow:
    """A `run.effects` row (a record of the frame) read as an `Effect`: a column the user
    left out of the frame reads as its usual value (applied, not changed, no flag)."""

    __slots__ = ("record",)
    _USUAL: ClassVar[dict[str, Any]] = {"applied": True, "changed": False, "point": ""}

    def __init__(self, record: dict[str, Any]) -> None:
        self.record = record

    def __getattr__(self, name: str) -> Any:
        record = object.__getattribute__(self, "record")
        if name in record:
            return record[name]
        if name in _FrameRow._USUAL or name in EFFECT_FLAGS:
            return _FrameRow._USUAL.get(name, False)
        raise AttributeError(name)

    def cell(self, column: str) -> Any:
        return getattr(self, column)


def effects_table_html(frame: Any, paused: frozenset[int] = frozenset()) -> str:
    """`run.effects` compact: step, field, where, reducer, before, writes, after, flags.
    `paused`: the steps paused at `interrupt()` (their writes wait for an answer; they did
    not fail)."""
    rows = []
    for record in frame.head(_MAX_ROWS).to_dict("records"):
        row = _FrameRow(record)
        waiting = row.step in paused
        cells = effect_cells(row, _cell, PAUSED if waiting else NOT_APPLIED)
        if not row.applied:
            more = "paused" if waiting else "not applied"
            cells["flags"] = f"{cells['flags']}, {more}" if cells["flags"] else more
        style = CHANGED if row.changed else "" if row.applied else FADED
        where = html.escape(readable_id(row.point)) if row.point else ""
        shown = [str(row.step), cells["field"], where]
        shown += [cells[name] for name in ("reducer", "before", "writes", "after", "flags")]
        rows.append((style, shown))
    header = ["step", "field", "at", "reducer", "before", "writes", "after", "flags"]
    note = "<p><i>compact view: every column is in the DataFrame (run.effects.columns)</i></p>"
    return _table(header, rows, len(frame)) + note


def steps_table_html(frame: Any) -> str:
    """`run.steps` readable: durations in units, tree ids in words, quotes on values."""
    rows = []
    for row in frame.head(_MAX_ROWS).to_dict("records"):
        cells = [
            str(row["step"]),
            html.escape(str(row["node"])),
            html.escape(str(row["task_id"])),
            html.escape(str(row["kind"])),
            html.escape(", ".join(map(str, row["triggers"]))),
            html.escape(", ".join(map(str, row["writes"]))),
            duration_text(row["duration"]) or "unknown",
            html.escape(str(row["status"])),
            "" if row["error"] is None else html.escape(str(row["error"])),
        ]
        rows.append(("", cells))
    header = ["step", "node", "task id", "kind", "triggers", "writes", "duration", "status"]
    return _table([*header, "error"], rows, len(frame))


def values_table_html(frame: Any) -> str:
    """Any table of values (`run.states`, `run.field_history(f)`, `run.custom`, `run.diff`,
    `run.compare`): each cell its repr, quotes kept (`['fetch', 'JPY']`), `NO_VALUE` for no
    value, numpy scalars as plain numbers, a DataFrame cell as its shape; durations in units."""
    header = [str(frame.index.name or ""), *map(str, frame.columns)]
    times = [str(c) in _DURATIONS for c in frame.columns]
    rows = []
    for index, record in zip(
        frame.index[:_MAX_ROWS],
        frame.head(_MAX_ROWS).itertuples(index=False, name=None),
        strict=True,
    ):
        cells = [
            html.escape(duration_text(v)) if timed else _cell(v)
            for v, timed in zip(record, times, strict=True)
        ]
        rows.append(("", [html.escape(short(index, 30)), *cells]))
    return _table(header, rows, len(frame))


_DURATIONS = frozenset({"duration"})


def shown(frame: Any, render: Callable[[Any], str]) -> Any:
    """`frame` as a DataFrame that displays as `render(frame)` in a notebook (its data, text
    form and every operation unchanged). What operations return displays the same way
    (`run.effects.head()`, `.loc[...]`, `.query(...)`), or, where `render` needs a column the
    result lost (`run.effects[["field", "after"]]`), as `values_table_html`: quotes kept on
    strings in every slice, as in the whole table."""
    return _shown_class()(frame, render=render)


@cache
def _shown_class() -> type:
    import pandas as pd

    class ShownFrame(pd.DataFrame):
        """A DataFrame with its own notebook display (`views.table_view.shown`)."""

        _metadata: ClassVar[list[str]] = ["_render"]

        def __init__(self, data: Any = None, *args: Any, render: Any = None, **kw: Any) -> None:
            super().__init__(data, *args, **kw)
            self._render = render

        @property
        def _constructor(self) -> type:
            return ShownFrame  # (pandas copies `_render` onto what it makes: `_metadata`)

        def _repr_html_(self) -> str:
            render = getattr(self, "_render", None) or values_table_html
            try:
                return render(self)
            except Exception:  # (a column its view reads left out, or changed in kind)
                return values_table_html(self)

    return ShownFrame
