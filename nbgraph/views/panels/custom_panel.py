"""The inspector's panel of a step's custom chunks (what its nodes wrote with
`get_stream_writer()`), as escaped HTML."""

from __future__ import annotations

import html
from collections.abc import Iterable
from typing import Any

from nbgraph.views.panels.panels import table_html, text

__all__ = ["custom_html"]


def custom_html(tasks: Iterable[Any]) -> str:
    """One row per chunk a task of the step wrote: its node, its place, the chunk; "" if
    no task wrote any. Every value is escaped.

    >>> from nbgraph.engine.facts import Task
    >>> task = Task(1, 0, "<b>", custom=["<i>hi</i>"])
    >>> "&lt;i&gt;hi&lt;/i&gt;" in custom_html([task]) and "<i>hi" not in custom_html([task])
    True
    """
    rows = [
        ("", [html.escape(task.node), str(index), text(chunk)])
        for task in tasks
        for index, chunk in enumerate(task.custom)
    ]
    if not rows:
        return ""
    return "<b>custom chunks</b>" + table_html(["node", "#", "chunk"], rows)
