"""A value shown whole in a panel: short on one line, and when that cuts it, a JSON-like tree
to unfold (one `<details>` per nested list, tuple, dict or object) and its full text to copy.

Pure functions returning escaped HTML: every key and value goes through `html.escape`.
"""

from __future__ import annotations

import html
import itertools
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from nbgraph.primitives import MISSING
from nbgraph.record.text import NO_VALUE, safe_repr, safe_str
from nbgraph.views.drawings.dot import short
from nbgraph.views.drawings.theme import BORDER

__all__ = ["COPY_CHARS", "value_tree_html"]

_ITEMS = 100  # items of one list or dict unfolded; the rest are counted
_DEPTH = 6  # nesting unfolded; deeper values show as their text
COPY_CHARS = 20_000  # a value whose text is longer has no "as text" block (the tree stays)
_PRE = "white-space:pre-wrap;word-break:break-all;margin:0;user-select:text"
_INDENT = f"padding-left:1.2em;border-left:1px solid {BORDER}"


def value_tree_html(value: Any, width: int = 80) -> str:
    """The value in one line of at most `width` characters when that shows all of it; else
    that line as the summary of a `<details>` holding the value's tree and its full text.

    >>> print(value_tree_html("1"), value_tree_html(1))
    &#x27;1&#x27; 1
    >>> "<details" in value_tree_html(list(range(40)), 20)
    True
    """
    if value is MISSING:
        return NO_VALUE
    table = frame_html(value)
    if table is not None:  # a DataFrame or Series: a small table, not pandas' internals
        shown = " open" if width >= 80 else ""  # (open in the state panel, folded in a cell)
        return f"<details class='nbgraph-value'{shown}>{table}</details>"
    whole = _fitting(value, width)
    if whole is not None:
        return html.escape(whole)
    tree = _children(value, 0)
    full = None if tree and _large(value) else _full(value)  # (a long log: the tree)
    if tree and full is not None and len(full) <= COPY_CHARS:  # and the text to copy
        tree += f"<details><summary><i>as text</i></summary>{_pre(full)}</details>"
    summary = f"<summary>{html.escape(short(value, width))}</summary>"
    return f"<details class='nbgraph-value'>{summary}{tree or _pre(full or '')}</details>"


def _fitting(value: Any, width: int) -> str | None:
    """The value's whole repr if it is at most `width` long, else None — found without
    building the repr of a long container (`short` reads only as far as it shows)."""
    if short(value, width).endswith("…"):
        return None
    full = safe_repr(value)
    return full if len(full) <= width else None


def _large(value: Any) -> bool:
    """A container of more items than a copy block could hold anyway."""
    try:
        return len(value) > COPY_CHARS // 4
    except TypeError:
        return False


_FRAME_ROWS, _FRAME_COLUMNS = 5, 6
"""The rows and columns of a DataFrame (a Series) a panel shows; the rest are counted."""
_FRAME_CELL = f"border:1px solid {BORDER};padding:0 4px;text-align:left"


def frame_html(value: Any) -> str | None:
    """A pandas DataFrame or Series as a `<summary>` (its kind and shape) and a table of its
    first rows and columns, escaped; None for anything else (pandas is not imported here).

    >>> import pandas as pd
    >>> out = frame_html(pd.DataFrame({"x": [1, 2], "y": ["a", "<b>"]}))
    >>> "DataFrame 2×2" in out, "&#x27;&lt;b&gt;&#x27;" in out, "_mgr" in out
    (True, True, False)
    """
    pandas = sys.modules.get("pandas")
    if pandas is None or not isinstance(value, pandas.DataFrame | pandas.Series):
        return None
    try:
        frame = value.to_frame() if isinstance(value, pandas.Series) else value
        part = frame.iloc[:_FRAME_ROWS, :_FRAME_COLUMNS]
        head = "".join(f"<th style='{_FRAME_CELL}'>{_label(c)}</th>" for c in part.columns)
        rows = "".join(
            f"<tr><th style='{_FRAME_CELL}'>{_label(index)}</th>"
            + "".join(f"<td style='{_FRAME_CELL}'>{html.escape(short(v, 30))}</td>" for v in row)
            + "</tr>"
            for index, row in zip(part.index, part.itertuples(index=False, name=None), strict=True)
        )
    except Exception:  # a half-built frame: its text (guarded) says so
        return None
    more = []
    if len(frame) > _FRAME_ROWS:
        more.append(f"{len(frame) - _FRAME_ROWS:,} more rows")
    if frame.shape[1] > _FRAME_COLUMNS:
        more.append(f"{frame.shape[1] - _FRAME_COLUMNS:,} more columns")
    note = f"<div><i>… {', '.join(more)}</i></div>" if more else ""
    return (
        f"<summary>{html.escape(short(value, 60))}</summary>"
        f"<table style='border-collapse:collapse'><thead><tr><th style='{_FRAME_CELL}'></th>"
        f"{head}</tr></thead><tbody>{rows}</tbody></table>{note}"
    )


def _label(value: Any) -> str:
    return html.escape(safe_str(value)[:40])


def _node(value: Any, depth: int) -> str:
    """One nested value: its text when short or too deep, else a `<details>` of its items."""
    table = frame_html(value)
    if table is not None:
        return f"<details>{table}</details>"
    whole = _fitting(value, 200)
    if whole is not None and (len(whole) <= 60 or _items(value) is None or depth >= _DEPTH):
        return html.escape(whole)
    if depth >= _DEPTH or _items(value) is None:
        inside = _pre(_full(value))
    else:
        inside = _children(value, depth)
    return f"<details><summary>{html.escape(short(value, 60))}</summary>{inside}</details>"


class _Cut(str):
    """The repr of a long str's or bytes' first characters; `length`: what the whole has."""

    length: int


def _full(value: Any) -> str:
    """The value's text to copy: its repr, or for a str or bytes longer than `COPY_CHARS`
    the repr of its beginning (not the whole repr of a 10 MB transcript at every step)."""
    if isinstance(value, str | bytes | bytearray) and len(value) > COPY_CHARS:
        cut = _Cut(safe_repr(value[: COPY_CHARS + 1]))
        cut.length = len(value)
        return cut
    return safe_repr(value)


def _pre(full: str) -> str:
    """A value's text to read and copy, at most `COPY_CHARS` characters of it (a panel is
    sent to the browser at every step: the rest is counted, not sent)."""
    shown = html.escape(full[:COPY_CHARS])
    if len(full) > COPY_CHARS:
        whole = full.length if isinstance(full, _Cut) else len(full)
        more = whole - COPY_CHARS
        shown += f"<i>… {more:,} more characters (the value: run.state_at(step)[field])</i>"
    return f"<pre style='{_PRE}'>{shown}</pre>"


def _children(value: Any, depth: int) -> str:
    """The items of a container, one per line under its summary ("" if not a container)."""
    items = _items(value)
    if items is None:
        return ""
    left = items.pop()[1] if items and items[-1][0] is _MORE else 0
    lines = [
        f"<div><span style='opacity:0.7'>{html.escape(key)}:</span> {_node(item, depth + 1)}</div>"
        for key, item in items[:_ITEMS]
    ]
    left += max(len(items) - _ITEMS, 0)
    if left:
        lines.append(f"<div><i>… {left} more (see the table or state_at)</i></div>")
    return f"<div style='{_INDENT}'>{''.join(lines)}</div>"


def _items(value: Any) -> list[tuple[str, Any]] | None:
    """(label, item) pairs of a list, tuple, set, mapping or object with fields (at most
    `_ITEMS`, then one `_More` of the count left); else None."""
    if isinstance(value, Mapping):
        return _first((safe_repr(k), v) for k, v in value.items()) + _more(value)
    if isinstance(value, Sequence) and not isinstance(value, str | bytes | bytearray):
        return _first((f"[{i}]", v) for i, v in enumerate(value)) + _more(value)
    if isinstance(value, set | frozenset):
        return _first(("·", v) for v in value) + _more(value)
    fields = getattr(value, "__dict__", None)
    if isinstance(fields, dict) and fields:
        return [(str(k), v) for k, v in fields.items()]
    return None


_MORE = "…more"


def _first(pairs: Any) -> list[tuple[str, Any]]:
    return list(itertools.islice(pairs, _ITEMS))


def _more(value: Any) -> list[tuple[str, Any]]:
    """`[(_MORE, count)]` for a container of more than `_ITEMS` items, else `[]`."""
    return [(_MORE, len(value) - _ITEMS)] if len(value) > _ITEMS else []
