"""What the notebooks' stories lean on in the inspector: why a router chose a branch (its input
and its return, kept on the task), subruns told apart by their input, playing at a chosen
speed, and a click on a node at its only run saying so."""

from typing import Annotated, Any, Literal, TypedDict

from nbgraph import END, START, RetryPolicy, Run, Send, StateGraph
from nbgraph.views.inspector.clicks import click_note
from nbgraph.views.panels.router_panel import router_input, routing_html


class Ticket(TypedDict, total=False):
    text: str
    urgent: bool
    log: Annotated[list, "append"]


def classify(state: Ticket) -> dict:
    return {"urgent": "urgent" in state["text"].split(), "log": ["classify"]}


def route(state: Ticket) -> str:
    return "yes" if state["urgent"] else "no"


def ticket_app(router=route, classify_node=classify):
    return (
        StateGraph(Ticket)
        .add_node("classify", classify_node)
        .add_node("escalate", lambda s: {"log": ["escalate"]})
        .add_node("answer", lambda s: {"log": ["answer"]})
        .add_edge(START, "classify")
        .add_conditional_edges("classify", router, {"yes": "escalate", "no": "answer"})
        .compile()
    )


def test_a_routers_return_is_kept_on_its_task_beside_where_the_run_went():
    run = ticket_app().run({"text": "urgent: <b>printer</b> on fire"})
    (task,) = run.log.steps[1].tasks
    assert task.node == "classify" and task.returned == ("no",) and list(task.routes) == ["answer"]
    assert list(run.steps.node) == ["classify", "answer"]


def test_the_router_input_is_the_steps_start_plus_the_tasks_own_writes():
    run = ticket_app().run({"text": "urgent: printer on fire", "log": ["in"]})
    (task,) = run.log.steps[1].tasks
    seen = router_input(run, task)
    assert seen == {"text": "urgent: printer on fire", "urgent": False, "log": ["in", "classify"]}


def test_the_step_panel_shows_why_the_router_chose_the_branch_escaped():
    run = ticket_app().run({"text": "urgent: <b>printer</b>"})
    inspector = run.inspect()
    inspector.go(1)
    panel = inspector.effects.value
    routing = panel[panel.index("routing after classify") :]
    assert "router <b>route</b>" in routing
    assert "<b>urgent</b> = False" in routing  # the field classify just wrote, marked
    assert "&#x27;urgent: &lt;b&gt;printer&lt;/b&gt;&#x27;" in routing  # quoted and escaped
    assert "<b>printer</b>" not in routing
    assert "returned: <span style='font-family:monospace'>&#x27;no&#x27;</span>" in routing
    assert "went to: <span style='font-family:monospace'>&#x27;answer&#x27;</span>" in routing
    inspector.go(2)  # answer has no router: no routing shown
    assert "routing after" not in inspector.effects.value


def test_a_retried_task_keeps_only_its_last_attempts_router_return():
    calls = []

    def flaky_route(state):
        calls.append(state["urgent"])
        if len(calls) == 1:
            raise ConnectionError("try again")
        return "escalate"

    app = (
        StateGraph(Ticket)
        .add_node("classify", classify, retry_policy=RetryPolicy(initial_interval=0.001))
        .add_node("escalate", lambda s: {"log": ["escalate"]})
        .add_edge(START, "classify")
        .add_conditional_edges("classify", flaky_route, ["escalate"])
        .compile()
    )
    run = app.run({"text": "urgent"})
    (task,) = run.log.steps[1].tasks
    assert len(calls) == 2 and task.returned == ("escalate",) and list(task.routes) == ["escalate"]


def test_a_router_returning_sends_is_shown_with_each_send():
    app = (
        StateGraph(Ticket)
        .add_node("classify", classify)
        .add_node("answer", lambda s: {"log": [s["text"]]})
        .add_edge(START, "classify")
        .add_conditional_edges(
            "classify", lambda s: [Send("answer", {"text": w}) for w in ("a", "b")], ["answer"]
        )
        .compile()
    )
    run = app.run({"text": "x"})
    html = routing_html(run, 1, run.log.steps[1].tasks)
    assert html.count("Send(") >= 2 and "&#x27;a&#x27;" in html


def test_a_run_file_keeps_its_routers_returns():
    run = Run.from_json(ticket_app().run({"text": "calm"}).to_json())
    assert run.log.steps[1].tasks[0].returned == ("no",)
    html = routing_html(run, 1, run.log.steps[1].tasks)
    assert "returned: <span style='font-family:monospace'>&#x27;no&#x27;</span>" in html
    assert "went to: <span style='font-family:monospace'>&#x27;answer&#x27;" in html


def test_a_task_whose_return_was_not_recorded_says_so():
    run = ticket_app().run({"text": "calm"})
    run.log.steps[1].tasks[0].returned = ()  # (as a task restored from a checkpoint)
    html = routing_html(run, 1, run.log.steps[1].tasks)
    assert "returned: <span style='font-family:monospace'><i>not recorded" in html


# --- subruns told apart ------------------------------------------------------------------------


class Price(TypedDict, total=False):
    region: str
    quotes: Annotated[dict, "merge"]


def test_the_subrun_picker_shows_the_input_that_tells_the_subruns_apart():
    price = (
        StateGraph(Price)
        .add_node("fetch", lambda s: {"quotes": {s["region"]: 1.0}})
        .add_edge(START, "fetch")
        .compile(name="price")
    )
    app = (
        StateGraph(Price)
        .add_node("plan", lambda s: {})
        .add_node("price", price)
        .add_edge(START, "plan")
        .add_conditional_edges(
            "plan", lambda s: [Send("price", {"region": r}) for r in ("eu", "<jp>")], ["price"]
        )
        .compile()
    )
    inspector = app.run({"region": "all"}).inspect()
    inspector.go(2)
    labels = [label for label, _ in inspector.subrun_nav.pick.options]
    assert labels == [
        "price: region='eu' (task 2:0:price)",
        "price: region='<jp>' (task 2:1:price)",
    ]


# --- playing at a chosen speed; a node's only run ------------------------------------------------


def counting_run(until: int = 3):
    return (
        StateGraph(dict)
        .add_node("count", lambda s: {"n": s["n"] + 1})
        .add_edge(START, "count")
        .add_conditional_edges("count", lambda s: "count" if s["n"] < until else END)
        .compile()
        .run({"n": 0})
    )


def test_play_at_a_chosen_speed():
    inspector = counting_run(until=5).inspect()
    play = inspector.play
    assert play.speed in play.children and play.speed.value == play.interval == 700
    assert [label for label, _ in play.speed.options] == ["¼×", "½×", "1×", "2×", "4×", "8×"]
    play.speed.value = dict(play.speed.options)["8×"]
    assert play.interval == 88  # 700 ms / 8
    inspector.go(0)
    play.play()
    play.join(timeout=30)
    assert inspector.step == 5 and not play.playing


def test_a_click_on_a_node_at_its_only_run_says_so():
    run = ticket_app().run({"text": "calm"})
    inspector = run.inspect()
    inspector.go(1)
    ids = {name: dot_id for dot_id, name in inspector.clicks.targets.items()}
    inspector.clicks.picture._handle_custom_msg({"event": "click", "id": ids["classify"]}, [])
    assert inspector.step == 1
    assert inspector.clicks.picture.note == "'classify' ran only once, at step 1 (shown)."
    inspector.clicks.picture._handle_custom_msg({"event": "click", "id": ids["answer"]}, [])
    assert inspector.step == 2 and inspector.clicks.picture.note == ""


def test_click_note_is_silent_when_a_click_moves_somewhere():
    run = counting_run()
    assert click_note(run, "count", 1) == ""  # it ran again at step 2
    assert click_note(run, "nowhere", 1) == "'nowhere' did not run in this run."


def test_a_routers_literal_annotation_does_not_change_what_is_kept():
    def typed(state: Ticket) -> Literal["escalate", "answer"]:
        return "escalate" if state["urgent"] else "answer"

    app = (
        StateGraph(Ticket)
        .add_node("classify", classify)
        .add_node("escalate", lambda s: {})
        .add_node("answer", lambda s: {})
        .add_edge(START, "classify")
        .add_conditional_edges("classify", typed)
        .compile()
    )
    (task,) = app.run({"text": "urgent"}).log.steps[1].tasks
    assert task.returned == ("escalate",) and list(task.routes) == ["escalate"]


# --- order_sensitivity shows the difference it finds ---------------------------------------------


def test_order_sensitivity_shows_both_results_whole_up_to_their_difference():
    long = "a long note that pushes the difference well past any column width: "
    app = (
        StateGraph(Ticket)
        .add_node("web", lambda s: {"log": [long + "<web>"]})
        .add_node("papers", lambda s: {"log": [long + "papers"]})
        .add_edge(START, "web")
        .add_edge(START, "papers")
        .compile()
    )
    table = app.run({"log": ["x" * 90, "y" * 90]}).order_sensitivity()
    assert list(table.field) == ["log"]  # the data unchanged
    assert list(table.result_a[0]) == ["x" * 90, "y" * 90, long + "papers", long + "<web>"]
    html = table._repr_html_()
    assert f"[3] &#x27;{long}&lt;web&gt;&#x27;" in html  # whole, quoted, escaped
    assert f"[2] &#x27;{long}&lt;web&gt;&#x27;" in html  # the other order's result
    assert "<web>" not in html
    assert html.count("font-weight:bold") == 4  # indexes 2 and 3 of both results marked


def test_a_step_with_many_routed_tasks_shows_the_first_ones_and_counts_the_rest():
    app = (
        StateGraph(Ticket)
        .add_node("fan", lambda s: {})
        .add_node("work", lambda s: {"log": [s["text"]]})
        .add_node("done", lambda s: {})
        .add_edge(START, "fan")
        .add_conditional_edges(
            "fan", lambda s: [Send("work", {"text": str(i)}) for i in range(30)], ["work"]
        )
        .add_conditional_edges("work", lambda s: "done", ["done"])
        .compile()
    )
    run = app.run({"text": "x"})
    html = routing_html(run, 2, run.log.steps[2].tasks)
    assert html.count("routing after work") == 12
    assert "… and 18 more routed tasks" in html


def _concatenated(old, new):
    return __import__("numpy").concatenate([old, new])


class _Arrays(TypedDict):
    arr: Annotated[Any, _concatenated]


def test_order_sensitivity_html_on_numpy_results_shows_the_table():
    np = __import__("pytest").importorskip("numpy")
    app = (
        StateGraph(_Arrays)
        .add_node("a", lambda s: {"arr": np.array([1])})
        .add_node("b", lambda s: {"arr": np.array([2])})
        .add_edge(START, "a")
        .add_edge(START, "b")
        .compile()
    )
    table = app.run({"arr": np.array([0])}).order_sensitivity()
    html = table._repr_html_()  # (compared a whole array result with `!=`: ambiguous)
    assert "array([0, 1, 2])" in html and "array([0, 2, 1])" in html
