"""The inspector at any width, measured in a real browser (issue 37, "a layout for every
width"): in a window 800 px wide it stacks by itself (the step list, then the picture on
nearly the output's whole width, then the panels), in one 1400 px wide it stays side by side,
and it follows the window when it is resized; a layout picked in the *layout* buttons wins
over the width; no value in the state, effects or comparison panel, nor in the run's effects table,
wraps under 20 characters a line —
in JupyterLab 4 and Notebook 7, light and dark (`tests/support/browser.py`). The classes and
CSS behind it: tests/views/test_views_legible.py. With `NBGRAPH_UPDATE_SCREENSHOT=1`,
Notebook 7's light screenshot of the stacked inspector is copied to docs/inspector-narrow.png.
"""

import os
import shutil
from pathlib import Path

import pytest

from tests.support.browser import THEMED, open_notebook, real_errors, served_themed

pytestmark = pytest.mark.browser

DOCS = Path(__file__).resolve().parents[2] / "docs"

CELLS = [
    """
import operator
from typing import Annotated, TypedDict
from langchain_core.messages import AIMessage, HumanMessage
from nbgraph import END, START, StateGraph, add_messages

class Research(TypedDict, total=False):
    question: str
    messages: Annotated[list, add_messages]
    notes: Annotated[list, operator.add]
    plan: dict
    source_url: str

QUESTION = ("Which of the three rivers that cross the city floods most often in spring, and "
            "how many of the last twenty years had a flood warning issued before April?")

def plan(state):
    return {"plan": {"steps": ["search the archive", "read the gauges", "count warnings"],
                     "rivers": {"north": {"gauge": "N-17", "warnings": [2004, 2011, 2019]},
                                "south": {"gauge": "S-03", "warnings": [2013]}}},
            "notes": ["archive: 240 bulletins from 2005 to 2024, one a fortnight in spring"]}

def search(state):
    return {"messages": [AIMessage("The north river's gauge N-17 crossed its warning level in "
                                   "March of 2004, 2011 and 2019; the south river's only in "
                                   "2013, and the east river has no gauge before 2016.",
                                   id="ai-1")],
            "notes": ["gauges: N-17 north, S-03 south, none east before 2016"],
            "source_url": "https://archive.example.org/hydrology/bulletins/2005-2024/"
                          "spring-warnings-by-gauge-and-river-with-levels.csv"}

app = (
    StateGraph(Research).add_node("plan", plan).add_node("search", search)
    .add_edge(START, "plan").add_edge("plan", "search").add_edge("search", END)
    .compile()
)
run = app.run({"question": QUESTION,
               "messages": [HumanMessage(QUESTION, id="user-1")], "notes": []})
""",
    "auto = run.inspect(); auto.go(2); auto.compare_mode.value = 'another step'; auto",
    "picked = run.inspect(); picked.go(2); picked",  # (a layout picked by a click, below)
    "run.effects",
    "import ipywidgets\nipywidgets.HBox([run.inspect(), run.inspect()])",  # (two, one row)
]
PANELS = "td.nbgraph-value, .nbgraph-panels table.nbgraph-effects td > div"
"""The values of the state panel and of the comparison, and the effects panel's cells."""

LAYOUT = """
inspector => {
    const box = e => e.getBoundingClientRect();
    const output = inspector.closest('.jp-OutputArea-output') || inspector.parentElement;
    const [o, s, g, p] = [output, ...['.nbgraph-steps', '.nbgraph-graph', '.nbgraph-panels']
        .map(name => inspector.querySelector(name))].map(box);
    return {
        output: o.width,
        picture: g.width,
        panels: p.width,
        steps: s.width,
        stacked: g.top >= s.bottom - 1 && p.top >= g.bottom - 1,
        beside: g.left >= s.right - 1 && p.left >= g.right - 1 && Math.abs(p.top - g.top) < 2,
        compared: inspector.querySelectorAll('td.nbgraph-value').length
            - inspector.querySelectorAll('.nbgraph-panels td.nbgraph-value').length,
    };
}
"""

VALUES = """
(root, cells) => {
    // every value shown in the state and effects panels (with the state's trees unfolded):
    // for each text that wraps (its characters on more than one line), how many characters
    // a line its block has room for: the block's content width over the text's mean
    // character width in its own font
    for (const details of root.querySelectorAll('td details')) {
        details.open = true;
    }
    const canvas = document.createElement('canvas').getContext('2d');
    const found = [];
    for (const cell of root.querySelectorAll(cells)) {
        const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
        for (let text = walker.nextNode(); text; text = walker.nextNode()) {
            const content = text.textContent;
            if (content.trim().length < 2) continue;
            const range = document.createRange();
            range.selectNodeContents(text);
            const tops = new Set([...range.getClientRects()]
                .filter(r => r.width > 0).map(r => Math.round(r.top)));
            if (tops.size < 2) continue;  // on one line (or not shown): nothing wraps
            let block = text.parentElement;
            while (getComputedStyle(block).display.startsWith('inline')) {
                block = block.parentElement;
            }
            const style = getComputedStyle(block);
            const room = block.clientWidth - parseFloat(style.paddingLeft)
                - parseFloat(style.paddingRight);
            canvas.font = getComputedStyle(text.parentElement).font;
            const char = canvas.measureText(content).width / content.length;
            found.push({text: content.slice(0, 30), lines: tops.size,
                        block: `${block.tagName}.${block.className}`,
                        chars: Math.round(room / char * 10) / 10});
        }
    }
    return found;
}
"""


@pytest.fixture(params=THEMED, ids=lambda pair: "-".join(pair))
def served(request, tmp_path):
    """A front-end serving the notebook above, in the light or the dark theme."""
    with served_themed(request, tmp_path, "narrow.ipynb", CELLS) as served:
        yield served


def _measure(page, inspectors, width: int) -> dict:
    """Each inspector's layout and wrapped values in a window `width` px wide."""
    page.set_viewport_size({"width": width, "height": 1600})
    page.wait_for_timeout(800)  # (laid out again, the pictures sized to their room)
    return {
        name: {**inspector.evaluate(LAYOUT), "values": inspector.evaluate(VALUES, PANELS)}
        for name, inspector in inspectors.items()
    }


def _screenshot(page, inspector, path: Path) -> None:
    """The top of `inspector` (its controls, steps, picture and state), as shown."""
    inspector.evaluate("e => e.scrollIntoView({block: 'start'})")
    page.wait_for_timeout(500)
    box = inspector.bounding_box()
    clip = {"x": box["x"], "y": max(0, box["y"]), "width": box["width"], "height": 1400}
    page.screenshot(path=str(path), clip=clip)


def test_the_inspector_stacks_by_itself_when_narrow_and_values_keep_20_characters(served, tmp_path):
    from playwright.sync_api import sync_playwright

    url, frontend, theme = served
    errors: list[str] = []
    with sync_playwright() as playwright:
        browser, page = open_notebook(playwright, url, errors, height=1600)
        try:
            page.wait_for_function(
                "document.querySelectorAll('.nbgraph-inspector').length == 4 && [...document"
                ".querySelectorAll('.nbgraph-inspector')].every(i => i.querySelector("
                "'svg g.node') && i.querySelector('table.nbgraph-effects'))",
                timeout=120_000,
            )
            auto, picked, left, right = (
                page.locator(".nbgraph-inspector").nth(i) for i in range(4)
            )
            inspectors = {"auto": auto}
            wide = _measure(page, {"auto": auto, "left": left, "right": right}, 1400)
            narrow = _measure(page, inspectors, 800)
            table = page.locator(".jp-RenderedHTMLCommon", has_text="compact view")  # run.effects
            narrow_table = table.evaluate(VALUES, "td, th")
            _screenshot(page, picked, tmp_path / "inspector-narrow.png")  # (stacked: auto)
            wide_again = _measure(page, inspectors, 1400)  # (the window widened again)
            picked.locator(".widget-toggle-button", has_text="side by side").click()
            page.wait_for_function(  # (the click's class arrives from the kernel)
                "i => i.classList.contains('nbgraph-beside')",
                arg=picked.element_handle(),
                timeout=30_000,
            )
            beside_narrow = _measure(page, {"picked": picked}, 800)["picked"]
            picked.locator(".widget-toggle-button", has_text="stacked").click()
            page.wait_for_function(
                "i => i.classList.contains('nbgraph-stacked')",
                arg=picked.element_handle(),
                timeout=30_000,
            )
            stacked_wide = _measure(page, {"picked": picked}, 1400)["picked"]
            dark = page.evaluate("document.body.dataset.jpThemeLight === 'false'")
        finally:
            browser.close()
    if os.environ.get("NBGRAPH_UPDATE_SCREENSHOT") and (frontend, theme) == ("notebook7", "light"):
        shutil.copy(tmp_path / "inspector-narrow.png", DOCS / "inspector-narrow.png")
    assert real_errors(errors, url) == []
    assert dark == (theme == "dark")
    # 1400 px: three columns, the picture sharing the width; again after a narrow window
    for fit in (wide["auto"], wide_again["auto"]):
        assert fit["beside"] and not fit["stacked"], fit
        assert fit["picture"] <= 0.6 * fit["output"], fit
    # two inspectors in one row share it, each stacked by itself (half the output is narrow)
    for fit in (wide["left"], wide["right"]):
        assert fit["stacked"] and 0.4 * fit["output"] <= fit["picture"] <= 0.6 * fit["output"]
    assert wide["auto"]["compared"] > 0  # (step 2 compared with step 0: their values)
    # 800 px: stacked by itself, the picture on nearly the output's whole width
    fit = narrow["auto"]
    assert fit["stacked"] and not fit["beside"], fit
    assert fit["picture"] >= 0.9 * fit["output"] and fit["panels"] >= 0.9 * fit["output"], fit
    # every wrapped value has room for 20 characters a line or more (at both widths)
    for fit in (wide["auto"], narrow["auto"], beside_narrow):
        assert fit["values"], fit  # (the long question, message and URL do wrap)
        narrowest = min(fit["values"], key=lambda v: v["chars"])
        assert narrowest["chars"] >= 20, (narrowest, fit)
    # the run's effects table at 800 px: no column squeezed to a few letters a line
    assert narrow_table, "its long values wrap"
    narrowest = min(narrow_table, key=lambda v: v["chars"])
    assert narrowest["chars"] >= 20, (narrowest, narrow_table)
    # a layout picked wins over the width: side by side at 800 px, stacked at 1400 px
    assert beside_narrow["beside"] and not beside_narrow["stacked"], beside_narrow
    assert stacked_wide["stacked"] and stacked_wide["picture"] >= 0.9 * stacked_wide["output"]
