"""Differential tests: the edges where a subgraph's run meets its parent, on LangGraph and
nbgraph — a command handed to the parent, keys the parent lacks, a subgraph node that
raises, the recursion limit a subgraph inherits, one subgraph run several times.

Each program builds its graphs from `api.*` names only and returns what it observed (final
states, stream chunks, warnings, error kinds); both engines must agree. What only nbgraph
has (the record: `run.subruns`) is checked after, on the nbgraph run of the same program.
"""

# No `from __future__ import annotations`: the state classes are defined inside functions and
# both engines read their annotations at run time.

import asyncio
import operator
import warnings
from typing import Annotated, Any, TypedDict

import pytest

from tests.support.harness import (
    MODES,
    api_for,
    both,
    canonical_stream,
    differs,
    observe,
    outcome,
    plain,
)
from tests.support.records import APPLY, DROPPED, NBGRAPH_ONLY, PARENT, SAVER_RECORD

pytestmark = pytest.mark.langgraph


class Shared(TypedDict):
    n: int
    log: Annotated[list[str], operator.add]


# --- (a) a command handed to the parent --------------------------------------------------------


def handing_program(api, how: str = "node"):
    """A subgraph runs a node, then hands `Command.PARENT` to its parent (added as the node,
    or invoked by the node's function)."""

    def note(state: Shared):
        return {"log": ["noted"], "n": state["n"] + 1}

    def up(state: Shared):
        return api.Command(
            graph=api.Command.PARENT, goto="fix", update={"log": [f"up{state['n']}"]}
        )

    inner = api.StateGraph(Shared)
    inner.add_node(note)
    inner.add_node(up)
    inner.add_edge(api.START, "note")
    inner.add_edge("note", "up")
    sub = inner.compile()
    parent = api.StateGraph(Shared)
    if how == "node":
        parent.add_node("s", sub, destinations=("fix",))
    else:
        parent.add_node("s", lambda state: sub.invoke(state), destinations=("fix",))
    parent.add_node("fix", lambda state: {"log": [f"fix{state['n']}"]})
    parent.add_edge(api.START, "s")
    app = parent.compile()
    return observe(app, {"n": 0, "log": []}, warned=True), app


@differs(PARENT.at("run/1:0:s:status", "run/1:0:s:steps", "run/1:0:s:tree"))
@pytest.mark.parametrize("how", ["node", "function"])
def test_a_subrun_handed_to_the_parent_runs_as_on_langgraph_and_is_no_failure(how):
    (langgraph, _), (ours, app) = both(handing_program, how)
    assert ours == langgraph
    assert ours[0] == "ok" and ours[1]["final"] == {"n": 0, "log": ["up1", "fix0"]}
    run = app.last_run
    assert run.status == "done" and list(run.steps.status) == ["ok", "ok"]
    (sub,) = run.subruns
    assert (sub.status, sub.error, list(sub.steps.status)) == (
        "to_parent",
        None,
        ["ok", "to_parent"],
    )


def handing_history_program(api):
    def note(state: Shared):
        return {"log": ["noted"], "n": state["n"] + 1}

    def up(state: Shared):
        return api.Command(graph=api.Command.PARENT, goto="fix", update={"log": ["up"]})

    inner = api.StateGraph(Shared)
    inner.add_node(note)
    inner.add_node(up)
    inner.add_edge(api.START, "note")
    inner.add_edge("note", "up")
    parent = api.StateGraph(Shared)
    parent.add_node("s", inner.compile(), destinations=("fix",))
    parent.add_node("fix", lambda state: {"log": [f"fix{state['n']}"]})
    parent.add_edge(api.START, "s")
    app = parent.compile(checkpointer=api.MemorySaver())
    config = {"configurable": {"thread_id": "1"}}
    final = plain(app.invoke({"n": 0, "log": []}, config))
    history = [(h.next, plain(h.values), h.metadata["step"]) for h in app.get_state_history(config)]
    return {"final": final, "history": history}, app


def test_a_hand_over_under_a_checkpointed_parent_keeps_langgraphs_history():
    (langgraph, _), (ours, app) = both(handing_history_program)
    assert ours == langgraph
    assert [next_ for next_, _, _ in ours["history"]] == [(), ("fix",), ("s",), ("__start__",)]
    assert app.last_run.subruns[0].status == "to_parent"


# --- (b) keys the parent lacks -----------------------------------------------------------------


def extra_keys_program(api):
    """A subgraph whose state (and output) has keys the parent lacks: LangGraph writes the
    keys the parent has, drops the rest and says nothing; also under an output schema, for
    a key the parent has only as another node's private input, and under `ainvoke`."""

    class Parent(TypedDict):
        foo: str

    class Private(TypedDict):
        foo: str
        secret: str

    class Inner(TypedDict):
        foo: str
        extra: str
        secret: str

    class Out(TypedDict):
        foo: str
        extra: str

    def inner_node(state: Inner):
        return {"foo": state["foo"] + "!", "extra": "e", "secret": "s"}

    def reader(state: Private):
        return {"foo": f"{state['foo']} secret={state.get('secret')}"}

    seen = []
    for output in (None, Out):
        inner = api.StateGraph(Inner, output_schema=output)
        inner.add_node("inner_node", inner_node)
        inner.add_edge(api.START, "inner_node")
        parent = api.StateGraph(Parent)
        parent.add_node("child", inner.compile())
        parent.add_node("reader", reader)
        parent.add_edge(api.START, "child")
        parent.add_edge("child", "reader")
        app = parent.compile()
        seen.append(observe(app, {"foo": "x"}, warned=True))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            final = asyncio.run(app.ainvoke({"foo": "y"}))
        said = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
        seen.append({"async": final, "warnings": said})
    return seen


@differs(DROPPED.at("run:effects"))
def test_keys_the_parent_lacks_are_dropped_silently_as_on_langgraph():
    langgraph, ours = both(extra_keys_program)
    assert ours == langgraph
    assert ours[0][1]["warnings"] == [] and ours[0][1]["final"] == {"foo": "x! secret=s"}
    assert ours[2][1]["final"] == {"foo": "x! secret=None"}  # (Out has no 'secret')


@differs(NBGRAPH_ONLY.at("0 calls recorded"))
def test_dropped_subgraph_keys_stay_in_the_record():
    import nbgraph

    class Parent(TypedDict):
        foo: str

    class Inner(TypedDict):
        foo: str
        extra: str

    inner = nbgraph.StateGraph(Inner)
    inner.add_node("i", lambda state: {"foo": "y", "extra": "e"})
    inner.add_edge(nbgraph.START, "i")
    parent = nbgraph.StateGraph(Parent)
    parent.add_node("child", inner.compile())
    parent.add_edge(nbgraph.START, "child")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        run = parent.compile().run({"foo": "x"})
    assert run.warnings == []
    dropped = run.effects[run.effects.dropped_key]
    assert list(dropped.field) == ["extra"] and dropped.writes.iloc[0] == [("child", "e")]
    assert run.subruns[0].output == {"foo": "y", "extra": "e"}


@differs(NBGRAPH_ONLY.at("0 calls recorded"))
def test_a_function_node_returning_unknown_keys_still_warns():
    """Only a compiled graph's own keys are dropped silently: a node function's unknown key
    is nbgraph's documented difference (a `UserWarning`, kept in `run.warnings`)."""
    import nbgraph

    class Parent(TypedDict):
        foo: str

    parent = nbgraph.StateGraph(Parent)
    parent.add_node("f", lambda state: {"foo": "y", "typo": 1})
    parent.add_edge(nbgraph.START, "f")
    with pytest.warns(UserWarning, match="'typo'"):
        run = parent.compile().run({"foo": "x"})
    assert len(run.warnings) == 1


# --- (c) a subgraph node that raises ---------------------------------------------------------


def raising_program(api, error_type: type, where: str):
    """A subgraph's second node raises; the subgraph is the parent's node, runs beside
    another node, is two levels down, is invoked by a node's function, or is async (under
    `astream`)."""

    def fine(state: Shared):
        return {"log": ["fine"]}

    def boom(state: Shared):
        raise error_type(f"boom after {state['log']}")

    async def aboom(state: Shared):
        raise error_type(f"boom after {state['log']}")

    inner = api.StateGraph(Shared)
    inner.add_node(fine)
    inner.add_node("boom", aboom if where == "async" else boom)
    inner.add_edge(api.START, "fine")
    inner.add_edge("fine", "boom")
    sub = inner.compile()
    if where == "deep":
        middle = api.StateGraph(Shared)
        middle.add_node("inner", sub)
        middle.add_edge(api.START, "inner")
        sub = middle.compile()
    parent = api.StateGraph(Shared)
    parent.add_node("s", (lambda state: sub.invoke(state)) if where == "function" else sub)
    parent.add_edge(api.START, "s")
    if where == "parallel":
        parent.add_node("other", fine)
        parent.add_edge(api.START, "other")
    app = parent.compile(checkpointer=api.MemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    seen: dict[str, Any] = {}
    chunks: list = []

    async def astream() -> None:
        async for chunk in app.astream({"n": 0, "log": []}, config, stream_mode=MODES):
            chunks.append(chunk)

    def run() -> None:
        if where == "async":  # an async subgraph node, under astream
            asyncio.run(astream())
        else:
            chunks.extend(app.stream({"n": 0, "log": []}, config, stream_mode=MODES))

    seen["stream"] = outcome(run, message="full")
    seen["chunks"] = canonical_stream(chunks, MODES)
    snapshot = app.get_state(config)
    seen["values"], seen["next"] = plain(snapshot.values), snapshot.next
    seen["tasks"] = sorted((t.name, t.error) for t in snapshot.tasks)
    return seen, app


WHERE = ["node", "parallel", "deep", "function", "async"]


@differs(
    SAVER_RECORD.at("run:status", "run:steps", "run:subruns", "run:tree"),
    params={
        "error_type0-where1": SAVER_RECORD.at(
            "run:effects", "run:status", "run:steps", "run:subruns", "run:tree"
        ),
        "error_type1-where1": SAVER_RECORD.at(
            "run:effects", "run:status", "run:steps", "run:subruns", "run:tree"
        ),
        "error_type2-where1": SAVER_RECORD.at(
            "run:effects", "run:status", "run:steps", "run:subruns", "run:tree"
        ),
    },
)
@pytest.mark.parametrize("where", WHERE)
@pytest.mark.parametrize("error_type", [ValueError, KeyError, RuntimeError])
def test_a_subgraph_node_that_raises_fails_the_parents_task_as_on_langgraph(error_type, where):
    (langgraph, _), (ours, app) = both(raising_program, error_type, where)
    assert ours == langgraph
    run = app.last_run
    assert run.status == "failed" and type(run.error) is error_type
    steps = run.steps.set_index("node")
    assert steps.loc["s", "status"] == "error"
    (sub,) = (run.subruns[i] for i in steps.loc["s", "subruns"])
    if where == "deep":  # the failing node is one level further down
        assert sub.status == "failed" and list(sub.steps.node) == ["inner"]
        (sub,) = sub.subruns
    assert sub.status == "failed" and type(sub.error) is error_type
    assert list(zip(sub.steps.node, sub.steps.status, strict=True)) == [
        ("fine", "ok"),
        ("boom", "error"),
    ]
    assert "boom after ['fine']" in sub.steps.error.iloc[1]


def recursion_program(api, limit: int, inner_steps: int, how: str):
    """A subgraph that loops `inner_steps` times, under the parent's `recursion_limit`."""

    def inc(state: Shared):
        return {"n": state["n"] + 1, "log": ["i"]}

    inner = api.StateGraph(Shared)
    inner.add_node(inc)
    inner.add_edge(api.START, "inc")
    inner.add_conditional_edges("inc", lambda s: "inc" if s["n"] < inner_steps else api.END)
    sub = inner.compile()
    parent = api.StateGraph(Shared)
    parent.add_node("pre", lambda state: {"log": ["pre"]})
    parent.add_node("s", sub if how == "node" else (lambda state: sub.invoke(state)))
    parent.add_edge(api.START, "pre")
    parent.add_edge("pre", "s")
    return outcome(
        lambda: parent.compile().invoke({"n": 0, "log": []}, {"recursion_limit": limit}),
        message=lambda text: f"of {limit} " in text,  # (whether it names the limit)
        shape=lambda final: {"n": final["n"], "log": len(final["log"])},
    )


@differs(
    params={
        "limit2-how0": APPLY.at("run/2:0:s:status"),
        "limit2-how1": APPLY.at("run/2:0:s:status"),
        "limit3-how0": APPLY.at("run/2:0:s:status"),
        "limit3-how1": APPLY.at("run/2:0:s:status"),
        "limit5-how0": APPLY.at("run/2:0:s:status"),
        "limit5-how1": APPLY.at("run/2:0:s:status"),
    }
)
@pytest.mark.parametrize("how", ["node", "function"])
@pytest.mark.parametrize(
    ("limit", "inner_steps"), [(5, 3), (5, 4), (5, 5), (3, 3), (10, 9), (10, 11)]
)
def test_a_subgraph_inherits_the_parents_recursion_limit_as_on_langgraph(limit, inner_steps, how):
    langgraph, ours = both(recursion_program, limit, inner_steps, how)
    assert ours == langgraph


def remaining_steps_program(api):
    """`RemainingSteps` inside a subgraph: counted from the subgraph's own steps against the
    limit it inherited, or against the one its caller passed to `invoke`."""

    class State(TypedDict):
        log: Annotated[list, operator.add]
        remaining_steps: api.RemainingSteps

    def look(state: State):
        return {"log": [state["remaining_steps"]]}

    inner = api.StateGraph(State)
    inner.add_node("look", look)
    inner.add_node("again", look)
    inner.add_edge(api.START, "look")
    inner.add_edge("look", "again")
    sub = inner.compile()
    parent = api.StateGraph(State)
    parent.add_node("pre", look)
    parent.add_node("s", sub)
    parent.add_node(
        "own", lambda state: {"log": sub.invoke({"log": []}, {"recursion_limit": 7})["log"]}
    )
    parent.add_edge(api.START, "pre")
    parent.add_edge("pre", "s")
    parent.add_edge("s", "own")
    return parent.compile().invoke({"log": []}, {"recursion_limit": 20})["log"]


def test_remaining_steps_inside_a_subgraph_count_as_on_langgraph():
    langgraph, ours = both(remaining_steps_program)
    assert ours == langgraph == [19, 19, 19, 18, 6, 5]


# --- (e) one subgraph run several times --------------------------------------------------------


def larger(a: int, b: int) -> int:
    return max(a, b)


class Counted(TypedDict):
    n: Annotated[int, larger]
    log: Annotated[list[str], operator.add]


def reused_program(api, fan_out: int = 3):
    """One compiled subgraph as two nodes in a row, then as the node of parallel `Send`s
    (and, beside them, of a node reached by an edge), in one parent."""

    def inner(state: Counted):
        return {"log": [f"inner{state['n']}"], "n": state["n"] + 1}

    builder = api.StateGraph(Counted)
    builder.add_node("inner", inner)
    builder.add_edge(api.START, "inner")
    sub = builder.compile()
    parent = api.StateGraph(Counted)
    parent.add_node("first", sub)
    parent.add_node("second", sub)
    parent.add_node("w", sub)
    parent.add_node("beside", sub)
    parent.add_edge(api.START, "first")
    parent.add_edge("first", "second")
    parent.add_edge("second", "beside")

    def fan(state: Counted):
        return [api.Send("w", {"n": 10 * (i + 1), "log": []}) for i in range(fan_out)]

    parent.add_conditional_edges("second", fan, ["w"])
    app = parent.compile()
    return observe(app, {"n": 0, "log": []}, warned=True), app


def test_one_subgraph_used_twice_and_in_parallel_runs_as_on_langgraph_with_distinct_subruns():
    (langgraph, _), (ours, app) = both(reused_program)
    assert ours == langgraph
    run = app.last_run
    subs = run.subruns
    assert [s.task for s in subs] == [
        "1:0:first",
        "2:0:second",
        "3:0:beside",
        *(f"3:{i}:w" for i in (1, 2, 3)),
    ]
    assert len({id(s.log) for s in subs}) == len(subs) == 6  # each a run of its own
    assert [s.state_at(0)["n"] for s in subs] == [0, 1, 2, 10, 20, 30]
    assert [s.output["log"][-1] for s in subs] == [
        "inner0",
        "inner1",
        "inner2",
        "inner10",
        "inner20",
        "inner30",
    ]
    assert all(s.parent is run and s.status == "done" for s in subs)
    assert [list(s.steps.subruns) for s in subs] == [[[]]] * 6


@differs(NBGRAPH_ONLY.at("0 calls recorded"))
def test_parallel_subruns_are_listed_in_the_same_order_every_run():
    """Parallel tasks start on threads in whatever order; the subruns are listed by step
    and write order, the same way every time."""
    orders = set()
    for _ in range(5):
        _, app = reused_program(api_for("nbgraph"), fan_out=12)
        orders.add(tuple(s.task for s in app.last_run.subruns))
    assert len(orders) == 1
    (order,) = orders
    assert order[3:] == tuple(f"3:{i}:w" for i in range(1, 13))


def configured_call_program(api, limit: int, inner_steps: int, config: Any):
    """A node function invoking a looping subgraph with a config of its own: without a
    `recursion_limit` in it the parent's still holds; with one, that one."""

    def inc(state: Shared):
        return {"n": state["n"] + 1, "log": ["i"]}

    inner = api.StateGraph(Shared)
    inner.add_node(inc)
    inner.add_edge(api.START, "inc")
    inner.add_conditional_edges("inc", lambda s: "inc" if s["n"] < inner_steps else api.END)
    sub = inner.compile()
    parent = api.StateGraph(Shared)
    parent.add_node("s", lambda state: sub.invoke(state, config))
    parent.add_edge(api.START, "s")
    app = parent.compile()
    ended = outcome(
        app.invoke,
        {"n": 0, "log": []},
        {"recursion_limit": limit},
        message=lambda text: text[:30],
        shape=lambda final: {"n": final["n"]},
    )
    return ended, app


CONFIGS = [
    None,
    {"configurable": {"x": 1}},
    {"tags": ["t"]},
    {"recursion_limit": 50},
    {"recursion_limit": 2},
]


@differs(
    params={
        "limit0-config4": APPLY.at("run/1:0:s:status"),
        "limit1-config0": APPLY.at("run/1:0:s:status"),
        "limit1-config1": APPLY.at("run/1:0:s:status"),
        "limit1-config2": APPLY.at("run/1:0:s:status"),
        "limit1-config4": APPLY.at("run/1:0:s:status"),
        "limit2-config0": APPLY.at("run/1:0:s:status"),
        "limit2-config1": APPLY.at("run/1:0:s:status"),
        "limit2-config2": APPLY.at("run/1:0:s:status"),
        "limit2-config4": APPLY.at("run/1:0:s:status"),
    }
)
@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: str(c and list(c)))
@pytest.mark.parametrize(("limit", "inner_steps"), [(5, 4), (5, 6), (25, 30)])
def test_a_subgraph_invoked_with_its_own_config_takes_the_limit_as_on_langgraph(
    limit, inner_steps, config
):
    (langgraph, _), (ours, app) = both(configured_call_program, limit, inner_steps, config)
    assert ours == langgraph
    (sub,) = app.last_run.subruns
    wanted = (config or {}).get("recursion_limit", limit)
    assert sub.log.config["recursion_limit"] == wanted
    assert sub.status == ("failed" if ours[0] == "raised" else "done")
