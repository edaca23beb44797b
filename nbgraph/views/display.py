"""Jupyter display: mimebundles for drawings and runs, and escaped, styled HTML tables.

Everything that came from a user or a node is escaped before it reaches HTML: pandas'
Styler does not escape by default, so every table goes through `styled()`.
"""

from __future__ import annotations

import html
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from nbgraph.record.run_context import context_line
from nbgraph.record.text import safe_repr
from nbgraph.views.dot import short
from nbgraph.views.render import render_svg
from nbgraph.views.theme import themed_svg

if TYPE_CHECKING:
    import graphviz
    import pandas as pd

__all__ = [
    "HTML",
    "SVG",
    "cell_text",
    "drawing_bundle",
    "run_html",
    "styled",
    "svg_element",
    "wanted",
]

SVG = "image/svg+xml"
HTML = "text/html"
_PLAIN = "text/plain"
_CHANGED_CSS = (  # views.theme.CHANGED: a translucent theme colour, readable on dark themes
    "background-color: color-mix(in srgb, var(--jp-warn-color1, #f57c00) 22%, transparent); "
    "font-weight: bold"
)


def wanted(mime: str, include: Iterable[str] | None, exclude: Iterable[str] | None) -> bool:
    """Whether a mimetype passes IPython's include/exclude (text/plain always does)."""
    if mime == _PLAIN:
        return True
    if include is not None and mime not in set(include):
        return False
    return not (exclude is not None and mime in set(exclude))


def drawing_bundle(
    drawing: graphviz.Digraph,
    text: str,
    include: Iterable[str] | None = None,
    exclude: Iterable[str] | None = None,
) -> dict[str, str]:
    """`text/plain` and, when it renders, `image/svg+xml`; else the DOT source and a hint."""
    bundle = {_PLAIN: text}
    if not wanted(SVG, include, exclude):
        return bundle
    rendered = render_svg(drawing.source)
    if rendered.svg is not None:  # a transparent page, ink readable on any theme
        bundle[SVG] = themed_svg(rendered.svg)
    else:
        bundle[_PLAIN] = f"{text}\n{rendered.problem}\n\n{drawing.source}"
    return bundle


def cell_text(value: Any, width: int = 60) -> str:
    """The short display form of a table cell (the cell itself stays the Python object)."""
    if isinstance(value, str):
        return value if len(value) <= width else value[: width - 1] + "…"
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, float):
        return f"{value:.6g}"
    return short(value, width)


_VALUE_COLUMNS = ("before", "after", "value", "from", "to", "this", "other")
"""Columns holding state values: `styled` shows them as their repr (quotes kept)."""


def styled(frame: pd.DataFrame, changed: pd.DataFrame | None = None, uuid: str = "nbgraph") -> Any:
    """A Styler showing short, escaped cell text; `changed` (same shape, booleans) highlights.
    Columns of state values (`_VALUE_COLUMNS`) show reprs, so a string keeps its quotes.

    Values, index and column labels are all escaped; no caption or tooltip carries user text.
    """
    # With a formatter, Styler's own escape= is not applied: escape in the formatter.
    styler = frame.style.format(lambda value: html.escape(cell_text(value)))
    values = [c for c in frame.columns if c in _VALUE_COLUMNS]
    if values:  # state values keep their quotes: '1' and 1 differ
        styler = styler.format(lambda value: html.escape(short(value, 60)), subset=values)
    styler = styler.format_index(escape="html", axis=0).format_index(escape="html", axis=1)
    styler = styler.set_uuid(uuid)
    if changed is not None:
        styler = styler.apply(
            lambda _: changed.replace({True: _CHANGED_CSS, False: ""}).astype(str), axis=None
        )
    return styler


def run_html(run: Any, max_rows: int = 20, picture: str = "") -> str:
    """A compact HTML summary of a run: status line, its picture (SVG made by graphviz from
    escaped labels), tasks, and what each step changed.

    Only the last `max_rows` tasks and effects are shown: a long run's are rebuilt from its
    last steps, so showing it costs about what those steps cost (`nbgraph.record.tails`)."""
    from nbgraph.record.tails import last_effects, last_tasks

    effects, total = last_effects(run, max_rows)
    shown = effects[["step", "field", "reducer", "before", "writes", "after"]]
    changed = shown.copy()
    for column in changed.columns:
        changed[column] = False
    changed["after"] = effects["changed"].astype(bool).to_numpy()
    steps = last_tasks(run, max_rows)[["step", "node", "triggers", "writes", "status"]]
    head = html.escape(repr(run))
    facts = context_line(run.log)
    error = f"<p>{html.escape(facts)}</p>" if facts else ""
    if run.error is not None:
        error += f"<p><b>error:</b> {html.escape(safe_repr(run.error))}</p>"
    more = ""
    if total is None or total > max_rows:
        of = "" if total is None else f" of {total}"
        more = f"<p>last {max_rows}{of} effects; see <code>run.effects</code></p>"
    return (
        f"<div class='nbgraph-run'><p><b>{head}</b></p>{error}{svg_element(picture)}"
        f"<details open><summary>tasks</summary>{styled(steps, uuid='nbgraph-steps').to_html()}"
        f"</details><details open><summary>effects (changed values highlighted)</summary>"
        f"{styled(shown, changed, uuid='nbgraph-effects').to_html()}{more}</details></div>"
    )


def svg_element(svg: str) -> str:
    """The `<svg>` element alone, to sit inside HTML."""
    start = svg.find("<svg")
    return svg[start:] if start >= 0 else ""
