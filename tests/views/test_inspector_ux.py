"""The inspector as a debugger a person wants (issue 18): layout, whole values, diffs that
point at the difference, Play, step highlight, theme, saved notebooks, tracebacks, tables,
state-tree drawings. Headless: build the widget, read its HTML (Play with two views and the dark
theme in a real browser: tests/e2e/test_browser.py)."""

import operator
from typing import Annotated, TypedDict

import pytest

from nbgraph import END, START, StateGraph
from nbgraph.record.compare.values import first_difference
from nbgraph.views.value_tree import value_tree_html

EVIL = "<img src=x onerror=alert(1)>"


class S(TypedDict, total=False):
    log: Annotated[list, operator.add]
    note: str


def fan_app(long: str = "x" * 120):
    def writer(name, **extra):
        return lambda state: {"log": [name], **extra}

    return (
        StateGraph(S)
        .add_node("a", writer("a", note=long))
        .add_node("b", writer("b"))
        .add_node("c", writer("c"))
        .add_node("d", writer("d", note=EVIL + long))
        .add_edge(START, "a")
        .add_edge("a", "b")
        .add_edge("a", "c")
        .add_edge(["b", "c"], "d")
        .add_edge("d", END)
        .compile()
    )


# --- 1. layout, whole values, diffs that point ----------------------------------------------


def test_the_picture_and_the_panels_share_the_width_or_stacked_each_takes_all_of_it():
    inspector = fan_app().run({"log": []}).inspect()
    assert inspector.body.children == (inspector.graph, inspector.panels)
    assert "nbgraph-graph" in inspector.graph._dom_classes  # (laid out by the shipped CSS)
    assert "nbgraph-auto" in inspector._dom_classes  # side by side if wide, else stacked
    assert "max-width:100%" not in inspector.graph.value  # never shrunk to its room: it scrolls
    assert "run done" not in inspector.graph.value and "run done" in inspector.graph.caption
    inspector.go(3)
    task_d = next(o for o in inspector.branch_pick.options if o.endswith(":d"))
    inspector.branch_pick.value = task_d  # following a branch keeps the same layout
    assert _layout(inspector) == ("auto", ["nbgraph-auto"])
    inspector.arrangement.value = "stacked"
    assert _layout(inspector) == ("stacked", ["nbgraph-stacked"])
    inspector.arrange("side by side")
    assert _layout(inspector) == ("side by side", ["nbgraph-beside"])
    with pytest.raises(ValueError, match="'auto', 'side by side' or 'stacked', not 'sideways'"):
        inspector.arrange("sideways")
    assert _layout(inspector) == ("side by side", ["nbgraph-beside"])


def _layout(inspector) -> tuple[str, list[str]]:
    """The layout picked in the buttons, and the layout classes on the inspector's root."""
    classes = [c for c in inspector._dom_classes if c in ("nbgraph-auto", "nbgraph-beside",
               "nbgraph-stacked")]  # fmt: skip
    return inspector.arrangement.value, classes


def test_a_long_value_unfolds_into_a_tree_and_its_whole_text_escaped():
    value = {"items": [EVIL * 3, {"deep": list(range(30))}], "n": 1}
    shown = value_tree_html(value, 50)
    assert shown.startswith("<details class='nbgraph-value'><summary>")
    assert "[1]:" in shown and "&#x27;deep&#x27;:" in shown  # a line per item and key
    assert "<i>as text</i>" in shown and "29]}], &#x27;n&#x27;: 1}</pre>" in shown  # whole
    assert EVIL not in shown and "&lt;img src=x" in shown
    assert value_tree_html("1") != value_tree_html(1)  # quotes kept
    many = value_tree_html(list(range(500)), 50)
    assert "… 400 more" in many and "499]</pre>" in many  # the tree counts; the text has all


def test_the_state_panel_shows_a_long_value_whole():
    long = "y" * 200 + "END"
    inspector = fan_app(long).run({"log": []}).inspect()
    inspector.go(1)
    assert long in inspector.state.value and "<details" in inspector.state.value


def test_first_difference_names_the_index_key_or_character():
    assert first_difference([1, {"k": [0, 5]}], [1, {"k": [0, 6]}]) == (
        "index 1 → key 'k' → index 1: 5 vs 6"
    )
    assert first_difference({"a": 1}, {"a": 1, "b": 2}) == "key 'b' only on the right"
    assert first_difference("1", 1) == "type str vs int: '1' vs 1"
    assert first_difference("z" * 60 + "a", "z" * 60 + "b") == "character 60: 'a' vs 'b'"
    assert first_difference([1, 2], [1, 2]) == ""


def test_compare_mode_points_at_what_differs_in_values_that_look_alike_cut_short():
    app = fan_app()
    run, other = app.run({"log": ["s" * 80 + "1"]}), app.run({"log": ["s" * 80 + "2"]})
    inspector = run.inspect(other)
    inspector.go(1)
    inspector.compare_mode.value = "the other run"
    table = inspector.comparison.value
    assert "differs at" in table and "index 0: character 80: &#x27;1&#x27;" in table
    inspector.compare_mode.value = "another step"
    inspector.compare_step.value = 3
    assert "length 2 vs 5: index 2 only on the right" in inspector.comparison.value


def test_order_sensitivity_says_where_the_two_results_differ():
    table = fan_app().run({"log": []}).order_sensitivity()
    assert list(table["differs_at"]) == ["index 1: 'b' vs 'c'"]


# --- 2. play, however many times the inspector is displayed ---------------------------------


def test_play_runs_to_the_last_step_with_the_inspector_displayed_twice():
    import ipywidgets

    from nbgraph.views.playback import Playback

    inspector = fan_app().run({"log": []}).inspect()
    for _ in range(2):  # two views of one model: ipywidgets.Play's timer lives in each view
        assert "application/vnd.jupyter.widget-view+json" in inspector._repr_mimebundle_()
    assert isinstance(inspector.play, Playback) and not isinstance(inspector.play, ipywidgets.Play)
    assert all(not isinstance(w, ipywidgets.Play) for w in inspector.play.children)
    inspector.play.interval = 10
    inspector.play.play()
    inspector.play.join(timeout=30)
    assert inspector.step == 3 and not inspector.play.playing
    assert inspector.play.button.description == "▶ play"
    assert "<b>step 3</b>" in inspector.step_label.value
    inspector.play.play()  # from the last step: starts again at the first
    inspector.play.pause()
    inspector.play.join(timeout=30)
    assert inspector.step in (0, 1) and not inspector.play.playing


# --- 3. the step highlight ------------------------------------------------------------------


def node_labels(source: str) -> dict[str, str]:
    """A DOT source's node labels -> that node's attribute text."""
    import re

    found = {}
    for attrs in re.findall(r"^\s*\w+ \[(.*)\]$", source, re.M):
        text = re.match(r'label=("(?:[^"\\]|\\.)*"|\w+)', attrs)
        if text:
            found[text.group(1).strip('"').split("\\n")[0]] = attrs
    return found


def test_a_step_marks_its_tasks_apart_from_their_triggers_with_counts_so_far():
    run = fan_app().run({"log": []})
    at_two = node_labels(run.draw(step=2).source)
    for name in ("b", "c"):  # they run at step 2
        assert "runs this step" in at_two[name] and "penwidth=2.5" in at_two[name]
        assert "ran ×1" in at_two[name]
    assert "dashed" in at_two["a"] and "penwidth=1.5" in at_two["a"]  # triggered them
    assert "runs this step" not in at_two["a"]
    assert "ran ×" not in at_two["d"] and "#c8c8c8" in at_two["d"]  # has not run yet
    whole = node_labels(run.draw().source)
    assert "ran ×1" in whole["d"] and "runs this step" not in whole["d"]


def test_following_a_branch_marks_the_current_step():
    inspector = fan_app().run({"log": []}).inspect()
    inspector.go(3)
    inspector.branch_pick.value = next(o for o in inspector.branch_pick.options if o.endswith(":d"))
    inspector.go(2)
    picture = inspector.graph.value
    assert "runs this step" in picture and "at step 2" in inspector.graph.caption
    inspector.go(3)
    assert "at step 3" in inspector.graph.caption and "runs this step" in inspector.graph.value
    assert inspector.graph.value != picture  # no longer frozen at every step


# --- 4. the theme ---------------------------------------------------------------------------


def test_panels_and_picture_follow_jupyterlabs_theme_variables():
    import re

    from nbgraph.views import panels, theme

    inspector = fan_app().run({"log": []}).inspect()
    inspector.go(2)
    html = inspector.state.value + inspector.effects.value
    assert "var(--jp-warn-color1" in html and "var(--jp-border-color2" in html
    assert "#fff2cc" not in html  # no fixed light highlight under the theme's text
    assert panels.CHANGED == theme.CHANGED and "transparent" in theme.CHANGED
    picture = inspector.graph.value
    assert 'fill="white"' not in picture and 'fill="transparent"' in picture  # no white slab
    style = re.search(r"<style>(.*?)</style>", picture).group(1)
    # the ink (#333333) drawn in the theme's text colour, scoped to nbgraph's drawings
    assert "svg.nbgraph-drawing [stroke='#333333']{stroke:var(--jp-content-font-color1" in style
    assert "svg.nbgraph-drawing [fill='#333333']{fill:var(--jp-content-font-color1" in style
    assert picture.startswith('<svg class="nbgraph-drawing"')


# --- 5. a saved notebook ----------------------------------------------------------------------


def test_the_display_bundle_carries_a_static_snapshot_beside_the_widget_view():
    inspector = fan_app().run({"log": []}).inspect()
    inspector.go(3)
    bundle = inspector._repr_mimebundle_()
    view = bundle["application/vnd.jupyter.widget-view+json"]
    assert view["model_id"] == inspector.model_id
    snapshot = bundle["text/html"]
    assert "nbgraph-snapshot" in snapshot and "at step 3 of 3" in snapshot
    assert "<svg" in snapshot and "<b>step 3</b>" in snapshot  # the picture and the label
    assert inspector.state.value in snapshot and inspector.effects.value in snapshot
    assert EVIL not in snapshot and "&lt;img src=x onerror=alert(1)&gt;" in snapshot
    inspector.go(1)
    assert "at step 1 of 3" in inspector._repr_mimebundle_()["text/html"]


def test_a_saved_notebook_converted_to_html_shows_the_snapshot():
    nbconvert = pytest.importorskip("nbconvert")
    import nbformat

    inspector = fan_app().run({"log": []}).inspect()
    cell = nbformat.v4.new_code_cell("run.inspect()")
    cell.outputs = [nbformat.v4.new_output("display_data", data=inspector._repr_mimebundle_())]
    notebook = nbformat.v4.new_notebook(cells=[cell])  # saved: no kernel, no widget state
    page, _ = nbconvert.HTMLExporter().from_notebook_node(notebook)
    assert "nbgraph-snapshot" in page and "at step 1 of 3" in page
    assert "model not found" not in page


# --- 6. failures ------------------------------------------------------------------------------


def test_a_failure_shows_the_nodes_source_line_and_the_traceback():
    def fail(state):
        raise RuntimeError("the tool <timed out>")  # the line the panel shows

    run = (
        StateGraph(S)
        .add_node("a", lambda s: {"log": ["a"]})
        .add_node("boom", fail)
        .add_edge(START, "a")
        .add_edge("a", "boom")
        .compile()
        .run({"log": []})
    )
    inspector = run.inspect()
    shown = inspector.error.value
    assert "RuntimeError at step 2" in shown
    assert "raised in node &#x27;boom&#x27;: <code>fail</code>" in shown
    assert __file__ in shown and "# the line the panel shows" in shown
    assert "<summary>traceback</summary>" in shown and "Traceback (most recent call last)" in shown
    assert "the tool &lt;timed out&gt;" in shown and "<timed out>" not in shown


# --- 7. tables --------------------------------------------------------------------------------


def failing_app():
    def fail(state):
        raise ValueError("no")

    return (
        StateGraph(S)
        .add_node("a", lambda s: {"log": ["a"], "note": "1"})
        .add_node("b", lambda s: {"note": 1})
        .add_node("boom", fail)
        .add_edge(START, "a")
        .add_edge("a", "b")
        .add_edge("a", "boom")
        .compile()
    )


def test_effects_display_compactly_with_the_data_unchanged():
    import pandas as pd

    from nbgraph.record.run import RunRecord

    run = fan_app().run({"log": []})
    table = run.effects
    assert isinstance(table, pd.DataFrame)
    assert list(table.columns) == list(RunRecord(run.log).effects.columns)  # the data: all
    assert len(table.columns) == 15
    shown = table._repr_html_()
    header = shown[: shown.index("</thead>")]
    assert header.count("<th ") == 8 and ">flags<" in header and ">overwrite_bypass<" not in header
    assert "text-align:left" in shown and "compact view" in shown
    assert "&#x27;a&#x27;" in shown  # quotes kept
    assert EVIL not in shown
    assert isinstance(table[table.step == 1], pd.DataFrame)  # a slice: a DataFrame too
    assert "compact view" in table.head(2)._repr_html_()  # displayed as the whole table


def test_quotes_tell_a_string_from_a_number_and_unapplied_is_not_missing():
    run = failing_app().run({"log": []})
    inspector = run.inspect()
    assert inspector.step == 2  # the failed step: its writes were not applied
    assert "(not applied: the step failed)" in inspector.effects.value
    shown = run.effects._repr_html_()
    assert "(not applied: the step failed)" in shown and "not applied" in shown
    first = run.effects[run.effects.step == 1]
    assert first.set_index("field").loc["note", "after"] == "1"
    assert "&#x27;1&#x27;" in shown  # the string '1', quoted


def test_steps_show_readable_durations_and_ids_read_as_words():
    from nbgraph.views.table_view import duration_text, readable_id, readable_ids

    run = fan_app().run({"log": []})
    shown = run.steps._repr_html_()
    assert " µs<" in shown or " ms<" in shown
    assert list(run.steps.columns)[6] == "duration"  # the data: seconds, as before
    assert duration_text(0.00012) == "120 µs" and duration_text(2.5) == "2.5 s"
    assert duration_text(125) == "2 min 5 s"
    assert readable_id("task:2:0:b") == "b (step 2)"
    assert readable_ids("join:3:d of task:2:0:b") == (
        "join of the branches into d (step 3) of b (step 2)"
    )
    assert readable_id("merge:0") == "input"


def test_diff_columns_are_not_named_like_nodes():
    run = fan_app().run({"log": []})
    diff = run.diff(1, 3)
    assert list(diff.columns) == ["field", "change", "from", "to"]


# --- 8. state-tree drawings -------------------------------------------------------------------


def test_the_tree_is_drawn_left_to_right_in_one_font_with_a_legend_beside_it():
    import re

    drawing = fan_app().run({"log": []}).draw_tree()
    source = drawing.source
    assert "rankdir=LR" in source
    fonts = set(re.findall(r"fontname=(\w+)", source))
    assert fonts == {"Helvetica"}  # nodes and edges: one font
    assert set(re.findall(r"fontsize=(\w+)", source)) == {"10"}  # and one size
    assert "cluster_legend" not in source  # the legend: a line under the picture, not in it
    assert drawing.nbgraph_legend == (("solid", "state passed on (numbers: merge order)"),)
    assert "merge 2" in source  # two parents: a merge, numbered
    assert "merge 1" not in source and "merge 3" not in source  # one parent: no merge circle
    ids = {text.split("\\n")[0]: i for i, text in re.findall(r'(\w+) \[label="([^"]*)"', source)}
    edges = set(re.findall(r"(\w+) -> (\w+)", source))
    assert (ids["a"], ids["b"]) in edges  # b hangs on a itself
    assert (ids["merge 2"], ids["d"]) in edges


def test_a_lambda_router_is_named_by_its_place_not_a_question_mark():
    from typing import TypedDict

    class L(TypedDict):
        n: int

    app = (
        StateGraph(L)
        .add_node("tick", lambda s: {"n": s["n"] + 1})
        .add_edge(START, "tick")
        .add_conditional_edges("tick", lambda s: END if s["n"] >= 2 else "tick")
        .compile()
    )
    source = app.run({"n": 0}).draw().source
    assert 'label="route after tick"' in source and 'label="?"' not in source

    def decide(state):
        return END

    named = StateGraph(L).add_node("tick", lambda s: {"n": 1}).add_edge(START, "tick")
    named = named.add_conditional_edges("tick", decide).compile()
    assert 'label="decide(state)"' in named.run({"n": 0}).draw().source


# --- 9. the list of steps and tasks -----------------------------------------------------------


def test_a_list_of_steps_and_tasks_with_times_moves_the_step_and_shows_a_task():
    inspector = fan_app().run({"log": ["in"]}).inspect()
    listed = inspector.step_list.select
    labels = [label for label, _ in listed.options]
    assert labels[0] == "step 0: input" and labels[1].startswith("step 1: 1 task, ")
    assert labels[1].endswith(("µs", "ms", " s"))
    assert any(label.strip().startswith("b  ") for label in labels)  # a task, indented
    assert listed.value == ("step", 1)
    listed.value = ("step", 3)  # a click on a step
    assert inspector.step == 3 and inspector.step_list.task_panel.value == ""
    task_c = next(value for label, value in listed.options if label.strip().startswith("c "))
    listed.value = task_c  # a click on a task: its step, what it read, what it wrote
    assert inspector.step == 2 and listed.value == task_c
    panel = inspector.step_list.task_panel.value
    assert "<b>c</b>" in panel and "input (the state it read)" in panel
    assert "[&#x27;in&#x27;, &#x27;a&#x27;]" in panel  # the state c read: after step 1
    assert "output (its writes, in order)" in panel and "[&#x27;c&#x27;]" in panel
    inspector.go(3)
    assert listed.value == ("step", 3) and inspector.step_list.task_panel.value == ""


def test_a_long_runs_list_shows_the_steps_around_the_shown_one():
    steps = 500
    run = (
        StateGraph(dict, reducers={"log": "append"})
        .add_node("step", lambda s: {"n": s["n"] + 1})
        .add_edge(START, "step")
        .add_conditional_edges("step", lambda s: END if s["n"] >= steps else "step", ["step", END])
        .compile()
        .run({"n": 0}, {"recursion_limit": steps + 10})
    )
    inspector = run.inspect()
    assert len(inspector.step_list.select.options) < 130
    inspector.go(400)
    assert any(
        label.startswith("step 400: 1 task") for label, _ in inspector.step_list.select.options
    )
    assert inspector.step_list.select.value == ("step", 400)


def test_a_huge_value_sends_a_bounded_text():
    from nbgraph.views.value_tree import COPY_CHARS

    shown = value_tree_html("z" * 1_000_000, 50)
    assert len(shown) < COPY_CHARS + 1_000 and "more characters" in shown
    nested = value_tree_html({"doc": "y" * 1_000_000}, 50)
    assert len(nested) < 2 * COPY_CHARS + 1_000


def test_the_run_summary_and_a_stepped_step_keep_quotes_on_values():
    import pandas as pd

    from nbgraph.views.display import styled

    frame = pd.DataFrame({"field": ["x", "y"], "after": ["1", 1]}, dtype=object)
    shown = styled(frame).to_html()
    assert ">&#x27;1&#x27;<" in shown and ">1<" in shown  # the string, the number
    assert ">x<" in shown  # a field name is a name, not a value: no quotes
    run = failing_app().run({"log": []})
    summary = run._repr_mimebundle_()["text/html"]
    assert ">&#x27;1&#x27;</td>" in summary  # the string '1' that a wrote, after step 1
    stepper = failing_app().stepper({"log": []})
    stepper.step()
    assert ">&#x27;1&#x27;</td>" in stepper.step()._repr_html_()
