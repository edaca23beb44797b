"""An inspector and drawings people can read, measured in a real browser (issue 30): label
sizes in pixels at the default zoom (a 200-task step, a 200-node graph, the state tree),
zoom, one task of a `Send` fan-out followed, buttons not truncated, and drawings that follow
the light and the dark theme, two inspectors side by side, and an inspector a later cell
moves — in JupyterLab 4 and Notebook 7 (`tests/support/browser.py`).

With `NBGRAPH_UPDATE_SCREENSHOT=1`, JupyterLab's screenshots are copied to docs/
(`inspector-200-tasks.png`, `drawing-dark.png`).
"""

import os
import shutil
from pathlib import Path

import pytest

from tests.support.browser import (
    FRONTENDS,
    THEMED,
    open_notebook,
    real_errors,
    serve,
    served_themed,
)

pytestmark = pytest.mark.browser

DOCS = Path(__file__).resolve().parents[2] / "docs"

CELLS = [
    """
import operator
from typing import Annotated, TypedDict
from nbgraph import END, START, Send, StateGraph

class S(TypedDict, total=False):
    out: Annotated[list, operator.add]
    note: str

g = StateGraph(S).add_node("plan", lambda s: {"note": "go"})
g.add_node("work", lambda s: {"out": [s["note"]]})
g.add_edge(START, "plan").add_edge("work", END)
g.add_conditional_edges("plan", lambda s: [Send("work", {"note": i}) for i in range(200)])
run = g.compile().run({"out": []})

w = StateGraph(S).add_node("plan", lambda s: {}).add_node("join", lambda s: {})
w.add_edge(START, "plan").add_edge("join", END)
for i in range(200):
    w.add_node(f"n{i:03d}", lambda s, i=i: {"out": [i]})
    w.add_edge("plan", f"n{i:03d}").add_edge(f"n{i:03d}", "join")
wide = w.compile().run({"out": []})
""",
    "many = run.inspect(); many.go(2); many",
    """
follow = run.inspect()
follow.go(2)
followed = sorted(o for o in follow.branch_pick.options if ":work" in str(o))[37]
follow.branch_pick.value = followed
follow
""",
    "wide.inspect()",
    "tree = run.inspect(); tree.graph.kind = 'tree'; tree",
    "run.draw()",
    "import ipywidgets as widgets; widgets.HBox([run.inspect(), run.inspect()])",
]

LABEL_SIZES = """
root => [...root.querySelectorAll('svg text[font-size]')].map(text => {
    const m = text.getScreenCTM();
    return parseFloat(text.getAttribute('font-size')) * Math.hypot(m.a, m.b);
})
"""

WHITE_SHARE = """
async img => {
    await img.decode();
    const canvas = document.createElement('canvas');
    canvas.width = img.naturalWidth || img.width; canvas.height = img.naturalHeight || img.height;
    const ctx = canvas.getContext('2d');
    ctx.drawImage(img, 0, 0, canvas.width, canvas.height);
    const data = ctx.getImageData(0, 0, canvas.width, canvas.height).data;
    let white = 0;
    for (let i = 0; i < data.length; i += 4) {
        if (data[i + 3] > 200 && data[i] > 235 && data[i + 1] > 235 && data[i + 2] > 235) white++;
    }
    return white / (data.length / 4);
}
"""

LUMINANCE = """
(el, property) => {
    const [r, g, b] = getComputedStyle(el)[property].match(/\\d+/g).map(Number);
    return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255;
}
"""


@pytest.fixture(params=THEMED, ids=lambda pair: "-".join(pair))
def served(request, tmp_path):
    """A front-end serving the notebook above, in the light or the dark theme."""
    with served_themed(request, tmp_path, "legible.ipynb", CELLS) as served:
        yield served


def _measure(page) -> dict:
    inspectors = page.locator(".nbgraph-inspector")
    many, follow, wide, tree = (inspectors.nth(i) for i in range(4))
    label = many.locator(".nbgraph-step-label").inner_text()
    buttons = page.locator(".nbgraph-inspector .nbgraph-row .widget-button").evaluate_all(
        "bs => bs.filter(b => b.offsetParent).map(b => b.scrollWidth - b.clientWidth)"
    )  # (the last two inspectors side by side, in half the width each)
    values = many.locator(".nbgraph-panels td.nbgraph-value").evaluate_all(
        "tds => tds.map(td => td.getBoundingClientRect().width)"
    )
    follow.locator(".nbgraph-picture-svg svg").wait_for()
    return {
        "label": label,
        "truncated": max(buttons),
        "narrowest_value": min(values),
        "effects_height": many.locator(".nbgraph-panels").evaluate("e => e.scrollHeight"),
        "sizes": {
            name: inspector.evaluate(LABEL_SIZES)
            for name, inspector in (("many", many), ("wide", wide), ("tree", tree))
        },
        "faded": follow.locator("span[style*='font-color3']").count(),
        "on_branch": follow.locator("span[style='']").count(),
        "following": follow.locator("svg text", has_text="following task").count(),
        "edge": many.locator("svg g.edge path[stroke='#333333']").first.evaluate(
            LUMINANCE, "stroke"
        ),
        "caption": many.locator(".nbgraph-picture-caption").evaluate(LUMINANCE, "color"),
        "caption_text": many.locator(".nbgraph-picture-caption").inner_text(),
        "zoom": float(many.locator(".nbgraph-picture").get_attribute("data-zoom")),
        "dark": page.evaluate("document.body.dataset.jpThemeLight === 'false'"),
    }


def _zoom_in(page) -> float:
    picture = page.locator(".nbgraph-inspector").first.locator(".nbgraph-picture")
    before = float(picture.get_attribute("data-zoom"))
    picture.get_by_role("button", name="+").click()
    page.wait_for_function(
        "z => parseFloat(document.querySelector('.nbgraph-picture').dataset.zoom) > z",
        arg=before,
        timeout=10_000,
    )
    return float(picture.get_attribute("data-zoom")) / before


def test_labels_readable_one_task_followed_and_the_theme_followed(served, tmp_path):
    from playwright.sync_api import sync_playwright

    url, frontend, theme = served
    errors: list[str] = []
    with sync_playwright() as playwright:
        browser, page = open_notebook(playwright, url, errors, height=3000)
        try:
            page.wait_for_function(
                "document.querySelectorAll('.nbgraph-inspector svg g.node').length > 0 "
                "&& document.querySelectorAll('.nbgraph-inspector').length == 6 "
                "&& document.querySelectorAll('.jp-OutputArea-output img').length >= 1",
                timeout=120_000,
            )
            page.wait_for_timeout(800)  # (the pictures sized to their room)
            measured = _measure(page)
            drawing = page.locator(".jp-OutputArea-output img.nbgraph-fitted-picture").last
            measured["white"] = drawing.evaluate(WHITE_SHARE)
            many = page.locator(".nbgraph-inspector").first
            many.screenshot(path=str(tmp_path / "inspector-200-tasks.png"))
            drawing.screenshot(path=str(tmp_path / "drawing.png"))
            measured["zoomed"] = _zoom_in(page)
        finally:
            browser.close()
    if os.environ.get("NBGRAPH_UPDATE_SCREENSHOT") and frontend == "jupyterlab":
        if theme == "light":
            shutil.copy(tmp_path / "inspector-200-tasks.png", DOCS / "inspector-200-tasks.png")
        else:
            shutil.copy(tmp_path / "drawing.png", DOCS / "drawing-dark.png")
    assert real_errors(errors, url) == []
    assert measured["dark"] == (theme == "dark")
    # legible at any size: no label under 10 px at the default zoom, in any of the pictures
    for name, sizes in measured["sizes"].items():
        assert sizes and min(sizes) >= 9.9, (name, min(sizes))
    assert measured["zoomed"] > 1.01  # "+" zooms in
    assert "work ×200" in measured["label"] and "work, work" not in measured["label"]
    assert measured["truncated"] <= 1  # no button cut to "◀…", even two inspectors abreast
    assert measured["narrowest_value"] >= 100  # values get room: no word-by-word wrapping
    assert measured["effects_height"] < 2500  # not 9,895 px: the 200 writes fold
    assert "run done" in measured["caption_text"]  # the caption outside the drawing
    # one task of the fan-out followed: the other 199 tasks' writes fade, not all 200
    assert measured["faded"] == 199 and measured["on_branch"] >= 1
    assert measured["following"] == 1
    # the theme: ink and caption light on the dark page, dark on the light one; the
    # stand-alone drawing (an <img>) is no white rectangle
    if theme == "dark":
        assert measured["edge"] > 0.4 and measured["caption"] > 0.6, measured
    else:
        assert measured["edge"] < 0.5 and measured["caption"] < 0.4, measured
    assert measured["white"] < 0.3, measured["white"]


LATER_CELLS = [
    CELLS[0],
    "first = run.inspect(); first",
    "first.go(2); first",
]


@pytest.fixture(params=sorted(FRONTENDS))
def later(request, tmp_path):
    """A front-end serving a notebook whose second cell moves the inspector the first
    showed, and shows it again."""
    with serve(request.param, tmp_path, {"later.ipynb": LATER_CELLS}) as server:
        yield server.url("later.ipynb")


def test_a_later_cell_never_changes_the_inspector_an_earlier_cell_shows(later):
    from playwright.sync_api import sync_playwright

    errors: list[str] = []
    labels = ".nbgraph-inspector .nbgraph-step-label"
    with sync_playwright() as playwright:
        browser, page = open_notebook(playwright, later, errors, height=2400)
        try:
            page.wait_for_function(
                f"document.querySelectorAll('{labels}').length == 2 && [...document"
                f".querySelectorAll('{labels}')].every(l => l.innerText.startsWith('step'))",
                timeout=120_000,
            )
            page.wait_for_timeout(1000)  # (every message of the later cell has arrived)
            shown = page.locator(labels).all_inner_texts()
            first = page.locator(".nbgraph-inspector").first
            first.locator(".nbgraph-step-label").click()  # the focus: the earlier output
            page.keyboard.press("ArrowLeft")
            page.wait_for_function(
                f"document.querySelector('{labels}').innerText.startsWith('step 0')",
                timeout=30_000,
            )
            after_key = page.locator(labels).all_inner_texts()
        finally:
            browser.close()
    assert real_errors(errors, later) == []
    assert shown[0].startswith("step 1") and shown[1].startswith("step 2"), shown
    # the earlier output answers its own keys, and the later one stays where its cell put it
    assert after_key[0].startswith("step 0") and after_key[1].startswith("step 2"), after_key
