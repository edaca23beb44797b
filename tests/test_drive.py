"""Driving runs: stream modes, typed debug events, and async execution."""

import asyncio
import operator
from typing import Annotated, TypedDict

import pytest

from nbgraph import END, START, StateGraph
from nbgraph.engine.drive import StepFinished, TaskFinished, TaskStarted


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
    with pytest.raises(ValueError, match="custom"):
        list(fan_app().stream({"log": []}, stream_mode="custom"))


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
