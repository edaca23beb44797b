"""A run inside a node has one owner (`engine.core.nesting`): whether a run is nested is asked
once, as it starts, and a plain run calls none of the nested runs' code."""

from __future__ import annotations

from typing import TypedDict

import pytest

from nbgraph import START, StateGraph
from nbgraph.engine import app as engine_app
from nbgraph.engine.core import loop, nesting


class S(TypedDict):
    n: int


def two_nodes() -> object:
    graph = StateGraph(S).add_node("a", lambda s: {"n": s["n"] + 1})
    return (
        graph.add_node("b", lambda s: {"n": s["n"] * 10})
        .add_edge(START, "a")
        .add_edge("a", "b")
        .compile()
    )


def test_a_plain_invoke_asks_once_and_calls_no_nested_code(monkeypatch):
    asked = []
    real = nesting.caller_now

    def counted(*args, **kwargs):
        asked.append(1)
        return real(*args, **kwargs)

    def forbidden(*args, **kwargs):
        raise AssertionError("a plain run called the nested runs' code")

    monkeypatch.setattr(engine_app, "caller_now", counted)
    monkeypatch.setattr(loop, "caller_now", counted)
    for name in ("keep_subrun", "pass_pause_up", "inherited_thread", "inherit_relay"):
        monkeypatch.setattr(engine_app, name, forbidden)
    app = two_nodes()
    assert app.invoke({"n": 1}) == {"n": 20}
    assert asked == [1]


def test_a_run_inside_a_node_knows_its_caller():
    inner = two_nodes()
    seen = []

    def outer_node(state: S) -> dict:
        out = inner.invoke({"n": state["n"]})
        seen.append(inner.last_log)
        return {"n": out["n"]}

    outer = StateGraph(S).add_node("o", outer_node).add_edge(START, "o").compile()
    assert outer.invoke({"n": 2}) == {"n": 30}
    task = outer.last_log.steps[-1].tasks[0]
    assert task.node == "o" and task.subruns == seen  # (its log kept on the calling task)


@pytest.mark.parametrize("nested", [False, True])
def test_caller_now_is_none_outside_a_node(nested):
    if not nested:
        assert nesting.caller_now() is None
        return
    callers = []
    graph = StateGraph(S).add_node("x", lambda s: callers.append(nesting.caller_now()) or {})
    graph.add_edge(START, "x").compile().invoke({"n": 0})
    assert callers[0] is not None and callers[0].task.node == "x"
