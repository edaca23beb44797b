"""A shared run's subruns and state tree (`views/share_runs.py`, in `run.save_html`'s page):
each subrun's own steps, effects and state, placed at the task that started it and told apart
by its input; nested subruns depth first; the tree's boxes mapped to their run and step, long
runs summarised; everything escaped. In a browser: `tests/e2e/test_browser_share_notebook.py`."""

import json
import operator
import re
from typing import Annotated, TypedDict

import pytest

from nbgraph import END, START, Send, StateGraph
from nbgraph.views.share_html import run_page
from nbgraph.views.share_runs import shared_runs

pytestmark = pytest.mark.dot

VALUE = "</script><img src=x onerror=alert(2)>"


class State(TypedDict):
    topic: Annotated[str, lambda old, new: new]
    log: Annotated[list, operator.add]


def _research_run():
    """plan -> research (a subgraph: search -> read) twice by `Send`, on "<sky>" and "sea"
    -> write."""
    inner = (
        StateGraph(State)
        .add_node("search", lambda s: {"log": [f"{VALUE} {s['topic']}"]})
        .add_node("read", lambda s: {"log": ["read"]})
        .add_edge(START, "search")
        .add_edge("search", "read")
        .compile()
    )
    topics = ("<sky>", "sea")
    return (
        StateGraph(State)
        .add_node("plan", lambda s: {"log": ["plan"]})
        .add_node("research", inner)
        .add_node("write", lambda s: {"log": ["write"]})
        .add_edge(START, "plan")
        .add_conditional_edges("plan", lambda s: [Send("research", {"topic": t}) for t in topics])
        .add_edge("research", "write")
        .add_edge("write", END)
        .compile()
        .run({"topic": "t", "log": []})
    )


def _data(page: str) -> dict:
    found = re.search(r'<script type="application/json" id="nbgraph-data">(.*?)</script>', page)
    assert found is not None
    return json.loads(found.group(1))


def _texts(data: dict, indices) -> list:
    return [data["strings"][i] if i >= 0 else None for i in indices]


def test_each_subrun_holds_its_own_steps_effects_and_state():
    run = _research_run()
    assert run.status == "done" and len(run.subruns) == 2
    page = run_page(run)
    data = _data(page)
    assert page.count("<script") == 2 and "onerror=alert(2)>" not in page
    sky, sea = data["subruns"]
    assert _texts(data, [sky["name"], sea["name"]]) == ["run › research"] * 2
    labels = _texts(data, [sky["label"], sea["label"]])
    assert "'<sky>'" in labels[0] and "'sea'" in labels[1], "told apart by their input"
    for sub, at in ((sky, [2, 0]), (sea, [2, 1])):
        assert (sub["parent"], sub["at"], sub["status"]) == (0, at, "done")
        assert [s[0] for s in sub["steps"]] == [0, 1, 2]
        assert [_texts(data, [t[0] for t in s[1]]) for s in sub["steps"][1:]] == [
            ["search"],
            ["read"],
        ]
        (effect,) = sub["steps"][1][2]
        assert _texts(data, [effect[data["effectColumns"].index("field")]]) == ["log"]
    (wrote,) = sky["steps"][1][2]
    after = wrote[data["effectColumns"].index("after")]
    assert data["strings"][after] == repr([f"{VALUE} <sky>"])  # read back exactly
    assert sky["picture"] == sea["picture"] == 1, "one picture of the subgraph, shared"
    assert len(data["pictures"]) == 2 and set(data["pictures"][1]["ids"].values()) == {
        data["strings"].index("search"),
        data["strings"].index("read"),
    }
    tasks = data["steps"][2][1]
    assert _texts(data, [t[3] for t in tasks]) == ["1 graph run, 2 steps"] * 2


def test_the_tree_maps_each_box_to_its_run_and_step():
    run = _research_run()
    data = _data(run_page(run))
    targets = {tuple(t) for t in data["tree"]["ids"].values()}
    assert {(0, 0), (0, 1), (0, 2), (0, 3)} <= targets, "the run's input, tasks and merges"
    assert {(1, 0), (1, 1), (1, 2), (2, 0), (2, 1), (2, 2)} <= targets, "each subrun's"
    assert targets <= {(r, s) for r in range(3) for s in range(4)}
    assert data["tree"]["problem"] == ""


def test_nested_subruns_come_depth_first_under_their_parent():
    class Plain(TypedDict):
        n: int

    leaf = StateGraph(Plain).add_node("leaf", lambda s: {"n": s["n"] + 1}).add_edge(START, "leaf")
    middle = (
        StateGraph(Plain)
        .add_node("inner", leaf.compile())
        .add_node("after", lambda s: {"n": s["n"] * 10})
        .add_edge(START, "inner")
        .add_edge("inner", "after")
    )
    app = (
        StateGraph(Plain)
        .add_node("outer", middle.compile())
        .add_node("again", middle.compile())
        .add_edge(START, "outer")
        .add_edge("outer", "again")
        .compile()
    )
    run = app.run({"n": 0})
    runs, left_out = shared_runs(run)
    assert [(r.name, r.parent, r.step) for r in runs] == [
        ("run", -1, 0),
        ("run › outer", 0, 1),
        ("run › outer › inner", 1, 1),
        ("run › again", 0, 2),
        ("run › again › inner", 3, 1),
    ]
    assert left_out == 0
    data = _data(run_page(run))
    assert [s["parent"] for s in data["subruns"]] == [0, 1, 0, 3]
    deepest = data["subruns"][3]
    assert data["strings"][deepest["steps"][1][3][0][1]] == "11"  # outer made 10; +1
    assert run.output == {"n": 110}


def test_past_the_limit_the_page_says_how_many_more_ran():
    run = _research_run()
    runs, left_out = shared_runs(run, limit=1)
    assert len(runs) == 2 and left_out == 1


def test_a_long_runs_tree_is_summarised_and_its_summary_opens_a_step():
    class Count(TypedDict):
        n: int

    app = (
        StateGraph(Count)
        .add_node("tick", lambda s: {"n": s["n"] + 1})
        .add_edge(START, "tick")
        .add_conditional_edges("tick", lambda s: END if s["n"] >= 60 else "tick")
        .compile()
    )
    run = app.run({"n": 0}, {"recursion_limit": 100})
    page = run_page(run)
    data = _data(page)
    assert "… steps 3–58: 56 tasks (tick ×56) …" in page
    targets = {tuple(t) for t in data["tree"]["ids"].values()}
    assert (0, 3) in targets, "the collapsed stretch opens its first step"
    assert len(targets) < 20 and len(page) < 150_000
