"""The inspector's panels as escaped HTML strings: a state, a step's reducer effects, a diff.

Pure functions of recorded data: no widgets here, so they are tested directly, and every
value goes through `html.escape` (an `ipywidgets.HTML` value is not escaped by the widget).
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from typing import Any

from nbgraph.primitives import MISSING
from nbgraph.record.compare.messages import is_message
from nbgraph.record.compare.values import first_difference
from nbgraph.record.text import NO_VALUE, safe_str
from nbgraph.views.display import cell_text
from nbgraph.views.table_view import EFFECT_FLAGS, NOT_APPLIED, effect_cells, readable_ids
from nbgraph.views.theme import BORDER, CHANGED, ERROR, FADED
from nbgraph.views.value_tree import value_tree_html

__all__ = [
    "CHANGED",
    "EFFECTS_CLASS",
    "FADED",
    "attempts_html",
    "diff_html",
    "effects_html",
    "error_html",
    "state_html",
    "store_ops_html",
    "table_html",
    "text",
]

_TABLE = "border-collapse:collapse;font-family:monospace;font-size:12px"
_CELL = f"border:1px solid {BORDER};padding:2px 6px;text-align:left;vertical-align:top"


def text(value: Any, width: int = 80) -> str:
    """The short display form of a value, escaped for HTML."""
    return html.escape(NO_VALUE if value is MISSING else cell_text(value, width))


_MESSAGE_WIDTH = 160
"""How much of one message a panel shows: its class, content, tool calls and their ids."""
_MESSAGE = "padding-left:1.5em;text-indent:-1.5em;overflow-wrap:anywhere"
"""A message's line: wrapped within its cell, its continuation lines indented under it."""


def _value_html(value: Any, width: int = 80, messages: int = 8) -> str:
    """The value on one line (quotes kept: `"1"` and `1` differ) when that shows it whole,
    else that line unfolding into the whole value (`views.value_tree`); a list of chat
    messages: one message per line (the last `messages` of them, after a line counting the
    earlier ones), so a conversation, a tool node's answers and their tool call ids stay
    readable. Escaped."""
    if isinstance(value, list | tuple) and value and is_message(value[-1]):
        shown = list(value[-messages:])
        if all(is_message(item) for item in shown):
            lines = [text(item, _MESSAGE_WIDTH) for item in shown]
            if hidden := len(value) - len(shown):
                lines.insert(0, f"<i>… {hidden} earlier message{'s' * (hidden != 1)}</i>")
            return "".join(
                f"<div class='nbgraph-message' style='{_MESSAGE}'>{m}</div>" for m in lines
            )
    return value_tree_html(value, width)


def table_html(
    header: Sequence[str],
    rows: Iterable[tuple[str, Sequence[str]]],
    values: Iterable[int] = (),
    kind: str = "",
) -> str:
    """An HTML table; `rows` are (row style, already-escaped cells); the cells of the
    columns `values` hold values (class `nbgraph-value`: room enough not to wrap word by
    word). With a `kind` (a CSS class), each cell also carries its column's name
    (`data-label`) and its content in one `<div>`, so that a narrow panel can lay a row out
    as one block, a line per column (the inspector's CSS, `views/static/`)."""
    wide = set(values)
    head = "".join(f"<th style='{_CELL}'>{html.escape(h)}</th>" for h in header)
    opening = [
        "<td"
        + (" class='nbgraph-value'" if i in wide else "")
        + (f" data-label='{html.escape(h)}'" if kind else "")
        + f" style='{_CELL}'>"
        + ("<div>" if kind else "")
        for i, h in enumerate(header)
    ]
    closing = "</div></td>" if kind else "</td>"
    body = "".join(
        f"<tr style='{style}'>"
        + "".join(f"{opening[i]}{c}{closing}" for i, c in enumerate(cells))
        + "</tr>"
        for style, cells in rows
    )
    classes = f" class='{html.escape(kind)}'" if kind else ""
    return (
        f"<table{classes} style='{_TABLE}'><thead><tr>{head}</tr></thead>"
        f"<tbody>{body}</tbody></table>"
    )


def state_html(
    state: dict[str, Any], changed: Iterable[str] = (), fields: Iterable[str] | None = None
) -> str:
    """The full state, one row per field; fields that just changed are highlighted."""
    changed, keep = set(changed), set(fields) if fields is not None else None
    rows = [
        (CHANGED if name in changed else "", [html.escape(name), _value_html(value)])
        for name, value in state.items()
        if keep is None or name in keep
    ]
    if not rows:
        return "<i>no fields to show</i>"
    return table_html(["field", "value"], rows, values=[1])


WRITES_SHOWN = 6
"""A field's writes shown at once in a step's effects; the rest fold under a count."""
ROWS_SHOWN = 30
"""A step's effect rows shown at once; the rest fold under a count."""
EFFECTS_CLASS = "nbgraph-effects"
"""The class of a step's effects table: in a panel narrower than the table needs, the
inspector's CSS shows each row as one block, before, writes and after each on the panel's
whole width (`views/static/clickable_graph.css`), so no value is cut off at the side."""


def effects_html(
    effects: Sequence[Any],
    fields: Iterable[str] | None = None,
    writers: Iterable[str] | None = None,
    mine: dict[str, list[bool]] | None = None,
    unapplied: str = NOT_APPLIED,
) -> str:
    """A step's reducer effects: field, before → each write with its writer → reducer → after
    (and flags, when a row has one). A field's many writes (a `Send` fan-out's) and a step's
    many rows fold under a count.

    Args:
        effects: `Effect` rows of one step.
        fields: show only these fields (None: all); a step whose rows are all filtered out
            says so (it did write).
        writers: writes by other writers are greyed out (None: none are).
        mine: per field, whether each of its writes is on the followed branch (a task's,
            not a node's: one of a fan-out's tasks); overrides `writers` for those fields.
        unapplied: the `after` cell of a step that was not applied (`table_view.not_applied`:
            paused at `interrupt()`, or failed).
    """
    keep = set(fields) if fields is not None else None
    kept = [e for e in effects if keep is None or e.field in keep]
    if not kept:
        if effects:
            hidden = sorted({html.escape(str(e.field)) for e in effects})
            return (
                f"<i>this step wrote {len(hidden)} field{'s' * (len(hidden) != 1)}, "
                f"all filtered out by the field picker: {', '.join(hidden)}</i>"
            )
        return "<i>this step wrote nothing</i>"
    flagged = any(getattr(e, name) for e in kept for name in EFFECT_FLAGS)
    rows = [_effect_row(e, writers, (mine or {}).get(e.field), flagged, unapplied) for e in kept]
    header = ["field", "before", "writes (in order)", "reducer", "after"]
    header += ["flags"] * flagged
    table = table_html(header, rows[:ROWS_SHOWN], values=[1, 2, 4], kind=EFFECTS_CLASS)
    if len(rows) > ROWS_SHOWN:
        rest = table_html(header, rows[ROWS_SHOWN:], values=[1, 2, 4], kind=EFFECTS_CLASS)
        table += _folded(f"{len(rows) - ROWS_SHOWN} more fields", rest)
    if keep is not None and len(kept) < len(effects):
        table += f"<i>{len(effects) - len(kept)} more filtered out by the field picker</i>"
    return table


def _folded(summary: str, body: str) -> str:
    return f"<details><summary><i>… {html.escape(summary)}</i></summary>{body}</details>"


def _effect_row(
    effect: Any,
    writers: Iterable[str] | None,
    mine: list[bool] | None,
    flagged: bool,
    unapplied: str = NOT_APPLIED,
) -> tuple[str, list[str]]:
    """One effect's row: its writes greyed when off the followed branch, folded when many."""
    names = set(writers) if writers is not None else None
    if mine is None or len(mine) != len(effect.writes):
        mine = [names is None or w in names for w, _ in effect.writes]
    lines = [
        f"<span style='{'' if on else FADED}'>{html.escape(str(w))}: {_value_html(v, 50)}</span>"
        for (w, v), on in zip(effect.writes, mine, strict=True)
    ]
    writes = "<br>".join(lines[:WRITES_SHOWN])
    if len(lines) > WRITES_SHOWN:
        more = len(lines) - WRITES_SHOWN
        followed = sum(mine[WRITES_SHOWN:]) if not all(mine) else 0
        note = f"{more} more writes" + (f", {followed} on the followed branch" if followed else "")
        writes += _folded(note, "<br>".join(lines[WRITES_SHOWN:]))
    style = ERROR if effect.conflict else CHANGED if effect.changed else ""
    cells = effect_cells(
        effect,
        lambda value: _value_html(value, 50, messages=2),
        unapplied,
        width=50,
        writes=writes,
        after_value=lambda value: _value_html(value, 50, messages=3),
    )
    shown = [cells[name] for name in ("field", "before", "writes", "reducer", "after")]
    return style, shown + [cells["flags"]] * flagged


_LEFT_COLUMNS, _RIGHT_COLUMNS = ("a", "from", "this", "result_a"), ("b", "to", "other", "result_b")
"""The value columns of a diff table (`Run.diff`, `Run.compare`, `Run.order_sensitivity`)."""


def diff_html(frame: Any, left: str, right: str) -> str:
    """A diff DataFrame (`Run.diff` or `Run.compare`) as an escaped table: each value whole
    (unfolding when long) and a last column, "differs at", naming the first index, key or
    character where the two values differ."""
    if frame is None or len(frame) == 0:
        return "<i>no differences</i>"
    columns = list(frame.columns)
    pair = [
        next((i for i, c in enumerate(columns) if c in names), None)
        for names in (_LEFT_COLUMNS, _RIGHT_COLUMNS)
    ]
    rows = []
    for record in frame.itertuples(index=False, name=None):
        cells = [
            value_tree_html(value, 50) if i in pair else _label_cell(columns[i], value)
            for i, value in enumerate(record)
        ]
        if None not in pair:
            cells.append(html.escape(first_difference(record[pair[0]], record[pair[1]])))
        rows.append((CHANGED, cells))
    header = [left if c in _LEFT_COLUMNS else right if c in _RIGHT_COLUMNS else c for c in columns]
    return table_html(header + ["differs at"] * (None not in pair), rows, values=pair)


def _label_cell(column: str, value: Any) -> str:
    """A diff table's non-value cell: tree ids in words, occurrence -1 as "all runs"."""
    if column == "occurrence" and value == -1:
        return "all runs"
    return html.escape(readable_ids(cell_text(value, 50)))


def error_html(error: BaseException | None, step: int | None) -> str:
    """A failed run's exception, escaped, with the step it happened at."""
    if error is None:
        return ""
    where = f" at step {step}" if step is not None else ""
    return (
        f"<div style='{ERROR}'><b>{html.escape(type(error).__name__)}{where}:</b> "
        f"{html.escape(safe_str(error))}</div>"
    )


def attempts_html(tasks: Iterable[Any]) -> str:
    """A step's retried tasks, each failed attempt with its error and the wait after it, and
    its tasks served from the node cache; empty when it has neither."""
    items = []
    for task in tasks:
        name = html.escape(str(task.node))
        if getattr(task, "from_cache", False):
            items.append(f"<li><b>{name}</b>: writes from the node cache (not run)</li>")
        attempts = getattr(task, "attempts", ())
        if not attempts:
            continue
        outcome = "failed" if task.error is not None else "succeeded"
        failed = "".join(
            f"<li style='{ERROR}'>attempt {attempt.number}: "
            f"{html.escape(type(attempt.error).__name__)}: {html.escape(safe_str(attempt.error))}"
            f" — retried after {attempt.wait:.3g} s</li>"
            for attempt in attempts
        )
        items.append(
            f"<li><b>{name}</b>: {len(attempts) + 1} attempts, the last {outcome}"
            f"<ul>{failed}</ul></li>"
        )
    if not items:
        return ""
    return f"<div><b>retries and cache</b><ul>{''.join(items)}</ul></div>"


def store_ops_html(ops: Sequence[Any]) -> str:
    """The store calls of a step's tasks: node, op, namespace, key, value ('' if none)."""
    if not ops:
        return ""
    rows = [
        (
            "",
            [html.escape(o.node), html.escape(o.op), text(o.namespace), text(o.key), text(o.value)],
        )
        for o in ops
    ]
    return "<b>store calls</b>" + table_html(["node", "op", "namespace", "key", "value"], rows)
