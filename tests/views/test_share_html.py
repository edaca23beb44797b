"""`run.save_html`: the page's data says what the run did, every user text is escaped (only
nbgraph's two script elements exist, the data reads back exactly), and nothing is fetched.
The page in a browser: `tests/e2e/test_browser_share.py`."""

import json
import operator
import re
from typing import Annotated, TypedDict

import pytest

from nbgraph import END, START, Send, StateGraph
from nbgraph.record.text import short
from nbgraph.views import render
from nbgraph.views.share_html import VALUE_WIDTH, page_data, run_page

NAME = 'w "q" <script>alert(1)</script>\udc80'
VALUE = "</script><img src=x onerror=alert(2)>&amp; 'it' \udc80"


class State(TypedDict):
    n: int
    log: Annotated[list, operator.add]


def _loop_run():
    app = (
        StateGraph(State)
        .add_node(NAME, lambda s: {"n": s["n"] + 1, "log": [VALUE]})
        .add_edge(START, NAME)
        .add_conditional_edges(NAME, lambda s: NAME if s["n"] < 3 else END)
        .compile()
    )
    return app.run({"n": 0, "log": []})


def _data(page: str) -> dict:
    found = re.search(r'<script type="application/json" id="nbgraph-data">(.*?)</script>', page)
    assert found is not None
    return json.loads(found.group(1))


def _texts(data: dict, indices) -> list[str]:
    return [data["strings"][i] if i >= 0 else None for i in indices]


def _column(data: dict, rows: list, name: str) -> list:
    """Each effect row's cell `name`, read through the data's `effectColumns`."""
    return [row[data["effectColumns"].index(name)] for row in rows]


def test_the_data_holds_each_step_its_tasks_effects_and_state():
    run = _loop_run()
    data = page_data(run)
    assert [s[0] for s in data["steps"]] == [0, 1, 2, 3]
    assert all(_texts(data, [t[0] for t in s[1]]) == [NAME] for s in data["steps"][1:])
    fields, before, after, flags = (
        _column(data, data["steps"][2][2], name) for name in ("field", "before", "after", "flags")
    )
    assert _texts(data, fields) == ["n", "log"]
    assert _texts(data, after) == ["2", repr([VALUE, VALUE])]
    assert _texts(data, before) == ["1", repr([VALUE])]
    assert all(f & 1 for f in flags)  # changed
    changes = {data["strings"][f]: data["strings"][v] for f, v in data["steps"][3][3]}
    assert changes == {"n": "3", "log": short([VALUE] * 3, VALUE_WIDTH)}
    assert changes["log"].endswith("…")  # cut to VALUE_WIDTH


@pytest.mark.dot
def test_every_user_text_is_escaped_and_reads_back_exactly():
    run = _loop_run()
    page = run_page(run)
    assert page.count("<script") == 2  # the data and nbgraph's script; no user text's
    assert "alert(1)</script>" not in page and "onerror=alert(2)>" not in page
    assert page.encode("utf-8", "strict")  # a lone surrogate became an escape
    data = _data(page)
    assert NAME in data["strings"] and data["title"] == repr(run)
    ids = data["pictures"][0]["ids"]
    assert set(ids.values()) == {data["strings"].index(NAME)}  # the clickable box
    svg = page[page.index("<svg") : page.index("</svg>")]
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in svg and "<script" not in svg
    tree = page[page.index('<div class="nbg-tree"') : page.index('id="nbg-tree-problem"')]
    assert tree.count("<svg") == 1 and "<script" not in tree and "<img" not in tree
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in tree, "the node's name, escaped"
    assert "&lt;/script&gt;&lt;img src=x onerr" in tree, "its value (cut short), escaped"
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    assert not re.search(r"(src|href)=\"(https?:)?//", page), "nothing is fetched"


def test_long_values_are_cut_and_wide_steps_summarised():
    class Wide(TypedDict):
        items: Annotated[list, operator.add]

    app = (
        StateGraph(Wide)
        .add_node("fan", lambda s: None)
        .add_node("work", lambda s: {"items": ["x" * 500]})
        .add_edge(START, "fan")
        .add_conditional_edges("fan", lambda s: [Send("work", {}) for _ in range(200)])
        .add_edge("work", END)
        .compile()
    )
    data = page_data(app.run({"items": []}))
    assert len(data["steps"][2][1]) == 200
    assert max(len(t) for t in data["strings"]) <= 500  # the writes' text: a few, then counts
    (after,) = _column(data, data["steps"][2][2][:1], "after")
    assert len(data["strings"][after]) <= VALUE_WIDTH
    (writes,) = _texts(data, _column(data, data["steps"][2][2][:1], "writes"))
    assert writes.endswith("… work ×194")


def test_without_a_renderer_the_page_says_why_and_still_steps(monkeypatch):
    monkeypatch.setattr(render, "renderers", lambda: [])
    render.clear_cache()
    try:
        page = run_page(_loop_run())
    finally:
        render.clear_cache()
    assert "<svg" not in page
    data = _data(page)
    assert "No graphviz renderer found" in data["pictures"][0]["problem"]
    assert "No graphviz renderer found" in data["tree"]["problem"]
    assert len(data["steps"]) == 4


def test_a_failed_run_carries_its_traceback():
    def boom(state):
        raise ValueError("bad <value>")

    app = StateGraph(State).add_node("boom", boom).add_edge(START, "boom").compile()
    run = app.run({"n": 0, "log": []})
    data = page_data(run)
    error = data["strings"][data["error"]]
    assert error.startswith("ValueError: bad <value>\nraised in boom (test_share_html.py")
    assert "\nTraceback (most recent call last)" in error  # the whole traceback after it
    assert data["steps"][1][4] == 0 and data["steps"][1][1][0][1] == 1  # not applied, failed


def test_save_html_writes_the_page(tmp_path):
    run = _loop_run()
    path = run.save_html(tmp_path / "run.html", title="<my run>")
    text = path.read_text(encoding="utf-8")
    assert "<title>&lt;my run&gt;</title>" in text
    assert _data(text)["steps"] == page_data(run)["steps"]


def test_a_task_that_ran_a_subgraph_says_so():
    inner = StateGraph(State).add_node("x", lambda s: {"n": s["n"] + 1}).add_edge(START, "x")
    app = StateGraph(State).add_node("sub", inner.compile()).add_edge(START, "sub").compile()
    data = page_data(app.run({"n": 0, "log": []}))
    (task,) = data["steps"][1][1]
    assert data["strings"][task[3]] == "1 graph run, 1 step"
    assert all(t[3] == -1 for s in data["steps"] for t in s[1] if t is not task)
    (sub,) = data["subruns"]  # its own steps: tests/views/test_share_runs.py
    assert (sub["parent"], sub["at"]) == (0, [1, 0])
