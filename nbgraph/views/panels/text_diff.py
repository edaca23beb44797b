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

__all__ = ["changed_text_html", "changed_text_plain", "common_ends"]

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
    parts = _change(before, after, width)
    if parts is None:
        return None
    marks = {"same": "<i>…{} same…</i>", "del": "<del>{}</del>", "ins": "<ins>{}</ins>"}
    shown = "".join(
        marks[kind].format(f"{piece:,}" if kind == "same" else html.escape(piece))
        if kind in marks
        else html.escape(piece)
        for kind, piece in parts
    )
    return f"<span class='nbgraph-text-diff'>{shown}</span>"


def changed_text_plain(before: Any, after: Any, width: int = 60) -> str | None:
    """As `changed_text_html`, in plain text (for a page that shows text, not HTML): the
    old middle as `[-old-]`, the new one as `{+new+}`, as `git diff --word-diff` writes them.

    >>> changed_text_plain("A" * 30 + "B" + "A" * 30, "A" * 30 + "C" + "A" * 30, 20)
    '…18 same… AAAAAAAAAAAA[-B-]{+C+}AAAAAAAAAAAA …18 same…'
    """
    parts = _change(before, after, width)
    if parts is None:
        return None
    marks = {"same": "…{:,} same…", "del": "[-{}-]", "ins": "{{+{}+}}"}
    shown = [marks[kind].format(piece) if kind in marks else piece for kind, piece in parts]
    if parts[0][0] == "same":
        shown[0] += " "
    if parts[-1][0] == "same":
        shown[-1] = " " + shown[-1]
    return "".join(shown)


def _change(before: Any, after: Any, width: int) -> list[tuple[str, Any]] | None:
    """The pieces that show a long text's change: ("same", count) for the common beginning
    and end not shown, ("text", context), ("del", old middle), ("ins", new middle); None when
    the two are not both texts, are equal, or are short enough to read whole."""
    grown = _grown(before, after, width)
    if grown is not None:  # a text that grew at its end: nothing to compare
        (start, left, added), removed, end, right = grown, "", 0, ""
    else:
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
    parts: list[tuple[str, Any]] = []
    if start > len(left):
        parts.append(("same", start - len(left)))
    parts.append(("text", _piece(left)))
    if removed:
        parts.append(("del", _piece(removed, width)))
    if added:
        parts.append(("ins", _piece(added, width)))
    parts.append(("text", _piece(right)))
    if end > len(right):
        parts.append(("same", end - len(right)))
    return parts


def _grown(before: Any, after: Any, width: int) -> tuple[int, str, str] | None:
    """For two cells of one text trail (a transcript grown at its end, `record.cells`):
    where it grew, the context before that and what was added (at most `width` + 1
    characters of it read); None for anything else, or a text short enough to read whole."""
    if not (type(before) is TextPrefix and type(after) is TextPrefix):
        return None
    if before.trail is not after.trail or not before.length < after.length:
        return None
    if after.length <= width:
        return None
    whole = after.trail.text()  # (joined once per trail, kept joined: no copy)
    start = before.length
    return (
        start,
        whole[max(0, start - _CONTEXT) : start],
        whole[start : min(after.length, start + width + 1)],
    )


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
    """A piece of the text as repr writes it inside quotes (a newline as `\\n`), not escaped."""
    cut = text if len(text) <= width else text[: width - 1]
    return repr(cut)[1:-1] + ("…" if len(text) > width else "")
