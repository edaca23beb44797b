"""The clickable inspector, headless: the picture's click and key messages (as the browser
sends them) move the step; "edit and fork here" forks a checkpointed run at the shown step.
The fork itself is checked against LangGraph (update_state on the same checkpoint, then
invoke(None)): same output, same checkpoints."""

import json
import operator
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Annotated, TypedDict

import pytest

from nbgraph import END, START, Send, StateGraph
from nbgraph.checkpoint.memory import MemorySaver
from nbgraph.notebook.fork import ForkError
from nbgraph.views.drawings.render import render_svg
from nbgraph.views.inspector.clickable_graph import STATIC, ClickablePicture
from nbgraph.views.inspector.clicks import graph_targets, next_run_step
from tests.support.harness import api_for

ODD = 'se"arch <b>& more'  # a node name with a quote, spaces, markup and an ampersand


class State(TypedDict, total=False):
    topic: str
    notes: Annotated[list, operator.add]
    verdict: str


def note(name):
    return lambda state: {"notes": [f"{name} on {state['topic']}"]}


def build(api_graph=StateGraph, odd: str = ODD):
    return (
        api_graph(State)
        .add_node("plan", lambda s: {"verdict": "planning"})
        .add_node(odd, note("search"))
        .add_node("read", note("read"))
        .add_node("write", lambda s: {"verdict": f"{len(s['notes'])} notes: {s['verdict']}"})
        .add_edge(START, "plan")
        .add_edge("plan", odd)
        .add_edge("plan", "read")
        .add_edge([odd, "read"], "write")
        .add_edge("write", END)
    )


def looping_run():
    """`count` runs at steps 1, 2 and 3; `done` at step 4."""
    app = (
        StateGraph(dict)
        .add_node("count", lambda s: {"n": s["n"] + 1})
        .add_node("done", lambda s: {"n": s["n"]})
        .add_edge(START, "count")
        .add_conditional_edges("count", lambda s: "count" if s["n"] < 3 else "done")
        .add_edge("done", END)
        .compile()
    )
    return app.run({"n": 0})


def checkpointed(thread="t"):
    app = build().compile(checkpointer=MemorySaver())
    return app, app.run({"topic": "sky"}, {"configurable": {"thread_id": thread}})


def send(picture: ClickablePicture, **message):
    """What the browser's JS sends (`model.send(...)`), delivered as the kernel would."""
    picture._handle_custom_msg(message, [])


def ids_of(inspector) -> dict:
    return {target: dot_id for dot_id, target in inspector.clicks.targets.items()}


# --- clicks on the graph -------------------------------------------------------------------


def test_a_click_on_a_node_jumps_to_its_next_run_and_wraps_to_its_first():
    inspector = looping_run().inspect()
    picture, ids = inspector.clicks.picture, ids_of(inspector)
    assert inspector.graph is picture and set(ids) == {"count", "done"}
    assert inspector.step == 1
    send(picture, event="click", id=ids["count"])
    assert inspector.step == 2
    send(picture, event="click", id=ids["count"])
    assert inspector.step == 3
    send(picture, event="click", id=ids["count"])
    assert inspector.step == 1  # wrapped to its first run
    send(picture, event="click", id=ids["done"])
    assert inspector.step == 4 and "<b>step 4</b>" in inspector.step_label.value
    assert [moved for _, moved in inspector.clicks.handled] == [2, 3, 1, 4]


def test_a_click_on_a_node_that_did_not_run_says_so_and_stays():
    app = (
        StateGraph(dict)
        .add_node("a", lambda s: {"x": 1})
        .add_node("never", lambda s: {"x": 2})
        .add_edge(START, "a")
        .add_conditional_edges("a", lambda s: END, [END, "never"])
        .compile()
    )
    inspector = app.run({"x": 0}).inspect()
    send(inspector.clicks.picture, event="click", id=ids_of(inspector)["never"])
    assert inspector.step == 1
    assert inspector.clicks.picture.note == "'never' did not run in this run."
    send(inspector.clicks.picture, event="click", id=ids_of(inspector)["a"])
    assert inspector.clicks.picture.note == "'a' ran only once, at step 1 (shown)."


def test_clicks_map_back_to_names_with_quotes_spaces_and_markup():
    run = build().compile().run({"topic": "<i>sky</i>"})
    inspector = run.inspect()
    ids = ids_of(inspector)
    assert set(ids) == {"plan", ODD, "read", "write"}
    assert all(dot_id.isascii() and dot_id.isalnum() for dot_id in ids.values())
    send(inspector.clicks.picture, event="click", id=ids[ODD])
    assert inspector.step == 2 and next_run_step(run, ODD, 0) == 2
    # the ids are the <title>s of the SVG's node groups, which is what the JS reads
    svg = render_svg(run.draw(step=2).source).svg
    titles = {
        g.find("{http://www.w3.org/2000/svg}title").text
        for g in ET.fromstring(svg[svg.find("<svg") :]).iter("{http://www.w3.org/2000/svg}g")
        if g.get("class") == "node"
    }
    assert set(inspector.clicks.picture.clickable) <= titles
    assert "<b>&" not in inspector.clicks.picture.value  # the name reached the SVG escaped


def test_unknown_ids_and_malformed_messages_do_nothing():
    inspector = looping_run().inspect()
    picture = inspector.clicks.picture
    for message in ({"event": "click", "id": "n999"}, {"event": "click"}, {"event": "nope"}):
        picture._handle_custom_msg(message, [])
    picture._handle_custom_msg(["not", "a", "dict"], [])
    send(picture, event="key", key="Enter")
    assert inspector.step == 1
    assert graph_targets(object(), ["a"]) == {}  # a drawing without ids has no targets


def test_start_and_end_are_not_click_targets():
    run = looping_run()
    drawing = run.draw(step=1)
    assert set(drawing.nbgraph_ids) > {"count", "done", "__start__", "__end__"}  # and a router
    assert set(graph_targets(drawing, run.graph.nodes).values()) == {"count", "done"}


# --- clicks on the state tree --------------------------------------------------------------


def test_a_click_on_a_state_tree_box_jumps_to_its_step():
    run = looping_run()
    inspector = run.inspect()
    inspector.clicks.picture.kind = "tree"  # what the picture's "state tree" button sets
    clicks = inspector.clicks
    assert "<svg" in clicks.picture.value and "count" in clicks.picture.value
    by_tree = {tree_id: dot_id for tree_id, dot_id in run.draw_tree().nbgraph_ids.items()}
    send(clicks.picture, event="click", id=by_tree["task:3:0:count"])
    assert inspector.step == 3
    # (one task: the step's merge is drawn as that task, so one box is marked)
    assert by_tree["merge:3"] == by_tree["task:3:0:count"]
    assert clicks.picture.current == [by_tree["task:3:0:count"]]
    send(clicks.picture, event="click", id=by_tree["input"])
    assert inspector.step == 0
    clicks.picture.kind = "graph"
    assert inspector.step == 0 and set(clicks.targets.values()) == {"count", "done"}


def _send_fan_out(tasks: int):
    class Fan(TypedDict, total=False):
        out: Annotated[list, operator.add]

    graph = StateGraph(Fan).add_node("plan", lambda s: {}).add_node("work", lambda s: s)
    graph.add_edge(START, "plan").add_edge("work", END)
    graph.add_conditional_edges(
        "plan", lambda s: [Send("work", {"out": [i]}) for i in range(tasks)]
    )
    return graph.compile().run({"out": []})


def test_following_one_task_of_a_fan_out_fades_its_siblings_in_the_state_tree():
    run = _send_fan_out(12)  # the tree draws 8 of the step's tasks and folds 4 into "more"
    inspector = run.inspect()
    inspector.go(2)
    clicks = inspector.clicks
    clicks.picture.kind = "tree"
    by_tree = run.draw_tree().nbgraph_ids
    drawn = [by_tree[f"task:2:{i}:work"] for i in range(8)]
    assert set(clicks.picture.current) >= set(drawn) and clicks.picture.faded == []
    inspector.follow("2:3:work")
    assert by_tree["task:2:3:work"] in clicks.picture.current
    assert set(clicks.picture.faded) == (set(drawn) | {by_tree["more:2"]}) - {drawn[3]}
    assert by_tree["merge:2"] in clicks.picture.current  # (the merge is every task's)
    inspector.follow("2:10:work")  # folded: its step's "more" box stands for it
    assert by_tree["more:2"] in clicks.picture.current
    assert set(clicks.picture.faded) == set(drawn)
    inspector.follow(None)
    assert clicks.picture.faded == [] and set(clicks.picture.current) >= set(drawn)
    clicks.picture.kind = "graph"
    assert clicks.picture.faded == []


# --- keys ----------------------------------------------------------------------------------


def test_left_and_right_arrows_step_and_stop_at_the_ends():
    inspector = looping_run().inspect()
    picture = inspector.clicks.picture
    send(picture, event="key", key="ArrowRight")
    send(picture, event="key", key="ArrowRight")
    assert inspector.step == 3
    send(picture, event="key", key="ArrowLeft")
    assert inspector.step == 2
    for _ in range(6):
        send(picture, event="key", key="ArrowRight")
    assert inspector.step == 4
    for _ in range(9):
        send(picture, event="key", key="ArrowLeft")
    assert inspector.step == 0


def test_the_node_picker_names_the_shown_steps_node_and_its_run():
    inspector = looping_run().inspect()
    assert (inspector.node.value, inspector.occurrence.value) == ("count", 0)  # step 1
    inspector.go(4)
    assert (inspector.node.value, inspector.occurrence.value) == ("done", 0)
    inspector.go(3)
    assert (inspector.node.value, inspector.occurrence.value) == ("count", 2)
    inspector.node.value, inspector.occurrence.value = "count", 1
    inspector.jump.click()  # "go to that run": step 2, and the picker still says so
    assert inspector.step == 2
    assert (inspector.node.value, inspector.occurrence.value) == ("count", 1)
    inspector.go(0)  # the input: no node ran, the picker stays
    assert (inspector.node.value, inspector.occurrence.value) == ("count", 1)


def test_home_goes_to_step_0_and_end_to_the_last_step():
    inspector = looping_run().inspect()
    picture = inspector.clicks.picture
    send(picture, event="key", key="End")
    assert inspector.step == 4 and inspector.clicks.handled[-1][1] == 4
    send(picture, event="key", key="Home")
    assert inspector.step == 0 and inspector.clicks.handled[-1][1] == 0
    send(picture, event="key", key="PageDown")  # another key: nothing moves
    assert inspector.step == 0 and inspector.clicks.handled[-1][1] is None


# --- edit and fork -------------------------------------------------------------------------


def test_edit_and_fork_creates_a_branch_with_the_edited_value():
    app, run = checkpointed()
    inspector = run.inspect()
    panel = inspector.fork_panel
    assert not panel.button.disabled
    inspector.go(1)
    panel.field.value = "verdict"
    assert json.loads(panel.value.value) == "planning"  # the value at the shown step
    panel.value.value = json.dumps("EDITED")
    panel.button.click()
    made = inspector.fork_panel.last_fork
    assert made is not None, inspector.fork_panel.status.value
    assert "Forked after step 1</b>: verdict ← <code>&quot;EDITED&quot;" in panel.status.value
    assert made.run.output["verdict"] == "2 notes: EDITED"
    assert made.original.output["verdict"] == "2 notes: planning"
    history = list(app.get_state_history({"configurable": {"thread_id": "t"}}))
    update = [s for s in history if s.metadata["source"] == "update"]
    assert len(update) == 1 and update[0].values["verdict"] == "EDITED"
    assert (
        update[0].config["configurable"]["checkpoint_id"]
        == made.config["configurable"]["checkpoint_id"]
    )
    assert update[0].metadata["step"] == 2  # it follows step 1's checkpoint
    # the inspector now shows the fork at its edit (step 2), the original as the other run
    assert inspector.run is made.branch and inspector.other is made.original
    assert inspector.step == 2 and run.forks == [made]
    assert any(node.kind == "fork" for node in inspector.run.tree)
    assert inspector.clicks.picture.kind == "tree" and "branch, step" in inspector.graph.value
    # ... and where they differ: the edit pairs with step 1, later steps one number lower
    assert inspector.compare_mode.value == "the other run"
    assert "this run vs the other, step 2" in inspector.comparison.value
    assert "EDITED" in inspector.comparison.value and "planning" in inspector.comparison.value
    assert "differs from the original at steps 2–4" in panel.status.value
    inspector.go(4)
    assert "2 notes: EDITED" in inspector.comparison.value
    assert "2 notes: planning" in inspector.comparison.value


def test_the_fork_box_is_empty_until_a_field_is_picked_then_follows_the_step():
    _, run = checkpointed()
    inspector = run.inspect()
    panel = inspector.fork_panel
    assert panel.value.value == ""  # nothing was asked for: nothing is sent
    assert panel.field.label == "(pick a field)"  # and the picker names no field
    assert panel.fork() is None and "Pick the field to edit first" in panel.status.value
    panel.field.value = "notes"
    assert json.loads(panel.value.value) == []
    inspector.go(3)
    assert sorted(json.loads(panel.value.value)) == ["read on sky", "search on sky"]


def test_the_fork_box_is_never_filled_when_the_run_cannot_fork(monkeypatch):
    """Issue 28: a run with no checkpointer serialised the whole shown field into the box
    (a synced Textarea) at every step (repros2/14: a 2M-item list, 17 MB a step)."""
    from nbgraph.views.panels import fork_panel

    encoded = []
    monkeypatch.setattr(fork_panel, "_bounded_json", lambda value: encoded.append(value))
    run = build().compile().run({"topic": "sky"})
    inspector = run.inspect()
    panel = inspector.fork_panel
    assert panel.button.disabled and panel.value.disabled
    for field in ("verdict", "notes", "topic"):
        panel.field.value = field
        for step in range(4):
            inspector.go(step)
            assert panel.value.value == ""
    assert encoded == []  # never even encoded


def test_the_fork_box_holds_a_long_value_only_as_far_as_its_bound():
    from nbgraph.views.panels.fork_panel import EDIT_CHARS, _bounded_json

    app = (
        StateGraph(State)
        .add_node("plan", lambda s: {"notes": list(range(1_000_000))})
        .add_edge(START, "plan")
        .compile(checkpointer=MemorySaver())
    )
    run = app.run({"topic": "sky"}, {"configurable": {"thread_id": "long"}})
    inspector = run.inspect()
    panel = inspector.fork_panel
    panel.field.value = "notes"
    assert panel.value.value == "" and f"{EDIT_CHARS:,} characters" in panel.value.placeholder
    panel.field.value = "topic"
    assert panel.value.value == '"sky"'
    assert _bounded_json(list(range(10))) == json.dumps(list(range(10)))
    assert _bounded_json({1, 2}) is None  # JSON cannot write a set


def test_a_branch_run_compares_with_the_other_run_and_forks_in_the_inspector():
    """Issue 28 (repros2/05): a node-aligned comparison (either run used branch lineages)
    has no "step" column; "the other run" and "edit and fork here" raised KeyError: 'step'."""
    import nbgraph

    graph = StateGraph(dict, reducers={"log": "append"})
    for name in "abc":
        graph.add_node(name, lambda s, name=name: {"log": [name]})
    graph.add_node("d", lambda s: {"log": [f"d saw {len(s['log'])}"]})
    graph.add_edge(START, "a").add_edge("a", "b").add_edge("a", "c").add_edge("b", "d")
    shared = graph.compile().run({"log": []})
    lineages = graph.compile(semantics="branches").run({"log": []})
    for this, other in ((shared, lineages), (lineages, shared)):
        inspector = nbgraph.inspect(this, other)
        inspector.compare_mode.value = "the other run"
        shown = {}
        for step in this.timeline.index:
            inspector.go(step)
            shown[step] = inspector.comparison.value
        assert all("this run vs the other" in text for text in shown.values())
        assert "d saw" in "".join(shown.values())  # d's read differs between the models
    app = graph.compile(semantics="branches", checkpointer=MemorySaver())
    run = app.run({"log": []}, {"configurable": {"thread_id": "t"}})
    inspector = run.inspect()
    inspector.go(1)
    inspector.fork_panel.field.value = "log"
    inspector.fork_panel.value.value = '["edited"]'
    made = inspector.fork_panel.fork()
    assert made is not None, inspector.fork_panel.status.value
    assert inspector.compare_mode.value == "the other run"
    assert "this run vs the other" in inspector.comparison.value


def test_a_fork_can_be_forked_again():
    app, run = checkpointed()
    first = run.fork(1, {"verdict": "one"})
    second = first.branch.fork(2, {"notes": ["extra"]}, as_node="read")
    assert second.run.output["notes"][-1] == "extra" or "extra" in second.run.output["notes"]
    assert len(list(app.get_state_history({"configurable": {"thread_id": "t"}}))) > 8


def test_a_later_run_on_the_thread_forks_at_its_own_steps():
    app, first = checkpointed()
    second = app.run({"topic": "moon"}, {"configurable": {"thread_id": "t"}})
    plan_step = next(s.step for s in second.log.steps if [t.node for t in s.tasks] == ["plan"])
    made = second.fork(plan_step, {"topic": "mars"})
    assert made.run.output["notes"][-2:] == ["read on mars", "search on mars"]
    assert made.original.output == second.output
    assert first.fork(1, {"topic": "venus"}).run.output["notes"] == [
        "read on venus",
        "search on venus",
    ]  # the first run's own step 1, though the thread has moved on


def test_at_the_input_step_the_fork_writes_as_the_input():
    _, run = checkpointed()
    made = run.fork(0, {"topic": "sea"})
    assert made.run.output["notes"] == ["read on sea", "search on sea"]


def test_bad_json_is_refused_naming_the_field():
    _, run = checkpointed()
    inspector = run.inspect()
    panel = inspector.fork_panel
    panel.field.value = "verdict"
    panel.value.value = "EDITED"  # not JSON: a string needs its quotes
    assert panel.fork() is None and panel.last_fork is None
    assert "field &#x27;verdict&#x27; is not valid JSON" in panel.status.value
    assert inspector.other is None  # nothing was forked


def test_a_refused_fork_is_shown_in_the_panel():
    _, run = checkpointed()
    with pytest.raises(ForkError, match="Step 99 has no checkpoint"):
        run.fork(99, {"verdict": "x"})
    inspector = run.inspect()
    panel = inspector.fork_panel
    panel.field.value = "notes"
    panel.value.value = "5"  # operator.add cannot add an int to the list
    assert panel.fork() is None and inspector.other is None
    assert "Could not fork at step 1" in panel.status.value


def test_a_run_without_a_checkpointer_explains_and_disables_the_button():
    run = build().compile().run({"topic": "sky"})
    panel = run.inspect().fork_panel
    assert panel.button.disabled
    assert "no checkpointer" in panel.status.value and "MemorySaver" in panel.status.value
    assert "no checkpointer" in run.fork_problem
    with pytest.raises(ForkError, match="no checkpointer"):
        run.fork(1, {"verdict": "x"})


def test_a_checkpointed_run_without_a_thread_or_app_says_so():
    app = build().compile(checkpointer=MemorySaver())
    with pytest.raises(ValueError):
        app.run({"topic": "sky"})  # (a checkpointer needs a thread id)
    from nbgraph import Run

    _, run = checkpointed()
    rebuilt = Run.from_checkpointer(run.app.checkpointer, "t")  # no graph=app: no app
    assert "no app" in rebuilt.fork_problem
    assert rebuilt.inspect().fork_panel.button.disabled


def test_a_step_written_by_several_nodes_forks_as_the_picked_one():
    _, run = checkpointed()
    inspector = run.inspect()
    inspector.go(2)  # `read` and the odd node both wrote
    panel = inspector.fork_panel
    assert sorted(panel.as_node.options) == sorted(["read", ODD])
    panel.field.value = "notes"
    panel.value.value = json.dumps(["mine"])
    panel.as_node.value = "read"
    made = panel.fork()
    assert made is not None, panel.status.value
    assert "mine" in made.branch.state_at(3)["notes"]


def test_a_live_run_can_be_forked(monkeypatch):
    import IPython.display

    monkeypatch.setattr(IPython.display, "display", lambda *a, **k: None)
    app = build().compile(checkpointer=MemorySaver())
    run = app.run({"topic": "sky"}, {"configurable": {"thread_id": "live"}}, live=True)
    assert run.fork_problem is None
    assert run.fork(1, {"verdict": "live edit"}).run.output["verdict"] == "2 notes: live edit"


# --- shipped with the package --------------------------------------------------------------


def test_the_javascript_and_css_ship_in_the_package_and_fetch_nothing():
    js = (STATIC / "clickable_graph.js").read_text()
    css = (STATIC / "clickable_graph.css").read_text()
    assert str(ClickablePicture._esm) == js  # (anywidget reads the file)
    assert "export default" in js and "model.send" in js
    for text in (js, css):
        assert "http://" not in text and "https://" not in text and "import " not in text
    assert STATIC.parent == Path(__file__).resolve().parents[2] / "nbgraph" / "views"


# --- the fork against LangGraph ------------------------------------------------------------


@pytest.mark.langgraph
def test_a_fork_matches_langgraph_update_state_then_invoke():
    langgraph = api_for("langgraph")
    config = {"configurable": {"thread_id": "t"}}
    lg = build(langgraph.StateGraph).compile(checkpointer=langgraph.saver())
    lg.invoke({"topic": "sky"}, config)
    at_1 = next(s for s in lg.get_state_history(config) if s.metadata["step"] == 1)
    lg_output = lg.invoke(None, lg.update_state(at_1.config, {"verdict": "EDITED"}))

    app, run = checkpointed()
    made = run.fork(1, {"verdict": "EDITED"})
    assert made.run.output == lg_output

    def shape(graph):
        return [
            (s.metadata["source"], s.metadata["step"], tuple(sorted(s.next)), s.values)
            for s in graph.get_state_history(config)
        ]

    assert shape(app) == shape(lg)


@pytest.mark.parametrize("renderer", ["dot", "graphviz-pure"])
def test_both_renderers_name_each_node_group_by_its_click_id(renderer):
    """The JS reads the `<title>` of the clicked `<g class="node">`: both renderers nbgraph
    uses (the `dot` program, the graphviz-pure binary) write the DOT id there."""
    import subprocess

    from nbgraph.views.drawings.render import renderers

    program = dict(renderers()).get(renderer)
    if program is None:
        pytest.skip(f"{renderer} is not installed")
    run = build().compile().run({"topic": "x"})
    drawing = run.draw(step=2)
    svg = subprocess.run(
        [program, "-Tsvg"], input=drawing.source.encode(), capture_output=True, check=True
    ).stdout.decode()
    titles = {
        g.find("{http://www.w3.org/2000/svg}title").text
        for g in ET.fromstring(svg[svg.find("<svg") :]).iter("{http://www.w3.org/2000/svg}g")
        if g.get("class") == "node"
    }
    assert set(graph_targets(drawing, run.graph.nodes)) <= titles


# --- the live view's first redraw ----------------------------------------------------------


def test_the_live_views_first_redraw_does_not_hold_back_the_next(monkeypatch):
    """Making the widgets is a one-time cost: the redraw after it comes `min_interval` later,
    not 19x that cost later (else a live run of a few seconds showed one step, then the end)."""
    import time

    from nbgraph import Run
    from nbgraph.views.inspector.live_view import LiveView

    monkeypatch.setattr(LiveView, "first_after", 0.0)
    app = build().compile()
    stepper = app.stepper({"topic": "sky"})
    view = LiveView(Run, background=False)
    slow_draw = LiveView._draw

    def costly_first(self, log, finished):
        if self.inspector is None:
            time.sleep(0.3)  # (as making the widgets costs in a kernel)
        slow_draw(self, log, finished)

    monkeypatch.setattr(LiveView, "_draw", costly_first)
    stepper.step()
    view.step_done(stepper._driver.log)
    assert view.inspector is not None
    assert view._due - time.perf_counter() <= LiveView.min_interval
