"""Jupyter display: mimebundles for drawings and runs, and escaped, styled HTML tables.

Everything that came from a user or a node is escaped before it reaches HTML: pandas'
Styler does not escape by default, so every table goes through `styled()`.
"""

from __future__ import annotations

import base64
import hashlib
import html
import itertools
from collections.abc import Iterable
from functools import cache, lru_cache
from typing import TYPE_CHECKING, Any

from nbgraph.primitives import MISSING
from nbgraph.record.run_context import context_line
from nbgraph.record.text import NO_VALUE, plural, safe_repr, short
from nbgraph.views.drawings.fitted import fitted_html
from nbgraph.views.drawings.render import render_svg, render_with, renderers
from nbgraph.views.drawings.theme import themed_svg
from nbgraph.views.panels.table_view import duration_text, effects_table_html, ending

if TYPE_CHECKING:
    import graphviz
    import pandas as pd

__all__ = [
    "HTML",
    "PNG",
    "SVG",
    "as_drawing",
    "cell_text",
    "drawing_bundle",
    "picture_html",
    "run_html",
    "styled",
    "svg_element",
    "wanted",
]

SVG = "image/svg+xml"
PNG = "image/png"
HTML = "text/html"
_PLAIN = "text/plain"
# views.drawings.theme.CHANGED: a translucent theme colour, readable on dark themes
_CHANGED_CSS = (
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
) -> dict[str, Any]:
    """`text/plain` and, when it renders, `text/html`, `image/svg+xml` and `image/png`;
    else the DOT source and a hint.

    The HTML is what JupyterLab, Notebook 7 and nbconvert show (they rank it first, and an
    untrusted notebook's HTML is sanitized, not refused): the picture fitted to the output's
    width, its full size a click away, and the drawing's legend (`nbgraph_legend`, set by
    `tree_dot`) one line under it (`views.drawings.fitted`). The SVG is for front-ends that show no
    HTML; the PNG for those that show no SVG either.
    """
    bundle: dict[str, Any] = {_PLAIN: text}
    if not any(wanted(mime, include, exclude) for mime in (HTML, SVG, PNG)):
        return bundle
    rendered = render_svg(drawing.source)
    if rendered.svg is None:
        bundle[_PLAIN] = f"{text}\n{rendered.problem}\n\n{drawing.source}"
        return bundle
    themed = themed_svg(rendered.svg)  # a transparent page, ink readable on any theme
    if wanted(HTML, include, exclude):
        legend = getattr(drawing, "nbgraph_legend", ())
        bundle[HTML] = fitted_html(themed, legend, alt=text)
    if wanted(SVG, include, exclude):
        bundle[SVG] = themed
    if wanted(PNG, include, exclude):
        png = _png(drawing.source)
        if png is not None:
            bundle[PNG] = base64.b64encode(png).decode("ascii")
    return bundle


_PNG_INCHES = 24
"""The PNG copy is at most this many inches (at 96 dpi: 2,304 px) each way: a wide fan-out
drawn at full size would be a PNG many times the notebook's width (the sizes:
benchmarks/README.md, "Timings behind the code")."""


@lru_cache(maxsize=64)
def _png(source: str) -> bytes | None:
    """A DOT source drawn as PNG, at most `_PNG_INCHES` each way (cached by source, as
    `render_svg` caches SVG)."""
    end = source.rstrip().rfind("}")
    if end > 0:  # the root graph's last statement: a size graphviz scales the drawing to fit
        source = f'{source[:end]}\tgraph [size="{_PNG_INCHES},{_PNG_INCHES}"]\n}}\n'
    return render_with(source, "png", renderers())[0]


def drawing(name: str, **attrs: Any) -> graphviz.Digraph:
    """An empty `graphviz.Digraph` that shows in a notebook as `as_drawing` makes it: its
    SVG themed (a transparent page, ink readable on a light and a dark page:
    `views.drawings.theme`),
    a PNG beside it, a line of text."""
    return _drawing_class()(name, **attrs)


def as_drawing(dot: graphviz.Digraph) -> graphviz.Digraph:
    """`dot`, made a `Drawing`: a `graphviz.Digraph` in every way, whose display in a
    notebook also carries a PNG and says what it is in its text (`drawing_bundle`), so a
    notebook reopened untrusted shows the picture, not `<graphviz.graphs.Digraph at 0x…>`."""
    dot.__class__ = _drawing_class()
    return dot


@cache
def _drawing_class() -> type:
    """`Drawing`, made on first use (graphviz is imported only when something is drawn)."""
    import graphviz

    class Drawing(graphviz.Digraph):
        """A `graphviz.Digraph` that displays as SVG, PNG and a line of text."""

        def _repr_mimebundle_(
            self, include: Any = None, exclude: Any = None, **_: Any
        ) -> dict[str, Any]:
            return drawing_bundle(self, drawing_text(self), include, exclude)

    Drawing.__qualname__ = "Drawing"
    return Drawing


def drawing_text(dot: graphviz.Digraph) -> str:
    """A drawing's `text/plain`: what it is, and where its DOT text is."""
    boxes = len(getattr(dot, "nbgraph_ids", {}))
    boxes_text = plural(boxes, "box", "boxes")
    return f"<nbgraph drawing of {boxes_text}: a graphviz.Digraph (.source: its DOT text)>"


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
_DURATION_COLUMNS = ("duration",)
"""Columns holding seconds: `styled` shows them in units ("0.33 ms")."""
_BOUNDED = "max-width:30em;overflow-wrap:anywhere;vertical-align:top"
"""Every cell of a styled table: a long value wraps inside its column instead of pushing
the columns after it off-screen."""


def _value_cell(value: Any) -> str:
    return html.escape(value_text(value, 60))


def value_text(value: Any, width: int = 60) -> str:
    """A state value's short text: its repr (quotes kept), `NO_VALUE` for no value."""
    return NO_VALUE if value is MISSING else short(value, width)


def styled(frame: pd.DataFrame, changed: pd.DataFrame | None = None, uuid: str = "nbgraph") -> Any:
    """A Styler showing short, escaped cell text; `changed` (same shape, booleans) highlights.
    Columns of state values (`_VALUE_COLUMNS`) show reprs, so a string keeps its quotes.

    Values, index and column labels are all escaped; no caption or tooltip carries user text.
    """
    # With a formatter, Styler's own escape= is not applied: escape in the formatter.
    styler = frame.style.format(lambda value: html.escape(cell_text(value)))
    values = [c for c in frame.columns if c in _VALUE_COLUMNS]
    if values:  # state values keep their quotes: '1' and 1 differ
        styler = styler.format(_value_cell, subset=values)
    times = [c for c in frame.columns if c in _DURATION_COLUMNS]
    if times:  # "0.33 ms", not 0.000331845
        styler = styler.format(lambda value: html.escape(duration_text(value)), subset=times)
    styler = styler.set_table_styles([{"selector": "td", "props": _BOUNDED}])
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
    shown = set(effects["step"])
    first = min(shown, default=0)  # the last steps alone: read from the end, up to `first`
    last_steps = itertools.takewhile(lambda s: s.step >= first, reversed(run.log.steps))
    paused = frozenset(s.step for s in last_steps if not s.applied and ending(s.tasks) == "paused")
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
        f"<div class='nbgraph-run'><p><b>{head}</b></p>{error}{picture_html(picture)}"
        f"<details open><summary>tasks</summary>{styled(steps, uuid='nbgraph-steps').to_html()}"
        f"</details><details open><summary>effects (changed values highlighted)</summary>"
        f"{effects_table_html(effects, paused)}{more}</details></div>"
    )


_PICTURE_CSS = (
    "<style>.nbgraph-inline-{key}{{display:block !important}}"
    ".nbgraph-copy-{key}{{display:none !important}}</style>"
)
"""Where HTML is trusted this style sheet shows the inline SVG and hides its copy; a sanitizer
(JupyterLab's, for an untrusted notebook) removes style sheets and inline SVG, and keeps the
copy, an `<img>` of the same SVG. `key` (from the picture) keeps one output's sheet from
reaching another's, say an untrusted notebook's beside a trusted one."""


def picture_html(svg: str, inline: str | None = None) -> str:
    """A picture for HTML output that shows wherever the output is shown.

    Trusted HTML (a notebook you ran, nbconvert's HTML) shows `inline` (default: the
    `<svg>` element of `svg`; the inspector gives its themed one). An untrusted notebook's
    HTML goes through a sanitizer that turns inline SVG into stray text and drops style
    sheets: there the SVG's copy as a `data:` image shows instead, and the inline one is
    hidden by its own `style` attribute. `svg` holds no `<svg` (no renderer): `inline` alone.

    >>> out = picture_html('<?xml?><svg><text>a</text></svg>')
    >>> out.count("<svg>"), "data:image/svg+xml;base64," in out
    (1, True)
    """
    element = svg_element(svg)
    if not element:
        return svg if inline is None else inline
    shown = element if inline is None else inline
    encoded = element.encode("utf-8", "backslashreplace")
    key = hashlib.sha1(encoded, usedforsecurity=False).hexdigest()[:12]
    data = base64.b64encode(encoded).decode("ascii")
    return (
        f"{_PICTURE_CSS.format(key=key)}"
        f"<div class='nbgraph-inline-{key}' style='display:none'>{shown}</div>"
        f"<img class='nbgraph-copy-{key}' alt='the drawing (re-run the cell to interact)' "
        f"style='max-width:100%;background:#ffffff' src='data:image/svg+xml;base64,{data}'>"
    )


def svg_element(svg: str) -> str:
    """The `<svg>` element alone (what is around it cut off), to sit inside HTML."""
    start, end = svg.find("<svg"), svg.rfind("</svg>")
    if start < 0:
        return ""
    return svg[start : end + len("</svg>")] if end > start else svg[start:]
