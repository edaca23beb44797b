"""Answering a paused run from its inspector, and a live run's inert controls, in a real
browser: JupyterLab 4 and Notebook 7 on 127.0.0.1, driven by Debian's Chromium through
Playwright (`tests/support/browser.py`).

One notebook: a live run (slow steps) whose controls must take no click while its cell runs
(no click queued and replayed after it), then a run paused at `interrupt()` answered from its
inspector — a bad answer first (its message), then a good one (the run grows) — and a
tool-call review edited (an unknown arg first, refused by name)."""

import time
from pathlib import Path

import pytest

from tests.support.browser import FRONTENDS, open_notebook, real_errors, serve

pytestmark = pytest.mark.browser

STEPS = 8

CELLS = [
    f"""
import time
from typing import TypedDict
from nbgraph import END, START, StateGraph, interrupt
from nbgraph.checkpoint.memory import MemorySaver

class Count(TypedDict):
    n: int

def tick(state):
    time.sleep(0.7)
    return {{"n": state["n"] + 1}}

counter = (
    StateGraph(Count)
    .add_node("tick", tick)
    .add_edge(START, "tick")
    .add_conditional_edges("tick", lambda s: END if s["n"] >= {STEPS} else "tick")
    .compile()
)
""",
    "counter.run({'n': 0}, live=True)",
    """
class Post(TypedDict, total=False):
    draft: str
    verdict: object
    published: str

def review(state):
    return {"verdict": interrupt({"question": "Publish <b>this</b>?", "draft": state["draft"]})}

app = (
    StateGraph(Post)
    .add_node("write", lambda s: {"draft": "a post about <i>forks</i>"})
    .add_node("review", review)
    .add_node("publish", lambda s: {"published": f"{s['draft']} ({s['verdict']})"})
    .add_edge(START, "write")
    .add_edge("write", "review")
    .add_edge("review", "publish")
    .add_edge("publish", END)
    .compile(checkpointer=MemorySaver())
)
paused = app.run({}, {"configurable": {"thread_id": "t"}})
paused.inspect()
""",
    """
def gate(state):
    return {"verdict": interrupt({
        "action_requests": [{"name": "search", "args": {"query": "cats"}}],
        "review_configs": [{"action_name": "search", "allowed_decisions": ["approve", "edit"]}],
    })}

reviewed = (
    StateGraph(Post).add_node("gate", gate).add_edge(START, "gate")
    .compile(checkpointer=MemorySaver())
)
reviewed.run({}, {"configurable": {"thread_id": "r"}}).inspect()
""",
]


@pytest.fixture(params=sorted(FRONTENDS))
def served(request, tmp_path):
    with serve(request.param, tmp_path, {"answer.ipynb": CELLS}) as server:
        yield server.url("answer.ipynb")


LIVE_STATE = """
() => {
    const live = document.querySelector('.nbgraph-live');
    const label = live && live.querySelector('.nbgraph-step-label');
    const next = live && [...live.querySelectorAll('button')]
        .find(b => b.innerText.includes('next'));
    const prompts = [...document.querySelectorAll('.jp-InputPrompt')].map(p => p.innerText);
    return {
        running: prompts.some(p => p.includes('*')),
        header: live ? live.querySelector('.widget-html-content').innerText : '',
        inert: !!live && live.classList.contains('nbgraph-live-running'),
        nextDisabled: next ? next.disabled : null,
        events: live && live.querySelector('.nbgraph-inspector')
            ? getComputedStyle(live.querySelector('.nbgraph-inspector')).pointerEvents : null,
        label: label ? label.innerText : null,
    };
}
"""


def _type(page, locator, text: str) -> None:
    """Fill a widget's text box as a person would before reaching for a button: the front
    end sends the new value to the kernel before the button's click."""
    locator.fill(text)
    locator.blur()
    page.wait_for_timeout(500)


def _click_center(page, locator) -> None:
    """A real mouse click where `locator` is drawn (whatever takes pointer events there)."""
    box = locator.bounding_box()
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)


def _watch_live_run_and_click(page) -> tuple[list[dict], int]:
    """While the live run goes: the inert state sampled, and real clicks on "◀ previous"
    and the slider plus arrow keys (each would move the step if it reached the kernel), made
    while at least 3 steps (2 s) remain. Returns the samples and the clicks tried."""
    samples, clicks = [], 0
    deadline = time.monotonic() + 150
    live = page.locator(".nbgraph-live")
    while time.monotonic() < deadline:
        sample = page.evaluate(LIVE_STATE)
        samples.append(sample)
        header = sample["header"]
        done = int(header.split(" — ")[1].split()[0]) if header.startswith("running") else STEPS
        if sample["running"] and sample["label"] and done <= STEPS - 3:  # (time to spare:
            # a click as the run ends would rightly work, the controls awake)
            try:
                _click_center(page, live.locator("button", has_text="previous").first)
                _click_center(page, live.locator(".widget-slider").first)
                page.keyboard.press("ArrowLeft")
                clicks += 1
            except Exception:  # (the run ended between the sample and the click)
                pass
        if sample["header"].startswith("done") and not sample["running"]:
            break
        time.sleep(0.15)
    return samples, clicks


def test_a_live_run_takes_no_click_then_a_paused_run_is_answered(served, tmp_path):
    from playwright.sync_api import sync_playwright

    errors: list[str] = []
    with sync_playwright() as playwright:
        browser, page = open_notebook(playwright, served, errors, height=2600)
        try:
            page.locator(".nbgraph-live").wait_for(timeout=120_000)
            samples, clicks = _watch_live_run_and_click(page)
            page.wait_for_timeout(2000)  # (any queued click would land by now)
            after_run = page.evaluate(LIVE_STATE)
            live_cell = page.locator(".jp-Cell").nth(1).inner_text()
            # --- the paused run's inspector: the question, a bad answer, a good one
            page.locator(".nbgraph-inspector").nth(2).wait_for(timeout=120_000)  # (all ran)
            inspector = page.locator(".nbgraph-inspector").nth(1)
            panel = inspector.locator(".nbgraph-answer")
            question = panel.locator(".nbgraph-question").inner_text()
            question_bold = panel.locator(".nbgraph-question b").all_inner_texts()
            label_before = inspector.locator(".nbgraph-step-label").inner_text()
            _type(page, panel.locator(".nbgraph-answer-text textarea"), '{"ok": yes}')
            panel.get_by_role("button", name="answer and resume").click()
            status = panel.locator(".nbgraph-answer-status")
            status.filter(has_text="not valid JSON").wait_for(timeout=30_000)
            bad = status.inner_text()
            _type(
                page, panel.locator(".nbgraph-answer-text textarea"), '{"ok": true, "by": "<me>"}'
            )
            panel.get_by_role("button", name="answer and resume").click()
            inspector.locator(".nbgraph-step-label", has_text="step 3 of 3").wait_for(
                timeout=60_000
            )
            status.filter(has_text="Resumed").wait_for(timeout=30_000)
            grown = inspector.inner_text()
            inspector.screenshot(path=str(tmp_path / "answered.png"))
            # --- a tool-call review: edit the call's args (a typo first), then resume
            gate = page.locator(".nbgraph-inspector").nth(2)
            review = gate.locator(".nbgraph-answer")
            review_head = review.locator(".nbgraph-question").inner_text()
            review.get_by_role("button", name="edit").click()
            args = review.locator(".nbgraph-edit-args textarea")
            args.wait_for(state="visible", timeout=15_000)
            args_shown = args.input_value()
            _type(page, args, '{"qery": "dogs"}')
            review.get_by_role("button", name="answer and resume").click()
            review_status = review.locator(".nbgraph-answer-status")
            review_status.filter(has_text="unknown arg").wait_for(timeout=30_000)
            unknown = review_status.inner_text()
            _type(page, args, '{"query": "dogs"}')
            review.get_by_role("button", name="answer and resume").click()
            review_status.filter(has_text="Resumed").wait_for(timeout=60_000)
            gate.screenshot(path=str(tmp_path / "reviewed.png"))
            reviewed = gate.text_content()  # (the folded value's full text too)
        except Exception:
            page.screenshot(path=str(tmp_path / "failed.png"), full_page=True)  # (to look at)
            raise
        finally:
            browser.close()
    during = [
        s for s in samples if s["running"] and s["label"] and s["header"].startswith("running")
    ]
    assert during, samples
    assert all(s["inert"] and s["nextDisabled"] and s["events"] == "none" for s in during), during
    assert all("wake when the run ends" in s["header"] for s in during), during
    assert clicks >= 1, samples
    # no click made during the run was replayed after it: the last step is still shown
    assert after_run["label"].startswith(f"step {STEPS} of {STEPS}"), after_run
    assert not after_run["inert"] and after_run["nextDisabled"] is False, after_run
    assert "wake when the run ends" not in after_run["header"]
    assert "shown live above" in live_cell and live_cell.count(f"step {STEPS} of {STEPS}") == 1
    # the question, escaped; the bad answer's message; the run grown by the answer
    assert "Publish <b>this</b>?" in question and question_bold == ["review"], question
    assert label_before.startswith("step 2 of 2"), label_before
    assert "The answer to 'review' is not valid JSON" in bad, bad
    assert "Resumed" in grown and "step 3 of 3" in grown, grown
    assert "<me>" in grown  # the answer, escaped, in the state panel
    # the review: the call shown, the edit box filled with its args, the typo named
    assert "gate asks: a review of 1 tool call" in review_head, review_head
    assert '"query": "cats"' in args_shown, args_shown
    assert "unknown arg 'qery'; its args are ['query']" in unknown, unknown
    assert "step 1 of 1: gate" in reviewed and "1 step ran (done)" in reviewed
    assert "'edited_action': {'name': 'search', 'args': {'query': 'dogs'}}" in reviewed
    assert not real_errors(errors, served), errors
    assert Path(tmp_path / "answered.png").exists()
