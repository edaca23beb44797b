"""The stepper (`app.stepper(...)`): one superstep per call, on the state machine `invoke`
uses — so a stepped run's record equals `invoke`'s — with breakpoints, updates, interrupts,
checkpoints and branch lineages. `update()` is compared with real LangGraph's
`update_state` at a breakpoint."""

from __future__ import annotations

import operator
from typing import Annotated, TypedDict

import pytest

from nbgraph import END, START, MemorySaver, Send, StateGraph, interrupt
from nbgraph.checkpoint.base import ThreadBusyError
from nbgraph.errors import InvalidArgumentError, InvalidUpdateError
from tests.support.harness import api_for

VOLATILE = ["duration"]


class S(TypedDict):
    log: Annotated[list, operator.add]
    n: int


def diamond(api=None, **compile_kwargs):
    """a, then b and c in parallel, then d (waiting for both); a and d count in `n`."""
    sg = (api or StateGraph)(S)

    def node(name):
        if name in "bc":
            return lambda s: {"log": [name]}
        return lambda s: {"log": [name], "n": s["n"] + 1}

    for name in "abcd":
        sg.add_node(name, node(name))
    sg.add_edge(START, "a")
    sg.add_edge("a", "b")
    sg.add_edge("a", "c")
    sg.add_edge(["b", "c"], "d")
    sg.add_edge("d", END)
    return sg.compile(**compile_kwargs)


def fan_out(**compile_kwargs):
    sg = StateGraph(S)
    sg.add_node("split", lambda s: {"n": 3})
    sg.add_node("work", lambda arg: {"log": [arg]})
    sg.add_conditional_edges("split", lambda s: [Send("work", i) for i in range(s["n"])])
    sg.add_edge(START, "split")
    return sg.compile(**compile_kwargs)


def table(frame):
    return frame.drop(columns=[c for c in VOLATILE if c in frame.columns]).to_string()


def same_record(stepped, invoked):
    assert stepped.status == invoked.status
    assert stepped.output == invoked.output
    assert table(stepped.effects) == table(invoked.effects)
    assert table(stepped.steps) == table(invoked.steps)
    assert tree_shape(stepped) == tree_shape(invoked)


def tree_shape(run):
    """The state tree as (id, kind, parents) of every node, in id order."""
    return sorted((n.id, n.kind, tuple(n.parents)) for n in run.tree.nodes.values())


@pytest.mark.parametrize("make", [diamond, fan_out])
@pytest.mark.parametrize("semantics", ["supersteps", "branches"])
def test_a_stepped_run_records_what_invoke_records(make, semantics):
    app = make(semantics=semantics)
    st = app.stepper({"log": [], "n": 0})
    while not st.done:
        st.step()
    same_record(st.run, app.run({"log": [], "n": 0}))


def test_each_step_runs_one_superstep_and_says_what_is_next():
    app = diamond()
    st = app.stepper({"log": [], "n": 0})
    assert st.next == ("__start__",) and st.state == {} and len(st.run.steps) == 0
    seen = []
    while not st.done:
        nxt = st.next
        effects = st.step()
        writers = sorted({w for row in effects["writers"] for w in row})
        seen.append((nxt, tuple(writers), tuple(sorted(set(effects["field"])))))
    assert seen == [
        (("__start__",), ("__start__",), ("log", "n")),
        (("a",), ("a",), ("log", "n")),
        (("b", "c"), ("b", "c"), ("log",)),
        (("d",), ("d",), ("log", "n")),
    ]
    assert st.state == {"log": ["a", "b", "c", "d"], "n": 2}
    assert st.next == () and len(st.step()) == 0  # over: nothing more runs


def test_step_effects_show_the_step_drawn_and_escaped():
    sg = StateGraph(S)
    sg.add_node("a<b>", lambda s: {"log": ["<script>x</script>"]})
    sg.add_edge(START, "a<b>")
    st = sg.compile().stepper({"log": [], "n": 0})
    st.step()
    page = st.step()._repr_html_()
    assert "<svg" in page and "<script>" not in page and "&lt;script&gt;" in page
    assert "step 1" in page
    assert "<script>" not in st._repr_html_()
    # the one renderer of effect rows, as `run.effects` shows them: quotes kept, the flags
    from nbgraph.views.panels.table_view import effects_table_html

    assert effects_table_html(st.run.effects[st.run.effects["step"] == 1]) in page
    assert "&#x27;&lt;script&gt;x&lt;/script&gt;&#x27;" in page and ">flags</th>" in page


def test_update_changes_the_state_as_a_recorded_write():
    app = diamond()
    st = app.stepper({"log": [], "n": 0})
    st.step(), st.step()  # the input, then a
    effects = st.update({"n": 10, "log": ["fix"]}, as_node="a")
    assert sorted(effects["field"]) == ["log", "n"] and list(effects["writers"].iloc[0]) == ["a"]
    assert st.state == {"log": ["a", "fix"], "n": 10} and st.next == ("b", "c")
    assert st.finish() == {"log": ["a", "fix", "b", "c", "d"], "n": 11}
    steps = st.run.steps
    update = steps[(steps["node"] == "a") & (steps["step"] == 2)].iloc[0]
    assert update["triggers"] == [] and update["writes"] == ["n", "log"]  # (no edge ran it)
    assert update["kind"] == "update" and set(steps["kind"]) == {"edge", "update"}


def test_update_without_as_node_takes_the_last_writer_or_asks():
    st = diamond().stepper({"log": [], "n": 0})
    st.step(), st.step()
    st.update({"n": 5})  # a ran last
    assert st.next == ("b", "c")
    st.step()  # b and c
    with pytest.raises(InvalidUpdateError, match="as_node"):
        st.update({"n": 1})
    with pytest.raises(InvalidArgumentError, match="'zz'"):
        st.update({"n": 1}, as_node="zz")
    fresh = diamond().stepper({"log": [], "n": 0})
    with pytest.raises(InvalidUpdateError, match="step\\(\\) first"):
        fresh.update({"n": 1})


@pytest.mark.langgraph
def test_update_matches_langgraph_update_state_at_a_breakpoint():
    langgraph = api_for("langgraph")
    lg = diamond(langgraph.StateGraph, checkpointer=langgraph.saver(), interrupt_after=["a"])
    config = {"configurable": {"thread_id": "t"}}
    lg.invoke({"log": [], "n": 0}, config)
    lg.update_state(config, {"n": 10, "log": ["fix"]}, as_node="a")
    lg_next = lg.get_state(config).next
    lg_out = lg.invoke(None, config)

    st = diamond().stepper({"log": [], "n": 0})
    st.step(), st.step()
    st.update({"n": 10, "log": ["fix"]}, as_node="a")
    assert st.next == tuple(sorted(lg_next))
    assert st.finish() == lg_out


@pytest.mark.langgraph
@pytest.mark.parametrize("after, as_node", [("a", "a"), ("a", "b"), ("b", "c"), ("b", "b")])
def test_update_keeps_what_was_due_as_langgraph_does(after, as_node):
    """An update as a node adds what that node's edges trigger; what was due stays due (the
    join into d keeps its count): LangGraph's `update_state` on the latest checkpoint."""
    langgraph = api_for("langgraph")
    lg = diamond(langgraph.StateGraph, checkpointer=langgraph.saver(), interrupt_after=[after])
    config = {"configurable": {"thread_id": "t"}}
    lg.invoke({"log": [], "n": 0}, config)
    lg.update_state(config, {"log": ["fix"]}, as_node=as_node)
    lg_next = lg.get_state(config).next
    lg_out = lg.invoke(None, config)

    st = diamond().stepper({"log": [], "n": 0})
    st.run_until(when=lambda s: after in s["log"])
    st.update({"log": ["fix"]}, as_node=as_node)
    assert st.next == tuple(sorted(lg_next))
    assert st.finish() == lg_out


def test_run_until_stops_before_a_node_after_a_field_or_when_asked():
    st = diamond().stepper({"log": [], "n": 0})
    st.run_until(node="d")
    assert st.next == ("d",) and st.state["log"] == ["a", "b", "c"]
    st = diamond().stepper({"log": [], "n": 0})
    effects = st.run_until(field="n")
    assert st.state["n"] == 0 and set(effects["step"]) == {0}  # the input set it
    st.run_until(when=lambda s: len(s["log"]) >= 3)
    assert st.state["log"] == ["a", "b", "c"]
    st.run_until(node="a")  # a never runs again: to the end
    assert st.done and st.state["n"] == 2
    with pytest.raises(InvalidArgumentError, match="condition"):
        st.run_until()
    with pytest.raises(InvalidArgumentError, match="'nope'"):
        diamond().stepper({}).run_until(node="nope")
    with pytest.raises(InvalidArgumentError, match="'nope'"):
        diamond().stepper({}).run_until(field="nope")


def asking(**compile_kwargs):
    sg = StateGraph(S)
    sg.add_node("ask", lambda s: {"log": [interrupt("name?")]})
    sg.add_node("greet", lambda s: {"log": ["hi " + s["log"][-1]]})
    sg.add_edge(START, "ask")
    sg.add_edge("ask", "greet")
    return sg.compile(**compile_kwargs)


def test_an_interrupt_pauses_the_stepper_and_resume_answers_it():
    app = asking(checkpointer=MemorySaver())
    config = {"configurable": {"thread_id": "s"}}
    st = app.stepper({"log": [], "n": 0}, config)
    st.step()
    st.step()
    assert st.paused and not st.done and [i.value for i in st.interrupts] == ["name?"]
    assert "name?" in st._repr_html_() and st.next == ("ask",)
    st.resume("Ada")
    assert st.finish() == {"log": ["Ada", "hi Ada"], "n": 0}
    assert len(st.runs) == 2 and app.get_state(config).values["log"] == ["Ada", "hi Ada"]
    with pytest.raises(InvalidUpdateError, match=r"not paused|finished"):
        st.resume("again")


def test_a_breakpoint_pauses_and_resume_goes_on():
    app = diamond(checkpointer=MemorySaver(), interrupt_before=["d"])
    st = app.stepper({"log": [], "n": 0}, {"configurable": {"thread_id": "b"}})
    st.finish()
    assert st.paused and st.next == ("d",)
    st.resume()
    assert st.finish()["log"] == ["a", "b", "c", "d"]


def test_each_step_is_a_checkpoint_and_the_thread_is_held_while_stepping():
    app = diamond(checkpointer=MemorySaver())
    config = {"configurable": {"thread_id": "c"}}
    st = app.stepper({"log": [], "n": 0}, config)
    st.step(), st.step()
    assert app.get_state(config).values == st.state and app.get_state(config).next == ("b", "c")
    with pytest.raises(ThreadBusyError):
        app.invoke(None, config)
    st.close()
    assert app.invoke(None, config)["log"] == ["a", "b", "c", "d"]


def test_a_failing_node_fails_the_step_and_the_record_keeps_it():
    sg = StateGraph(S)
    sg.add_node("boom", lambda s: 1 / 0)
    sg.add_edge(START, "boom")
    st = sg.compile().stepper({"log": [], "n": 0})
    st.step()
    with pytest.raises(ZeroDivisionError):
        st.step()
    assert st.done and st.run.status == "failed" and len(st.step()) == 0


def test_a_stepped_checkpointed_run_forks_like_a_run():
    app = diamond(checkpointer=MemorySaver())
    st = app.stepper({"log": [], "n": 0}, {"configurable": {"thread_id": "f"}})
    assert st.run.fork_problem is not None  # (not finished yet: it cannot fork)
    st.finish()
    run = st.run
    assert run.fork_problem is None
    forked = run.fork(1, {"n": 40}, as_node="a")
    assert forked.run.output == {"log": ["a", "b", "c", "d"], "n": 41}


def rows(frame):
    return frame.reset_index(drop=True).to_string()


@pytest.mark.parametrize("make", [diamond, fan_out])
@pytest.mark.parametrize("semantics", ["supersteps", "branches"])
def test_the_effects_each_step_returns_are_the_runs_rows_of_that_step(make, semantics):
    """What step(), update() and run_until() return (replayed from the state the stepper
    holds) are exactly the rows of the finished run's `effects` for those steps."""
    import pandas as pd

    st = make(semantics=semantics).stepper({"log": [], "n": 0})
    shown = [st.step(), st.step()]
    if semantics == "supersteps":
        shown.append(st.update({"log": ["fix"], "n": 7}))
    shown.append(st.run_until(when=lambda state: False))  # (to the end)
    assert rows(pd.concat(shown)) == rows(st.run.effects)


def test_the_effects_of_a_resumed_stepper_are_its_segments_rows():
    import pandas as pd

    app = asking(checkpointer=MemorySaver())
    st = app.stepper({"log": [], "n": 0}, {"configurable": {"thread_id": "r"}})
    st.finish()
    st.resume("Ada")
    shown = [st.step(), st.run_until(when=lambda state: False)]  # (the answer, then the rest)
    assert st.done and rows(pd.concat(shown)) == rows(st.run.effects)


@pytest.mark.parametrize(
    "make, after, as_node",
    [
        (diamond, "a", "a"),
        (diamond, "a", "b"),
        (diamond, "b", "c"),
        (diamond, "b", "b"),
        (diamond, "a", "d"),
        (fan_out, "split", "split"),
        (fan_out, "split", "work"),
    ],
)
@pytest.mark.filterwarnings("ignore:Waiting edge")
def test_update_in_branch_mode_is_update_state_on_a_branch_thread(make, after, as_node):
    """With branch lineages, `update()` does what `app.update_state` does on the same run
    paused there: the live lineages merged, the update grown from them, its edges next."""
    values = {"n": 10, "log": ["fix"]}
    app = make(checkpointer=MemorySaver(), interrupt_after=[after], semantics="branches")
    config = {"configurable": {"thread_id": "t"}}
    app.invoke({"log": [], "n": 0}, config)
    app.update_state(config, values, as_node=as_node)
    expected = app.get_state(config)
    expected_output = app.invoke(None, config)

    st = make(semantics="branches").stepper({"log": [], "n": 0})
    while not st._driver.log.steps or after not in {t.node for t in st.run.log.steps[-1].tasks}:
        st.step()
    effects = st.update(values, as_node=as_node)
    assert sorted(st.next) == sorted(expected.next) and st.state == expected.values
    writers = {w for ws in effects["writers"] for w in ws}  # (and the merged lineages' reset)
    assert set(effects["field"]) == {"n", "log"} and as_node in writers
    assert st.finish() == expected_output
    steps = st.run.steps
    assert list(steps[steps["kind"] == "update"]["node"]) == [as_node]


def test_from_checkpointer_names_an_update_and_refuses_a_graph_for_a_saver():
    from nbgraph import Run

    app = diamond(checkpointer=MemorySaver(), interrupt_after=["a"])
    config = {"configurable": {"thread_id": "t"}}
    app.invoke({"log": [], "n": 0}, config)
    app.update_state(config, {"n": 10}, as_node="a")
    app.invoke(None, config)
    steps = Run.from_checkpointer(app.checkpointer, "t").steps
    assert list(steps["kind"]) == ["edge", "update", "edge", "edge", "edge"]
    with pytest.raises(
        InvalidArgumentError, match=r"expected a checkpoint saver.*CompiledStateGraph"
    ):
        Run.from_checkpointer(app, config)
