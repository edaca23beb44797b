"""Sharing a run, in a real browser: the HTML file `run.save_html` writes, opened from
`file://` with the network off (buttons, keys, clicks on nodes, nothing fetched, no console
error); and a saved notebook reopened untrusted or converted by nbconvert still shows its
pictures."""

import base64
import operator
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Annotated, TypedDict

import nbformat
import pytest

from nbgraph import END, START, StateGraph
from tests.support.browser import (
    FRONTENDS,
    LAUNCH_ARGS,
    RESEARCH_APP,
    browser_or_skip,
    execute_notebook,
    notes_app,
    open_notebook,
    open_offline,
    real_errors,
    serve,
    use_theme,
)

pytestmark = [pytest.mark.browser, pytest.mark.dot]

DOCS = Path(__file__).resolve().parents[2] / "docs"
NAME = 'draft "v" <script>alert(1)</script>\udc80'  # a quote, markup and a lone surrogate
VALUE = "</script><img src=x onerror=alert(2)> 'it' \udc80"


class State(TypedDict):
    topic: str
    drafts: Annotated[list, operator.add]
    verdict: str


def _shared_run():
    """plan -> NAME (three times) -> write: a node name and a value holding markup."""
    app = (
        StateGraph(State)
        .add_node("plan", lambda s: {"verdict": "planning"})
        .add_node(NAME, lambda s: {"drafts": [f"{VALUE} {len(s['drafts']) + 1}"]})
        .add_node("write", lambda s: {"verdict": f"{len(s['drafts'])} drafts"})
        .add_edge(START, "plan")
        .add_edge("plan", NAME)
        .add_conditional_edges(NAME, lambda s: NAME if len(s["drafts"]) < 3 else "write")
        .add_edge("write", END)
        .compile()
    )
    return app.run({"topic": "<b>sky</b>", "drafts": []})


LABEL = "document.getElementById('nbg-label').textContent"
NAMES = """const NAMES = (selector) => [...document.querySelectorAll('#nbg-picture ' + selector)]
    .map(g => g.querySelector('text').textContent).sort();"""


def test_the_shared_html_steps_offline_from_file(tmp_path):
    from playwright.sync_api import sync_playwright

    run = _shared_run()
    path = run.save_html(tmp_path / "run.html")
    url = path.resolve().as_uri()
    errors: list[str] = []
    requests: list[str] = []
    with sync_playwright() as playwright:
        browser, page = open_offline(playwright, url, errors, requests)
        try:
            assert page.evaluate(LABEL).startswith("step 1 of 5: plan")
            assert page.evaluate(f"{NAMES} NAMES('g.node.nbg-ran')") == ["plan"]
            page.click("#nbg-next")
            label = page.evaluate(LABEL)
            assert label.startswith("step 2 of 5: draft") and "<script>" in label  # as text
            state = page.inner_text("#nbg-state")
            assert "</script><img src=x onerror=alert(2)>" in state  # shown, not run
            page.keyboard.press("ArrowRight")
            assert page.evaluate(LABEL).startswith("step 3 of 5")
            page.keyboard.press("ArrowLeft")
            page.keyboard.press("ArrowLeft")
            assert page.evaluate(LABEL).startswith("step 1 of 5")
            page.keyboard.press("End")
            assert page.evaluate(LABEL).startswith("step 5 of 5: write")
            assert "3 drafts" in page.inner_text("#nbg-state")
            # a click on the drawn node jumps to its first run (no later one) and says so
            page.locator("#nbg-picture g.node.nbg-clickable", has_text="draft").click()
            assert page.evaluate(LABEL).startswith("step 2 of 5")
            assert "run 1 of 3" in page.inner_text("#nbg-note")
            page.locator("#nbg-picture g.node.nbg-clickable", has_text="draft").click()
            assert page.evaluate(LABEL).startswith("step 3 of 5")
            faded = page.evaluate(f"{NAMES} NAMES('g.node.nbg-faded')")
            assert "plan" in faded and "write" in faded
            page.locator("#nbg-picture g.node.nbg-clickable", has_text="plan").click()
            assert "ran only at this step" not in page.inner_text("#nbg-note")
            assert page.evaluate(LABEL).startswith("step 1 of 5")
            page.locator("#nbg-picture g.node.nbg-clickable", has_text="plan").click()
            assert "ran only at this step" in page.inner_text("#nbg-note")
        finally:
            browser.close()
    assert not errors, errors
    assert requests == [url], f"the page fetched something: {requests}"


def test_the_docs_screenshot_of_a_shared_run(tmp_path):
    """docs/shared-run.png: a fan-out run, saved and opened at its parallel step."""
    from playwright.sync_api import sync_playwright

    program: dict = {}
    exec(RESEARCH_APP, program)  # (the inspector notebook's program: tests/support/browser.py)
    app = program["app"]
    path = app.run({"topic": "the sky", "notes": []}).save_html(tmp_path / "research.html")
    errors: list[str] = []
    requests: list[str] = []
    with sync_playwright() as playwright:
        browser, page = open_offline(playwright, path.resolve().as_uri(), errors, requests)
        try:
            page.set_viewport_size({"width": 1200, "height": 640})
            page.keyboard.press("ArrowRight")
            assert page.evaluate(LABEL) == "step 2 of 3: read, search"
            taken = page.evaluate("document.querySelectorAll('g.edge.nbg-taken').length")
            assert taken == 2, "plan -> search and plan -> read"
            page.screenshot(path=str(DOCS / "shared-run.png"))
        finally:
            browser.close()
    assert not errors, errors


def test_a_200_task_step_is_summarised(tmp_path):
    from playwright.sync_api import sync_playwright

    from nbgraph import Send

    app = (
        StateGraph(State)
        .add_node("fan", lambda s: {"verdict": "fanning"})
        .add_node("work", lambda s: {"drafts": ["done"]})
        .add_edge(START, "fan")
        .add_conditional_edges("fan", lambda s: [Send("work", s) for _ in range(200)])
        .add_edge("work", END)
        .compile()
    )
    path = app.run({"topic": "t", "drafts": []}).save_html(tmp_path / "wide.html")
    errors: list[str] = []
    requests: list[str] = []
    with sync_playwright() as playwright:
        browser, page = open_offline(playwright, path.resolve().as_uri(), errors, requests)
        try:
            page.keyboard.press("End")
            assert page.evaluate(LABEL) == "step 2 of 2: work ×200"
            rows = page.evaluate("document.querySelectorAll('#nbg-tasks tr').length")
            assert rows == 61  # a heading and 60 tasks, then a line for the rest
            assert "… and 140 more tasks (work ×200)" in page.inner_text("#nbg-tasks")
        finally:
            browser.close()
    assert not errors, errors


def test_a_failed_run_opens_at_its_failing_step(tmp_path):
    from playwright.sync_api import sync_playwright

    def boom(state):
        raise ValueError("bad <value> \udc80")

    app = (
        StateGraph(State)
        .add_node("plan", lambda s: {"verdict": "planning"})
        .add_node("boom", boom)
        .add_edge(START, "plan")
        .add_edge("plan", "boom")
        .compile()
    )
    run = app.run({"topic": "t", "drafts": []})
    assert run.status == "failed"
    path = run.save_html(tmp_path / "failed.html")
    errors: list[str] = []
    requests: list[str] = []
    with sync_playwright() as playwright:
        browser, page = open_offline(playwright, path.resolve().as_uri(), errors, requests)
        try:
            assert page.evaluate(LABEL) == "step 2 of 2: boom — failed"
            stopped = page.inner_text("#nbg-stopped")
            assert "This step failed" in stopped and "ValueError: bad <value>" in stopped
            # the user's frame first, as the inspector shows it; the engine's frames folded
            shown = page.inner_text("#nbg-stopped pre.nbg-error >> nth=0")
            assert shown.startswith("ValueError: bad <value>")
            assert "\nraised in boom (test_browser_share.py, line " in shown
            assert "Traceback" not in stopped and "nbgraph/engine" not in stopped
            whole = page.locator("#nbg-stopped details.nbg-traceback")
            assert not whole.evaluate("d => d.open")
            page.click("#nbg-stopped details.nbg-traceback summary")
            unfolded = whole.inner_text()
            assert "Traceback (most recent call last)" in unfolded and "nbgraph" in unfolded
            failed = page.evaluate(f"{NAMES} NAMES('g.node.nbg-failed')")
            assert failed == ["boom"]
            page.emulate_media(color_scheme="dark")  # the page follows the system's theme
            body = page.evaluate("getComputedStyle(document.body).backgroundColor")
            card = page.evaluate(
                "getComputedStyle(document.querySelector('#nbg-picture svg')).backgroundColor"
            )
            assert (body, card) == ("rgb(30, 30, 30)", "rgb(255, 255, 255)")
        finally:
            browser.close()
    assert not errors, errors


# --- a saved notebook reopened untrusted, converted by nbconvert, or without its kernel ------

SHARED_CELLS = [
    notes_app() + "app",
    'run = app.run({"topic": "sky", "notes": []})\nrun.draw()',
    "run",
    "run.inspect()",
    'live = app.run({"topic": "sky", "notes": []}, live=True)',
]
"""A drawing of the app, of a run, a run's repr, an inspector and a live run: each output
must show its picture wherever the notebook is opened."""


@pytest.fixture(scope="module")
def executed(tmp_path_factory) -> Path:
    """`SHARED_CELLS` executed by nbconvert (as a notebook runner would), outputs saved with
    the widget state, and not signed: JupyterLab opens it untrusted."""
    return execute_notebook(tmp_path_factory.mktemp("executed"), SHARED_CELLS)


OUTPUTS = """() => [...document.querySelectorAll('.jp-Cell .jp-OutputArea-output')].map(o => ({
    text: o.innerText,
    images: [...o.querySelectorAll('img')].filter(i => i.complete && i.naturalWidth > 0).length,
}))"""


@pytest.mark.parametrize("theme", ["light", "dark"])
@pytest.mark.parametrize("frontend", sorted(FRONTENDS))
def test_an_untrusted_notebook_shows_every_picture(frontend, theme, executed, tmp_path):
    from playwright.sync_api import sync_playwright

    errors: list[str] = []
    with serve(frontend, tmp_path, {}) as served:
        use_theme(tmp_path, theme)
        shutil.copy(executed, tmp_path / "root" / "shared.ipynb")
        url = served.url("shared.ipynb")
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=browser_or_skip(), args=LAUNCH_ARGS
            )
            page = browser.new_page(viewport={"width": 1300, "height": 3000})
            page.on("pageerror", lambda error: errors.append(f"page error: {error}"))
            try:
                page.goto(url, timeout=90_000)
                page.wait_for_function(
                    "document.querySelectorAll('.jp-Cell .jp-OutputArea-output').length >= 5",
                    timeout=90_000,
                )
                page.wait_for_timeout(1500)  # (images decode)
                trusted = page.evaluate(
                    "window.jupyterapp.shell.currentWidget.content.model.cells.get(0).trusted"
                )
                outputs = page.evaluate(OUTPUTS)
                dark = page.evaluate(
                    "document.body.dataset.jpThemeLight === 'false'"
                )  # (the theme the page is really in)
                if frontend == "jupyterlab":
                    page.screenshot(path=str(tmp_path / "untrusted.png"))
            finally:
                browser.close()
    assert trusted is False, "the test must open the notebook untrusted"
    assert dark == (theme == "dark"), "the page must be in the theme the test asked for"
    assert len(outputs) == 5, outputs
    for cell, output in zip(SHARED_CELLS, outputs, strict=True):
        assert output["images"] >= 1, (cell, output)
        for junk in ("Digraph", "VBox(", "object at 0x", "START", "ran ×1"):
            assert junk not in output["text"], (cell, junk, output["text"])
    inspector, live = outputs[3]["text"], outputs[4]["text"]
    assert "re-run the cell to interact" in inspector and "step 1 of 2" in inspector
    assert "step 2 of 2" in live, "the live run's display was sent again when it ended"
    assert not real_errors(errors, url), errors


def _nbconvert_html(notebook: Path, *options: str) -> str:
    command = [sys.executable, "-m", "jupyter", "nbconvert", "--to", "html", *options,
               "--output", "converted.html", str(notebook)]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return (notebook.parent / "converted.html").read_text(encoding="utf-8")


def _drawings(page: str) -> int:
    """How many of the page's `data:` SVG images are graphviz drawings."""
    encoded = re.findall(r"data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)", page)
    return sum(b'<g id="graph0" class="graph"' in base64.b64decode(e) for e in encoded)


def test_nbconvert_html_carries_the_pictures_and_snapshots(executed):
    page = _nbconvert_html(executed)
    assert _drawings(page) == 3, "the app's and run.draw()'s SVG, and the run repr's copy"
    inline = re.search(r"nbgraph-inline-\w+[\"'][^>]*>\s*<svg", page)
    assert "nbgraph-run" in page and inline, "the run repr's picture inline (trusted HTML)"
    # With the widget state in the notebook, nbconvert draws widgets with a script from a
    # CDN; `python -m nbgraph.share` shows the snapshots instead, offline.
    assert "unpkg.com" in page or "jsdelivr" in page
    command = [sys.executable, "-m", "nbgraph.share", str(executed), "-o", "shared.html"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=executed.parent)
    assert done.returncode == 0, done.stderr
    shared = (executed.parent / "shared.html").read_text(encoding="utf-8")
    snapshots = re.findall(r"class=['\"]nbgraph-snapshot['\"]", shared)  # (not its parts')
    assert len(snapshots) == 2  # inspector, live run
    assert "re-run the cell to interact" in shared
    assert _drawings(shared) == 5, "and the inspector's and the live run's pictures"
    assert "unpkg.com" not in shared and "jsdelivr" not in shared


DISCONNECTED = """() => {
    const host = document.querySelector('.nbgraph-inspector.jupyter-widgets-disconnected');
    if (!host) return null;
    const icons = [...host.querySelectorAll('.jupyter-widgets-disconnected')]
        .filter(el => getComputedStyle(el, '::before').content !== 'none').length;
    return {line: getComputedStyle(host, '::before').content, icons};
}"""


@pytest.mark.parametrize("frontend", sorted(FRONTENDS))
def test_an_inspector_without_its_kernel_says_so(frontend, tmp_path):
    """Run, save (with the widget state), stop the kernel, reload: the inspector is drawn
    from the saved state, its controls are dead, and one line says so."""
    from playwright.sync_api import sync_playwright

    errors: list[str] = []
    cells = [SHARED_CELLS[0], SHARED_CELLS[1], "run.inspect()"]
    with serve(frontend, tmp_path, {"dead.ipynb": cells}) as served:
        saved = tmp_path / "root" / "dead.ipynb"
        url = served.url("dead.ipynb")
        with sync_playwright() as playwright:
            browser, page = open_notebook(playwright, url, errors, height=1400)
            try:
                page.wait_for_function(
                    "document.querySelector('.nbgraph-inspector svg g.node') !== null",
                    timeout=90_000,
                )
                assert page.evaluate(DISCONNECTED) is None  # with its kernel: no line
                page.evaluate("window.jupyterapp.commands.execute('docmanager:save')")
                deadline = time.monotonic() + 30
                while "widget-state" not in saved.read_text() and time.monotonic() < deadline:
                    time.sleep(0.2)
                page.evaluate("window.jupyterapp.shell.currentWidget.sessionContext.shutdown()")
                page.wait_for_timeout(1000)
                page.reload()
                page.wait_for_function(
                    "document.querySelector('.nbgraph-inspector.jupyter-widgets-disconnected')",
                    timeout=90_000,
                )
                page.wait_for_timeout(500)
                found = page.evaluate(DISCONNECTED)
            finally:
                browser.close()
    assert "widgets" in nbformat.read(saved, as_version=4).metadata
    assert "the kernel that made this inspector is gone" in found["line"], found
    assert found["icons"] == 0, "one line, not an icon on every control"


class Asked(TypedDict, total=False):
    text: str
    log: Annotated[list, operator.add]
    answer: str


def test_a_paused_runs_page_says_paused_not_in_red_and_marks_a_long_texts_change(tmp_path):
    """Issue 37: a step paused at `interrupt()` reads paused (label, effects note, the line
    under the picture), in the page's ordinary colour, not a failure's red; a 5,000-character
    text's change is marked in words."""
    from playwright.sync_api import sync_playwright

    from nbgraph import MemorySaver, interrupt

    app = (
        StateGraph(Asked)
        .add_node("edit", lambda s: {"text": "A" * 2500 + "C" + "A" * 2500})
        .add_node("ask", lambda s: {"answer": interrupt("ok?")})
        .add_node("note", lambda s: {"log": ["noted"]})
        .add_edge(START, "edit")
        .add_edge("edit", "ask")
        .add_edge("edit", "note")
        .compile(checkpointer=MemorySaver())
    )
    run = app.run({"text": "A" * 2500 + "B" + "A" * 2500, "log": []},
                  {"configurable": {"thread_id": "paused-page"}})  # fmt: skip
    path = run.save_html(tmp_path / "paused.html")
    errors: list[str] = []
    requests: list[str] = []
    with sync_playwright() as playwright:
        browser, page = open_offline(playwright, path.resolve().as_uri(), errors, requests)
        try:
            assert page.evaluate(LABEL) == "step 1 of 2: edit"
            assert "[-B-]{+C+}" in page.inner_text("#nbg-effects")
            page.keyboard.press("End")
            assert page.evaluate(LABEL) == "step 2 of 2: ask, note — paused"
            assert "paused (waiting for an answer)" in page.inner_text("#nbg-effects")
            line = page.locator("#nbg-stopped p").first
            assert line.inner_text().startswith("Paused here, waiting for an answer: ask")
            red = "rgb(153, 0, 0)"
            assert line.evaluate("p => getComputedStyle(p).color") != red
            note = page.locator("#nbg-effects td").last
            assert note.evaluate("td => getComputedStyle(td).color") != red
        finally:
            browser.close()
    assert not errors, errors
    assert all(r.startswith(("file:", "data:")) for r in requests), requests
