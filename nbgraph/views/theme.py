"""Colours that follow JupyterLab's theme: CSS with the theme's variables (`--jp-...`, a
fallback outside JupyterLab) for the panels, and a drawing's SVG made to follow them.

graphviz knows no CSS, so a drawing is made with fixed colours and its SVG adjusted here:
the white page becomes transparent, and a small `<style>` inside the SVG (scoped to the
drawing's own class) redraws the ink (`INK`, which `views.dot` draws with: outlines, edges,
edge labels, text outside boxes) in the theme's text colour. CSS beats graphviz's
presentation attributes, so nothing else of the SVG changes. Shown inline (the inspector, a
run's HTML), the theme's variables apply; shown as an image (`image/svg+xml`, an `<img>`
that sees no page CSS), the fallbacks apply: a mid grey readable on a light and on a dark
page. Node fills stay light pastels with dark text, readable on either theme; a faded node
keeps a light box with mid grey text.
"""

from __future__ import annotations

__all__ = ["BORDER", "CHANGED", "DRAWING_CLASS", "ERROR", "FADED", "FADED_INK", "INK", "themed_svg"]

# Six-digit colours only: graphviz rejects the three-digit form.
INK = "#333333"
"""A drawing's ink (`views.dot`): outlines, edges, text outside boxes; `themed_svg` redraws
it in the theme's text colour."""
FADED_INK = "#c8c8c8"
"""A faded node's outline and a faded edge (`views.dot.FADED`); themed as `INK` is."""

_TEXT = "var(--jp-content-font-color1, #333333)"
CHANGED = (
    "background:color-mix(in srgb, var(--jp-warn-color1, #f57c00) 22%, transparent);"
    "font-weight:bold"
)
"""A changed value: a translucent orange of the theme over the page, so the text keeps the
theme's own colour (dark on light, light on dark)."""
FADED = "color:var(--jp-content-font-color3, #8a8a8a)"
ERROR = "color:var(--jp-error-color1, #990000)"
BORDER = "var(--jp-border-color2, #dddddd)"
DRAWING_CLASS = "nbgraph-drawing"
"""The class of every themed drawing's `<svg>`: its `<style>` reaches only inside it."""

_INK_THEMED = "var(--jp-content-font-color1, #7a7a7a)"
_FADED_LINE = "var(--jp-border-color1, #9a9a9a)"


def _style() -> str:
    scope = f"svg.{DRAWING_CLASS}"
    return (
        "<style>"
        f"{scope} [stroke='{INK}']{{stroke:{_INK_THEMED}}}"
        f"{scope} [fill='{INK}']{{fill:{_INK_THEMED}}}"
        f"{scope} [stroke='{FADED_INK}']{{stroke:{_FADED_LINE}}}"
        f"{scope} text[fill='{FADED_INK}']{{fill:{_INK_THEMED};opacity:0.7}}"
        "</style>"
    )


def themed_svg(svg: str, fit: bool = False) -> str:
    """`svg` (an `<svg>` element or document from graphviz) with a transparent page and
    its ink in the theme's text colour (`_style`); `fit` scales it down to the room it is
    given (else it keeps its own size: its labels stay readable, its box scrolls).

    >>> page = '<svg w="1"><polygon fill="white" stroke="transparent"/>'
    >>> out = themed_svg(page + '<path stroke="#333333"/></svg>')
    >>> 'fill="transparent"' in out and "<style>" in out and 'class="nbgraph-drawing"' in out
    True
    >>> "max-width:100%" in themed_svg(page + "</svg>", fit=True)
    True
    """
    if f'class="{DRAWING_CLASS}"' in svg:
        return svg
    svg = svg.replace(
        '<polygon fill="white" stroke="transparent"',
        '<polygon fill="transparent" stroke="transparent"',
        1,
    )
    size = "max-width:100%;height:auto;" if fit else ""
    start = svg.find("<svg ")
    if start < 0:
        return svg
    close = svg.find(">", start)
    head = svg[start:close].replace(
        "<svg ", f'<svg class="{DRAWING_CLASS}" style="{size}color:{_TEXT}" ', 1
    )
    return svg[:start] + head + ">" + _style() + svg[close + 1 :]
