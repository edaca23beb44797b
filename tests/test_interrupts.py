"""Interrupts, breakpoints, update_state and forks on a checkpointed thread."""

from typing import Annotated, TypedDict

import pytest

from nbgraph import (
    END,
    START,
    Command,
    GraphBuildError,
    InvalidUpdateError,
    MemorySaver,
    SqliteSaver,
    StateGraph,
    interrupt,
)


class S(TypedDict, total=False):
    log: Annotated[list, "append"]
    answer: str


def config(thread: str = "t") -> dict:
    return {"configurable": {"thread_id": thread}}


def asking_app(saver, calls: list):
    def ask(state):
        calls.append("ask")
        name = interrupt("name?")
        city = interrupt("city?")
        return {"answer": f"{name} from {city}", "log": ["ask"]}

    def side(state):
        calls.append("side")
        return {"log": ["side"]}

    return (
        StateGraph(S)
        .add_node("ask", ask)
        .add_node("side", side)
        .add_node("done", lambda s: {"log": ["done"]})
        .add_edge(START, "ask")
        .add_edge(START, "side")
        .add_edge(["ask", "side"], "done")
        .compile(checkpointer=saver)
    )


@pytest.mark.parametrize("make_saver", [MemorySaver, lambda: SqliteSaver(":memory:")])
def test_interrupt_pauses_and_each_answer_reruns_the_node_from_its_first_line(make_saver):
    calls: list = []
    app = asking_app(make_saver(), calls)
    first = app.invoke({"log": []}, config())
    assert [i.value for i in first["__interrupt__"]] == ["name?"]
    assert app.last_run.status == "interrupted"
    state = app.get_state(config())
    assert state.next == ("ask",) and [i.value for i in state.interrupts] == ["name?"]
    assert state.values["log"] == ["side"]  # as in LangGraph: side finished, its writes shown
    second = app.invoke(Command(resume="Ada"), config())
    assert [i.value for i in second["__interrupt__"]] == ["city?"]
    final = app.invoke(Command(resume="Lyon"), config())
    assert final == {"log": ["ask", "side", "done"], "answer": "Ada from Lyon"}
    assert calls == ["ask", "side", "ask", "ask"]  # side ran once; ask re-ran for each answer


def test_several_pending_interrupts_are_answered_by_id():
    def asker(name):
        return lambda state: {"log": [f"{name}={interrupt(name)}"]}

    app = (
        StateGraph(S)
        .add_node("x", asker("x"))
        .add_node("y", asker("y"))
        .add_edge(START, "x")
        .add_edge(START, "y")
        .compile(checkpointer=MemorySaver())
    )
    paused = app.invoke({"log": []}, config())["__interrupt__"]
    ids = {i.value: i.id for i in paused}
    assert set(ids) == {"x", "y"}
    with pytest.raises(InvalidUpdateError, match="2 interrupts are waiting"):
        app.invoke(Command(resume="both?"), config())
    result = app.invoke(Command(resume={ids["x"]: 1, ids["y"]: 2}), config())
    assert result == {"log": ["x=1", "y=2"]}


def test_interrupt_needs_a_checkpointer_and_resume_needs_a_pending_interrupt():
    app = StateGraph(S).add_node("a", lambda s: {"answer": interrupt("?")}).add_edge(START, "a")
    with pytest.raises(RuntimeError, match="checkpointer"):
        app.compile().invoke({"log": []})
    done = StateGraph(S).add_node("a", lambda s: None).add_edge(START, "a")
    checkpointed = done.compile(checkpointer=MemorySaver())
    checkpointed.invoke({"log": []}, config())
    with pytest.raises(InvalidUpdateError, match="no pending interrupt"):
        checkpointed.invoke(Command(resume=1), config())
    with pytest.raises(GraphBuildError, match="checkpointer"):
        done.compile(interrupt_before=["a"])


def line(saver, **breakpoints):
    graph = StateGraph(S)
    for name in "abc":
        graph.add_node(name, lambda s, name=name: {"log": [name]})
    graph.add_edge(START, "a").add_edge("a", "b").add_edge("b", "c").add_edge("c", END)
    return graph.compile(checkpointer=saver, **breakpoints)


def test_interrupt_before_and_after_stop_and_resume_continues():
    before = line(MemorySaver(), interrupt_before=["b"])
    assert before.invoke({"log": []}, config()) == {"log": ["a"]}
    assert before.get_state(config()).next == ("b",) and before.last_run.status == "interrupted"
    assert before.invoke(None, config()) == {"log": ["a", "b", "c"]}
    after = line(MemorySaver(), interrupt_after=["b"])
    assert after.invoke({"log": []}, config()) == {"log": ["a", "b"]}
    assert after.get_state(config()).next == ("c",)
    assert after.invoke(None, config()) == {"log": ["a", "b", "c"]}


def test_update_state_as_a_node_fires_its_edges_and_a_past_update_forks():
    app = line(MemorySaver())
    app.invoke({"log": []}, config())
    history = list(app.get_state_history(config()))
    after_a = next(h for h in history if h.metadata["step"] == 1)
    forked = app.update_state(after_a.config, {"log": ["edited"]}, as_node="a")
    state = app.get_state(forked)
    assert state.metadata["source"] == "update" and state.next == ("b",)  # as in LangGraph
    assert state.metadata["step"] == 2
    assert state.values == {"log": ["a", "edited"]}
    assert app.invoke(None, forked) == {"log": ["a", "edited", "b", "c"]}
    latest = app.update_state(config(), {"answer": "noted"}, as_node="c")
    assert app.get_state(latest).metadata["source"] == "update"
    with pytest.raises(ValueError, match="not a node"):
        app.update_state(config(), {"log": ["x"]}, as_node="zzz")


def test_a_paused_thread_survives_reopening_its_sqlite_file(tmp_path):
    path = tmp_path / "paused.sqlite"
    calls: list = []
    asking_app(SqliteSaver(path), calls).invoke({"log": []}, config("file"))
    reopened = asking_app(SqliteSaver(path), calls)
    assert [i.value for i in reopened.get_state(config("file")).interrupts] == ["name?"]
    reopened.invoke(Command(resume="Ada"), config("file"))
    final = reopened.invoke(Command(resume="Nice"), config("file"))
    assert final["answer"] == "Ada from Nice" and calls.count("side") == 1


def test_a_replay_that_pauses_can_be_answered_on_its_new_branch():
    app = (
        StateGraph(S)
        .add_node("ask", lambda s: {"answer": interrupt("?")})
        .add_edge(START, "ask")
        .compile(checkpointer=MemorySaver())
    )
    app.invoke({"log": []}, config())
    assert app.invoke(Command(resume="first"), config())["answer"] == "first"
    start = next(h for h in app.get_state_history(config()) if h.metadata["step"] == 0).config
    assert [i.value for i in app.invoke(None, start)["__interrupt__"]] == ["?"]
    branch = app.get_state(config())
    assert branch.metadata["source"] == "fork" and [i.value for i in branch.interrupts] == ["?"]
    assert app.invoke(Command(resume="second"), config())["answer"] == "second"
