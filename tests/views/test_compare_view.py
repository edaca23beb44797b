"""`run.compare_view(other)`: two runs in one widget. The first difference is found (from
`run.compare`, plus writes that differ), marked and one click away; one step control drives
both; only the fields that differ are shown, each run's before, writes and after side by side;
its display keeps a static snapshot. The same in a browser: tests/e2e/test_browser_compare.py.
"""

import base64
import operator
import re
from typing import Annotated, TypedDict

import pytest

from nbgraph import END, START, StateGraph
from nbgraph.errors import InvalidArgumentError
from nbgraph.record.compare.divergence import divergence, writes_differ
from nbgraph.views.compare.compare_picture import compare_overlay, compare_pictures, same_drawing

WIDGET = "application/vnd.jupyter.widget-view+json"


class Quote(TypedDict, total=False):
    quotes: Annotated[dict, operator.or_]
    log: Annotated[list, operator.add]
    cheapest: str


def _quotes(jp_key: str):
    """eu and jp convert in parallel, then `pick` names the cheapest; the buggy converter
    writes jp's price under `jp_key`."""
    return (
        StateGraph(Quote)
        .add_node("eu", lambda s: {"quotes": {"eu": 99.0}, "log": ["eu"]})
        .add_node("jp", lambda s: {"quotes": {jp_key: 93.8}, "log": ["jp"]})
        .add_node("pick", lambda s: {"cheapest": min(s["quotes"], key=s["quotes"].get)})
        .add_edge(START, "eu")
        .add_edge(START, "jp")
        .add_edge(["eu", "jp"], "pick")
        .add_edge("pick", END)
        .compile()
    )


@pytest.fixture(scope="module")
def runs():
    start = {"quotes": {}, "log": []}
    return _quotes("eu").run(start), _quotes("jp").run(start)


def test_the_first_difference_is_where_a_write_differs_and_the_state_parts(runs):
    buggy, fixed = runs
    found = divergence(buggy, fixed)
    assert found.first == 1 and found.steps == [1, 2]
    assert found.fields(1) == ["quotes"]  # jp wrote under another key
    assert found.fields(2) == ["quotes", "cheapest"]  # the state still differs, and the pick
    assert writes_differ(buggy.log.steps[1], fixed.log.steps[1]) == ["quotes"]


def test_a_write_that_differs_is_found_when_the_state_after_is_equal():
    """The record's `compare` compares states; a write a reducer hid differs all the same."""

    class Highest(TypedDict):
        x: Annotated[int, max]

    def app(value):
        return (
            StateGraph(Highest)
            .add_node("a", lambda s: {"x": value})
            .add_node("b", lambda s: {"x": 5})
            .add_edge(START, "a").add_edge(START, "b")
            .compile()
        )  # fmt: skip

    this, other = app(1).run({"x": 0}), app(2).run({"x": 0})
    assert len(this.compare(other)) == 0  # the same state after every step
    found = divergence(this, other)
    assert found.first == 1 and found.steps == [1] and found.fields(1) == ["x"]
    view = this.compare_view(other)
    assert view.step == 1 and "<b>a</b>: 1" in view.fields.value
    assert "<b>a</b>: 2" in view.fields.value


def test_it_opens_at_the_first_difference_and_one_control_steps_both(runs):
    buggy, fixed = runs
    view = buggy.compare_view(fixed, names=("buggy", "fixed"))
    assert view.step == 1 and "first difference" in view.label.value
    assert "buggy: eu, jp" in view.label.value and "fixed: eu, jp" in view.label.value
    assert "first differ at step 1" in view.summary.value
    view.next.click()
    assert view.step == 2 and "pick" in view.label.value
    assert "cheapest" in view.fields.value
    view.go(0)
    assert "no difference at this step" in view.fields.value
    view.first.click()  # one click back to the first difference
    assert view.step == 1
    view.next_difference.click()
    assert view.step == 2
    assert view.first.description == "⚑ first difference: step 1"


def test_only_the_fields_that_differ_are_shown_with_each_runs_writes(runs):
    buggy, fixed = runs
    view = buggy.compare_view(fixed, names=("buggy", "fixed"))
    fields = view.fields.value
    assert "<b>quotes</b>" in fields and "<b>log</b>" not in fields  # log: the same in both
    assert "<b>jp</b>: {&#x27;eu&#x27;: 93.8}" in fields  # the bug, as buggy's write
    assert "<b>jp</b>: {&#x27;jp&#x27;: 93.8}" in fields  # the fix
    assert "key &#x27;eu&#x27;: 93.8 vs 99.0" in fields  # where the values after part
    header = re.search(r"<thead>(.*?)</thead>", fields).group(1)
    assert re.findall(r">([^<>]+)</th>", header) == ["buggy", "fixed"]


def test_one_picture_holds_both_runs_and_marks_the_node_whose_writes_differ(runs):
    buggy, fixed = runs
    assert same_drawing(buggy, fixed)
    overlay = compare_overlay(buggy, fixed, 1, ("buggy", "fixed"))
    assert overlay.current == {"eu", "jp"}
    assert overlay.notes == {"jp": "≠ writes differ"}
    (picture,) = compare_pictures(buggy, fixed, 1, ("buggy", "fixed"))
    assert picture.title == "" and "writes differ" in picture.svg
    assert picture.svg.count('stroke="#7b1fa2"') == 1  # jp's outline: where the runs part


def test_runs_of_graphs_drawn_differently_get_a_picture_each():
    one = StateGraph(dict).add_node("a", lambda s: {"x": 1}).add_edge(START, "a").compile()
    two = (
        StateGraph(dict).add_node("a", lambda s: {"x": 1}).add_node("b", lambda s: {"x": 2})
        .add_edge(START, "a").add_edge("a", "b").compile()
    )  # fmt: skip
    this, other = one.run({"x": 0}), two.run({"x": 0})
    assert not same_drawing(this, other)
    view = this.compare_view(other)
    assert view.found.first == 2  # the second run's step 2 (b), which the first never ran
    view.go(2)
    titles = [p.title for p in compare_pictures(this, other, 2, view.names)]
    assert titles == ["this (no step 2)", "other at step 2"]
    assert "no step 2 (it ended at step 1, done)" in view.label.value
    assert "<b>outcome</b>" in view.fields.value and "not reached" in view.fields.value


def test_the_display_keeps_a_static_snapshot_of_the_shown_step(runs):
    buggy, fixed = runs
    view = buggy.compare_view(fixed, names=("<b>buggy</b>", "fixed"))
    bundle = view._repr_mimebundle_()
    assert WIDGET in bundle and bundle["text/plain"].startswith("<CompareView of")
    snapshot = bundle["text/html"]
    assert "nbgraph-compare nbgraph-snapshot" in snapshot
    assert "first differ at step 1" in snapshot
    assert "snapshot of the comparison at step 1" in snapshot
    assert "&lt;b&gt;buggy&lt;/b&gt;" in snapshot and "<b>buggy</b>" not in snapshot  # escaped
    copies = re.findall(r"src='data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)'", snapshot)
    assert len(copies) == 1 and "writes differ" in base64.b64decode(copies[0]).decode()


def test_comparing_with_something_not_a_run_names_what_was_expected(runs):
    buggy, _ = runs
    with pytest.raises(InvalidArgumentError, match=r"expected another run .*got dict"):
        buggy.compare_view({"quotes": {}})
    with pytest.raises(InvalidArgumentError, match=r"names=\): expected two texts"):
        buggy.compare_view(buggy, names=("one",))


def test_two_equal_runs_say_so_and_open_at_step_one(runs):
    _, fixed = runs
    view = fixed.compare_view(_quotes("jp").run({"quotes": {}, "log": []}))
    assert view.found.first is None and view.first.disabled and view.step == 1
    assert "No difference" in view.summary.value


def test_branch_lineage_runs_are_compared_node_by_node_at_the_steps_the_nodes_ran():
    """With branch lineages `compare` aligns runs by node; its rows about the whole run (the
    final state) belong to the last step, not to every step."""

    class Joined(TypedDict, total=False):
        x: int
        log: Annotated[list, operator.add]

    def app(value):
        return (
            StateGraph(Joined)
            .add_node("a", lambda s: {"x": value, "log": ["a"]})
            .add_node("b", lambda s: {"log": ["b"]})
            .add_node("c", lambda s: {"log": [f"c saw {s.get('x')}"]})
            .add_edge(START, "a").add_edge(START, "b").add_edge(["a", "b"], "c")
            .add_edge("c", END)
            .compile(semantics="branches")
        )  # fmt: skip

    this, other = app(1).run({"log": []}), app(2).run({"log": []})
    assert "node" in this.compare(other).columns  # (node-aligned)
    view = this.compare_view(other)
    assert view.found.steps == [1, 2] and view.step == 1
    assert "<b>x</b>" in view.fields.value and "<b>log</b>" not in view.fields.value
    view.go(0)
    assert "no difference at this step" in view.fields.value  # (not the final state's rows)
    view.go(2)
    assert "c saw 1" in view.fields.value and "c saw 2" in view.fields.value


def test_where_the_runs_take_other_ways_the_picture_says_which_run_ran_what():
    def app(way):
        return (
            StateGraph(dict)
            .add_node("route", lambda s: {"n": 1})
            .add_node("left", lambda s: {"n": 2})
            .add_node("right", lambda s: {"n": 3})
            .add_edge(START, "route")
            .add_conditional_edges("route", lambda s: way, ["left", "right"])
            .add_edge("left", END).add_edge("right", END)
            .compile()
        )  # fmt: skip

    this, other = app("left").run({"n": 0}), app("right").run({"n": 0})
    view = this.compare_view(other, names=("went left", "went right"))
    assert view.step == view.found.first == 2
    overlay = compare_overlay(this, other, 2, view.names)
    assert overlay.current == {"left", "right"}
    assert overlay.notes["left"] == "went left ×1, went right ×0 — only in went left"
    assert overlay.notes["right"] == "went left ×0, went right ×1 — only in went right"
    assert "<b>tasks</b>" in view.fields.value  # the step's tasks differ: a row says so
    assert "went left: left" in view.label.value and "went right: right" in view.label.value
