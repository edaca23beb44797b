"""Sharing a run, in a real browser: the HTML file `run.save_html` writes, opened from
`file://` with the network off (buttons, keys, clicks on nodes, nothing fetched, no console
error); and a saved notebook reopened untrusted or converted by nbconvert still shows its
pictures."""

import operator
from pathlib import Path
from typing import Annotated, TypedDict

import pytest

from nbgraph import END, START, StateGraph
from tests.support.browser import LAUNCH_ARGS, browser_or_skip

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


def _open(playwright, url: str, errors: list[str], requests: list[str]):
    browser = playwright.chromium.launch(executable_path=browser_or_skip(), args=LAUNCH_ARGS)
    context = browser.new_context(offline=True, viewport={"width": 1300, "height": 900})
    page = context.new_page()
    page.on("pageerror", lambda error: errors.append(f"page error: {error}"))
    page.on(
        "console",
        lambda message: errors.append(message.text) if message.type == "error" else None,
    )
    page.on("request", lambda request: requests.append(request.url))
    page.on("dialog", lambda dialog: errors.append(f"dialog: {dialog.message}"))
    page.goto(url)
    return browser, page


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
        browser, page = _open(playwright, url, errors, requests)
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
            page.keyboard.press("ArrowRight")
            page.screenshot(path=str(DOCS / "shared-run.png"))
        finally:
            browser.close()
    assert not errors, errors
    assert requests == [url], f"the page fetched something: {requests}"


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
        browser, page = _open(playwright, path.resolve().as_uri(), errors, requests)
        try:
            assert page.evaluate(LABEL) == "step 2 of 2: boom — failed"
            stopped = page.inner_text("#nbg-stopped")
            assert "This step failed" in stopped and "ValueError: bad <value>" in stopped
            failed = page.evaluate(f"{NAMES} NAMES('g.node.nbg-failed')")
            assert failed == ["boom"]
        finally:
            browser.close()
    assert not errors, errors
