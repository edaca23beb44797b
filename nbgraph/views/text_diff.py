"""A long text's change, marked: what a reducer made of a 5,000-character string shows the
part that changed, not two cut-off reprs that look the same.

The common beginning and end are counted, not shown; a few characters around the change
give its place, and the old and new middles are marked (`<del>`, `<ins>`). Finding the
change compares the two texts at C speed (slices, in growing blocks); only what is shown is
turned into text. Escaped HTML.
"""

from __future__ import annotations

import html
from typing import Any

from nbgraph.record.cells import TextPrefix

__all__ = ["changed_text_html", "common_ends"]

_CONTEXT = 12
"""Characters shown on each side of the change."""
_BLOCK = 256


def changed_text_html(before: Any, after: Any, width: int = 60) -> str | None:
    """`after` with its change from `before` marked, when both are texts and the change
    would not show in `width` characters; else None (the caller shows the value as usual).

    >>> out = changed_text_html("A" * 300 + "B" + "A" * 300, "A" * 300 + "C" + "A" * 300)
    >>> "<del>B</del><ins>C</ins>" in out, "288 same" in out
    (True, True)
    >>> changed_text_html("ab", "ac") is None
    True
    """
    texts = _texts(before, after)
    if texts is None:
        return None
    old, new = texts
    if max(len(old), len(new)) <= width or old == new:
        return None
    start, end = common_ends(old, new)
    removed, added = old[start : len(old) - end], new[start : len(new) - end]
    left = new[max(0, start - _CONTEXT) : start]
    right = new[len(new) - end : len(new) - end + _CONTEXT] if end else ""
    parts = []
    if start > len(left):
        parts.append(_count(start - len(left)))
    parts.append(_piece(left))
    if removed:
        parts.append(f"<del>{_piece(removed, width)}</del>")
    if added:
        parts.append(f"<ins>{_piece(added, width)}</ins>")
    parts.append(_piece(right))
    if end > len(right):
        parts.append(_count(end - len(right)))
    return "<span class='nbgraph-text-diff'>" + "".join(parts) + "</span>"


def _texts(before: Any, after: Any) -> tuple[str, str] | None:
    """The two texts to compare (a `TextPrefix` cell: its str, joined once per trail)."""
    kinds = (str, TextPrefix)
    if not (isinstance(before, kinds) and isinstance(after, kinds)):
        return None
    return str(before), str(after)


def common_ends(old: str, new: str) -> tuple[int, int]:
    """How many characters `old` and `new` share at their start, and then at their end
    (not overlapping the start).

    >>> common_ends("abcXdef", "abcYYdef"), common_ends("ab", "abc"), common_ends("a", "a")
    ((3, 3), (2, 0), (1, 0))
    """
    most = min(len(old), len(new))
    start = _shared(lambda i, j: old[i:j] == new[i:j], most)
    rest = most - start
    lo, hi = len(old), len(new)
    end = _shared(lambda i, j: old[lo - j : lo - i] == new[hi - j : hi - i], rest)
    return start, end


def _shared(same: Any, most: int) -> int:
    """The length of the longest run `same(0, n)` holds for (n ≤ `most`), read in blocks."""
    done, block = 0, _BLOCK
    while done < most:
        step = min(block, most - done)
        if not same(done, done + step):
            while step > 1:  # halve the block that differs
                half = step // 2
                if same(done, done + half):
                    done += half
                    step -= half
                else:
                    step = half
            return done
        done += step
        block *= 2
    return done


def _piece(text: str, width: int = 10_000) -> str:
    """A piece of the text as repr writes it inside quotes (a newline as `\\n`), escaped."""
    cut = text if len(text) <= width else text[: width - 1]
    shown = repr(cut)[1:-1]
    return html.escape(shown) + ("…" if len(text) > width else "")


def _count(same: int) -> str:
    return f"<i>…{same:,} same…</i>"
