"""How `run.order_sensitivity()` shows in a notebook: both fold orders' results whole, the
differing items marked.

One item a line, quotes kept, the items where the results part marked: never cut before the
difference the table is there to show (the data unchanged)."""

from __future__ import annotations

import html
from typing import Any

from nbgraph.record.text import safe_repr, short
from nbgraph.views.theme import BORDER, CHANGED

__all__ = ["order_table_html"]

_CELL = f"border:1px solid {BORDER};padding:2px 6px;text-align:left;vertical-align:top"
_TABLE = "border-collapse:collapse;font-family:monospace;font-size:12px"
_ITEM_WIDTH = 160
_ITEMS = 40


def order_table_html(frame: Any) -> str:
    """`run.order_sensitivity()` readable: per row the step, field and reducer, each order
    with its result (a list: one item a line, the items that differ from the other result
    marked), and where they first differ. Escaped.

    >>> import pandas as pd
    >>> row = {"step": 2, "field": "notes", "reducer": "append", "orders_tried": 2,
    ...        "order_a": ["a", "b"], "result_a": ["a", "b"], "order_b": ["b", "a"],
    ...        "result_b": ["b", "a"], "differs_at": "index 0: 'a' vs 'b'"}
    >>> "&#x27;a&#x27;" in order_table_html(pd.DataFrame([row]))
    True
    """
    header = ["step", "field", "reducer", "order a", "result a", "order b", "result b", "differ"]
    head = "".join(f"<th style='{_CELL}'>{html.escape(h)}</th>" for h in header)
    rows = []
    for row in frame.to_dict("records"):
        a, b = row["result_a"], row["result_b"]
        cells = [
            str(row["step"]),
            html.escape(str(row["field"])),
            html.escape(str(row["reducer"])),
            html.escape(" → ".join(map(str, row["order_a"]))),
            _result_html(a, b),
            html.escape(" → ".join(map(str, row["order_b"]))),
            _result_html(b, a),
            html.escape(str(row.get("differs_at", ""))),
        ]
        rows.append("<tr>" + "".join(f"<td style='{_CELL}'>{c}</td>" for c in cells) + "</tr>")
    body = "".join(rows)
    return f"<table style='{_TABLE}'><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _result_html(value: Any, other: Any) -> str:
    """A list or tuple one item a line (the items unlike `other`'s at the same index
    marked); anything else as its repr. Long items are cut at their end, never the list."""
    if not isinstance(value, list | tuple):
        return _marked(_repr(value), not _same(value, other))
    lines = []
    for index, item in enumerate(value[:_ITEMS]):
        differs = index >= len(other) or not _same(item, other[index])
        lines.append(_marked(f"[{index}] {_repr(item)}", differs))
    if len(value) > _ITEMS:
        lines.append(f"<i>… {len(value) - _ITEMS} more</i>")
    return "<br>".join(lines) or "[]"


def _same(left: Any, right: Any) -> bool:
    try:
        return bool(left == right)
    except Exception:  # (a value whose == raises or is ambiguous: compared by its text)
        return safe_repr(left) == safe_repr(right)


def _repr(value: Any) -> str:
    return html.escape(short(value, _ITEM_WIDTH))  # (reads only what it shows)


def _marked(text: str, differs: bool) -> str:
    return f"<span style='{CHANGED}'>{text}</span>" if differs else text
