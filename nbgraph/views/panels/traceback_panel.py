"""A failed node's traceback in the inspector: where in the node's own code it raised (file,
line, the source line), then the whole traceback to unfold. Escaped HTML."""

from __future__ import annotations

import html
import traceback
from pathlib import Path

from nbgraph.views.drawings.theme import ERROR

__all__ = ["node_frame_text", "traceback_html"]

_PACKAGE = str(Path(__file__).resolve().parents[2])
"""nbgraph's own files: frames there are the engine's, not the node's."""
_PRE = "white-space:pre-wrap;margin:0;font-size:12px"


def _node_frame(error: BaseException) -> traceback.FrameSummary | None:
    """The last frame of `error`'s traceback outside nbgraph (the node's code, or what it
    called), else the last frame; None without a traceback (a run loaded from a file)."""
    frames = traceback.extract_tb(error.__traceback__) if error.__traceback__ else []
    outside = [f for f in frames if not str(Path(f.filename).resolve()).startswith(_PACKAGE)]
    return (outside or frames or [None])[-1]


def node_frame_text(error: BaseException) -> str:
    """The error and where the node's own code raised it, first, as plain text: `ValueError:
    bad`, then `raised in convert (cell.py, line 3)` and that line; the file named without
    its folder (a server's path means nothing to a reader). "" without a traceback.

    >>> def convert():
    ...     raise ValueError("bad")
    >>> try:
    ...     convert()
    ... except ValueError as error:
    ...     said, where = node_frame_text(error).splitlines()[:2]
    >>> said, where.startswith("raised in convert (<doctest"), where.endswith("line 2)")
    ('ValueError: bad', True, True)
    """
    frame = _node_frame(error) if error.__traceback__ is not None else None
    if frame is None:
        return ""
    try:
        message = str(error)
    except Exception:  # (a broken __str__: the class will do)
        message = ""
    said = f"{type(error).__name__}: {message}" if message else type(error).__name__
    where = f"raised in {frame.name} ({Path(frame.filename).name}, line {frame.lineno})"
    line = f"\n    {frame.line}" if frame.line else ""
    return f"{said}\n{where}{line}"


def traceback_html(error: BaseException | None, node: str | None = None) -> str:
    """Where `node`'s code raised `error` (file, line number, source line) and the whole
    traceback under a `<details>`; "" when there is no traceback to show."""
    if error is None or error.__traceback__ is None:
        return ""
    frame = _node_frame(error)
    where = ""
    if frame is not None:
        who = f"node {node!r}" if node else "the node"
        source = (
            f"<pre style='{_PRE}'>    {html.escape(frame.line or '')}</pre>" if frame.line else ""
        )
        where = (
            f"<div>raised in {html.escape(who)}: <code>{html.escape(frame.name)}</code>, "
            f"{html.escape(frame.filename)}, line {frame.lineno}{source}</div>"
        )
    text = "".join(traceback.format_exception(type(error), error, error.__traceback__))
    return (
        f"<div style='{ERROR}'>{where}<details><summary>traceback</summary>"
        f"<pre style='{_PRE}'>{html.escape(text)}</pre></details></div>"
    )
