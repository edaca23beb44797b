"""Sharing, in Chromium from `file://` with the network off: a notebook saved with its widget
state and exported by `python -m nbgraph.share` shows each inspector's picture and tables
(no widget script, nothing fetched); and `run.save_html`'s file shows the run's state tree
and steps through a subrun's own steps."""

import operator
import subprocess
import sys
from typing import Annotated, TypedDict

import pytest

from tests.support.browser import execute_notebook, notes_app, open_offline

pytestmark = [pytest.mark.browser, pytest.mark.dot]

CELLS = [
    notes_app("<plan>") + 'run = app.run({"topic": "sky", "notes": []})',
    "run.inspect()",
    'live = app.run({"topic": "sea", "notes": []}, live=True)',
]


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
    assert "2 widgets shown as their snapshots" in done.stdout
    page_text = (tmp_path / "out.html").read_text(encoding="utf-8")
    assert "application/vnd.jupyter.widget" not in page_text, "no widget view, no state"
    for cdn in ("unpkg", "jsdelivr", "cdnjs", "require.min.js"):
        assert cdn not in page_text, cdn
    url = (tmp_path / "out.html").resolve().as_uri()
    errors: list[str] = []
    requests: list[str] = []
    with sync_playwright() as playwright:
        browser, page = open_offline(playwright, url, errors, requests, height=1000)
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


class Research(TypedDict):
    topic: Annotated[str, lambda old, new: new]
    log: Annotated[list, operator.add]


NAME = 'read "v" <script>alert(1)</script>'


def _research_run():
    """plan -> research (a subgraph: search -> NAME) on "<sky>" and on "sea" -> write."""
    from nbgraph import END, START, Send, StateGraph

    inner = (
        StateGraph(Research)
        .add_node(
            "search", lambda s: {"log": [f"</script><img src=x onerror=alert(2)> {s['topic']}"]}
        )
        .add_node(NAME, lambda s: {"log": ["read"]})
        .add_edge(START, "search")
        .add_edge("search", NAME)
        .compile()
    )
    return (
        StateGraph(Research)
        .add_node("plan", lambda s: {"log": ["plan"]})
        .add_node("research", inner)
        .add_node("write", lambda s: {"log": ["write"]})
        .add_edge(START, "plan")
        .add_conditional_edges(
            "plan", lambda s: [Send("research", {"topic": t}) for t in ("<sky>", "sea")]
        )
        .add_edge("research", "write")
        .add_edge("write", END)
        .compile()
        .run({"topic": "t", "log": []})
    )


LABEL = "document.getElementById('nbg-label').textContent"
SHOWN = """() => [...document.querySelectorAll('.nbg-graph')].filter(g => !g.hidden)
    .map(g => [...g.querySelectorAll('g.node.nbg-ran')]
        .map(n => n.querySelector('text').textContent))"""
MARKED = """() => [...document.querySelectorAll('#nbg-tree g.node.nbg-current')]
    .map(g => [...g.querySelectorAll('text')].map(t => t.textContent).join(' | '))"""


def test_the_shared_html_steps_through_a_subrun_and_marks_the_tree(tmp_path):
    from playwright.sync_api import sync_playwright

    run = _research_run()
    assert run.status == "done"
    path = run.save_html(tmp_path / "research.html")
    url = path.resolve().as_uri()
    errors: list[str] = []
    requests: list[str] = []
    with sync_playwright() as playwright:
        browser, page = open_offline(playwright, url, errors, requests, height=1000)
        try:
            assert page.evaluate(LABEL).startswith("step 1 of 3: plan")
            assert page.is_visible("#nbg-runs") and page.is_disabled("#nbg-back")
            assert [m.split(" | ")[0] for m in page.evaluate(MARKED)] == ["plan"]
            page.keyboard.press("ArrowRight")
            assert page.evaluate(LABEL) == "step 2 of 3: research ×2"
            opens = page.locator("#nbg-tasks button.nbg-open")
            assert opens.count() == 2 and "'sea'" in opens.nth(1).inner_text()
            opens.nth(1).click()  # the subrun on "sea"
            assert page.evaluate(LABEL) == "run › research, step 1 of 2: search"
            assert page.evaluate(SHOWN) == [["search"]], "the subgraph's own picture"
            assert "onerror=alert(2)> sea" in page.inner_text("#nbg-state")  # as text
            assert any("sea" in m for m in page.evaluate(MARKED)), "its box in the tree"
            page.keyboard.press("ArrowRight")
            label = page.evaluate(LABEL)
            assert label.startswith("run › research, step 2 of 2: read") and "<script>" in label
            assert page.evaluate(SHOWN) == [[NAME]]
            assert "['read']" in page.inner_text("#nbg-effects")
            page.click("#nbg-back")
            assert page.evaluate(LABEL) == "step 2 of 3: research ×2"
            assert "back where that run started" in page.inner_text("#nbg-note")
            # the other subrun from the list of runs, then a box of the tree
            page.select_option("#nbg-run", index=1)
            assert page.evaluate(LABEL).startswith("run › research, step 1 of 2")
            assert "<sky>" in page.inner_text("#nbg-state")
            page.locator("#nbg-tree g.node.nbg-clickable", has_text="write").click()
            assert page.evaluate(LABEL) == "step 3 of 3: write"
            assert page.evaluate("document.getElementById('nbg-run').value") == "0"
            assert page.evaluate(SHOWN) == [["write"]]
            tree_text = page.inner_text("#nbg-tree")
            assert "<sky>" in tree_text and "</script><img" in tree_text  # drawn as text
            # a run with no subruns (here a subrun saved on its own) shows no list of runs
            alone = run.subruns[0].save_html(tmp_path / "alone.html").resolve().as_uri()
            page.goto(alone)
            assert page.evaluate(LABEL) == "step 1 of 2: search"
            assert not page.is_visible("#nbg-runs")
        finally:
            browser.close()
    assert not errors, errors
    assert requests == [url, alone], f"the page fetched something: {requests}"
    assert '"edit and fork here" need the kernel' in path.read_text(encoding="utf-8")
