"""The inspector at a notebook's usual width, measured in a real browser (issue 30, "legible
at any size"): a messages run's effects (before, writes, after) read without scrolling
sideways, one task of a `Send` fan-out drawn apart from its faded siblings in the picture,
and "stacked" giving the picture the output's whole width — in JupyterLab 4 and Notebook 7,
light and dark (`tests/support/browser.py`). The HTML and DOT behind them:
tests/views/test_views_legible.py.
"""

import pytest

from tests.support.browser import THEMED, open_notebook, real_errors, served_themed

pytestmark = pytest.mark.browser

CELLS = [
    """
import operator
from typing import Annotated, TypedDict
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from nbgraph import END, START, Send, StateGraph, add_messages

class Agent(TypedDict):
    messages: Annotated[list, add_messages]

replies = iter([
    AIMessage("", id="ai-1", tool_calls=[
        {"name": "get_weather", "args": {"city": "Paris"}, "id": "call-1"},
        {"name": "get_weather", "args": {"city": "Atlantis"}, "id": "call-2"}]),
    AIMessage("Paris: 18 °C (64.4 °F), and there is no weather station in Atlantis, so I "
              "cannot tell you the temperature there; ask me about another city.", id="ai-2"),
])

def tools(state):
    return {"messages": [
        ToolMessage(f"no weather station in {c['args']['city']!r}; try another city",
                    tool_call_id=c["id"], id=f"tool-{c['id']}")
        for c in state["messages"][-1].tool_calls]}

chat_app = (
    StateGraph(Agent).add_node("model", lambda s: {"messages": [next(replies)]})
    .add_node("tools", tools).add_edge(START, "model").add_edge("tools", "model")
    .add_conditional_edges(
        "model", lambda s: "tools" if s["messages"][-1].tool_calls else END, ["tools", END])
    .compile()
)
chat = chat_app.run({"messages": [HumanMessage(
    "What's the weather in Paris and in Atlantis, in Fahrenheit? Tell me both.", id="user-1")]})

class S(TypedDict, total=False):
    out: Annotated[list, operator.add]
    note: str

def fan_out(tasks):
    g = StateGraph(S).add_node("plan", lambda s: {"note": "go"})
    g.add_node("work", lambda s: {"out": [s["note"]]})
    g.add_edge(START, "plan").add_edge("work", END)
    g.add_conditional_edges("plan", lambda s: [Send("work", {"note": i}) for i in range(tasks)])
    return g.compile().run({"out": []})

many, few = fan_out(200), fan_out(3)
""",
    "beside = chat.inspect(); beside.go(3); beside",
    "stacked = chat.inspect(); stacked.go(3); stacked",  # (stacked by a click, below)
    "follow = many.inspect(); follow.go(2); follow.follow(many.log.steps[2].tasks[37].id); follow",
    "follow_few = few.inspect(); follow_few.go(2); follow_few.follow(few.log.steps[2].tasks[1].id)"
    "; follow_few",
]

FITS = """
inspector => {
    const output = inspector.closest('.jp-OutputArea-output');
    const panels = inspector.querySelector('.nbgraph-panels');
    const after = panels.querySelector('table.nbgraph-effects td[data-label="after"]');
    const box = e => e.getBoundingClientRect();
    const messages = [...after.querySelectorAll('.nbgraph-message')]
        .filter(m => !m.textContent.startsWith('…')).map(m => {  // characters a line
        const lines = m.getBoundingClientRect().height / parseFloat(getComputedStyle(m).lineHeight);
        return m.textContent.length / Math.max(1, Math.round(lines));
    });
    return {
        output: [box(output).left, box(output).right],
        panels: [box(panels).left, box(panels).right],
        after: [box(after).left, box(after).right, box(after).width],
        overflow: [panels.scrollWidth - panels.clientWidth,
                   output.scrollWidth - output.clientWidth],
        messages,
        picture: box(inspector.querySelector('.nbgraph-picture')).width,
    };
}
"""

CELL = """
(inspector, wanted) => {
    const luminance = colour => {
        const [r, g, b] = colour.match(/\\d+/g).map(Number);
        return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255;
    };
    const text = [...inspector.querySelectorAll('svg g.node text')]
        .find(t => t.textContent === wanted || t.textContent.startsWith(`${wanted}:`));
    if (!text) return null;
    const t = text.getBBox(), x = t.x + t.width / 2, y = t.y + t.height / 2;
    const fills = [...text.parentNode.querySelectorAll('polygon')]
        .filter(p => getComputedStyle(p).fill !== 'none')
        .map(p => [p, p.getBBox()])
        .filter(([, b]) => b.x <= x && x <= b.x + b.width && b.y <= y && y <= b.y + b.height)
        .sort(([, a], [, b]) => a.width * a.height - b.width * b.height);
    const m = text.getScreenCTM();
    return {
        text: luminance(getComputedStyle(text).fill),
        fill: getComputedStyle(fills[0][0]).fill,
        back: luminance(getComputedStyle(fills[0][0]).fill),
        px: parseFloat(text.getAttribute('font-size')) * Math.hypot(m.a, m.b),
    };
}
"""


TREE = """
inspector => {
    const words = g => [...g.querySelectorAll('text')].map(t => t.textContent).join(' ');
    const tasks = [...inspector.querySelectorAll('svg g.node')]
        .filter(g => /^work |more tasks/.test(words(g)));
    const current = tasks.filter(g => g.classList.contains('nbgraph-current'));
    const faded = tasks.filter(g => g.classList.contains('nbgraph-faded'));
    const opacity = g => parseFloat(getComputedStyle(g).opacity);
    return {
        current: current.map(words),
        faded: faded.map(words),
        opacity: [current.length ? opacity(current[0]) : null,
                  faded.length ? opacity(faded[0]) : null],
    };
}
"""


@pytest.fixture(params=THEMED, ids=lambda pair: "-".join(pair))
def served(request, tmp_path):
    """A front-end serving the notebook above, in the light or the dark theme."""
    with served_themed(request, tmp_path, "layout.ipynb", CELLS) as served:
        yield served


def _contrast(cell: dict) -> float:
    light, dark = max(cell["text"], cell["back"]), min(cell["text"], cell["back"])
    return (light + 0.05) / (dark + 0.05)


def test_messages_fit_one_task_stands_out_and_stacked_takes_the_whole_width(served):
    from playwright.sync_api import sync_playwright

    url, frontend, theme = served
    errors: list[str] = []
    with sync_playwright() as playwright:
        browser, page = open_notebook(playwright, url, errors, height=2400)
        try:
            page.wait_for_function(
                "document.querySelectorAll('.nbgraph-inspector').length == 4 && [...document"
                ".querySelectorAll('.nbgraph-inspector')].every(i => i.querySelector("
                "'svg g.node') && i.querySelector('table.nbgraph-effects'))",
                timeout=120_000,
            )
            beside, stacked, follow, few = (
                page.locator(".nbgraph-inspector").nth(i) for i in range(4)
            )
            stacked.locator(".widget-toggle-button", has_text="stacked").click()
            stacked.locator(".nbgraph-steps").wait_for()
            page.wait_for_function(  # (the click's layout arrives from the kernel)
                "i => i.querySelector('.nbgraph-picture').getBoundingClientRect().width"
                " > i.querySelector('.nbgraph-panels').getBoundingClientRect().width * 0.8",
                arg=stacked.element_handle(),
                timeout=30_000,
            )
            page.wait_for_timeout(800)  # (the pictures sized to their room)
            dark = page.evaluate("document.body.dataset.jpThemeLight === 'false'")
            fits = {"beside": beside.evaluate(FITS), "stacked": stacked.evaluate(FITS)}
            cells = {
                name: inspector.evaluate(CELL, wanted)
                for name, inspector, wanted in (
                    ("followed", follow, "task 38"),
                    ("others", follow, "+ 199 other tasks"),
                    ("few", few, "task 2"),
                    ("first", few, "1"),
                )
            }
            follow.locator('button.nbgraph-picture-kind[data-kind="tree"]').click()
            page.wait_for_function(  # (the tree arrives from the kernel, then is marked)
                "i => i.querySelectorAll('svg g.node.nbgraph-faded').length > 0",
                arg=follow.element_handle(),
                timeout=30_000,
            )
            tree = follow.evaluate(TREE)
        finally:
            browser.close()
    assert real_errors(errors, url) == []
    assert dark == (theme == "dark")
    # the state tree, following task 38 of 200 (folded into the step's "+192 more" box):
    # that box marked, the 8 sibling boxes drawn faded
    assert len(tree["current"]) == 1 and "+192 more tasks" in tree["current"][0], tree
    assert len(tree["faded"]) == 8 and all(w.startswith("work ") for w in tree["faded"]), tree
    assert tree["opacity"] == [1.0, 0.35], tree
    for how, fit in fits.items():
        left, right = fit["output"]
        if frontend == "jupyterlab":  # the width the issue measured: a ~970 px output
            assert 900 <= right - left <= 1050, fit
        # the after cell whole on screen: inside the output and the panels, nothing to scroll
        assert fit["after"][1] <= min(right, fit["panels"][1]) + 1, (how, fit)
        assert fit["after"][0] >= left - 1 and max(fit["overflow"]) <= 1, (how, fit)
        assert fit["after"][2] >= 200, (how, fit)  # room to read: lines of 20+ characters,
        # not a word a line (10 characters a line when the after column overflowed)
        assert len(fit["messages"]) == 3 and min(fit["messages"]) >= 20, (how, fit)
    # stacked (a click on "stacked"): the picture takes the output's whole width
    stacked_fit = fits["stacked"]
    output_width = stacked_fit["output"][1] - stacked_fit["output"][0]
    assert stacked_fit["picture"] >= 0.9 * output_width, stacked_fit
    assert fits["beside"]["picture"] < 0.6 * output_width  # (beside: it shares the width)
    # one task of the fan-out followed: drawn apart from its faded siblings, all readable
    assert None not in cells.values(), cells
    followed, others = cells["followed"], cells["others"]
    assert followed["fill"] != others["fill"], cells
    assert _contrast(followed) > 2 * _contrast(others), cells
    assert cells["few"]["fill"] != cells["first"]["fill"], cells
    assert _contrast(cells["few"]) > 2 * _contrast(cells["first"]), cells
    assert min(cell["px"] for cell in cells.values()) >= 9.9, cells
