"""`run.compare_view(other)` in a real browser: in JupyterLab 4 and Notebook 7, light and
dark, at a 1,000 px window (the picture above the fields) and a 1,400 px one (a ~1,000 px
output: side by side), the comparison is readable (its picture wider than 400 px, no value
wrapped under 20 characters a line, nothing to scroll sideways) and one control steps both
runs; a notebook saved with it shows its snapshot when reopened untrusted, and in
`python -m nbgraph.share`'s page, with nothing fetched from the network. The HTML behind it:
tests/views/test_compare_view.py.
"""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.browser import (
    FRONTENDS,
    LAUNCH_ARGS,
    THEMED,
    browser_or_skip,
    execute_notebook,
    open_notebook,
    open_offline,
    real_errors,
    serve,
    served_themed,
)

pytestmark = [pytest.mark.browser, pytest.mark.dot]

SCREENSHOT = Path(__file__).resolve().parents[2] / "docs" / "compare-view.png"

APP = """
from typing import Annotated, TypedDict
from nbgraph import END, START, StateGraph

RATES = {"EUR": 1.10, "USD": 1.00, "JPY": 0.0067}
CATALOGUE = {"eu": (90.0, "EUR"), "us": (105.0, "USD"), "jp": (14_000.0, "JPY")}

class Quote(TypedDict):
    item: str
    raw: Annotated[dict, "merge"]
    quotes: Annotated[dict, "merge"]
    log: Annotated[list, "append"]
    cheapest: str

def fetcher(region):
    return lambda s: {"raw": {region: CATALOGUE[region]}, "log": [f"{region}: fetched"]}

def converter(region, key):
    def convert(state):
        amount, currency = state["raw"][region]
        return {"quotes": {key: round(amount * RATES[currency], 2)},
                "log": [f"{region}: converted to USD from {currency}"]}
    return convert

def summarise(state):
    best = min(state["quotes"], key=state["quotes"].get)
    return {"cheapest": f"{best} at ${state['quotes'][best]:.2f}",
            "log": [f"summary of {sorted(state['quotes'])}"]}

def build(jp_key):
    graph = StateGraph(Quote).add_node("plan", lambda s: {"log": ["plan: quote 3 regions"]})
    graph.add_node("summarise", summarise).add_edge(START, "plan")
    for region in ("eu", "us", "jp"):
        graph.add_node(f"{region}_fetch", fetcher(region))
        graph.add_node(f"{region}_convert", converter(region, jp_key if region == "jp" else region))
        graph.add_edge("plan", f"{region}_fetch").add_edge(f"{region}_fetch", f"{region}_convert")
    graph.add_edge(["eu_convert", "us_convert", "jp_convert"], "summarise")
    return graph.add_edge("summarise", END).compile()

buggy = build("us").run({"item": "a kettle with a rather long name, to wrap"})
fixed = build("jp").run({"item": "a kettle with a rather long name, to wrap"})
"""

CELLS = [APP, 'compared = buggy.compare_view(fixed, names=("buggy", "fixed"))\ncompared']

MEASURE = """
view => {
    const output = view.closest('.jp-OutputArea-output');
    const picture = view.querySelector('.nbgraph-compare-picture');
    const box = e => e.getBoundingClientRect();
    const lines = [...view.querySelectorAll('table.nbgraph-compare-fields td.nbgraph-value')]
        .flatMap(td => [...td.querySelectorAll(':scope > div > span:last-child')])
        .map(span => {  // its lines (the distinct tops of its text's boxes), and how many
            const range = document.createRange();  // characters a line holds
            range.selectNodeContents(span);
            const tops = [...range.getClientRects()].map(r => r.top).sort((a, b) => a - b);
            const count = tops.filter((top, i) => i === 0 || top - tops[i - 1] > 5).length;
            const probe = document.createElement('span');
            probe.style.font = getComputedStyle(span).font;
            probe.style.whiteSpace = 'pre';
            probe.textContent = '0'.repeat(40);
            span.appendChild(probe);
            const char = probe.getBoundingClientRect().width / 40;
            probe.remove();
            return {text: span.textContent, lines: Math.max(1, count),
                    perLine: span.getBoundingClientRect().width / char};
        });
    return {
        output: box(output).width,
        picture: box(picture).width,
        svg: box(picture.querySelector('svg')).width,
        overflow: output.scrollWidth - output.clientWidth,
        lines,
        label: view.querySelector('.nbgraph-compare-label').innerText,
        beside: box(view.querySelector('table.nbgraph-compare-fields')).left
            >= box(picture).right - 1,
        marked: [...view.querySelectorAll('svg g.node text')].map(t => t.textContent),
    };
}
"""


@pytest.fixture(params=THEMED, ids=lambda pair: "-".join(pair))
def served(request, tmp_path):
    """A front-end serving the notebook above, in the light or the dark theme."""
    with served_themed(request, tmp_path, "compare.ipynb", CELLS) as served:
        yield served


def test_the_comparison_is_readable_at_1000_px_and_one_control_steps_both(served):
    from playwright.sync_api import sync_playwright

    url, frontend, theme = served
    errors: list[str] = []
    with sync_playwright() as playwright:
        browser, page = open_notebook(playwright, url, errors, height=2000)
        try:
            page.set_viewport_size({"width": 1000, "height": 2000})
            page.wait_for_function(
                "(() => { const v = document.querySelector('.nbgraph-compare');"
                " return v && v.querySelector('svg g.node')"
                " && v.querySelector('table.nbgraph-compare-fields'); })()",
                timeout=120_000,
            )
            view = page.locator(".nbgraph-compare").first
            page.wait_for_timeout(500)  # (laid out at the new width)
            dark = page.evaluate("document.body.dataset.jpThemeLight === 'false'")
            first = view.evaluate(MEASURE)
            view.locator("button", has_text="next ▶").first.click()
            page.wait_for_function(
                "v => v.querySelector('.nbgraph-compare-label').innerText.startsWith('step 4')",
                arg=view.element_handle(),
                timeout=30_000,
            )
            stepped = view.evaluate(MEASURE)
            view.locator("button", has_text="first difference").click()
            page.wait_for_function(
                "v => v.querySelector('.nbgraph-compare-label').innerText.startsWith('step 3')",
                arg=view.element_handle(),
                timeout=30_000,
            )
            page.set_viewport_size({"width": 1400, "height": 2000})  # a ~1,000 px output
            page.wait_for_timeout(800)
            wide = view.evaluate(MEASURE)
            if frontend == "jupyterlab" and theme == "light":  # the picture in the docs
                view.screenshot(path=str(SCREENSHOT))
        finally:
            browser.close()
    assert real_errors(errors, url) == []
    assert dark == (theme == "dark")
    # opened at the first difference, step 3: both runs' tasks, the bug's node marked
    assert first["label"].startswith("step 3 — ⚑ the first difference"), first["label"]
    assert "buggy: eu_convert, jp_convert, us_convert" in first["label"]
    assert "≠ writes differ" in first["marked"]
    # readable at 1000 px: a picture, not a strip; values in lines of 20+ characters
    assert first["picture"] > 400 and first["svg"] > 300, first
    assert first["overflow"] <= 1, first
    assert len(first["lines"]) >= 10, first["lines"]
    for line in first["lines"] + stepped["lines"] + wide["lines"]:
        assert line["lines"] == 1 or line["perLine"] >= 20, line
    # a 1,000 px output (a 1,400 px window): the picture and the fields side by side
    assert not first["beside"] and wide["beside"], (first, wide)
    assert wide["picture"] > 400 and wide["overflow"] <= 1 and wide["output"] >= 900, wide
    # one control stepped both: step 4 is summarise in each run, and cheapest differs
    assert "buggy: summarise" in stepped["label"] and "fixed: summarise" in stepped["label"]
    assert any("cheapest" in line["text"] or "at $" in line["text"] for line in stepped["lines"])


SNAPSHOT = """() => [...document.querySelectorAll('.nbgraph-compare.nbgraph-snapshot')].map(s => {
    const shown = [...s.querySelectorAll('svg.nbgraph-drawing, img')].filter(p => {
        const box = p.getBoundingClientRect();
        return box.width > 50 && box.height > 50 && getComputedStyle(p).visibility !== 'hidden';
    });
    return {pictures: shown.length, width: Math.max(...shown.map(p =>
        p.getBoundingClientRect().width)), text: s.innerText};
})"""


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    """The notebook executed by nbconvert, saved with its outputs and widget state, not
    signed (so a front-end opens it untrusted)."""
    return execute_notebook(tmp_path_factory.mktemp("executed"), CELLS, name="compare.ipynb")


def _assert_snapshot(snapshot: dict) -> None:
    assert snapshot["pictures"] == 1, snapshot
    text = snapshot["text"]
    assert "buggy and fixed first differ at step 3" in text, text
    assert "jp_convert: {'us': 93.8}" in text and "jp_convert: {'jp': 93.8}" in text, text
    for junk in ("HBox(", "CompareView(", "VBox(", "object at 0x"):
        assert junk not in text, junk


def test_the_share_page_shows_the_comparison_with_nothing_fetched(executed, tmp_path):
    from playwright.sync_api import sync_playwright

    command = [sys.executable, "-m", "nbgraph.share", str(executed), "-o", "out.html"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "1 widget shown as its snapshot" in done.stdout and not done.stderr
    url = (tmp_path / "out.html").resolve().as_uri()
    errors: list[str] = []
    requests: list[str] = []
    with sync_playwright() as playwright:
        browser, page = open_offline(playwright, url, errors, requests, height=1200)
        try:
            page.set_viewport_size({"width": 1000, "height": 1200})
            snapshots = page.evaluate(SNAPSHOT)
        finally:
            browser.close()
    assert len(snapshots) == 1, snapshots
    _assert_snapshot(snapshots[0])
    assert snapshots[0]["width"] > 300, snapshots
    assert not errors, errors
    assert requests == [url], f"the page fetched something: {requests}"


@pytest.mark.parametrize("frontend", sorted(FRONTENDS))
def test_an_untrusted_copy_shows_the_snapshot_with_nothing_fetched(frontend, executed, tmp_path):
    from playwright.sync_api import sync_playwright

    errors: list[str] = []
    requests: list[str] = []
    with serve(frontend, tmp_path, {}) as served:
        shutil.copy(executed, tmp_path / "root" / "compare.ipynb")
        url = served.url("compare.ipynb")
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=browser_or_skip(), args=LAUNCH_ARGS
            )
            page = browser.new_page(viewport={"width": 1000, "height": 2000})
            page.on("pageerror", lambda error: errors.append(f"page error: {error}"))
            page.on("request", lambda request: requests.append(request.url))
            try:
                page.goto(url, timeout=90_000)
                page.wait_for_function(
                    "document.querySelectorAll('.jp-Cell .jp-OutputArea-output').length >= 1"
                    " && document.querySelector('.jp-OutputArea-output img')",
                    timeout=90_000,
                )
                page.wait_for_timeout(1500)  # (images decode)
                trusted = page.evaluate(
                    "window.jupyterapp.shell.currentWidget.content.model.cells.get(0).trusted"
                )
                output = page.evaluate(
                    "() => { const o = [...document.querySelectorAll('.jp-OutputArea-output')]"
                    ".pop(); return {text: o.innerText, images: [...o.querySelectorAll('img')]"
                    ".filter(i => i.complete && i.naturalWidth > 0)"
                    ".map(i => i.getBoundingClientRect().width)}; }"
                )
            finally:
                browser.close()
    assert trusted is False, "the test must open the notebook untrusted"
    assert len(output["images"]) == 1 and output["images"][0] > 300, output
    _assert_snapshot({"pictures": 1, "text": output["text"]})
    outside = [r for r in requests if not r.startswith(("http://127.0.0.1", "data:", "blob:"))]
    assert outside == [], outside
    assert not real_errors(errors, url), errors
