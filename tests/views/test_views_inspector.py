"""The inspector, headless: set the slider, press buttons, pick a branch, read the HTML."""

import operator
from typing import Annotated, TypedDict

import ipywidgets
import pytest

import nbgraph
from nbgraph import END, START, StateGraph
from nbgraph.views.drawings.theme import CHANGED, FADED
from nbgraph.views.inspector.inspector_widget import ALL_BRANCHES
from nbgraph.views.panels.panels import effects_html, state_html

EVIL = "<img src=x onerror=alert(1)>"


class S(TypedDict, total=False):
    log: Annotated[list, operator.add]
    total: Annotated[int, "add"]
    note: str


def node(name: str, **extra):
    return lambda state: {"log": [name], "total": 1, **extra}


def fan_app():
    return (
        StateGraph(S)
        .add_node("a", node("a", note="from a"))
        .add_node("b", node("b"))
        .add_node("c", node("c"))
        .add_node("d", node("d"))
        .add_node("join", node("join", note=EVIL))
        .add_edge(START, "a")
        .add_edge("a", "b")
        .add_edge("a", "c")
        .add_edge("b", "d")
        .add_edge(["c", "d"], "join")
        .add_edge("join", END)
        .compile()
    )


def test_it_is_a_widget_that_opens_at_step_one_and_steps_with_the_buttons():
    inspector = fan_app().run({"log": []}).inspect()
    assert isinstance(inspector.widget, ipywidgets.VBox)
    assert "nbgraph-inspector" in inspector.widget._dom_classes
    assert inspector.step == 1 and "<b>step 1</b> of 4: a" in inspector.step_label.value
    inspector.next.click()
    inspector.next.click()
    assert inspector.step == 3 and "d" in inspector.step_label.value
    inspector.previous.click()
    assert inspector.step == 2 and "b, c" in inspector.step_label.value
    for _ in range(10):
        inspector.next.click()
    assert inspector.step == 4  # clamped at the last step
    assert inspector.play.max == inspector.slider.max == 4


def test_each_panel_shows_the_step_it_is_on():
    inspector = nbgraph.inspect(fan_app().run({"log": []}))
    inspector.slider.value = 2
    assert "<svg" in inspector.graph.value and "<?xml" not in inspector.graph.value
    assert "penwidth=" not in inspector.graph.value  # SVG, not DOT
    effects = inspector.effects.value
    assert "b: [&#x27;b&#x27;]" in effects and "c: [&#x27;c&#x27;]" in effects
    assert effects.index("b: [") < effects.index("c: [")  # write order
    assert CHANGED in inspector.state.value  # changed fields highlighted
    assert "[&#x27;a&#x27;, &#x27;b&#x27;, &#x27;c&#x27;]" in inspector.state.value


def test_jump_to_a_nodes_nth_run():
    class L(TypedDict):
        n: int

    run = (
        StateGraph(L)
        .add_node("tick", lambda s: {"n": s["n"] + 1})
        .add_node("tock", lambda s: None)
        .add_edge(START, "tick")
        .add_edge("tick", "tock")
        .add_conditional_edges("tock", lambda s: END if s["n"] >= 4 else "tick")
        .compile()
        .run({"n": 0})
    )
    inspector = run.inspect()
    inspector.node.value = "tick"
    assert inspector.occurrence.max == 3
    inspector.occurrence.value = 2
    inspector.jump.click()
    assert inspector.step == 5 and "tick" in inspector.step_label.value


def test_following_a_branch_greys_out_the_others():
    run = fan_app().run({"log": []})
    inspector = run.inspect()
    inspector.slider.value = 3
    task_d = next(o for o in inspector.branch_pick.options if o.endswith(":d"))
    inspector.branch_pick.value = task_d
    assert inspector.branch == task_d
    assert inspector.branch_writers == {0: {"__start__"}, 1: {"a"}, 2: {"b"}, 3: {"d"}}
    inspector.slider.value = 2
    assert f"{FADED}'>c:" in inspector.effects.value  # c is not on d's branch
    assert f"{FADED}'>b:" not in inspector.effects.value
    inspector.slider.value = 4
    assert "not on the followed branch" in inspector.step_label.value
    inspector.branch_pick.value = ALL_BRANCHES
    assert inspector.branch is None and FADED not in inspector.effects.value


def test_field_filter_and_compare_modes():
    app = fan_app()
    run, other = app.run({"log": []}), app.run({"log": ["other start"]})
    inspector = run.inspect(other)
    inspector.slider.value = 2
    inspector.fields.value = ("total",)
    assert ">total<" in inspector.state.value and ">log<" not in inspector.state.value
    assert ">log<" not in inspector.effects.value
    inspector.compare_mode.value = "another step"
    inspector.compare_step.value = 4
    assert (
        "step 2 vs step 4" in inspector.comparison.value and "changed" in inspector.comparison.value
    )
    inspector.compare_mode.value = "the other run"
    assert "other start" in inspector.comparison.value
    inspector.compare_mode.value = "off"
    assert inspector.comparison.value == ""


def test_a_failed_run_opens_at_the_failing_step_with_the_exception():
    def fail(state):
        raise RuntimeError("the tool <timed out>")

    run = (
        StateGraph(S)
        .add_node("a", node("a"))
        .add_node("b", fail)
        .add_edge(START, "a")
        .add_edge("a", "b")
        .compile()
        .run({"log": []})
    )
    inspector = run.inspect()
    assert inspector.step == 2 and "failed" in inspector.step_label.value
    assert "RuntimeError at step 2" in inspector.error.value
    assert "the tool &lt;timed out&gt;" in inspector.error.value
    inspector.previous.click()
    assert inspector.error.value == ""


def test_every_panel_escapes_state_values():
    inspector = fan_app().run({"log": []}).inspect()
    inspector.slider.value = 4
    for panel in (inspector.state, inspector.effects, inspector.step_label, inspector.graph):
        assert EVIL not in panel.value
    assert "&lt;img src=x onerror=alert(1)&gt;" in inspector.state.value
    assert EVIL not in state_html({EVIL: EVIL})
    with pytest.raises(AttributeError):
        effects_html([object()])


def test_a_paused_run_opens_at_the_question_it_waits_on():
    from nbgraph import MemorySaver, interrupt

    app = (
        StateGraph(S)
        .add_node("a", node("a"))
        .add_node("ask", lambda s: {"note": interrupt("<ok>?")})
        .add_edge(START, "a")
        .add_edge("a", "ask")
        .compile(checkpointer=MemorySaver())
    )
    app.invoke({"log": []}, {"configurable": {"thread_id": "q"}})
    inspector = app.last_run.inspect()
    assert inspector.step == 2
    assert "waiting for an answer" in inspector.error.value
    asked = inspector.answer_panel.rows[0].box.children[0].value  # the question, shown once
    assert "&#x27;&lt;ok&gt;?&#x27;" in asked and "<ok>" not in asked


def test_the_branch_selector_of_a_branch_run_names_each_lineage() -> None:
    from nbgraph import END, START, StateGraph

    graph = StateGraph(dict, reducers={"log": "append"})
    for name in "abcd":
        graph.add_node(name, (lambda n: lambda s: {"log": [n]})(name))
    graph.add_edge(START, "a").add_edge("a", "b").add_edge("a", "c").add_edge("b", "d")
    graph.add_edge("d", END)
    run = graph.compile(semantics="branches").run({"log": []})
    inspector = run.inspect()
    inspector.go(2)
    assert ("b (step 2) ← a (step 1)", "2:0:b") in inspector.branch_pick.options
    inspector.go(3)
    inspector.branch_pick.value = "3:0:d"  # d's lineage: a, b — not c
    assert inspector.branch_writers == {3: {"d"}, 2: {"b"}, 1: {"a"}}


def test_the_inspector_is_a_widget_that_composes_into_layouts():
    app = fan_app()
    left, right = app.run({"log": []}).inspect(), app.run({"log": ["x"]}).inspect()
    assert isinstance(left, ipywidgets.VBox) and left.widget is left
    both = ipywidgets.HBox([left, right])  # a TraitError while it was a wrapper object
    assert both.children == (left, right)
    bundle = left._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert bundle["text/plain"].startswith("<Inspector of <Run done")
    left.go(3)
    assert left.step == 3 and right.step == 1  # each keeps its own place


def test_opening_a_long_run_shows_its_step_without_building_the_whole_table():
    steps = 3000
    run = (
        StateGraph(dict, reducers={"log": "append"})
        .add_node("step", lambda s: {"n": s["n"] + 1, "log": [s["n"]]})
        .add_edge(START, "step")
        .add_conditional_edges("step", lambda s: END if s["n"] >= steps else "step", ["step", END])
        .compile()
        .run({"n": 0, "log": []}, {"recursion_limit": steps + 10})
    )
    inspector = run.inspect()
    assert "effect_list" not in vars(run) and "tree" not in vars(run)
    assert ">log<" in inspector.effects.value and "step: [0]" in inspector.effects.value
    inspector.go(steps)
    assert (
        "[0, 1, 2, 3, 4, 5, 6, 7, 8" in inspector.effects.value and "…" in inspector.effects.value
    )
    assert "effect_list" not in vars(run)
    inspector.node.value, inspector.occurrence.value = "step", 41
    assert inspector.occurrence.max == steps - 1
    inspector.jump.click()
    assert inspector.step == 42
    assert run.effects is not None  # once the table exists, the inspector reads it
    again = run.inspect()
    again.go(7)
    assert again.effects_at(7) == [e for e in run.effect_list if e.step == 7]


def test_values_whose_repr_raises_show_as_placeholders_everywhere():
    from nbgraph import MemorySaver, interrupt

    class Handle:
        def __repr__(self):
            raise RuntimeError(EVIL)

    app = (
        StateGraph(dict)
        .add_node("a", lambda s: {"h": Handle()})
        .add_node("ask", lambda s: {"answer": interrupt(Handle())})
        .add_edge(START, "a")
        .add_edge("a", "ask")
        .compile(checkpointer=MemorySaver())
    )
    app.invoke({"h": None}, {"configurable": {"thread_id": "t"}})
    inspector = app.last_run.inspect()
    inspector.go(1)
    placeholder = "&lt;Handle: repr raised RuntimeError: &lt;img src=x onerror=alert(1)&gt;&gt;"
    assert placeholder in inspector.state.value  # the effects panel shows its first 50 chars
    assert "&lt;Handle: repr raised RuntimeError: &lt;img" in inspector.effects.value
    inspector.go(2)
    asked = inspector.answer_panel.rows[0].box.children[0].value  # the question it waits on
    assert placeholder in asked and EVIL not in asked


def test_a_value_that_contains_itself_shows_as_repr_shows_it():
    """Issue 28 (repros2/07): a list or dict holding itself made `run.inspect()` (and the
    run's display) raise RecursionError; it shows as repr writes it, `[1, [...]]`."""
    from nbgraph.record.text import short

    def cyclic(_):
        items: list = [1, EVIL]
        items.append(items)
        table: dict = {"a": 1}
        table["self"] = table
        table["items"] = items
        return {"note": items, "log": [table]}

    app = StateGraph(S).add_node("a", cyclic).add_edge(START, "a").add_edge("a", END).compile()
    run = app.run({"log": [], "total": 0})
    inspector = run.inspect()
    inspector.go(1)
    assert "[1, &#x27;&lt;img src=x onerror=alert(1)&gt;&#x27;, [...]]" in inspector.state.value
    assert EVIL not in inspector.state.value + inspector.effects.value
    assert "text/html" in run._repr_mimebundle_()
    assert short(run.output["log"], 200) == repr(run.output["log"])
    deep: list = []
    for _ in range(5_000):  # deeper than Python's recursion limit: cut, never raised
        deep = [deep]
    assert short(deep, 30) == "[" * 29 + "…"
    assert short(deep, 10_000).startswith("[" * 100 + "[…")


def test_a_lone_surrogate_in_a_node_name_is_drawn_and_shown_escaped():
    """Issue 28 (repros2/13): a node name holding half an emoji raised UnicodeEncodeError
    from every picture and the inspector; it shows as its escape, as in a value's repr."""
    from nbgraph.views.drawings.dot import label

    name = "answer \ud83d <b>"
    app = StateGraph(dict).add_node(name, lambda s: {"f": 1}).add_edge(START, name).compile()
    run = app.run({"f": 0})
    assert run.status == "done"
    assert str(label(name)) == "answer \\\\ud83d <b>"
    for bundle in (app._repr_mimebundle_(), run._repr_mimebundle_()):
        assert "text/plain" in bundle
    inspector = run.inspect()
    inspector.go(1)
    assert "ud83d" in inspector.graph.value and "<b>" not in inspector.graph.value
    for source in (app.draw().source, run.draw().source):
        source.encode("utf-8")  # the DOT text itself holds no lone surrogate
