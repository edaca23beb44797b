"""Interrupts, breakpoints, update_state and forks on a checkpointed thread."""

import operator
from typing import Annotated, TypedDict

import pytest

from nbgraph import (
    END,
    START,
    Command,
    MemorySaver,
    Run,
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
    with pytest.raises(RuntimeError, match="2 interrupts are waiting"):  # (LangGraph's class)
        app.invoke(Command(resume="both?"), config())
    result = app.invoke(Command(resume={ids["x"]: 1, ids["y"]: 2}), config())
    assert result == {"log": ["x=1", "y=2"]}


def test_interrupt_without_a_checkpointer_pauses_with_nothing_to_resume():
    app = StateGraph(S).add_node("a", lambda s: {"answer": interrupt("?")}).add_edge(START, "a")
    compiled = app.compile()
    out = compiled.invoke({"log": []})
    assert [i.value for i in out["__interrupt__"]] == ["?"]
    assert compiled.last_run.status == "interrupted"
    with pytest.raises(RuntimeError, match="without checkpointer"):
        compiled.invoke(Command(resume=1))
    done = StateGraph(S).add_node("a", lambda s: None).add_edge(START, "a")
    checkpointed = done.compile(checkpointer=MemorySaver())
    checkpointed.invoke({"log": []}, config())
    # an answer with no question waiting is kept unread, as LangGraph keeps it: nothing runs
    assert checkpointed.invoke(Command(resume=1), config()) == {"log": []}
    # breakpoints without a checkpointer stop the run where they are, as LangGraph's do
    # (nothing to resume: a subgraph's stop its checkpointed parent keeps; issue 29)
    assert done.compile(interrupt_before=["a"]).invoke({"log": ["in"]}) == {"log": ["in"]}


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


# --- pauses in streams, as LangGraph streams them ------------------------------------------


class Step(TypedDict, total=False):
    log: Annotated[list, "append"]
    answer: str


def fan_out_with_a_question(saver=None, **compile_options):
    """START -> ask (asks a question) and START -> side (finishes); both -> done."""

    def ask(state):
        return {"answer": interrupt("name?"), "log": ["ask"]}

    return (
        StateGraph(Step)
        .add_node("ask", ask)
        .add_node("side", lambda s: {"log": ["side"]})
        .add_node("done", lambda s: {"log": ["done"]})
        .add_edge(START, "ask")
        .add_edge(START, "side")
        .add_edge(["ask", "side"], "done")
        .compile(checkpointer=saver or MemorySaver(), **compile_options)
    )


def test_a_question_streams_as_an_interrupt_update_not_as_a_node_that_wrote_nothing():
    app = fan_out_with_a_question()

    chunks = list(app.stream({"log": []}, config(), stream_mode="updates"))

    asked = [c for c in chunks if "__interrupt__" in c]
    assert {"side": {"log": ["side"]}} in chunks and {"ask": None} not in chunks
    assert len(asked) == 1 and [i.value for i in asked[0]["__interrupt__"]] == ["name?"]
    assert isinstance(asked[0]["__interrupt__"], tuple)


def test_values_stream_ends_with_the_question_then_the_finished_siblings_writes():
    app = fan_out_with_a_question()

    chunks = list(app.stream({"log": []}, config(), stream_mode="values"))

    assert chunks[0] == {"log": []}
    question = chunks[1]
    assert [i.value for i in question.pop("__interrupt__")] == ["name?"]
    assert question == {"log": []}  # the state the question was asked in
    assert chunks[2:] == [{"log": ["side"]}]  # `side` finished: its writes are shown last


def test_invoke_that_pauses_returns_the_finished_siblings_writes_with_the_question():
    app = fan_out_with_a_question()

    out = app.invoke({"log": []}, config())

    assert out["log"] == ["side"] and [i.value for i in out["__interrupt__"]] == ["name?"]
    done = app.invoke(Command(resume="Ada"), config())
    assert done == {"log": ["ask", "side", "done"], "answer": "Ada"}


def test_both_modes_stream_pairs_with_the_question_in_each():
    app = fan_out_with_a_question()

    chunks = list(app.stream({"log": []}, config(), stream_mode=["values", "updates"]))

    modes = [(mode, "__interrupt__" in chunk) for mode, chunk in chunks]
    assert ("updates", True) in modes and ("values", True) in modes
    assert chunks[-1] == ("values", {"log": ["side"]})


@pytest.mark.parametrize("where", ["interrupt_before", "interrupt_after"])
def test_a_static_breakpoint_streams_an_empty_interrupt_update(where):
    app = (
        StateGraph(Step)
        .add_node("a", lambda s: {"log": ["a"]})
        .add_node("b", lambda s: {"log": ["b"]})
        .add_edge(START, "a")
        .add_edge("a", "b")
        .compile(checkpointer=MemorySaver(), **{where: ["a"]})
    )

    updates = list(app.stream({"log": []}, config("u"), stream_mode="updates"))
    values = list(app.stream({"log": []}, config("v"), stream_mode="values"))

    ran = [] if where == "interrupt_before" else [{"a": {"log": ["a"]}}]
    assert updates == [*ran, {"__interrupt__": ()}]
    assert values == [{"log": []}, *([{"log": ["a"]}] if ran else [])]  # no extra chunk
    assert "__interrupt__" not in app.invoke({"log": []}, config("i"))


# --- Command(resume=..., update=..., goto=...) -----------------------------------------------


def asking_twice_app(saver):
    def ask(state):
        return {"log": [interrupt("q?")]}

    return (
        StateGraph(Step)
        .add_node("first", lambda s: {"log": ["first"]})
        .add_node("ask", ask)
        .add_node("last", lambda s: {"log": ["last"]})
        .add_edge(START, "first")
        .add_edge("first", "ask")
        .add_edge("ask", "last")
        .compile(checkpointer=saver)
    )


@pytest.mark.parametrize("make_saver", [MemorySaver, lambda: SqliteSaver(":memory:")])
def test_command_update_goes_into_the_state_before_the_paused_node_runs_again(make_saver):
    app = asking_twice_app(make_saver())
    app.invoke({"log": ["in"]}, config())

    out = app.invoke(Command(resume="yes", update={"log": ["edited"], "answer": "x"}), config())

    assert out == {"log": ["in", "first", "edited", "yes", "last"], "answer": "x"}
    history = [(s.metadata["step"], s.values["log"]) for s in app.get_state_history(config())]
    assert history[0] == (3, ["in", "first", "edited", "yes", "last"])
    assert (2, ["in", "first", "edited", "yes"]) in history  # the resumed step starts updated


def test_the_paused_node_reads_the_updated_state():
    seen: list = []

    def ask(state):
        seen.append(list(state["log"]))
        return {"answer": interrupt("q?")}

    app = (
        StateGraph(Step)
        .add_node("ask", ask)
        .add_edge(START, "ask")
        .compile(checkpointer=MemorySaver())
    )
    app.invoke({"log": ["in"]}, config())
    app.invoke(Command(resume="ok", update={"log": ["more"]}), config())

    assert seen == [["in"], ["in", "more"]]


def test_an_update_without_an_answer_is_kept_while_the_thread_stays_paused():
    app = asking_twice_app(MemorySaver())
    app.invoke({"log": ["in"]}, config())

    again = app.invoke(Command(update={"answer": "kept"}), config())

    assert [i.value for i in again["__interrupt__"]] == ["q?"]  # not answered: asks again
    assert app.get_state(config()).values == {"log": ["in", "first"], "answer": "kept"}
    out = app.invoke(Command(resume="yes"), config())
    assert out == {"log": ["in", "first", "yes", "last"], "answer": "kept"}


def test_the_update_is_recorded_as_a_command_reset_of_the_resumed_step():
    app = asking_twice_app(MemorySaver())
    app.invoke({"log": ["in"]}, config())

    app.invoke(Command(resume="yes", update={"answer": "x"}), config())

    resets = [r for step in app.last_log.steps for r in step.resets if r.reason == "command"]
    assert len(resets) == 1 and resets[0].values == {"log": ["in", "first"], "answer": "x"}


def test_command_goto_adds_a_node_to_the_resumed_step():
    app = asking_twice_app(MemorySaver())
    app.invoke({"log": ["in"]}, config())

    out = app.invoke(Command(resume="yes", goto="last"), config())

    assert out["log"] == ["in", "first", "yes", "last", "last"]


def test_an_update_with_an_unknown_key_warns_and_a_bad_goto_is_refused():
    app = asking_twice_app(MemorySaver())
    app.invoke({"log": ["in"]}, config())

    with pytest.warns(UserWarning, match="nope"):
        app.invoke(Command(update={"nope": 1}), config())
    with pytest.raises(KeyError, match="nowhere"):
        app.invoke(Command(resume="x", goto="nowhere"), config())


def test_astream_shows_the_pause_like_stream():
    import asyncio

    async def collect(app):
        return [c async for c in app.astream({"log": []}, config(), stream_mode="updates")]

    chunks = asyncio.run(collect(fan_out_with_a_question()))

    asked = [c["__interrupt__"] for c in chunks if "__interrupt__" in c]
    assert [[i.value for i in a] for a in asked] == [["name?"]]
    assert {"side": {"log": ["side"]}} in chunks


def test_debug_task_result_carries_the_question():
    app = fan_out_with_a_question()

    events = list(app.stream({"log": []}, config(), stream_mode="debug"))

    results = {e.node: e for e in events if e.type == "task_result"}
    assert [i.value for i in results["ask"].interrupts] == ["name?"]
    assert results["side"].interrupts == () and results["side"].update == {"log": ["side"]}


def test_on_resume_a_finished_siblings_kept_writes_stream_first_marked_cached():
    app = fan_out_with_a_question()
    app.invoke({"log": []}, config())

    chunks = list(app.stream(Command(resume="Ada"), config(), stream_mode="updates"))

    assert chunks == [
        {"side": {"log": ["side"]}, "__metadata__": {"cached": True}},
        {"ask": {"answer": "Ada", "log": ["ask"]}},
        {"done": {"log": ["done"]}},
    ]


# --- a run resumed at its first node: its record works everywhere -------------------------------


@pytest.mark.parametrize("update", [None, {"log": ["edited"]}])
def test_a_run_resumed_at_its_first_node_has_a_tree_tables_and_a_file(update, tmp_path):
    def ask(state):
        return {"answer": interrupt("which?"), "log": ["asked"]}

    app = (
        StateGraph(dict, reducers={"log": operator.add})
        .add_node("ask", ask)
        .add_edge(START, "ask")
        .compile(checkpointer=MemorySaver())
    )
    config = {"configurable": {"thread_id": "first-node"}}
    app.invoke({"log": ["start"]}, config)
    run = app.run(Command(resume="yes", update=update), config)
    expected = ["start", "edited", "asked"] if update else ["start", "asked"]
    assert run.output == {"log": expected, "answer": "yes"}
    tree = run.tree  # the resumed step 0 has no task: its merge hangs off the resume reset
    assert [node.kind for node in tree.nodes.values()][:2] == ["input", "reset"]
    assert "ask" in run.draw_tree().source
    assert run.effects.iloc[-1]["after"] == expected
    loaded = Run.load(run.save(tmp_path / "run.json"))
    assert loaded.output == run.output
