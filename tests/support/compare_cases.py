"""Pairs of runs for `Run.compare`: alike, parting at one step, of other lengths, failing,
forked with `update_state`, with messages, resets, parallel tasks and branch lineages.

`compare_cases()` builds them fresh: {name: (this, other)}; compare each both ways.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

from nbgraph import END, START, MemorySaver, Send, StateGraph, add_messages

__all__ = ["compare_cases"]


class Loop(TypedDict, total=False):
    n: int
    log: Annotated[list, operator.add]
    note: str


class AppendLoop(TypedDict, total=False):
    n: int
    log: Annotated[list, "append"]
    note: str


def _loop(steps: int, part_at: int = -1, fail_at: int = -1, saver: Any = None, state=Loop):
    def tick(state: dict) -> dict:
        n = state["n"]
        if n == fail_at:
            raise ValueError("stop")
        out: dict[str, Any] = {"n": n + 1, "log": [-1 if n == part_at else n % 3]}
        if n == part_at or n % 5 == 0:
            out["note"] = f"at {n}"
        return out

    return (
        StateGraph(state)
        .add_node("tick", tick)
        .add_edge(START, "tick")
        .add_conditional_edges("tick", lambda s: END if s["n"] >= steps else "tick")
        .compile(checkpointer=saver)
    )


def _loop_run(steps: int, **kwargs: Any):
    config = {"recursion_limit": steps + 9}
    return _loop(steps, **kwargs).run({"n": 0, "log": [], "note": ""}, config)


def _flat(steps: int, part_at: int = -1):
    class Flat(TypedDict):
        count: int

    app = (
        StateGraph(Flat)
        .add_node("tick", lambda s: {"count": s["count"] + (7 if s["count"] == part_at else 1)})
        .add_edge(START, "tick")
        .add_conditional_edges("tick", lambda s: END if s["count"] >= steps else "tick")
        .compile()
    )
    return app.run({"count": 0}, {"recursion_limit": steps + 9})


NAN = float("nan")


def _overwrites(steps: int, part_at: int = -1, extra_at: int = -1, nan: Any = NAN):
    """A dict state of fields without reducers: at `part_at` a tag of its own, at
    `extra_at` a field the other run never has; `nan` written every step."""

    def tick(state: dict) -> dict:
        n = state["n"]
        out = {"n": n + 1, "tag": "odd one" if n == part_at else "even", "pair": [n, n % 2]}
        if n == extra_at:
            out["extra"] = (n,)
        return {**out, "x": nan("nan") if callable(nan) else nan}

    app = (
        StateGraph(dict)
        .add_node("tick", tick)
        .add_edge(START, "tick")
        .add_conditional_edges("tick", lambda s: END if s["n"] >= steps else "tick")
        .compile()
    )
    return app.run({"n": 0}, {"recursion_limit": steps + 9})


class Chat(TypedDict, total=False):
    n: int
    chat: Annotated[list, "append"]


def _appended_messages(side: str):
    """Messages appended a step at a time: at step 3 one side's carries other metadata (what
    it says and its id are the same), from step 5 on their ids differ."""
    from langchain_core.messages import HumanMessage

    def tick(state: dict) -> dict:
        n = state["n"]
        meta = {"side": side} if n == 2 and side == "b" else {}
        ids = f"{side}{n}" if n >= 4 else f"m{n}"
        return {"n": n + 1, "chat": [HumanMessage(f"m{n}", id=ids, response_metadata=meta)]}

    app = (
        StateGraph(Chat)
        .add_node("tick", tick)
        .add_edge(START, "tick")
        .add_conditional_edges("tick", lambda s: END if s["n"] >= 8 else "tick")
        .compile()
    )
    return app.run({"n": 0, "chat": []})


def _chat(reply: str = "hello", semantics: str = "supersteps"):
    graph = StateGraph(dict, reducers={"chat": add_messages})
    graph.add_node("ask", lambda s: {"chat": [("user", "hi")]})
    graph.add_node("answer", lambda s: {"chat": [("ai", reply)], "turns": 1})
    graph.add_edge(START, "ask").add_edge("ask", "answer")
    return graph.compile(semantics=semantics).run({"chat": []})


def _fan(width: int, semantics: str = "supersteps", odd: int = -1):
    graph = StateGraph(dict, reducers={"log": "append"})
    graph.add_node("plan", lambda s: {"plan": width})
    graph.add_node("work", lambda s: {"log": [s["i"] * (2 if s["i"] == odd else 1)]})
    graph.add_node("done", lambda s: {"total": sum(s["log"])})
    graph.add_edge(START, "plan")
    graph.add_conditional_edges("plan", lambda s: [Send("work", {"i": i}) for i in range(width)])
    graph.add_edge("work", "done")
    return graph.compile(semantics=semantics).run({"log": []})


def _forks() -> dict[str, tuple[Any, Any]]:
    thread = {"configurable": {"thread_id": "t"}, "recursion_limit": 40}
    run = _loop(12, saver=MemorySaver()).run({"n": 0, "log": [], "note": ""}, thread)
    first = run.fork(4, {"note": "edited", "log": ["x"]})
    again = first.branch.fork(7, {"n": 3}, as_node="tick")
    return {
        "fork: branch vs original": (first.branch, first.original),
        "fork: the fork's run vs the original": (first.run, first.original),
        "fork of a fork vs the first fork": (again.branch, first.branch),
        "fork of a fork vs the original": (again.branch, first.original),
    }


def _resumed() -> tuple[Any, Any]:
    """A thread's second input (a step that resets the values) against a first run."""
    app = _loop(6, saver=MemorySaver())
    thread = {"configurable": {"thread_id": "r"}, "recursion_limit": 40}
    app.run({"n": 0, "log": [], "note": ""}, thread)
    second = app.run({"n": 2, "log": ["again"]}, thread)
    return second, _loop_run(6)


def compare_cases() -> dict[str, tuple[Any, Any]]:
    """Each case: (this, other), built fresh."""
    return {
        "flat, alike": (_flat(60), _flat(60)),
        "flat, parting at step 30": (_flat(60), _flat(60, part_at=30)),
        "flat, other lengths": (_flat(60), _flat(41)),
        "loop, alike": (_loop_run(40), _loop_run(40)),
        "loop with append, alike": (
            _loop_run(40, state=AppendLoop),
            _loop_run(40, state=AppendLoop),
        ),
        "loop with append, parting": (
            _loop_run(40, state=AppendLoop),
            _loop_run(40, part_at=19, state=AppendLoop),
        ),
        "loop: operator.add vs append": (_loop_run(40), _loop_run(40, state=AppendLoop)),
        "loop, parting at step 20": (_loop_run(40), _loop_run(40, part_at=19)),
        "loop, other lengths": (_loop_run(40), _loop_run(25)),
        "loop, one fails": (_loop_run(40, fail_at=17), _loop_run(40)),
        "loop, both fail": (_loop_run(40, fail_at=17), _loop_run(40, fail_at=17, part_at=3)),
        "flat vs loop": (_flat(30), _loop_run(30)),
        "overwrites, alike": (_overwrites(30), _overwrites(30)),
        "overwrites, apart at one step": (_overwrites(30), _overwrites(30, part_at=12)),
        "overwrites, a field of one run": (_overwrites(30), _overwrites(30, extra_at=7)),
        "overwrites, a fresh nan each step": (_overwrites(9), _overwrites(9, nan=float)),
        **_forks(),
        "a thread's second input vs a first run": _resumed(),
        "messages: only ids": (_chat(), _chat()),
        "messages appended: metadata, then ids": (_appended_messages("a"), _appended_messages("b")),
        "messages: what they say": (_chat(), _chat("bye")),
        "fan-out, alike": (_fan(4), _fan(4)),
        "fan-out, one task differs": (_fan(4), _fan(4, odd=2)),
        "fan-out, other widths": (_fan(4), _fan(6)),
        "branch lineages": (_chat(), _chat(semantics="branches")),
        "branch lineages, fan-out": (_fan(3, "branches"), _fan(3)),
    }
