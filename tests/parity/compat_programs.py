"""The programs of the compat suite (tests/parity/test_langgraph_compat.py), which the record's
import proof (tests/record/test_langgraph_import.py) runs too.

`CASES`: each builds its graph from `api.*` names only and returns `(app, input, config)`;
`case_outcome` invokes and streams it. `CHECKPOINT_CASES`: each drives a checkpointed thread
on `api.saver()` (invokes, resumes, update_state, replays, forks) and returns what every
snapshot shows, except ids and timestamps.
"""

# No `from __future__ import annotations` here: the state classes below are defined inside
# functions and use `api.*` names in their annotations, which must be real objects at run time
# (both engines read them with `get_type_hints`, which cannot see a function's locals).

import asyncio
import dataclasses
import itertools
import operator
import time
from typing import Annotated, Any, TypedDict

import pydantic

from tests.support.harness import canonical_stream, differs, outcome, plain
from tests.support.records import APPLY, RECURSION_AT_END, SAVER_RECORD, UNKNOWN_KEYS

LIST_MODES = ["values", "updates"]


# ---------------------------------------------------------------------------------------------
# Running a case and putting its outcome in a comparable form


def invoke_outcome(case, api) -> tuple:
    """`("ok", final_state)` or `("raised", kind)` for one fresh invoke of the case."""

    def run() -> Any:
        app, graph_input, config = case(api)
        if getattr(case, "is_async", False):
            return asyncio.run(app.ainvoke(graph_input, config))
        return app.invoke(graph_input, config)

    return outcome(run, shape=plain)


def stream_outcome(case, api) -> dict:
    """How one fresh stream of the case ended (`"stream"`: `("ok", None)` or `("raised",
    kind)`) and the chunks it gave until then, canonicalised (`"chunks"`)."""
    stream_mode = getattr(case, "stream_mode", LIST_MODES)
    chunks: list = []

    async def collect(app, graph_input, config) -> None:
        async for chunk in app.astream(graph_input, config, stream_mode=stream_mode):
            chunks.append(chunk)

    def run() -> None:
        app, graph_input, config = case(api)
        if getattr(case, "is_async", False):
            asyncio.run(collect(app, graph_input, config))
        else:
            for chunk in app.stream(graph_input, config, stream_mode=stream_mode):
                chunks.append(chunk)

    ended = outcome(run)
    return {"stream": ended, "chunks": canonical_stream(chunks, stream_mode)}


def case_outcome(api, case) -> dict:
    """Everything the two engines must agree on for one case: `invoke`, `stream`, `chunks`."""
    return {"invoke": invoke_outcome(case, api), **stream_outcome(case, api)}


# ---------------------------------------------------------------------------------------------
# The cases. Each builds its graph from `api.*` names only and returns (app, input, config).

CASES: list = []


def compat_case(fn=None, *, is_async: bool = False, stream_mode: Any = None):
    """Register a case; `is_async` runs it with ainvoke/astream, `stream_mode` overrides modes."""

    def register(f):
        f.is_async = is_async
        if stream_mode is not None:
            f.stream_mode = stream_mode
        CASES.append(f)
        return f

    return register(fn) if fn is not None else register


def logger(name: str):
    """A node that appends its own name to `log`."""

    def node(state):
        return {"log": [name]}

    node.__name__ = name
    return node


class LogState(TypedDict):
    log: Annotated[list, operator.add]


@compat_case
def case_fanout_2_then_join(api):
    g = api.StateGraph(LogState)
    for name in "abcd":
        g.add_node(name, logger(name))
    g.add_edge(api.START, "a")
    g.add_edge("a", "b")
    g.add_edge("a", "c")
    g.add_edge("b", "d")
    g.add_edge("c", "d")
    g.add_edge("d", api.END)
    return g.compile(), {"log": []}, None


def fanout_5_graph(api):
    g = api.StateGraph(LogState)
    branches = ["e", "b", "d", "a2", "c"]  # added out of name order on purpose
    g.add_node("a", logger("a"))
    g.add_node("join", logger("join"))
    for name in branches:
        g.add_node(name, logger(name))
        g.add_edge("a", name)
        g.add_edge(name, "join")
    g.add_edge(api.START, "a")
    g.add_edge("join", api.END)
    return g.compile()


@compat_case
def case_fanout_5_then_join(api):
    return fanout_5_graph(api), {"log": ["start"]}, None


@compat_case(stream_mode="updates")
def case_fanout_5_stream_updates_only(api):
    return fanout_5_graph(api), {"log": []}, None


@compat_case(stream_mode="values")
def case_fanout_5_stream_values_only(api):
    return fanout_5_graph(api), {"log": []}, None


def uneven_branches(api, **join_kwargs):
    """a -> b, a -> c -> c2; b and c2 both lead to d (not wired here)."""
    g = api.StateGraph(LogState)
    for name in ["a", "b", "c", "c2"]:
        g.add_node(name, logger(name))
    g.add_node("d", logger("d"), **join_kwargs)
    g.add_edge(api.START, "a")
    g.add_edge("a", "b")
    g.add_edge("a", "c")
    g.add_edge("c", "c2")
    g.add_edge("d", api.END)
    return g


@compat_case
def case_uneven_branches_plain_edges_join_runs_twice(api):
    g = uneven_branches(api)
    g.add_edge("b", "d")
    g.add_edge("c2", "d")
    return g.compile(), {"log": []}, None


@compat_case
def case_uneven_branches_waiting_edge(api):
    g = uneven_branches(api)
    g.add_edge(["b", "c2"], "d")
    return g.compile(), {"log": []}, None


@compat_case
def case_waiting_edge_sources_same_step(api):
    g = api.StateGraph(LogState)
    for name in "abcd":
        g.add_node(name, logger(name))
    g.add_edge(api.START, "a")
    g.add_edge("a", "b")
    g.add_edge("a", "c")
    g.add_edge(["b", "c"], "d")
    g.add_edge("d", api.END)
    return g.compile(), {"log": []}, None


@compat_case
def case_defer_join_after_uneven_branches(api):
    g = uneven_branches(api, defer=True)
    g.add_edge("b", "d")
    g.add_edge("c2", "d")
    return g.compile(), {"log": []}, None


@differs(APPLY.at("status"))
@compat_case
def case_conflicting_writes_plain_field(api):
    class S(TypedDict):
        x: int

    g = api.StateGraph(S)
    g.add_node("a", lambda s: {"x": 1})
    g.add_node("b", lambda s: {"x": 2})
    g.add_edge(api.START, "a")
    g.add_edge(api.START, "b")
    return g.compile(), {"x": 0}, None


@compat_case
def case_parallel_append_order_by_node_name(api):
    class S(TypedDict):
        items: Annotated[list, operator.add]

    def heavy(state):
        total = sum(range(20_000))  # finishes later than the others, most of the time
        return {"items": [f"zeta:{total}"]}

    g = api.StateGraph(S)
    g.add_node("zeta", heavy)
    g.add_node("alpha", lambda s: {"items": ["alpha"]})
    g.add_node("mid", lambda s: {"items": ["mid-1", "mid-2"]})
    for name in ["zeta", "alpha", "mid"]:
        g.add_edge(api.START, name)
    return g.compile(), {"items": ["input"]}, None


@compat_case
def case_int_add_reducer_input_goes_through_reducer(api):
    class S(TypedDict):
        total: Annotated[int, operator.add]
        seen: Annotated[list, operator.add]

    g = api.StateGraph(S)
    g.add_node("one", lambda s: {"total": 1, "seen": [s["total"]]})
    g.add_node("ten", lambda s: {"total": 10, "seen": [s["total"]]})
    g.add_edge(api.START, "one")
    g.add_edge("one", "ten")
    return g.compile(), {"total": 2}, None


@compat_case
def case_custom_two_argument_reducer_lambda(api):
    class S(TypedDict):
        last3: Annotated[list, lambda old, new: (old + new)[-3:]]
        text: Annotated[str, lambda old, new: f"{old}|{new}"]

    g = api.StateGraph(S)
    g.add_node("a", lambda s: {"last3": [1, 2], "text": "a"})
    g.add_node("b", lambda s: {"last3": [3, 4], "text": "b"})
    g.add_edge(api.START, "a")
    g.add_edge("a", "b")
    return g.compile(), {"last3": [0], "text": "in"}, None


class RouteState(TypedDict):
    n: int
    log: Annotated[list, operator.add]


def routing_graph(api, router, path_map=None, targets=("b", "c")):
    g = api.StateGraph(RouteState)
    g.add_node("a", logger("a"))
    for name in targets:
        g.add_node(name, logger(name))
    g.add_edge(api.START, "a")
    if path_map is None:
        g.add_conditional_edges("a", router)
    else:
        g.add_conditional_edges("a", router, path_map)
    return g.compile()


@compat_case
def case_conditional_returns_name(api):
    app = routing_graph(api, lambda s: "b" if s["n"] > 5 else "c")
    return app, {"n": 7, "log": []}, None


@compat_case
def case_conditional_returns_end(api):
    app = routing_graph(api, lambda s: api.END if s["n"] > 5 else "c")
    return app, {"n": 9, "log": []}, None


@compat_case
def case_conditional_returns_list(api):
    app = routing_graph(api, lambda s: ["c", "b"])
    return app, {"n": 0, "log": []}, None


@compat_case
def case_conditional_path_map_dict(api):
    path_map = {"big": "b", "small": "c", "done": api.END}
    app = routing_graph(api, lambda s: "big" if s["n"] > 5 else "small", path_map)
    return app, {"n": 6, "log": []}, None


@compat_case
def case_conditional_path_map_list(api):
    app = routing_graph(api, lambda s: "c", ["b", "c"])
    return app, {"n": 0, "log": []}, None


@compat_case
def case_router_sees_only_own_nodes_writes(api):
    class S(TypedDict):
        x: str
        y: str
        log: Annotated[list, operator.add]

    seen: list = []

    def router(state):
        seen.append((state.get("x"), state.get("y"), list(state["log"])))
        return "record"

    g = api.StateGraph(S)
    g.add_node("a", lambda s: {"x": "from-a", "log": ["a"]})
    g.add_node("b", lambda s: {"y": "from-b", "log": ["b"]})
    g.add_node("record", lambda s: {"log": [f"router saw {seen}"]})
    g.add_edge(api.START, "a")
    g.add_edge(api.START, "b")
    g.add_conditional_edges("a", router)
    return g.compile(), {"x": "input-x", "log": ["input"]}, None


@compat_case
def case_conditional_edge_from_start(api):
    g = api.StateGraph(RouteState)
    g.add_node("b", logger("b"))
    g.add_node("c", logger("c"))
    g.add_conditional_edges(api.START, lambda s: "c" if s["n"] < 0 else "b")
    return g.compile(), {"n": -1, "log": []}, None


class MapState(TypedDict):
    items: list
    results: Annotated[list, operator.add]


class ItemState(TypedDict):
    item: int


@compat_case
def case_send_map_reduce_in_send_order(api):
    def fan(state):
        return [api.Send("work", {"item": i}) for i in state["items"]]

    g = api.StateGraph(MapState)
    g.add_node("split", lambda s: None)
    g.add_node("work", lambda s: {"results": [s["item"] * 10]})
    g.add_node("reduce", lambda s: {"results": [sum(s["results"])]})
    g.add_edge(api.START, "split")
    g.add_conditional_edges("split", fan)
    g.add_edge("work", "reduce")
    return g.compile(), {"items": [3, 1, 2, 5, 4], "results": []}, None


@compat_case
def case_sends_mixed_with_names(api):
    def fan(state):
        return [api.Send("work", {"item": 2}), "direct", api.Send("work", {"item": 1})]

    g = api.StateGraph(MapState)
    g.add_node("split", lambda s: {"results": ["split"]})
    g.add_node("work", lambda s: {"results": [f"work{s['item']}"]})
    g.add_node("direct", lambda s: {"results": ["direct"]})
    g.add_edge(api.START, "split")
    g.add_conditional_edges("split", fan)
    return g.compile(), {"items": [], "results": []}, None


@compat_case
def case_command_update_goto_plus_static_edge(api):
    def a(state):
        return api.Command(update={"log": ["a"], "n": 1}, goto="c")

    g = api.StateGraph(RouteState)
    g.add_node("a", a)
    g.add_node("b", logger("b"))
    g.add_node("c", logger("c"))
    g.add_edge(api.START, "a")
    g.add_edge("a", "b")
    return g.compile(), {"n": 0, "log": []}, None


@compat_case
def case_command_goto_list_with_send(api):
    class S(TypedDict):
        log: Annotated[list, operator.add]
        item: int

    def a(state):
        return api.Command(
            update={"log": ["a"]},
            goto=[
                api.Send("w", {"log": [], "item": 7}),
                "b",
                api.Send("w", {"log": [], "item": 8}),
            ],
        )

    g = api.StateGraph(S)
    g.add_node("a", a)
    g.add_node("b", logger("b"))
    g.add_node("w", lambda s: {"log": [f"w{s['item']}"]})
    g.add_edge(api.START, "a")
    return g.compile(), {"log": [], "item": 0}, None


@compat_case
def case_node_returns_list_of_commands(api):
    def a(state):
        return [
            api.Command(update={"log": ["a-first"]}),
            api.Command(update={"log": ["a-second"], "n": 5}, goto="c"),
            api.Command(goto="b"),
        ]

    g = api.StateGraph(RouteState)
    g.add_node("a", a)
    g.add_node("b", logger("b"))
    g.add_node("c", logger("c"))
    g.add_edge(api.START, "a")
    return g.compile(), {"n": 0, "log": []}, None


@compat_case
def case_node_returns_none(api):
    g = api.StateGraph(RouteState)
    g.add_node("a", lambda s: None)
    g.add_node("b", logger("b"))
    g.add_edge(api.START, "a")
    g.add_edge("a", "b")
    return g.compile(), {"n": 3, "log": []}, None


@compat_case
def case_node_returns_non_dict(api):
    g = api.StateGraph(RouteState)
    g.add_node("a", logger("a"))
    g.add_node("bad", lambda s: 42)
    g.add_edge(api.START, "a")
    g.add_edge("a", "bad")
    return g.compile(), {"n": 3, "log": []}, None


@differs(UNKNOWN_KEYS.at("effects"))
@compat_case
def case_node_returns_unknown_keys(api):
    g = api.StateGraph(RouteState)
    g.add_node("a", lambda s: {"n": 4, "nonsense": 1, "log": ["a"]})
    g.add_node("b", logger("b"))
    g.add_edge(api.START, "a")
    g.add_edge("a", "b")
    return g.compile(), {"n": 3, "log": []}, None


@compat_case
def case_node_raises_key_error(api):
    g = api.StateGraph(RouteState)
    g.add_node("a", logger("a"))
    g.add_node("boom", lambda s: {"n": s["no such key"]})
    g.add_edge(api.START, "a")
    g.add_edge("a", "boom")
    return g.compile(), {"n": 3, "log": []}, None


@compat_case
def case_node_raises_value_error(api):
    def boom(state):
        raise ValueError("bad value in node")

    g = api.StateGraph(RouteState)
    g.add_node("a", logger("a"))
    g.add_node("boom", boom)
    g.add_edge(api.START, "a")
    g.add_edge("a", "boom")
    return g.compile(), {"n": 3, "log": []}, None


LOOP_RUNS = 4  # the self-loop below runs its node this many times (4 supersteps)


def counting_loop(api, recursion_limit):
    class S(TypedDict):
        count: int
        log: Annotated[list, operator.add]

    g = api.StateGraph(S)
    g.add_node("inc", lambda s: {"count": s["count"] + 1, "log": [s["count"]]})
    g.add_edge(api.START, "inc")
    g.add_conditional_edges("inc", lambda s: api.END if s["count"] >= LOOP_RUNS else "inc")
    return g.compile(), {"count": 0, "log": []}, {"recursion_limit": recursion_limit}


@differs(APPLY.at("status"))
@compat_case
def case_self_loop_recursion_limit_n_minus_1(api):
    return counting_loop(api, LOOP_RUNS - 1)


@differs(RECURSION_AT_END.at("status"))
@compat_case
def case_self_loop_recursion_limit_n(api):
    return counting_loop(api, LOOP_RUNS)


@compat_case
def case_self_loop_recursion_limit_n_plus_1(api):
    return counting_loop(api, LOOP_RUNS + 1)


@compat_case
def case_self_loop_recursion_limit_n_plus_2(api):
    return counting_loop(api, LOOP_RUNS + 2)


@compat_case
def case_remaining_steps_stops_loop(api):
    class S(TypedDict):
        seen: Annotated[list, operator.add]
        remaining_steps: api.RemainingSteps

    g = api.StateGraph(S)
    g.add_node("loop", lambda s: {"seen": [s["remaining_steps"]]})
    g.add_edge(api.START, "loop")
    g.add_conditional_edges("loop", lambda s: api.END if s["remaining_steps"] <= 4 else "loop")
    return g.compile(), {"seen": []}, {"recursion_limit": 10}


@compat_case
def case_invoke_none_is_empty_input(api):
    g = api.StateGraph(RouteState)
    g.add_node("a", logger("a"))
    g.add_edge(api.START, "a")
    return g.compile(), None, None


@compat_case
def case_invoke_empty_dict(api):
    g = api.StateGraph(RouteState)
    g.add_node("a", logger("a"))
    g.add_edge(api.START, "a")
    return g.compile(), {}, None


@compat_case
def case_pydantic_state_attribute_access(api):
    class S(pydantic.BaseModel):
        n: int
        label: str = "none"
        log: Annotated[list, operator.add] = []

    g = api.StateGraph(S)
    g.add_node("a", lambda s: {"n": s.n * 2, "log": [f"a saw {s.n} {s.label}"]})
    g.add_node("b", lambda s: {"label": f"n={s.n}", "log": [f"b saw {len(s.log)}"]})
    g.add_edge(api.START, "a")
    g.add_edge("a", "b")
    return g.compile(), {"n": 3}, None


@compat_case
def case_pydantic_node_returns_model(api):
    class S(pydantic.BaseModel):
        n: int
        label: str = "none"

    g = api.StateGraph(S)
    g.add_node("a", lambda s: S(n=s.n + 1))
    g.add_node("b", lambda s: {"label": f"n={s.n}"})
    g.add_edge(api.START, "a")
    g.add_edge("a", "b")
    return g.compile(), {"n": 1, "label": "input"}, None


@compat_case
def case_pydantic_invalid_input(api):
    class S(pydantic.BaseModel):
        n: int

    g = api.StateGraph(S)
    g.add_node("a", lambda s: {"n": s.n + 1})
    g.add_edge(api.START, "a")
    return g.compile(), {"n": "not a number"}, None


@compat_case
def case_dataclass_state(api):
    @dataclasses.dataclass
    class S:
        n: int
        name: str = "anon"
        log: Annotated[list, operator.add] = dataclasses.field(default_factory=list)

    g = api.StateGraph(S)
    g.add_node("a", lambda s: {"n": s.n + 1, "log": [f"a:{s.name}"]})
    g.add_node("b", lambda s: {"name": s.name.upper(), "log": [f"b:{s.n}"]})
    g.add_edge(api.START, "a")
    g.add_edge("a", "b")
    return g.compile(), {"n": 1, "name": "x"}, None


@compat_case
def case_input_and_output_schemas(api):
    class In(TypedDict):
        question: str

    class Out(TypedDict):
        answer: str

    class Full(TypedDict):
        question: str
        answer: str
        notes: str

    g = api.StateGraph(Full, input_schema=In, output_schema=Out)
    g.add_node(
        "think", lambda s: {"notes": f"thinking about {s['question']} {s.get('notes', '-')}"}
    )
    g.add_node("reply", lambda s: {"answer": f"{s['question']}? {s['notes']}"})
    g.add_edge(api.START, "think")
    g.add_edge("think", "reply")
    return g.compile(), {"question": "why", "notes": "from input", "answer": "early"}, None


@compat_case
def case_private_field_in_node_annotation(api):
    class S(TypedDict):
        n: int

    class Private(TypedDict):
        secret: str

    def writer(state: S) -> Private:
        return {"secret": f"s{state['n']}"}

    def reader(state: Private) -> S:
        return {"n": len(state["secret"])}

    g = api.StateGraph(S)
    g.add_node("writer", writer)
    g.add_node("reader", reader)
    g.add_edge(api.START, "writer")
    g.add_edge("writer", "reader")
    return g.compile(), {"n": 12345}, None


@compat_case
def case_overwrite_append_field(api):
    g = api.StateGraph(LogState)
    g.add_node("a", logger("a"))
    g.add_node("reset", lambda s: {"log": api.Overwrite(["reset", len(s["log"])])})
    g.add_node("c", logger("c"))
    g.add_edge(api.START, "a")
    g.add_edge("a", "reset")
    g.add_edge("reset", "c")
    return g.compile(), {"log": ["in1", "in2"]}, None


@differs(APPLY.at("status"))
@compat_case
def case_two_overwrites_one_step(api):
    g = api.StateGraph(LogState)
    g.add_node("a", lambda s: {"log": api.Overwrite(["a"])})
    g.add_node("b", lambda s: {"log": api.Overwrite(["b"])})
    g.add_edge(api.START, "a")
    g.add_edge(api.START, "b")
    return g.compile(), {"log": []}, None


@compat_case
def case_ephemeral_field_cleared_after_step(api):
    class S(TypedDict):
        flash: Annotated[str, api.EphemeralValue]
        log: Annotated[list, operator.add]

    g = api.StateGraph(S)
    g.add_node("a", lambda s: {"flash": "hello", "log": [f"a saw {s.get('flash')}"]})
    g.add_node("b", lambda s: {"log": [f"b saw {s.get('flash')}"]})
    g.add_node("c", lambda s: {"log": [f"c saw {s.get('flash')}"]})
    g.add_edge(api.START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", "c")
    return g.compile(), {"flash": "input", "log": []}, None


@compat_case
def case_add_sequence_names_from_functions(api):
    def first(state):
        return {"log": ["first"]}

    def second(state):
        return {"log": ["second"]}

    def third(state):
        return {"log": [f"third after {len(state['log'])}"]}

    g = api.StateGraph(LogState)
    g.add_sequence([first, second, third])
    g.add_edge(api.START, "first")
    g.add_edge("third", api.END)
    return g.compile(), {"log": []}, None


@compat_case
def case_chained_builder_calls(api):
    app = (
        api.StateGraph(LogState)
        .add_node("a", logger("a"))
        .add_node("b", logger("b"))
        .add_edge(api.START, "a")
        .add_edge("a", "b")
        .add_edge("b", api.END)
        .compile()
    )
    return app, {"log": []}, None


@compat_case
def case_add_node_without_name(api):
    def fetch(state):
        return {"log": ["fetch"]}

    def parse(state):
        return {"log": ["parse"]}

    g = api.StateGraph(LogState)
    g.add_node(fetch)
    g.add_node(parse)
    g.add_edge(api.START, "fetch")
    g.add_edge("fetch", "parse")
    return g.compile(), {"log": []}, None


@compat_case
def case_compile_error_edge_to_unknown_node(api):
    g = api.StateGraph(LogState)
    g.add_node("a", logger("a"))
    g.add_edge(api.START, "a")
    g.add_edge("a", "nowhere")
    return g.compile(), {"log": []}, None


@compat_case
def case_max_concurrency_four_way_fanout(api):
    g = api.StateGraph(LogState)
    g.add_node("a", logger("a"))
    g.add_node("join", logger("join"))
    for name in ["w4", "w2", "w3", "w1"]:
        g.add_node(name, logger(name))
        g.add_edge("a", name)
        g.add_edge(name, "join")
    g.add_edge(api.START, "a")
    return g.compile(), {"log": []}, {"max_concurrency": 2}


@compat_case(is_async=True)
def case_async_nodes_ainvoke(api):
    async def a(state):
        await asyncio.sleep(0)
        return {"log": ["a"]}

    async def b(state):
        return {"log": [f"b after {state['log']}"]}

    async def c(state):
        return {"log": ["c"]}

    def router(state):
        return ["b", "c"]

    g = api.StateGraph(LogState)
    g.add_node("a", a)
    g.add_node("b", b)
    g.add_node("c", c)
    g.add_edge(api.START, "a")
    g.add_conditional_edges("a", router)
    return g.compile(), {"log": ["in"]}, None


# ---------------------------------------------------------------------------------------------
# Checkpoint cases: a program drives a checkpointed thread (invokes, resumes, update_state,
# replays, forks) and what every snapshot shows is compared, except ids and timestamps.

CHECKPOINT_CASES: list = []


def checkpoint_case(fn):
    """Register a checkpoint program: `fn(api)` returns the observations to compare."""
    CHECKPOINT_CASES.append(fn)
    return fn


def thread(name: str = "t") -> dict:
    return {"configurable": {"thread_id": name}}


def shown_task(task: Any) -> tuple:
    error = task.error if task.error is None or isinstance(task.error, str) else repr(task.error)
    return (
        task.name,
        task.path[0] if task.path else None,
        error,
        plain(tuple(task.interrupts)),
        task.state,
        plain(task.result),
    )


def shown_snapshot(snapshot: Any, position: dict[str, int]) -> dict:
    """Everything a snapshot shows but ids and times; its parent by position in `position`."""
    parent = snapshot.parent_config
    parent_id = parent["configurable"]["checkpoint_id"] if parent else None
    return {
        "values": plain(snapshot.values),
        "next": tuple(snapshot.next),
        "source": snapshot.metadata.get("source"),
        "step": snapshot.metadata.get("step"),
        "parent": position.get(parent_id, "outside") if parent_id else None,
        "tasks": [shown_task(t) for t in snapshot.tasks],
        "interrupts": plain(tuple(snapshot.interrupts)),
    }


def history_view(app: Any, config: dict) -> list:
    """The thread's history, newest first, shown; and whether created_at never increases."""
    history = list(app.get_state_history(config))
    position = {h.config["configurable"]["checkpoint_id"]: i for i, h in enumerate(history)}
    times = [h.created_at for h in history]
    ordered = all(a >= b for a, b in itertools.pairwise(times))
    return [shown_snapshot(h, position) for h in history] + [("created_at newest first", ordered)]


def state_view(app: Any, config: dict) -> dict:
    """`get_state(config)` shown (its parent by step, since there is no history list here)."""
    snapshot = app.get_state(config)
    shown = shown_snapshot(snapshot, {})
    shown["parent"] = None if snapshot.parent_config is None else "some"
    return shown


def shown(result: Any) -> Any:
    """A call's result as compared: a config by what it is (its ids are each library's own)."""
    if isinstance(result, dict) and "configurable" in result:
        return "a config"
    return plain(result)


def attempt(fn: Any) -> tuple:
    """`outcome(fn)`: `("ok", result shown)` or `("raised", error kind)`."""
    return outcome(fn, shape=shown)


def at_step(app: Any, config: dict, step: int, nth: int = 0) -> dict:
    """The config of the `nth` newest checkpoint at `step` in the thread's history."""
    found = [h for h in app.get_state_history(config) if h.metadata.get("step") == step]
    return found[nth].config


def line_graph(api: Any, names=("a", "b"), **compile_kw) -> Any:
    graph = api.StateGraph(LogState)
    previous = api.START
    for name in names:
        graph.add_node(name, logger(name))
        graph.add_edge(previous, name)
        previous = name
    graph.add_edge(previous, api.END)
    return graph.compile(checkpointer=api.saver(), **compile_kw)


def fan_graph(api: Any, fail: dict | None = None, **compile_kw) -> Any:
    """START -> (one, two) -> q through the waiting edge [one, two] -> q."""

    def node(name):
        def run(state):
            if fail and fail.get(name):
                raise RuntimeError(f"{name} is down")
            return {"log": [name]}

        return run

    graph = api.StateGraph(LogState)
    for name in ("one", "two", "q"):
        graph.add_node(name, node(name))
    graph.add_edge(api.START, "one")
    graph.add_edge(api.START, "two")
    graph.add_edge(["one", "two"], "q")
    graph.add_edge("q", api.END)
    return graph.compile(checkpointer=api.saver(), **compile_kw)


@checkpoint_case
def ckpt_line_one_invoke(api):
    app = line_graph(api)
    return [attempt(lambda: app.invoke({"log": ["x"]}, thread())), history_view(app, thread())]


@checkpoint_case
def ckpt_line_three_invokes_steps_continue(api):
    app = line_graph(api)
    out = [attempt(lambda n=n: app.invoke({"log": [n]}, thread())) for n in ("x", "y", "z")]
    return [*out, history_view(app, thread()), state_view(app, thread())]


@checkpoint_case
def ckpt_fan_out_and_join(api):
    app = fan_graph(api)
    return [attempt(lambda: app.invoke({"log": []}, thread())), history_view(app, thread())]


@checkpoint_case
def ckpt_conditional_loop(api):
    class S(TypedDict):
        log: Annotated[list, operator.add]
        n: int

    graph = api.StateGraph(S)
    graph.add_node("tick", lambda s: {"n": s["n"] + 1, "log": [s["n"]]})
    graph.add_edge(api.START, "tick")
    graph.add_conditional_edges("tick", lambda s: api.END if s["n"] >= 3 else "tick")
    app = graph.compile(checkpointer=api.saver())
    return [attempt(lambda: app.invoke({"n": 0}, thread())), history_view(app, thread())]


@checkpoint_case
def ckpt_update_latest_as_node(api):
    app = line_graph(api)
    app.invoke({"log": ["x"]}, thread())
    made = attempt(lambda: app.update_state(thread(), {"log": ["u"]}, as_node="a"))
    return [made, state_view(app, thread()), attempt(lambda: app.invoke(None, thread())),
            history_view(app, thread())]  # fmt: skip


@checkpoint_case
def ckpt_update_latest_without_as_node(api):
    app = line_graph(api)
    app.invoke({"log": ["x"]}, thread())
    made = attempt(lambda: app.update_state(thread(), {"log": ["u"]}))
    return [made, history_view(app, thread())]


@checkpoint_case
def ckpt_update_past_without_as_node_then_continue_the_fork(api):
    app = line_graph(api, names=("a", "b", "c"))
    app.invoke({"log": ["x"]}, thread())
    fork = app.update_state(at_step(app, thread(), 1), {"log": ["u"]})
    return [state_view(app, fork), attempt(lambda: app.invoke(None, fork)),
            history_view(app, thread())]  # fmt: skip


@checkpoint_case
def ckpt_update_the_input_checkpoint_without_as_node(api):
    app = line_graph(api)
    app.invoke({"log": ["x"]}, thread())
    fork = app.update_state(at_step(app, thread(), -1), {"log": ["u"]})
    return [state_view(app, fork), attempt(lambda: app.invoke(None, fork)),
            history_view(app, thread())]  # fmt: skip


@checkpoint_case
def ckpt_update_after_a_parallel_step_needs_as_node(api):
    app = fan_graph(api)
    app.invoke({"log": []}, thread())
    past = at_step(app, thread(), 1)
    return [attempt(lambda: app.update_state(past, {"log": ["u"]})),
            attempt(lambda: app.update_state(past, {"log": ["u"]}, as_node="two")),
            history_view(app, thread())]  # fmt: skip


@checkpoint_case
def ckpt_replay_from_a_past_checkpoint(api):
    app = line_graph(api, names=("a", "b", "c"))
    app.invoke({"log": ["x"]}, thread())
    past = at_step(app, thread(), 1)
    return [attempt(lambda: app.invoke(None, past)), history_view(app, thread())]


@checkpoint_case
def ckpt_replay_from_the_input_checkpoint(api):
    app = line_graph(api)
    app.invoke({"log": ["x"]}, thread())
    app.invoke({"log": ["y"]}, thread())
    second_input = at_step(app, thread(), 3)
    return [attempt(lambda: app.invoke(None, second_input)), state_view(app, thread())]


@checkpoint_case
def ckpt_sibling_failure_pending_writes_and_resume(api):
    fail = {"two": True}
    app = fan_graph(api, fail)
    failed = attempt(lambda: app.invoke({"log": []}, thread()))
    # LangGraph saves a failed task's error from the future's done-callback, which runs in
    # the worker thread after invoke has already raised in the caller: on a loaded machine
    # get_state can come first and show no error. Wait (at most 5 s) for the error to land.
    deadline = time.monotonic() + 5
    while not any(t.error for t in app.get_state(thread()).tasks) and time.monotonic() < deadline:
        time.sleep(0.01)
    paused = state_view(app, thread())
    fail.clear()
    return [failed, paused, attempt(lambda: app.invoke(None, thread())),
            history_view(app, thread())]  # fmt: skip


@differs(SAVER_RECORD.at("steps", "tree", "status", "compare"))
@checkpoint_case
def ckpt_lone_failure_shows_its_error(api):
    def broken(state):
        raise ValueError("bad input")

    graph = api.StateGraph(LogState)
    graph.add_node("a", logger("a"))
    graph.add_node("broken", broken)
    graph.add_edge(api.START, "a")
    graph.add_edge("a", "broken")
    app = graph.compile(checkpointer=api.saver())
    return [attempt(lambda: app.invoke({"log": []}, thread())), state_view(app, thread()),
            history_view(app, thread())]  # fmt: skip


def asking_graph(api: Any, with_side: bool = False) -> Any:
    def ask(state):
        return {"log": [f"answer={api.interrupt('name?')}"]}

    graph = api.StateGraph(LogState)
    graph.add_node("ask", ask)
    graph.add_node("after", logger("after"))
    graph.add_edge(api.START, "ask")
    graph.add_edge("ask", "after")
    if with_side:
        graph.add_node("side", logger("side"))
        graph.add_edge(api.START, "side")
    return graph.compile(checkpointer=api.saver())


@checkpoint_case
def ckpt_interrupt_then_resume(api):
    app = asking_graph(api)
    app.invoke({"log": []}, thread())
    paused = state_view(app, thread())
    done = attempt(lambda: app.invoke(api.Command(resume="Ada"), thread()))
    return [paused, done, history_view(app, thread())]


@checkpoint_case
def ckpt_interrupt_with_a_finished_sibling(api):
    app = asking_graph(api, with_side=True)
    app.invoke({"log": []}, thread())
    paused = state_view(app, thread())
    done = attempt(lambda: app.invoke(api.Command(resume="Ada"), thread()))
    return [paused, done, history_view(app, thread())]


@checkpoint_case
def ckpt_interrupt_before_breakpoint(api):
    app = line_graph(api, names=("a", "b", "c"), interrupt_before=["b"])
    app.invoke({"log": []}, thread())
    paused = state_view(app, thread())
    return [paused, attempt(lambda: app.invoke(None, thread())), history_view(app, thread())]


@checkpoint_case
def ckpt_interrupt_after_breakpoint(api):
    app = line_graph(api, names=("a", "b", "c"), interrupt_after=["a"])
    app.invoke({"log": []}, thread())
    paused = state_view(app, thread())
    return [paused, attempt(lambda: app.invoke(None, thread())), history_view(app, thread())]


@checkpoint_case
def ckpt_update_a_join_source_before_the_join(api):
    app = fan_graph(api, interrupt_before=["q"])
    app.invoke({"log": []}, thread())
    made = attempt(lambda: app.update_state(thread(), {"log": ["u"]}, as_node="one"))
    return [made, state_view(app, thread()), attempt(lambda: app.invoke(None, thread())),
            history_view(app, thread())]  # fmt: skip


@checkpoint_case
def ckpt_update_before_a_breakpoint_skips_nothing(api):
    app = line_graph(api, names=("a", "b", "c"), interrupt_before=["b"])
    app.invoke({"log": []}, thread())
    app.update_state(thread(), {"log": ["u"]})
    return [state_view(app, thread()), attempt(lambda: app.invoke(None, thread())),
            history_view(app, thread())]  # fmt: skip


@checkpoint_case
def ckpt_command_goto_node(api):
    def route(state):
        return api.Command(update={"log": ["route"]}, goto="b")

    graph = api.StateGraph(LogState)
    graph.add_node("route", route)
    graph.add_node("b", logger("b"))
    graph.add_edge(api.START, "route")
    app = graph.compile(checkpointer=api.saver())
    return [attempt(lambda: app.invoke({"log": []}, thread())), history_view(app, thread())]


@checkpoint_case
def ckpt_two_threads_on_one_saver(api):
    app = line_graph(api)
    app.invoke({"log": ["x"]}, thread("one"))
    app.invoke({"log": ["y"]}, thread("two"))
    app.invoke({"log": ["z"]}, thread("one"))
    return [history_view(app, thread("one")), history_view(app, thread("two"))]


@checkpoint_case
def ckpt_fork_twice_from_one_checkpoint(api):
    app = line_graph(api, names=("a", "b", "c"))
    app.invoke({"log": ["x"]}, thread())
    past = at_step(app, thread(), 1)
    first = app.update_state(past, {"log": ["u1"]}, as_node="a")
    second = app.update_state(past, {"log": ["u2"]}, as_node="b")
    return [attempt(lambda: app.invoke(None, first)), attempt(lambda: app.invoke(None, second)),
            history_view(app, thread())]  # fmt: skip
