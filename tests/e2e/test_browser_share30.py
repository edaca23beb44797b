"""Sharing, in Chromium from `file://` with the network off: a notebook saved with its widget
state and exported by `python -m nbgraph.share` shows each inspector's picture and tables
(no widget script, nothing fetched); and `run.save_html`'s file shows the run's state tree
and steps through a subrun's own steps."""

import subprocess
import sys

import pytest

from tests.support.browser import LAUNCH_ARGS, browser_or_skip, execute_notebook

pytestmark = [pytest.mark.browser, pytest.mark.dot]

CELLS = [
    """
import operator
from typing import Annotated, TypedDict
from nbgraph import END, START, StateGraph

class State(TypedDict):
    topic: str
    notes: Annotated[list, operator.add]

app = (
    StateGraph(State)
    .add_node("plan", lambda s: {"notes": ["<plan>"]})
    .add_node("write", lambda s: {"notes": ["write"]})
    .add_edge(START, "plan").add_edge("plan", "write").add_edge("write", END)
    .compile()
)
run = app.run({"topic": "sky", "notes": []})""",
    "run.inspect()",
    'live = app.run({"topic": "sea", "notes": []}, live=True)',
]


def _open(playwright, url: str, errors: list[str], requests: list[str]):
    browser = playwright.chromium.launch(executable_path=browser_or_skip(), args=LAUNCH_ARGS)
    context = browser.new_context(offline=True, viewport={"width": 1300, "height": 1000})
    page = context.new_page()
    page.on("pageerror", lambda error: errors.append(f"page error: {error}"))
    page.on(
        "console",
        lambda message: errors.append(message.text) if message.type == "error" else None,
    )
    page.on("request", lambda request: requests.append(request.url))
    page.goto(url)
    return browser, page


SNAPSHOTS = """() => [...document.querySelectorAll('.nbgraph-snapshot')].map(s => {
    const shown = [...s.querySelectorAll('svg.nbgraph-drawing, img')].filter(p => {
        const box = p.getBoundingClientRect();
        return box.width > 50 && box.height > 50 && getComputedStyle(p).visibility !== 'hidden';
    });
    return {
        pictures: shown.length,
        nodes: shown.flatMap(p => [...p.querySelectorAll('g.node text')].map(t => t.textContent)),
        text: s.innerText,
    };
})"""


def test_a_notebook_with_widget_state_exported_by_nbgraph_share_shows_its_snapshots(tmp_path):
    from playwright.sync_api import sync_playwright

    notebook = execute_notebook(tmp_path, CELLS)
    assert "application/vnd.jupyter.widget-state+json" in notebook.read_text()
    command = [sys.executable, "-m", "nbgraph.share", str(notebook), "-o", "out.html"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "2 widget(s) shown as their snapshot" in done.stdout
    page_text = (tmp_path / "out.html").read_text(encoding="utf-8")
    assert "application/vnd.jupyter.widget" not in page_text, "no widget view, no state"
    for cdn in ("unpkg", "jsdelivr", "cdnjs", "require.min.js"):
        assert cdn not in page_text, cdn
    url = (tmp_path / "out.html").resolve().as_uri()
    errors: list[str] = []
    requests: list[str] = []
    with sync_playwright() as playwright:
        browser, page = _open(playwright, url, errors, requests)
        try:
            snapshots = page.evaluate(SNAPSHOTS)
        finally:
            browser.close()
    assert len(snapshots) == 2, snapshots  # the inspector and the live run
    for snapshot in snapshots:
        assert snapshot["pictures"] == 1, snapshot  # the inline SVG shown, its copy hidden
        assert {"plan", "write"} <= set(snapshot["nodes"]), snapshot
        assert "re-run the cell to interact" in snapshot["text"]
        assert "notes" in snapshot["text"] and "<plan>" in snapshot["text"], "the state table"
    assert not errors, errors
    assert requests == [url], f"the page fetched something: {requests}"
