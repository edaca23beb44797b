"""Colours that follow JupyterLab's theme: CSS with the theme's variables (`--jp-...`, a
light fallback outside JupyterLab) for the panels, and a drawing's SVG made to follow them.

graphviz knows no CSS, so a drawing is made with fixed colours and its SVG adjusted here:
the white page becomes transparent and the ink (`views.dot.INK`: outlines, edges, edge
labels, the caption) becomes `currentColor`, the text colour of the theme. Node fills stay
light pastels with dark text, readable on either theme.
"""

from __future__ import annotations

from nbgraph.views.dot import INK

__all__ = ["BORDER", "CHANGED", "ERROR", "FADED", "themed_svg"]

_TEXT = "var(--jp-content-font-color1, #333333)"
CHANGED = (
    "background:color-mix(in srgb, var(--jp-warn-color1, #f57c00) 22%, transparent);"
    "font-weight:bold"
)
"""A changed value: a translucent orange of the theme over the page, so the text keeps the
theme's own colour (dark on light, light on dark)."""
FADED = "color:var(--jp-content-font-color3, #b0b0b0)"
ERROR = "color:var(--jp-error-color1, #990000)"
BORDER = "var(--jp-border-color2, #dddddd)"
_SVG_STYLE = f"max-width:100%;height:auto;color:{_TEXT}"


def themed_svg(svg: str) -> str:
    """`svg` (an `<svg>` element from graphviz) with a transparent page, `INK` drawn in the
    theme's text colour, and scaled down to the room it is given.

    >>> page = '<svg w="1"><polygon fill="white" stroke="transparent"/>'
    >>> out = themed_svg(page + '<path stroke="#333333"/>')
    >>> 'fill="transparent"' in out and 'stroke="currentColor"' in out and _SVG_STYLE in out
    True
    """
    svg = svg.replace(
        '<polygon fill="white" stroke="transparent"',
        '<polygon fill="transparent" stroke="transparent"',
        1,
    )
    svg = svg.replace(f'stroke="{INK}"', 'stroke="currentColor"')
    svg = svg.replace(f'fill="{INK}"', 'fill="currentColor"')
    return svg.replace("<svg ", f'<svg style="{_SVG_STYLE}" ', 1)
