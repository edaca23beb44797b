"""The inspector in a real browser: JupyterLab 4 and Notebook 7 on 127.0.0.1, driven by
Debian's Chromium through Playwright."""

import json
import os
import shutil
import sys
import time
from pathlib import Path

import nbformat
import pytest

from tests.support.browser import (
    FRONTENDS,
    RESEARCH_APP,
    open_notebook,
    real_errors,
    serve,
    use_theme,
)

pytestmark = pytest.mark.browser

DOCS_SCREENSHOT = Path(__file__).resolve().parents[2] / "docs" / "inspector.png"

NOTEBOOK_CELLS = [
    RESEARCH_APP + 'run = app.run({"topic": "<b>the sky</b>"})\n',
    "run.inspect()",
]

CLICK_CELLS = [
    """
import operator, time
from typing import Annotated, TypedDict
from nbgraph import END, START, StateGraph
from nbgraph.checkpoint.memory import MemorySaver

DRAFT = 'draft "v" <1>'  # a node name with a quote, a space and markup

class State(TypedDict):
    topic: str
    drafts: Annotated[list, operator.add]
    verdict: str

def slow(update, seconds=0.8):
    def node(state):
        time.sleep(seconds)
        return update(state)
    return node

app = (
    StateGraph(State)
    .add_node("plan", slow(lambda s: {"verdict": "planning"}))
    .add_node(DRAFT, slow(lambda s: {"drafts": [f"draft {len(s['drafts']) + 1}"]}))
    .add_node("write", slow(lambda s: {"verdict": f"{len(s['drafts'])} drafts on {s['topic']}"}))
    .add_edge(START, "plan")
    .add_edge("plan", DRAFT)
    .add_conditional_edges(DRAFT, lambda s: DRAFT if len(s["drafts"]) < 6 else "write")
    .add_edge("write", END)
    .compile(checkpointer=MemorySaver())
)
run = app.run({"topic": "sky", "drafts": []}, {"configurable": {"thread_id": "t"}}, live=True)
""",
]
NOTEBOOKS = {"inspect.ipynb": NOTEBOOK_CELLS, "clicks.ipynb": CLICK_CELLS}
DOCS = DOCS_SCREENSHOT.parent


@pytest.fixture(params=sorted(FRONTENDS))
def jupyterlab(request, tmp_path):
    """A JupyterLab 4 or Notebook 7 server (`tests/support/browser.py`); yields the URL of a
    notebook that displays `run.inspect()`."""
    with serve(request.param, tmp_path, NOTEBOOKS) as served:
        yield served.url("inspect.ipynb")


HIGHLIGHTED = """
() => [...document.querySelectorAll('.nbgraph-inspector svg g.node')]
    .filter(g => [...g.querySelectorAll('path, polygon')]
        .some(shape => shape.getAttribute('stroke') === '#b45f06'))
    .map(g => g.querySelector('text').textContent)
    .sort()
"""


def test_the_inspector_renders_and_steps_in_the_browser(jupyterlab, tmp_path):
    from playwright.sync_api import sync_playwright

    errors: list[str] = []
    with sync_playwright() as playwright:
        browser, page = open_notebook(playwright, jupyterlab, errors, height=1000)
        try:
            inspector = page.locator(".nbgraph-inspector")
            inspector.wait_for(timeout=90_000)
            label = inspector.locator(".widget-html-content").first
            page.wait_for_function(
                "document.querySelector('.nbgraph-inspector svg g.node') !== null", timeout=30_000
            )
            first_label, first_highlight = label.inner_text(), page.evaluate(HIGHLIGHTED)
            next_button = inspector.get_by_role("button", name="next ▶")
            next_button.click()
            page.wait_for_function(
                "el => !el.innerText.includes('step 1 ')",
                arg=label.element_handle(),
                timeout=15_000,
            )
            next_button.click()
            page.wait_for_function(
                "el => el.innerText.includes('step 3')", arg=label.element_handle(), timeout=15_000
            )
            # the panels update one after another: wait for the picture to follow the label
            page.wait_for_function(f"({HIGHLIGHTED})().includes('write')", timeout=15_000)
            third_label, third_highlight = label.inner_text(), page.evaluate(HIGHLIGHTED)
            screenshot = tmp_path / "inspector.png"
            inspector.screenshot(path=str(screenshot))
            if os.environ.get("NBGRAPH_UPDATE_SCREENSHOT") and "/lab/" in jupyterlab:
                DOCS_SCREENSHOT.parent.mkdir(exist_ok=True)
                shutil.copy(screenshot, DOCS_SCREENSHOT)
            assert inspector.locator(".widget-slider").count() >= 1  # rendered, not its text form
            assert "Inspector(" not in page.content() and "VBox(" not in page.content()
        finally:
            browser.close()
    assert "step 1" in first_label and "plan" in first_label
    assert "step 3" in third_label and "write" in third_label
    assert first_highlight == ["plan"] and "write" in third_highlight
    assert first_highlight != third_highlight
    assert screenshot.stat().st_size > 10_000
    assert not real_errors(errors, jupyterlab), errors


LIVE_SAMPLE = """
() => {
    const header = document.querySelector('.nbgraph-live > .widget-html .widget-html-content');
    const label = document.querySelector('.nbgraph-live .nbgraph-step-label');
    const prompts = [...document.querySelectorAll('.jp-InputPrompt')].map(p => p.innerText);
    return {t: performance.now(), running: prompts.some(p => p.includes('*')),
            header: header ? header.innerText : null, label: label ? label.innerText : null};
}
"""


def _shot(locator, path: Path) -> bool:
    """A screenshot of `locator`, or False when the element was replaced while it was taken
    (the live view redraws mid-run: the next sample takes it again)."""
    from playwright.sync_api import Error

    try:
        locator.screenshot(path=str(path))
    except Error as error:
        if "not attached" not in str(error):
            raise
        return False
    return True


def _watch_live_run(page, screenshot: Path) -> list[dict]:
    """Samples of the live view's header and step label (and whether the cell still runs)
    until the run is done and its cell ended; a screenshot mid-run (retaken if the
    inspector shows a later step before the run ends: redraws are throttled, the header not)."""
    samples: list[dict] = []
    shot_label = None
    deadline = time.monotonic() + 150  # (a loaded 2-core machine starts kernels slowly)
    while time.monotonic() < deadline:
        sample = page.evaluate(LIVE_SAMPLE)
        samples.append(sample)
        label, header = sample["label"] or "", sample["header"] or ""
        done = int(header.split(" — ")[1].split()[0]) if header.startswith("running") else 0
        newer = shot_label is None or (label != shot_label and not label.startswith("step 1 "))
        if done >= 2 and label and newer and _shot(page.locator(".nbgraph-live"), screenshot):
            shot_label = label
        if header.startswith("done") and not sample["running"]:
            break
        time.sleep(0.05)
    return samples


TIME_CLICK = """
([selector, wanted]) => new Promise((resolve) => {
    const label = document.querySelector('.nbgraph-step-label');
    const target = [...document.querySelectorAll('.nbgraph-inspector g.node')]
        .find(g => g.querySelector('text').textContent === selector);
    const start = performance.now();
    const observer = new MutationObserver(() => {
        if (label.innerText.startsWith(wanted)) {
            observer.disconnect();
            resolve(performance.now() - start);
        }
    });
    observer.observe(label, {subtree: true, childList: true, characterData: true});
    target.dispatchEvent(new MouseEvent('click', {bubbles: true}));
    setTimeout(() => { observer.disconnect(); resolve(null); }, 15000);
})
"""


KEPT = """
text => window.jupyterapp.shell.currentWidget.content.model.cells.get(1).outputs.toJSON()
    .some(output => String((output.data || {})['text/html'] || '').includes(text))
"""
"""Whether the inspector's output (cell 1) holds a snapshot with `text` (what a save keeps)."""


def _label(page) -> str:
    return page.locator(".nbgraph-inspector .nbgraph-step-label").inner_text()


def _wait_label(page, prefix: str) -> None:
    page.wait_for_function(
        "p => document.querySelector('.nbgraph-step-label').innerText.startsWith(p)",
        arg=prefix,
        timeout=30_000,
    )


def _keep(screenshot: Path, url: str, name: str) -> None:
    if os.environ.get("NBGRAPH_UPDATE_SCREENSHOT") and "/lab/" in url:
        shutil.copy(screenshot, DOCS / name)


def test_a_live_run_advances_then_clicks_keys_and_a_fork_in_the_browser(jupyterlab, tmp_path):
    """The live run grows while its cell executes; a click on a node moves the step (timed);
    arrows step; "edit and fork here" makes a branch that the state tree shows."""
    from playwright.sync_api import sync_playwright

    url = jupyterlab.replace("inspect.ipynb", "clicks.ipynb")
    errors: list[str] = []
    with sync_playwright() as playwright:
        browser, page = open_notebook(playwright, url, errors)
        try:
            page.locator(".nbgraph-live").wait_for(timeout=90_000)
            samples = _watch_live_run(page, tmp_path / "live.png")
            (tmp_path / "live-samples.json").write_text(json.dumps(samples, indent=1))
            inspector = page.locator(".nbgraph-inspector")
            _wait_label(page, "step 8")
            draft = 'draft "v" <1>'
            # a click on a node: its next run after the shown step (8), wrapping to its first
            latencies = []
            for wanted in ("step 2", "step 3", "step 4", "step 5", "step 6", "step 7", "step 2"):
                latencies.append(page.evaluate(TIME_CLICK, [draft, wanted]))
            # a real mouse click, through Playwright, on another node
            page.locator(".nbgraph-inspector g.node", has_text="write").first.click()
            _wait_label(page, "step 8")
            inspector.screenshot(path=str(tmp_path / "click.png"))
            # arrows while the inspector has focus (a click on its background gives it)
            inspector.locator(".nbgraph-step-label").click()
            page.keyboard.press("ArrowLeft")
            _wait_label(page, "step 7")
            page.keyboard.press("ArrowLeft")
            _wait_label(page, "step 6")
            page.keyboard.press("ArrowRight")
            _wait_label(page, "step 7")
            fork_text = inspector.locator(".nbgraph-fork textarea")
            fork_text.press("ArrowLeft")  # typing in a field: the arrow moves the cursor only
            page.wait_for_timeout(500)
            assert _label(page).startswith("step 7")
            # Home and End go to the first and last steps, and Home does not scroll the page
            inspector.locator(".nbgraph-step-label").click()
            page.keyboard.press("End")
            _wait_label(page, "step 8")
            top = inspector.bounding_box()["y"]
            page.keyboard.press("Home")
            _wait_label(page, "step 0")
            page.wait_for_timeout(300)
            assert inspector.bounding_box()["y"] == top
            # edit and fork at step 1: the topic
            page.locator(".nbgraph-inspector g.node", has_text="plan").first.click()
            _wait_label(page, "step 1")
            fork = inspector.locator(".nbgraph-fork")
            # the panel follows the shown step: its value of the picked field, as JSON
            for field, value in (("verdict", '"planning"'), ("topic", '"sky"')):
                fork.locator("select").first.select_option(field)
                page.wait_for_function(
                    "v => document.querySelector('.nbgraph-fork textarea').value === v",
                    arg=value,
                    timeout=15_000,
                )
            fork.locator("textarea").fill('"the <sea>"')
            fork.get_by_role("button", name="edit and fork here").click()
            page.wait_for_function(
                "() => [...document.querySelectorAll('.nbgraph-fork .widget-html-content')]"
                ".some(e => e.innerText.includes('Forked after step 1'))",
                timeout=60_000,
            )
            page.wait_for_function(
                "() => [...document.querySelectorAll('.nbgraph-inspector svg text')]"
                ".some(t => t.textContent.includes('6 drafts on the <sea>'))",
                timeout=30_000,
            )
            fork_branch = page.evaluate(
                "() => [...document.querySelectorAll('.nbgraph-inspector svg text')]"
                ".map(t => t.textContent).filter(t => t.includes('branch, step'))"
            )
            inspector.locator(".nbgraph-step-label").click()  # (the focus, back in it)
            _wait_label(page, "step 2")  # the fork shown at its edit (step 2)
            page.keyboard.press("ArrowRight")
            _wait_label(page, "step 3")
            page.wait_for_function(
                "() => document.querySelector('.nbgraph-inspector').innerText"
                ".includes('this run vs the other, step 3')",
                timeout=15_000,
            )
            comparison = inspector.inner_text()
            inspector.screenshot(path=str(tmp_path / "fork.png"))
            for name in ("live", "click", "fork"):
                _keep(tmp_path / f"{name}.png", url, f"inspector-{name}.png")
        except Exception:
            page.screenshot(path=str(tmp_path / "failed.png"), full_page=True)  # (to look at)
            raise
        finally:
            browser.close()
    # while the cell executed and the run went on, the header counted steps and the
    # inspector showed newer steps than its first (its last step is 8)
    during = [s for s in samples if s["running"] and (s["header"] or "").startswith("running")]
    steps_done = {s["header"].split(" — ")[1].split(" step")[0] for s in during}
    assert len(steps_done) >= 3, samples
    shown = {s["label"].split(":")[0] for s in during if s["label"]}
    assert len(shown) >= 2 and "step 8 of 8" not in shown, samples
    assert all(latency is not None for latency in latencies), latencies
    print(f"click-to-step latency (ms): {[round(x) for x in latencies]}")
    assert max(latencies) < 5000
    assert fork_branch, "the fork is drawn in the state tree"
    assert "the <sea>" in comparison.split("this run vs the other, step 3")[1]
    assert (tmp_path / "live.png").exists(), "no screenshot of the run in the middle"
    assert not real_errors(errors, url), errors


SETTINGS_FILE = Path(sys.prefix) / "share/jupyter/lab/settings/overrides.d/nbgraph.json"


def test_a_saved_notebook_reopens_with_its_inspector_drawn(jupyterlab, tmp_path):
    """Run, save, stop the kernel, reopen: the inspector is drawn from the widget state saved
    in the notebook (nbgraph's settings default turns on "Save widget state"), not "Error
    displaying widget: model not found"."""
    from playwright.sync_api import sync_playwright

    assert json.loads(SETTINGS_FILE.read_text()) == {
        "@jupyter-widgets/jupyterlab-manager:plugin": {"saveState": True}
    }, "pip install nbgraph installs JupyterLab's widget-state default"
    errors: list[str] = []
    saved = tmp_path / "root" / "inspect.ipynb"
    with sync_playwright() as playwright:
        browser, page = open_notebook(playwright, jupyterlab, errors, height=1200)
        try:
            page.wait_for_function(
                "document.querySelector('.nbgraph-inspector svg g.node') !== null", timeout=90_000
            )
            # step to the last step, then leave the inspector: its output keeps that step
            page.locator(".nbgraph-inspector .nbgraph-step-label").click()
            page.keyboard.press("End")
            _wait_label(page, "step 3")
            page.locator(".jp-Cell .jp-InputArea-editor").first.click()  # (the first cell)
            page.wait_for_function(KEPT, arg="at step 3 of 3", timeout=30_000)
            _wait_label(page, "step 3")  # drawn again from the same widget, at its step
            page.evaluate("window.jupyterapp.commands.execute('docmanager:save')")
            deadline = time.monotonic() + 30
            while "widget-state" not in saved.read_text() and time.monotonic() < deadline:
                time.sleep(0.2)
            page.evaluate("window.jupyterapp.shell.currentWidget.sessionContext.shutdown()")
            page.wait_for_timeout(1000)
            page.reload()  # the kernel that made the widgets is gone: a fresh one starts
            page.wait_for_function(
                "document.querySelector('.nbgraph-inspector svg g.node') !== null", timeout=90_000
            )
            page.wait_for_timeout(1000)
            reopened = page.locator(".nbgraph-inspector").first.inner_text()
            content = page.content()
            page.screenshot(path=str(tmp_path / "reopened.png"))
        finally:
            browser.close()
    state = nbformat.read(saved, as_version=4).metadata["widgets"]
    models = state["application/vnd.jupyter.widget-state+json"]["state"]
    assert any(m["model_name"] == "AnyModel" for m in models.values()), "the clickable picture"
    assert "model not found" not in content
    assert "step 3" in reopened and "plan" in reopened
    kept = json.dumps(nbformat.read(saved, as_version=4).cells[1].outputs)
    assert "A snapshot of the inspector at step 3 of 3" in kept


# --- play with two views, the dark theme (the inspector UX of issue 18) -----------------------


@pytest.fixture
def twice_displayed(monkeypatch):
    """The browser test's notebook, its inspector displayed twice (as notebook 04 did)."""
    cells = [*NOTEBOOK_CELLS[:-1], "i = run.inspect(); display(i); display(i)"]
    monkeypatch.setitem(globals(), "NOTEBOOK_CELLS", cells)
    monkeypatch.setitem(NOTEBOOKS, "inspect.ipynb", cells)  # (what the server opens)


LUMINANCE = """
el => { const [r, g, b] = getComputedStyle(el).color.match(/\\d+/g).map(Number);
        return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255; }
"""


@pytest.mark.browser
def test_play_and_the_dark_theme_in_the_browser(twice_displayed, jupyterlab, tmp_path):
    from playwright.sync_api import sync_playwright

    lab = "/lab/" in jupyterlab
    if lab:  # JupyterLab Dark, from the settings folder the server was given
        use_theme(tmp_path, "dark")
    with sync_playwright() as playwright:
        browser, page = open_notebook(playwright, jupyterlab, [], height=1400)
        try:
            page.wait_for_function(
                "document.querySelectorAll('.nbgraph-inspector svg g.node').length > 0 "
                "&& document.querySelectorAll('.nbgraph-inspector').length == 2",
                timeout=90_000,
            )
            first = page.locator(".nbgraph-inspector").first
            first.get_by_role("button", name="▶ play").click()
            for view in range(2):  # both views of the one inspector reach the last step
                page.wait_for_function(
                    "i => document.querySelectorAll('.nbgraph-inspector')[i]"
                    ".querySelector('.nbgraph-step-label').innerText.includes('step 3')",
                    arg=view,
                    timeout=30_000,
                )
            if lab:
                page.screenshot(path=str(tmp_path / "dark.png"))
                state_cell = first.locator("td").first
                caption = first.locator(".nbgraph-picture-caption")  # (outside the drawing)
                text_light = state_cell.evaluate(LUMINANCE)
                caption_fill = caption.evaluate("el => getComputedStyle(el).color")
                page_fill = first.locator("svg g.graph > polygon").first.get_attribute("fill")
        finally:
            browser.close()
    if lab:
        assert text_light > 0.6  # the theme's light text on the dark page
        light = [int(x) for x in caption_fill[caption_fill.index("(") + 1 : -1].split(",")[:3]]
        assert sum(light) / 3 > 150, caption_fill  # the caption follows the theme too
        assert page_fill == "transparent"  # no white slab
