"""What the notebooks' stories lean on, seen in a real browser (JupyterLab 4 and Notebook 7):
the step panel says why the router chose a branch (its input and its return), the subrun
picker names a subrun by its input, the inspector plays at a chosen speed, and a click on a
node at its only run says so."""

import pytest

from tests.support.browser import FRONTENDS, open_notebook, real_errors, serve

pytestmark = pytest.mark.browser

CELLS = [
    """
from typing import Annotated, TypedDict

from nbgraph import START, Send, StateGraph


class Ticket(TypedDict, total=False):
    text: str
    urgent: bool
    quotes: Annotated[dict, "merge"]


class Price(TypedDict, total=False):
    region: str
    quotes: Annotated[dict, "merge"]


class PriceOut(TypedDict):
    quotes: dict


price = (
    StateGraph(Price, output_schema=PriceOut)
    .add_node("fetch", lambda s: {"quotes": {s["region"]: 1.0}})
    .add_edge(START, "fetch")
    .compile(name="price")
)
app = (
    StateGraph(Ticket)
    .add_node("classify", lambda s: {"urgent": "urgent" in s["text"].split()})
    .add_node("answer", lambda s: {})
    .add_node("price", price)
    .add_edge(START, "classify")
    .add_conditional_edges(
        "classify",
        lambda s: [Send("price", {"region": r}) for r in ("eu", "jp")] + ["answer"],
        ["price", "answer"],
    )
    .compile()
)
run = app.run({"text": "urgent: <b>printer</b>"})
inspector = run.inspect()
inspector
""",
]


@pytest.fixture(params=sorted(FRONTENDS))
def notebook(request, tmp_path):
    with serve(request.param, tmp_path, {"stories.ipynb": CELLS}) as served:
        yield served.url("stories.ipynb")


def _label(page) -> str:
    return page.locator(".nbgraph-inspector .nbgraph-step-label").first.inner_text()


def _wait_label(page, text: str) -> None:
    page.wait_for_function(
        "t => document.querySelector('.nbgraph-inspector .nbgraph-step-label')"
        ".innerText.startsWith(t)",
        arg=text,
        timeout=30_000,
    )


def test_routing_subruns_speed_and_an_only_run_in_the_browser(notebook, tmp_path):
    from playwright.sync_api import sync_playwright

    errors: list[str] = []
    with sync_playwright() as playwright:
        browser, page = open_notebook(playwright, notebook, errors, height=1600)
        try:
            inspector = page.locator(".nbgraph-inspector")
            inspector.wait_for(timeout=90_000)
            page.wait_for_function(
                "document.querySelector('.nbgraph-inspector svg g.node') !== null",
                timeout=30_000,
            )
            _wait_label(page, "step 1")
            # why the router chose: what it read (escaped, quoted) and what it returned
            routing = inspector.get_by_text("routing after classify").first
            routing.wait_for(timeout=15_000)
            panel = inspector.locator("div", has_text="routing after classify").last.inner_text()
            assert "text = 'urgent: <b>printer</b>'" in panel
            assert "returned:" in panel and "Send(node='price'" in panel
            assert inspector.locator("b", has_text="printer").count() == 0  # not markup
            # a click on classify, shown at its only run, says so
            inspector.locator("g.node", has_text="classify").first.click()
            note = inspector.locator(".nbgraph-picture-note")
            note.filter(has_text="ran only once").wait_for(timeout=15_000)
            assert note.inner_text() == "'classify' ran only once, at step 1 (shown)."
            assert _label(page).startswith("step 1")
            # the subrun picker names each subrun by the input that tells them apart
            inspector.get_by_role("button", name="next ▶").click()
            _wait_label(page, "step 2")
            jp = inspector.locator("select option", has_text="region='jp'")
            jp.first.wait_for(state="attached", timeout=15_000)
            texts = inspector.locator("select option").all_inner_texts()
            options = [text.replace("\xa0", " ") for text in texts]  # (the widget's spaces)
            assert "price: region='eu' (task 2:1:price)" in options
            assert "price: region='jp' (task 2:2:price)" in options
            # play at a chosen speed: 8× from step 0 reaches the last step quickly
            speed = inspector.locator("select", has=page.locator("option", has_text="8×"))
            assert speed.locator("option").all_inner_texts() == ["¼×", "½×", "1×", "2×", "4×", "8×"]
            speed.select_option(label="8×")
            inspector.get_by_role("button", name="◀ previous").click()
            inspector.get_by_role("button", name="◀ previous").click()
            _wait_label(page, "step 0")
            inspector.get_by_role("button", name="▶ play").click()
            _wait_label(page, "step 2")
            inspector.screenshot(path=str(tmp_path / "stories.png"))
        finally:
            browser.close()
    assert real_errors(errors, notebook) == []
