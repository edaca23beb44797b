"""A batch of runs (`Runs`) as escaped HTML: its summary line, its paths, and the first rows
of its table."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

from nbgraph.views.drawings.display import styled

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["runs_html"]

_FEW_INPUTS = 12
"""How many of a path's input indexes its row shows (a batch of thousands would fill the page)."""


def _few(inputs: list[int]) -> str:
    """A path's input indexes as a short text: all of them, or the first few and how many more."""
    shown = ", ".join(map(str, inputs[:_FEW_INPUTS]))
    if len(inputs) <= _FEW_INPUTS:
        return shown
    return f"{shown}, … ({len(inputs) - _FEW_INPUTS:,} more)"


def runs_html(head: str, paths: pd.DataFrame, table: pd.DataFrame, max_rows: int = 10) -> str:
    """The summary `head`, every path with its count and its first inputs (up to `max_rows`
    paths), and the first `max_rows` rows of the table; every cell and label escaped."""
    more = ""
    if len(table) > max_rows:
        more = f"<p>first {max_rows} of {len(table)} runs; see <code>runs.table</code></p>"
    path_rows = paths.head(max_rows).assign(
        inputs=[_few(i) for i in paths["inputs"].head(max_rows)]
    )
    return (
        f"<div class='nbgraph-runs'><p><b>{html.escape(head)}</b></p>"
        f"<details open><summary>paths</summary>"
        f"{styled(path_rows, uuid='nbgraph-paths').to_html()}</details>"
        f"<details open><summary>runs</summary>"
        f"{styled(table.head(max_rows), uuid='nbgraph-runs').to_html()}{more}</details></div>"
    )
