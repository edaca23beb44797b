"""A stand-alone drawing as HTML for a notebook output: fitted to the output's width and never
cut, its full size one click away, its legend one line under it.

Made of inline styles, an `<img>` with a `data:` source and a `<details>`, with no script:
JupyterLab's sanitizer (an untrusted notebook, Notebook 7 too) keeps exactly these and drops
style sheets and inline SVG; nbconvert's HTML (the docs site) keeps everything as written.

- **Fitted**: the picture is as wide as the output (`width:100%`), never wider than its own
  size (`max-width`) and never narrower than the size at which its smallest label is
  `MIN_LABEL_PX` tall (`min-width`, the floor). Past the floor, its own box scrolls sideways
  (`overflow-x:auto`) instead of the output cutting it.
- **Full size**: a drawing wider than `FULL_SIZE_FROM` has a "full size" `<details>` under
  it, holding the picture at its own size in a box that scrolls. Where style sheets are kept
  (a trusted notebook, nbconvert's HTML), the fitted picture hides while it is open.
- **Legend**: `legend` (style, meaning) pairs, one line of text under the picture, so the
  legend never widens the drawing.
"""

from __future__ import annotations

import base64
import hashlib
import html
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "FULL_SIZE_FROM",
    "MIN_LABEL_PX",
    "NaturalSize",
    "fitted_html",
    "legend_html",
    "natural_size",
]

MIN_LABEL_PX = 10
"""The smallest label height (its font size, in CSS pixels) fitting may shrink a label to."""
FULL_SIZE_FROM = 480
"""A drawing at least this wide (CSS pixels at its own size) offers its full size."""
_PX_PER = {"pt": 4 / 3, "px": 1.0, "": 1.0, "in": 96.0, "cm": 96 / 2.54, "mm": 96 / 25.4}
_LENGTH = r'="([\d.]+)(pt|px|in|cm|mm|)"'
_HIDE_FITTED = (
    "<style>.nbgraph-fit-{key}:has(> details[open]) > .nbgraph-fitted"
    "{{display:none !important}}</style>"
)
"""Where a style sheet is kept: while the full size is open, the fitted copy hides (an
untrusted notebook shows both, one above the other)."""
_LINES = {"solid": "solid", "dashed": "dashed", "bold": "solid", "dotted": "dotted"}


@dataclass(frozen=True)
class NaturalSize:
    """A drawing's own size in CSS pixels, and its smallest label's font size there."""

    width: float
    height: float
    smallest_label: float

    @property
    def floor(self) -> float:
        """The narrowest the drawing may be shown with every label `MIN_LABEL_PX` tall (its
        own width when a label is smaller than that already)."""
        if self.smallest_label <= MIN_LABEL_PX:
            return self.width
        return self.width * MIN_LABEL_PX / self.smallest_label


def natural_size(svg: str) -> NaturalSize | None:
    """The size graphviz gave `svg` (its `width`, `height` and `viewBox`, the graph's
    `scale`), and its smallest `font-size` in CSS pixels; None without a width and height.

    >>> size = natural_size('<svg width="300pt" height="60pt" viewBox="0 0 300 60">'
    ...                     '<text font-size="9.00">a</text><text font-size="12.00">b</text>')
    >>> size.width, size.height, size.smallest_label, size.floor
    (400.0, 80.0, 12.0, 333.3333333333333)
    """
    head = svg[svg.find("<svg") : svg.find(">", svg.find("<svg")) + 1]
    width, height = re.search(r"\swidth" + _LENGTH, head), re.search(r"\sheight" + _LENGTH, head)
    if width is None or height is None:
        return None
    px_width = float(width.group(1)) * _PX_PER[width.group(2)]
    px_height = float(height.group(1)) * _PX_PER[height.group(2)]
    box = re.search(r'viewBox="[\d.+-]+[ ,]+[\d.+-]+[ ,]+([\d.]+)', head)
    per_unit = px_width / float(box.group(1)) if box and float(box.group(1)) else 1.0
    scale = re.search(r'class="graph" transform="scale\(([\d.]+)', svg)
    per_unit *= float(scale.group(1)) if scale else 1.0
    fonts = [float(f) for f in re.findall(r'font-size="([\d.]+)"', svg)]
    smallest = min(fonts) * per_unit if fonts else float(MIN_LABEL_PX)
    return NaturalSize(px_width, px_height, smallest)


def fitted_html(svg: str, legend: Sequence[tuple[str, str]] = (), alt: str = "a drawing") -> str:
    """`svg` (a whole SVG document or element) as HTML that fits its output: see the module.

    Args:
        svg: the drawing, as graphviz wrote it (themed or not).
        legend: (edge style, meaning) pairs: "solid", "dashed", "bold" or "dotted".
        alt: the picture's text where it cannot be shown.

    Returns:
        The HTML; `svg` holding no `<svg` element: the legend alone (or "").

    >>> svg = '<svg width="900pt" height="90pt" viewBox="0 0 900 90"><text font-size="10"/></svg>'
    >>> page = fitted_html(svg)
    >>> "max-width:1200px" in page and "min-width:900px" in page and "full size" in page
    True
    """
    start, end = svg.find("<svg"), svg.rfind("</svg>")
    if start < 0:
        return legend_html(legend)
    element = svg[start : end + len("</svg>")] if end > start else svg[start:]
    encoded = element.encode("utf-8", "backslashreplace")
    source = "data:image/svg+xml;base64," + base64.b64encode(encoded).decode("ascii")
    size = natural_size(element)
    alt = html.escape(alt, quote=True)
    if size is None:  # (no size to fit: as wide as the output at most)
        picture = f"<img alt='{alt}' src='{source}' style='max-width:100%;height:auto'>"
        return f"<div class='nbgraph-fit'>{picture}{legend_html(legend)}</div>"
    key = hashlib.sha1(encoded, usedforsecurity=False).hexdigest()[:12]
    fitted = (
        f"<div class='nbgraph-fitted' style='overflow-x:auto;max-width:100%'>"
        f"<img class='nbgraph-fitted-picture' alt='{alt}' src='{source}' "
        f"style='display:block;width:100%;max-width:{size.width:.0f}px;"
        f"min-width:{math.ceil(size.floor - 1e-6)}px;height:auto;margin:0'></div>"
    )
    full = ""
    if size.width >= FULL_SIZE_FROM:
        full = (
            f"{_HIDE_FITTED.format(key=key)}<details class='nbgraph-full-size'>"
            "<summary style='cursor:pointer;font-size:12px'>full size "
            f"({size.width:,.0f} × {size.height:,.0f} px)</summary>"
            "<div style='overflow-x:auto;max-width:100%'>"
            f"<img class='nbgraph-full-picture' alt='{alt}' src='{source}' "
            f"style='display:block;width:{size.width:.0f}px;max-width:none;height:auto;"
            "margin:0'></div></details>"
        )
    return (
        f"<div class='nbgraph-fit nbgraph-fit-{key}' style='max-width:100%'>"
        f"{fitted}{legend_html(legend)}{full}</div>"
    )


def legend_html(legend: Sequence[tuple[str, str]]) -> str:
    """One line of text: a short sample of each edge style, then what it means.

    >>> legend_html([("dashed", "collapsed steps")]).count("border-top:")
    1
    """
    if not legend:
        return ""
    items = []
    for style, meaning in legend:
        weight = "3px" if style == "bold" else "1.5px"
        sample = (
            "<span style='display:inline-block;width:2em;margin-right:0.3em;"
            f"border-top:{weight} {_LINES.get(style, 'solid')} currentColor;"
            "vertical-align:middle'></span>"
        )
        items.append(f"<span style='white-space:nowrap'>{sample}{html.escape(meaning)}</span>")
    return (
        "<div class='nbgraph-legend' style='font-size:12px;margin:2px 0;opacity:0.85'>"
        f"edges: {' · '.join(items)}</div>"
    )
