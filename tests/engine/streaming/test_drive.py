"""Driving runs: stream modes, typed debug events, async execution, and runs stopped mid-step."""

import asyncio
import json
import operator
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Annotated, TypedDict

import pytest

from nbgraph import END, START, MemorySaver, StateGraph
from nbgraph.engine.drive import StepFinished, TaskFinished, TaskStarted

REPO = Path(__file__).resolve().parents[3]


class Log(TypedDict):
    log: Annotated[list, operator.add]


def fan_app():
    return (
        StateGraph(Log)
        .add_node("a", lambda s: {"log": ["a"]})
        .add_node("b", lambda s: {"log": ["b"]})
        .add_node("c", lambda s: None)
        .add_edge(START, "a")
        .add_edge(START, "b")
        .add_edge("a", "c")
        .compile()
    )


def test_default_stream_mode_is_updates_per_task():
    chunks = list(fan_app().stream({"log": []}))
    assert sorted(map(repr, chunks[:2])) == ["{'a': {'log': ['a']}}", "{'b': {'log': ['b']}}"]
    assert chunks[2] == {"c": None}


def test_values_start_after_step_zero_and_skip_steps_that_changed_nothing():
    chunks = list(fan_app().stream({"log": ["in"]}, stream_mode="values"))
    assert chunks == [{"log": ["in"]}, {"log": ["in", "a", "b"]}]


def test_a_list_of_modes_yields_mode_chunk_pairs():
    chunks = list(fan_app().stream({"log": []}, stream_mode=["values", "updates"]))
    assert {mode for mode, _ in chunks} == {"values", "updates"}
    assert chunks[0] == ("values", {"log": []})


def test_debug_yields_typed_events_in_step_order():
    events = list(fan_app().stream({"log": []}, stream_mode="debug"))
    kinds = [(type(e).__name__, e.step) for e in events]
    assert kinds[:2] == [("TaskStarted", 1), ("TaskStarted", 1)]
    assert [k for k in kinds if k[0] == "StepFinished"] == [
        ("StepFinished", 1),
        ("StepFinished", 2),
    ]
    finished = [e for e in events if isinstance(e, TaskFinished)]
    assert {e.node: e.update for e in finished if e.step == 1} == {
        "a": {"log": ["a"]},
        "b": {"log": ["b"]},
    }
    step_one = next(e for e in events if isinstance(e, StepFinished) and e.step == 1)
    assert step_one.values == {"log": ["a", "b"]} and step_one.fields == ("log",)
    started = next(e for e in events if isinstance(e, TaskStarted) and e.node == "c")
    assert started.triggers == ("a",)


def test_unknown_stream_mode_is_a_clear_error():
    with pytest.raises(ValueError, match="tokens"):
        list(fan_app().stream({"log": []}, stream_mode="tokens"))


def test_async_nodes_run_concurrently_under_ainvoke():
    class S(TypedDict):
        log: Annotated[list, operator.add]

    events: dict[str, asyncio.Event] = {}

    def waiter(me: str, other: str):
        async def node(state):
            events[me].set()
            await asyncio.wait_for(events[other].wait(), 5)  # deadlocks if run one by one
            return {"log": [me]}

        return node

    app = (
        StateGraph(S)
        .add_node("x", waiter("x", "y"))
        .add_node("y", waiter("y", "x"))
        .add_edge(START, "x")
        .add_edge(START, "y")
        .compile()
    )

    async def main():
        events.update(x=asyncio.Event(), y=asyncio.Event())
        return await app.ainvoke({"log": []})

    assert asyncio.run(main()) == {"log": ["x", "y"]}


def test_astream_matches_stream_and_awaits_async_routers():
    async def route(state):
        await asyncio.sleep(0)
        return END if len(state["log"]) >= 3 else "tick"

    async def tick(state):
        return {"log": [len(state["log"])]}

    app = (
        StateGraph(Log)
        .add_node("tick", tick)
        .add_node("sync", lambda s: {"log": ["sync"]})
        .add_edge(START, "tick")
        .add_edge(START, "sync")
        .add_conditional_edges("tick", route)
        .compile()
    )

    async def collect():
        return [c async for c in app.astream({"log": []}, stream_mode="values")]

    assert asyncio.run(collect()) == [
        {"log": []},
        {"log": ["sync", 0]},  # "sync" sorts before "tick"
        {"log": ["sync", 0, 2]},
    ]


def test_async_node_under_sync_invoke_says_to_use_ainvoke():
    async def node(state):
        return {"log": ["never"]}

    app = StateGraph(Log).add_node("n", node).add_edge(START, "n").compile()
    with pytest.raises(TypeError, match="ainvoke"):
        app.invoke({"log": []})


# --- a run stopped mid-step ---------------------------------------------------------------------

CTRL_C_PROGRAM = """
import collections, json, operator, os, signal, sys, threading, time
from typing import Annotated, TypedDict
from nbgraph import START, SqliteSaver, StateGraph

class Log(TypedDict):
    log: Annotated[list, operator.add]

calls, active, lock = collections.Counter(), collections.Counter(), threading.Lock()

def node(name, seconds, press_ctrl_c=False):
    def body(state):
        with lock:
            calls[name] += 1
            active[name] += 1
        if press_ctrl_c:
            os.kill(os.getpid(), signal.SIGINT)  # the person at the keyboard, right now
        time.sleep(seconds)  # say, an API call with a side effect
        with lock:
            active[name] -= 1
        return {"log": [name]}
    return body

graph = StateGraph(Log)
graph.add_node("a_slow", node("a_slow", 0.8)).add_edge(START, "a_slow")
graph.add_node("b_press", node("b_press", 0.4, True)).add_edge(START, "b_press")
graph.add_node("c_queued", node("c_queued", 0)).add_edge(START, "c_queued")
graph.add_node("d_after", node("d_after", 0)).add_edge("b_press", "d_after")
saver = SqliteSaver(sys.argv[1])
app = graph.compile(checkpointer=saver)
config = {"configurable": {"thread_id": "t"}, "max_concurrency": 2}
seen = {"raised": False}
try:
    app.invoke({"log": []}, config)
except KeyboardInterrupt:
    seen["raised"] = True
seen["running_when_raised"] = sorted(name for name, n in active.items() if n)
seen["calls_before_resume"] = dict(calls)
stopped = app.last_run.log.steps[-1]
seen["record"] = [app.last_run.status, stopped.applied, [t.node for t in stopped.tasks]]
head = app.get_state(config).config["configurable"]["checkpoint_id"]
seen["pending"] = sorted(w.task_id.split(":")[-1] for w in saver.pending_writes("t", head))
seen["resumed"] = app.invoke(None, config)["log"]
seen["calls"] = dict(calls)
print(json.dumps(seen))
"""


def test_ctrl_c_in_a_parallel_step_waits_for_its_running_nodes_and_a_resume_skips_them(
    tmp_path: Path,
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", CTRL_C_PROGRAM, str(tmp_path / "checkpoints.db")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["raised"]  # the KeyboardInterrupt still reaches the caller ...
    assert seen["running_when_raised"] == []  # ... once the step's running nodes ended
    assert seen["calls_before_resume"] == {"a_slow": 1, "b_press": 1}  # c never started
    assert seen["record"] == ["failed", False, ["a_slow", "b_press"]]
    assert seen["pending"] == ["a_slow", "b_press"]  # what finished is kept
    assert seen["resumed"] == ["a_slow", "b_press", "c_queued", "d_after"]
    assert seen["calls"] == {"a_slow": 1, "b_press": 1, "c_queued": 1, "d_after": 1}


SECOND_CTRL_C_PROGRAM = """
import collections, json, operator, os, signal, threading, time
from typing import Annotated, TypedDict
from nbgraph import START, MemorySaver, StateGraph
from nbgraph.checkpoint import ThreadBusyError

class Log(TypedDict):
    log: Annotated[list, operator.add]

calls, lock = collections.Counter(), threading.Lock()

def node(name, seconds, presses=0):
    def body(state):
        with lock:
            calls[name] += 1
        for _ in range(presses):  # Ctrl-C, and again while the run waits for a_slow
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.2)
        time.sleep(seconds)
        return {"log": [name]}
    return body

graph = StateGraph(Log)
graph.add_node("a_slow", node("a_slow", 2.5)).add_edge(START, "a_slow")
graph.add_node("b_press", node("b_press", 0, presses=2)).add_edge(START, "b_press")
app = graph.compile(checkpointer=MemorySaver())
config = {"configurable": {"thread_id": "t"}}
seen = {"raised": 0}
started = time.time()
try:
    app.invoke({"log": []}, config)
except KeyboardInterrupt:
    seen["raised"] = time.time() - started
try:
    app.invoke(None, config)
    seen["resume_at_once"] = "ran"
except ThreadBusyError:
    seen["resume_at_once"] = "refused"
while True:  # the claim goes once a_slow has ended
    try:
        seen["resumed"] = app.invoke(None, config)["log"]
        break
    except ThreadBusyError:
        time.sleep(0.05)
seen["calls"] = dict(calls)
print(json.dumps(seen))
"""


def test_a_second_ctrl_c_returns_at_once_but_the_thread_stays_claimed_until_nodes_end() -> None:
    done = subprocess.run(
        [sys.executable, "-c", SECOND_CTRL_C_PROGRAM],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert 0 < seen["raised"] < 2.0  # the second Ctrl-C did not wait for a_slow's 2.5 s
    assert seen["resume_at_once"] == "refused"  # a_slow still runs: no second copy of it
    assert seen["resumed"] == ["a_slow", "b_press"]
    assert seen["calls"] == {"a_slow": 1, "b_press": 1}


def test_closing_a_stream_mid_step_waits_for_the_steps_other_nodes():
    slow_started, finished = threading.Event(), []

    def slow(state):
        slow_started.set()
        time.sleep(0.5)
        finished.append("slow")
        return {"log": ["slow"]}

    def fast(state):
        assert slow_started.wait(10)  # both run at once
        return {"log": ["fast"]}

    app = (
        StateGraph(Log)
        .add_node("fast", fast)
        .add_node("slow", slow)
        .add_edge(START, "fast")
        .add_edge(START, "slow")
        .compile()
    )
    chunks = app.stream({"log": []})
    assert next(chunks) == {"fast": {"log": ["fast"]}}
    chunks.close()  # the caller stops reading while "slow" runs
    assert finished == ["slow"]  # not left running behind the caller's back
    assert app.last_run.status == "failed"


def test_a_cancelled_ainvoke_cancels_async_nodes_and_waits_for_threads():
    started = {name: threading.Event() for name in ("a_async", "b_thread")}
    seen: dict[str, list[str]] = {"cancelled": [], "finished": [], "ran": []}

    async def a_async(state):
        seen["ran"].append("a_async")
        started["a_async"].set()
        try:
            await asyncio.sleep(30 if seen["ran"].count("a_async") == 1 else 0)
        except asyncio.CancelledError:
            seen["cancelled"].append("a_async")
            raise
        return {"log": ["a_async"]}

    def b_thread(state):
        seen["ran"].append("b_thread")
        started["b_thread"].set()
        time.sleep(0.4)  # a thread cannot be cancelled: the run waits for it
        seen["finished"].append("b_thread")
        return {"log": ["b_thread"]}

    def c_queued(state):
        seen["ran"].append("c_queued")
        return {"log": ["c_queued"]}

    graph = StateGraph(Log)
    for name, fn in (("a_async", a_async), ("b_thread", b_thread), ("c_queued", c_queued)):
        graph.add_node(name, fn).add_edge(START, name)
    app = graph.compile(checkpointer=MemorySaver())
    config = {"configurable": {"thread_id": "t"}, "max_concurrency": 2}

    async def main():
        run = asyncio.ensure_future(app.ainvoke({"log": []}, config))
        while not all(event.is_set() for event in started.values()):
            await asyncio.sleep(0.01)
        run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run
        return list(seen["finished"]), list(seen["ran"])

    finished_when_cancelled, ran = asyncio.run(main())
    assert finished_when_cancelled == ["b_thread"]
    assert seen["cancelled"] == ["a_async"] and "c_queued" not in ran
    stopped = app.last_log.steps[-1]
    assert not stopped.applied and [t.node for t in stopped.tasks] == ["b_thread"]
    assert asyncio.run(app.ainvoke(None, config)) == {"log": ["a_async", "b_thread", "c_queued"]}
    assert seen["ran"].count("b_thread") == 1  # taken from its pending writes on resume


# --- one step body: the sync and async drivers stream the same ---------------------------------


def _twin_app():
    from nbgraph import get_stream_writer, interrupt, task

    @task
    def double(x: int) -> int:
        return 2 * x

    def a(state):
        get_stream_writer()({"a": "working"})
        return {"log": [f"a{double(len(state['log'])).result()}"]}

    def b(state):
        return {"log": [interrupt("b asks")]}

    return (
        StateGraph(Log)
        .add_node("a", a)
        .add_node("b", b)
        .add_node("c", lambda s: {"log": ["c"]})
        .add_edge(START, "a")
        .add_edge(START, "c")
        .add_edge("a", "b")
        .compile(checkpointer=MemorySaver())
    )


def test_stream_and_astream_yield_the_same_chunks_in_the_same_order():
    """`drive` and `adrive` share their step body: for the same run (a parallel step, a custom
    chunk, a `@task` call, a pause, its resume) both stream the same chunks in one order."""
    from nbgraph import Command

    modes = ["values", "updates", "custom"]

    def sync_chunks(thread):
        app, config = _twin_app(), {"configurable": {"thread_id": thread}, "max_concurrency": 1}
        first = list(app.stream({"log": []}, config, stream_mode=modes))
        return first + list(app.stream(Command(resume="yes"), config, stream_mode=modes))

    async def async_chunks(thread):
        app, config = _twin_app(), {"configurable": {"thread_id": thread}, "max_concurrency": 1}
        first = [c async for c in app.astream({"log": []}, config, stream_mode=modes)]
        again = app.astream(Command(resume="yes"), config, stream_mode=modes)
        return first + [c async for c in again]

    chunks = sync_chunks("t")
    assert ("custom", {"a": "working"}) in chunks
    assert ("updates", {"double": 0}) in chunks
    assert any(mode == "updates" and "__interrupt__" in chunk for mode, chunk in chunks)
    assert chunks[-1] == ("values", {"log": ["a0", "c", "yes"]})
    assert asyncio.run(async_chunks("t")) == chunks  # (a new saver each: the same ids)
