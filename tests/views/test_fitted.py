"""Stand-alone drawings fitted to their output (`views/fitted.py`): the HTML a notebook shows
for `app.draw()`, `run.draw()` and `run.draw_tree()` — the picture as wide as the output, never
below 10 px labels, its full size one click away, the tree's legend one line under it — made
only of what JupyterLab's sanitizer keeps. In a browser: `tests/e2e/test_browser_drawings.py`."""

import base64
import operator
import re
from typing import Annotated, TypedDict

import pytest

from nbgraph import END, START, StateGraph
from nbgraph.errors import InvalidArgumentError
from nbgraph.views.fitted import FULL_SIZE_FROM, MIN_LABEL_PX, fitted_html, natural_size

KEPT_BY_SANITIZER = {"div", "img", "details", "summary", "span"}
"""Tags JupyterLab's sanitizer keeps (`<style>` it drops: only an enhancement here)."""
STYLES_KEPT = {
    "display", "width", "max-width", "min-width", "height", "margin", "margin-right",
    "margin-top", "overflow-x", "cursor", "font-size", "border-top", "vertical-align",
    "white-space", "opacity",
}  # fmt: skip
"""CSS properties JupyterLab's sanitizer keeps in a `style` attribute (its allow-list)."""


class Log(TypedDict, total=False):
    log: Annotated[list, operator.add]
    scratch: str


def fan_in():
    """a and b at once, merged in order, then join (a merge that drops `scratch`)."""
    return (
        StateGraph(Log)
        .add_node("a", lambda s: {"log": ["a"], "scratch": "x"})
        .add_node("b", lambda s: {"log": ["b"]})
        .add_node("join", lambda s: {"log": ["j"]}, merge=lambda states: {"log": ["merged"]})
        .add_edge(START, "a")
        .add_edge(START, "b")
        .add_edge(["a", "b"], "join")
        .compile()
    )


def long_loop():
    class N(TypedDict):
        n: int

    return (
        StateGraph(N)
        .add_node("tick", lambda s: {"n": s["n"] + 1})
        .add_edge(START, "tick")
        .add_conditional_edges("tick", lambda s: END if s["n"] >= 30 else "tick")
        .compile()
        .run({"n": 0})
    )


def _svg(page: str) -> str:
    encoded = re.search(r"src='data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)'", page).group(1)
    return base64.b64decode(encoded).decode("utf-8")


def _px(page: str, klass: str, prop: str) -> float:
    tag = re.search(rf"<img class='{klass}'[^>]*style='([^']*)'", page).group(1)
    return float(re.search(rf"(?:^|;){prop}:([\d.]+)px", tag).group(1))


def test_a_wide_drawing_fits_down_to_its_floor_and_offers_its_full_size():
    svg = (
        '<svg width="1200pt" height="90pt" viewBox="0.00 0.00 1200.00 90.00">'
        '<g id="graph0" class="graph" transform="scale(1 1)">'
        '<text font-size="10.00">a</text><text font-size="14.00">b</text></g></svg>'
    )
    size = natural_size(svg)
    assert (size.width, size.height) == (1600, 120)  # pt -> CSS px
    assert size.smallest_label == pytest.approx(40 / 3)
    page = fitted_html(svg, alt="<b>x</b>")
    assert _px(page, "nbgraph-fitted-picture", "max-width") == 1600  # never past its size
    floor = _px(page, "nbgraph-fitted-picture", "min-width")
    assert floor == 1200 == size.width * MIN_LABEL_PX / size.smallest_label  # 10 px labels
    assert "width:100%" in page and "overflow-x:auto" in page  # fits; past the floor: scrolls
    assert "full size (1,600 × 120 px)" in page
    assert _px(page, "nbgraph-full-picture", "width") == 1600
    assert "<b>" not in page and "&lt;b&gt;" in page  # the alt text escaped


def test_a_small_drawing_has_no_full_size_and_tiny_labels_are_never_shrunk():
    small = '<svg width="120pt" height="60pt" viewBox="0 0 120 60"><text font-size="14"/></svg>'
    assert natural_size(small).width < FULL_SIZE_FROM
    assert "full size" not in fitted_html(small) and "<details" not in fitted_html(small)
    tiny = '<svg width="900pt" height="60pt" viewBox="0 0 900 60"><text font-size="6"/></svg>'
    page = fitted_html(tiny)  # 8 px labels already: shown at its own size, its box scrolls
    assert _px(page, "nbgraph-fitted-picture", "min-width") == 1200
    assert fitted_html("no picture: the DOT source instead") == ""
    assert natural_size("<svg><text/></svg>") is None
    assert "max-width:100%" in fitted_html("<svg viewBox='0 0 9 9'></svg>")


@pytest.mark.dot
def test_a_drawing_s_html_is_made_of_what_an_untrusted_notebook_keeps():
    run = fan_in().run({"log": []})
    for drawing in (fan_in().draw(), run.draw(), run.draw_tree()):
        page = drawing._repr_mimebundle_()["text/html"]
        assert "<svg" not in page and "<script" not in page.lower()  # (stripped, refused)
        assert set(re.findall(r"<(\w+)", page)) - {"style"} <= KEPT_BY_SANITIZER
        styles = re.findall(r"style='([^']*)'", page)
        used = {part.split(":")[0] for style in styles for part in style.split(";") if part}
        assert used <= STYLES_KEPT, used - STYLES_KEPT
        assert "</svg>" in _svg(page)  # the picture: graphviz's SVG, themed, as a data: image
        assert "nbgraph-drawing" in _svg(page)


@pytest.mark.dot
def test_the_tree_s_legend_is_one_line_under_it_naming_only_the_styles_it_uses():
    run = fan_in().run({"log": []})
    tree = run.draw_tree()
    assert "cluster_legend" not in tree.source and "legend" not in tree.source
    page = tree._repr_mimebundle_()["text/html"]
    legend = re.search(r"<div class='nbgraph-legend'.*?</div>", page).group()
    assert "state passed on (numbers: merge order)" in legend  # the numbered merge
    assert "collapsed" not in legend and "subgraph" not in legend  # not drawn: not listed
    assert page.index("nbgraph-legend") > page.index("nbgraph-fitted-picture")  # under it
    long_page = long_loop().draw_tree()._repr_mimebundle_()["text/html"]
    assert "border-top:1.5px dashed" in long_page and "collapsed steps" in long_page
    hidden = run.draw_tree(legend=False)
    assert "nbgraph-legend" not in hidden._repr_mimebundle_()["text/html"]
    assert hidden.source == tree.source  # the legend never changes the drawing itself
    with pytest.raises(InvalidArgumentError, match="legend="):
        run.draw_tree(legend="no")


@pytest.mark.dot
def test_the_legend_no_longer_widens_or_heightens_the_tree():
    run = fan_in().run({"log": []})
    drawn = natural_size(_svg(run.draw_tree()._repr_mimebundle_()["text/html"]))
    assert drawn.height < 200  # (with the legend box inside: 337 px for a tree this size)
    assert drawn.smallest_label >= 13.3  # one 10 pt size: fitted, 75% keeps 10 px labels


@pytest.mark.dot
def test_the_inspector_and_the_shared_page_say_the_tree_s_legend_outside_the_picture(tmp_path):
    run = long_loop()
    inspector = run.inspect()
    inspector.graph.kind = "tree"
    assert "edges: solid, state passed on; dashed, collapsed steps" in inspector.graph.caption
    page = run.save_html(tmp_path / "run.html").read_text(encoding="utf-8")
    assert "nbgraph-legend" in page and "collapsed steps" in page
