"""Durability modes (`durability="sync" | "async" | "exit"`), run on LangGraph and nbgraph.

Each program runs the same graph on both engines, with MemorySaver and with SqliteSaver on
a file, and returns what `get_state_history`, `get_state` and the saver's `list` show after
a finished run, a second run, a run paused by `interrupt()` and its resume, and a run whose
node failed and its resume (and which nodes each run called). The kill guarantees of each
mode are tested in `test_persist_durability.py`.
"""

from __future__ import annotations

import asyncio
import operator
import threading
import time
from typing import Annotated, Any, TypedDict

import pytest

import nbgraph
from nbgraph.engine.persistence.durability import BATCH
from nbgraph.errors import InvalidArgumentError
from tests.support.harness import Api, api_for, outcome, same

pytestmark = pytest.mark.langgraph

MODES = ["sync", "async", "exit"]


class Loop(TypedDict):
    log: Annotated[list, operator.add]
    n: int


def build(api: Api, saver: Any, calls: list, trouble: dict) -> Any:
    """A self-loop of 6 ticks; `trouble` makes tick 3 ask a question, or tick 4 fail once."""

    def tick(state: dict) -> dict:
        calls.append(state["n"])
        if state["n"] == 3 and trouble.get("ask"):
            answer = api.interrupt("go on?")
            return {"log": [f"answered {answer}"], "n": 4}
        if state["n"] == 4 and trouble.pop("fail", False):
            raise RuntimeError("boom")
        return {"log": [state["n"]], "n": state["n"] + 1}

    return (
        api.StateGraph(Loop)
        .add_node("tick", tick)
        .add_edge(api.START, "tick")
        .add_conditional_edges("tick", lambda s: api.END if s["n"] >= 6 else "tick")
        .compile(checkpointer=saver)
    )


def seen(app: Any, saver: Any, config: dict) -> dict[str, Any]:
    """What a thread shows: its history, latest state and the saver's list."""
    history = [
        (h.metadata["step"], h.metadata["source"], h.values, h.next,
         [(t.name, t.error is not None) for t in h.tasks])
        for h in app.get_state_history(config)
    ]  # fmt: skip
    state = app.get_state(config)
    listed = [(t.metadata["step"], t.metadata["source"]) for t in saver.list(config)]
    return {"history": history, "state": (state.values, state.next), "list": listed}


def program(api: Api, mode: str) -> list[Any]:
    """The scenarios, on one engine: what each shows afterwards."""
    out: list[Any] = []
    for scenario in ("twice", "interrupt", "error"):
        saver = api.saver()  # (of the kind the test gave the api)
        calls: list = []
        trouble = {"ask": scenario == "interrupt", "fail": scenario == "error"}
        app = build(api, saver, calls, trouble)
        config = {"configurable": {"thread_id": "t"}}
        first = outcome(
            app.invoke, {"log": [], "n": 0}, config, durability=mode, message="full",
            shape=lambda result: {k: v for k, v in result.items() if k != "__interrupt__"},
        )  # fmt: skip
        out.append((scenario, "first", first))
        out.append((scenario, "calls", list(calls), seen(app, saver, config)))
        calls.clear()
        again = {"twice": {"log": [], "n": 0}, "interrupt": api.Command(resume="yes")}
        result = app.invoke(again.get(scenario), config, durability=mode)
        out.append((scenario, "second", result, list(calls), seen(app, saver, config)))
        api.close()
    return out


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
@pytest.mark.parametrize("mode", MODES)
def test_each_mode_saves_what_langgraph_saves(tmp_path, kind, mode):
    same(program, mode, saver=kind, folder=tmp_path)


def test_the_default_is_langgraphs_async(tmp_path):
    api = api_for("nbgraph", saver="sqlite", folder=tmp_path)
    saver = api.saver()
    app = build(api, saver, [], {})
    app.invoke({"log": [], "n": 0}, {"configurable": {"thread_id": "a"}})
    app.invoke({"log": [], "n": 0}, {"configurable": {"thread_id": "b"}}, durability="async")
    views = [seen(app, saver, {"configurable": {"thread_id": t}}) for t in "ab"]
    assert views[0] == views[1]
    assert len(views[0]["history"]) == 8
    api.close()


def long_loop(api: Api, saver: Any, steps: int, gate: Any = None) -> Any:
    def tick(state: dict) -> dict:
        if gate is not None and state["n"] == 1:
            gate.wait(20)
        return {"log": [state["n"]], "n": state["n"] + 1}

    return (
        api.StateGraph(Loop)
        .add_node("tick", tick)
        .add_edge(api.START, "tick")
        .add_conditional_edges("tick", lambda s: api.END if s["n"] >= steps else "tick")
        .compile(checkpointer=saver)
    )


def test_async_saves_the_same_checkpoints_as_sync_all_on_disk_when_invoke_returns(tmp_path):
    """More steps than a batch holds: several batches, and every checkpoint readable by
    another connection as soon as `invoke` returns."""
    steps = 3 * BATCH + 5
    path = str(tmp_path / "batches.sqlite")
    api = api_for("nbgraph")
    saver = nbgraph.SqliteSaver(path)
    app = long_loop(api, saver, steps)
    shown = {}
    for mode in ("sync", "async"):
        config = {"configurable": {"thread_id": mode}, "recursion_limit": steps + 5}
        app.invoke({"log": [], "n": 0}, config, durability=mode)
        with nbgraph.SqliteSaver(path, readonly=True) as reader:  # another connection
            other = long_loop(api, reader, steps)
            shown[mode] = seen(other, reader, config)
    assert len(shown["sync"]["history"]) == steps + 2
    assert shown["async"] == shown["sync"]
    saver.close()


def test_async_writes_a_step_while_a_slow_node_runs(tmp_path):
    """A batch does not wait for the run's next step: the checkpoints before a slow node
    reach the file while it runs."""
    path = str(tmp_path / "slow.sqlite")
    api = api_for("nbgraph")
    saver = nbgraph.SqliteSaver(path)
    gate = threading.Event()
    app = long_loop(api, saver, 3, gate)
    config = {"configurable": {"thread_id": "slow"}}
    runner = threading.Thread(target=app.invoke, args=({"log": [], "n": 0}, config))
    runner.start()
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with nbgraph.SqliteSaver(path, readonly=True) as reader:
                if len(reader.history("slow")) >= 3:  # input, step 0, step 1
                    break
            time.sleep(0.01)
        else:
            raise AssertionError("the checkpoints before the slow node never reached the file")
        assert runner.is_alive()  # (the slow node still runs)
    finally:
        gate.set()
        runner.join(20)
    assert len(saver.history("slow")) == 5
    saver.close()


def test_an_unknown_mode_is_refused_before_the_run():
    api = api_for("nbgraph")
    calls: list = []
    app = build(api, api.saver(), calls, {})
    with pytest.raises(InvalidArgumentError, match="durability must be one of"):
        app.invoke({"log": [], "n": 0}, {"configurable": {"thread_id": "t"}}, durability="later")
    assert calls == []


class Notes(TypedDict):
    log: Annotated[list, operator.add]


def subgraph_program(api: Api, mode: str) -> list[Any]:
    """A subgraph (the parent's saver) pauses inside and resumes; then `stream`, `ainvoke`
    and `astream` on a thread each: what the threads show afterwards."""

    def ask(state: dict) -> dict:
        return {"log": [f"a={api.interrupt('q?')}"]}

    sub = (
        api.StateGraph(Notes)
        .add_node("one", lambda s: {"log": ["one"]})
        .add_node("ask", ask)
        .add_edge(api.START, "one")
        .add_edge("one", "ask")
        .add_edge("ask", api.END)
        .compile()
    )

    def chain(*nodes: Any) -> Any:
        graph = api.StateGraph(Notes)
        names = []
        for name, node in nodes:
            graph.add_node(name, node)
            names.append(name)
        for a, b in zip([api.START, *names], [*names, api.END], strict=True):
            graph.add_edge(a, b)
        return graph.compile(checkpointer=api.saver())

    pre, post = ("pre", lambda s: {"log": ["pre"]}), ("post", lambda s: {"log": ["post"]})
    app = chain(pre, ("sub", sub), post)
    config = {"configurable": {"thread_id": "t"}}
    out: list[Any] = [sorted(app.invoke({"log": []}, config, durability=mode))]
    state = app.get_state(config, subgraphs=True)
    out.append((state.values, state.next, [(t.name, bool(t.interrupts)) for t in state.tasks]))
    out += [(t.state.values, t.state.next) for t in state.tasks if t.state is not None]
    steps = [
        (h.metadata["step"], h.metadata["source"], h.next) for h in app.get_state_history(config)
    ]
    out.append(steps)
    out.append(app.invoke(api.Command(resume="yes"), config, durability=mode))
    out.append([(h.metadata["step"], h.values) for h in app.get_state_history(config)])

    plain = chain(pre, post)
    list(plain.stream({"log": []}, {"configurable": {"thread_id": "s"}}, durability=mode))

    async def run_async() -> None:
        await plain.ainvoke({"log": []}, {"configurable": {"thread_id": "a"}}, durability=mode)
        b = {"configurable": {"thread_id": "b"}}
        async for _ in plain.astream({"log": []}, b, durability=mode):
            pass

    asyncio.run(run_async())
    for thread in "sab":
        history = plain.get_state_history({"configurable": {"thread_id": thread}})
        out.append([(h.metadata["step"], h.metadata["source"], h.values) for h in history])
    return out


@pytest.mark.parametrize("mode", MODES)
def test_a_subgraph_pause_and_the_other_entry_points_save_what_langgraph_saves(mode):
    same(subgraph_program, mode)


def paused_twice_program(api: Api, mode: str) -> list[Any]:
    """A node that asks twice beside a sibling: resumed with an answer and an update it pauses
    again at once (the run saves no new checkpoint), then finishes."""

    def ask(state: dict) -> dict:
        first, second = api.interrupt("q?"), api.interrupt("again?")
        return {"log": [f"a={first},b={second}"]}

    saver = api.saver()  # (of the kind the test gave the api)
    app = (
        api.StateGraph(Notes)
        .add_node("pre", lambda s: {"log": ["pre"]})
        .add_node("ask", ask)
        .add_node("beside", lambda s: {"log": ["beside"]})
        .add_edge(api.START, "pre")
        .add_edge("pre", "ask")
        .add_edge("pre", "beside")
        .add_edge("ask", api.END)
        .add_edge("beside", api.END)
        .compile(checkpointer=saver)
    )
    config = {"configurable": {"thread_id": "t"}}
    out = []
    for given in (
        {"log": []},
        api.Command(resume="x", update={"log": ["u"]}),
        api.Command(resume="y"),
    ):
        result = app.invoke(given, config, durability=mode)
        state = app.get_state(config)
        history = [(h.metadata["step"], h.values, h.next) for h in app.get_state_history(config)]
        out.append(
            (result.get("log"), "__interrupt__" in result, state.values, state.next, history)
        )
    api.close()
    return out


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
@pytest.mark.parametrize("mode", MODES)
def test_an_answer_and_update_kept_when_the_resume_pauses_again(tmp_path, kind, mode):
    same(paused_twice_program, mode, saver=kind, folder=tmp_path)


def replay_program(api: Api, mode: str) -> list[Any]:
    """The first step fails, a resume finishes, a replay from the thread's first checkpoint,
    then `update_state` and a run from it: the history after each."""
    fails = [True]

    def tick(state: dict) -> dict:
        if state["n"] == 0 and fails:
            fails.pop()
            raise RuntimeError("first")
        return {"log": [state["n"]], "n": state["n"] + 1}

    app = (
        api.StateGraph(Loop)
        .add_node("tick", tick)
        .add_edge(api.START, "tick")
        .add_conditional_edges("tick", lambda s: api.END if s["n"] >= 3 else "tick")
        .compile(checkpointer=api.saver())
    )
    config = {"configurable": {"thread_id": "t"}}

    def shown() -> list:
        return [
            (h.metadata["step"], h.metadata["source"], h.values, h.next,
             [(t.name, t.error is not None) for t in h.tasks])
            for h in app.get_state_history(config)
        ]  # fmt: skip

    with pytest.raises(RuntimeError, match="first"):
        app.invoke({"log": [], "n": 0}, config, durability=mode)
    out = [shown(), app.invoke(None, config, durability=mode), shown()]
    past = list(app.get_state_history(config))[-1].config
    out += [app.invoke(None, past, durability=mode), shown()]
    app.update_state(config, {"n": 1})
    out += [app.invoke(None, config, durability=mode), shown()]
    return out


@pytest.mark.parametrize("mode", MODES)
def test_a_first_step_error_a_replay_and_an_update_save_what_langgraph_saves(mode):
    same(replay_program, mode)


def sibling_program(api: Api, mode: str) -> list[Any]:
    """A task fails beside one that finished: what is saved, and what a resume runs again."""
    calls: list[str] = []
    fails = [True]

    def ok(state: dict) -> dict:
        calls.append("ok")
        return {"log": ["ok"]}

    def bad(state: dict) -> dict:
        calls.append("bad")
        if fails:
            fails.pop()
            # LangGraph saves `ok`'s writes from a callback after `ok` returns; failing before
            # it ran would race it (LangGraph's executor, shut down, refuses the save)
            time.sleep(0.3)
            raise ValueError("bad")
        return {"log": ["bad"]}

    saver = api.saver()  # (of the kind the test gave the api)
    app = (
        api.StateGraph(Notes)
        .add_node("pre", lambda s: {"log": ["pre"]})
        .add_node("ok", ok)
        .add_node("bad", bad)
        .add_node("post", lambda s: {"log": ["post"]})
        .add_edge(api.START, "pre")
        .add_edge("pre", "ok")
        .add_edge("pre", "bad")
        .add_edge(["ok", "bad"], "post")
        .add_edge("post", api.END)
        .compile(checkpointer=saver)
    )
    config = {"configurable": {"thread_id": "t"}}
    with pytest.raises(ValueError, match="bad"):
        app.invoke({"log": []}, config, durability=mode, max_concurrency=1)
    state = app.get_state(config)
    tasks = sorted((t.name, t.error is not None, bool(t.result)) for t in state.tasks)
    out: list[Any] = [sorted(calls), state.values, state.next, tasks]
    calls.clear()
    out.append(app.invoke(None, config, durability=mode, max_concurrency=1))
    out.append(sorted(calls))  # only the failed task runs again
    out.append([(h.metadata["step"], h.values) for h in app.get_state_history(config)])
    api.close()
    return out


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
@pytest.mark.parametrize("mode", MODES)
def test_a_failed_task_beside_a_finished_one_saves_what_langgraph_saves(tmp_path, kind, mode):
    same(sibling_program, mode, saver=kind, folder=tmp_path)
