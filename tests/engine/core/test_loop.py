"""Supersteps as SEMANTICS §3 and §5 describe them: order, isolation, limits, resets, seeds."""

import operator
import threading
import time
import warnings
from dataclasses import dataclass, field
from typing import Annotated, Any, TypedDict

import pydantic
import pytest

from nbgraph import (
    END,
    MISSING,
    START,
    Command,
    EmptyInputError,
    Ephemeral,
    GraphRecursionError,
    InvalidUpdateError,
    Message,
    Mutation,
    Overwrite,
    RemainingSteps,
    RemoveMessage,
    Send,
    StateGraph,
    add_messages,
    register_reducer,
)


class Log(TypedDict):
    log: Annotated[list, operator.add]
    status: str


def writer(name: str, **extra: Any):
    def node(state: dict) -> dict:
        return {"log": [name], **extra}

    node.__name__ = name
    return node


# --- write order and concurrency ---------------------------------------------------------------


def test_write_order_is_node_name_order_whatever_the_completion_order():
    b_done = threading.Event()

    def a(state):
        # a finishes only after b has finished: completion order is b, a.
        assert b_done.wait(5), "b never ran while a was running: the step was not concurrent"
        time.sleep(0.05)  # let b's return reach the engine first
        return {"log": ["a"]}

    def b(state):
        b_done.set()
        return {"log": ["b"]}

    app = (
        StateGraph(Log)
        .add_node("b", b)
        .add_node("a", a)
        .add_edge(START, "a")
        .add_edge(START, "b")
        .compile()
    )
    finished = [next(iter(chunk)) for chunk in app.stream({"log": []}, stream_mode="updates")]
    assert finished == ["b", "a"]  # streamed as each finished
    assert app.last_run.state_at(1)["log"] == ["a", "b"]  # applied in name order


def test_max_concurrency_bounds_the_nodes_running_at_once():
    active, peak, lock = [0], [0], threading.Lock()

    def work(state):
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        threading.Event().wait(0.02)
        with lock:
            active[0] -= 1
        return {"log": ["w"]}

    graph = StateGraph(Log)
    for name in "abcd":
        graph.add_node(name, work).add_edge(START, name)
    app = graph.compile()
    app.invoke({"log": []}, {"max_concurrency": 1})
    assert peak[0] == 1
    peak[0] = 0
    app.invoke({"log": []}, {"max_concurrency": 4})
    assert peak[0] > 1


def test_sends_apply_after_edge_tasks_in_send_order():
    class S(TypedDict):
        log: Annotated[list, operator.add]

    app = (
        StateGraph(S)
        .add_node("fan", lambda s: None)
        .add_node("w", lambda arg: {"log": [arg]})
        .add_node("z", writer("z"))
        .add_edge(START, "fan")
        .add_conditional_edges("fan", lambda s: [Send("w", 3), "z", Send("w", 1), Send("w", 2)])
        .compile()
    )
    assert app.invoke({"log": []})["log"] == ["z", 3, 1, 2]


def test_conflict_error_names_field_writers_and_step():
    app = (
        StateGraph(Log)
        .add_node("left", writer("left", status="L"))
        .add_node("right", writer("right", status="R"))
        .add_edge(START, "left")
        .add_edge(START, "right")
        .compile()
    )
    with pytest.raises(InvalidUpdateError) as caught:
        app.invoke({"log": []})
    message = str(caught.value)
    assert "'status'" in message and "'left'" in message and "'right'" in message
    assert "Step 1" in message


def test_two_overwrites_in_one_step_are_an_error_one_overwrite_wins():
    one = (
        StateGraph(Log)
        .add_node("a", lambda s: {"log": Overwrite(["reset"])})
        .add_node("b", writer("b"))
        .add_edge(START, "a")
        .add_edge(START, "b")
        .compile()
    )
    assert one.invoke({"log": ["old"]})["log"] == ["reset"]
    two = (
        StateGraph(Log)
        .add_node("a", lambda s: {"log": Overwrite(["A"])})
        .add_node("b", lambda s: {"log": Overwrite(["B"])})
        .add_edge(START, "a")
        .add_edge(START, "b")
        .compile()
    )
    with pytest.raises(InvalidUpdateError, match="Overwrite"):
        two.invoke({"log": []})


# --- edges -------------------------------------------------------------------------------------


def uneven(join_kind: str) -> list:
    graph = StateGraph(Log)
    for name in ("a", "b", "c"):
        graph.add_node(name, writer(name))
    graph.add_node("d", writer("d"), defer=join_kind == "defer")
    graph.add_edge(START, "a").add_edge(START, "b").add_edge("b", "c")
    if join_kind == "waiting":
        graph.add_edge(["a", "c"], "d")
    else:
        graph.add_edge("a", "d").add_edge("c", "d")
    return graph.compile().invoke({"log": []})["log"]


def test_plain_edges_from_uneven_branches_run_the_target_twice():
    assert uneven("plain") == ["a", "b", "c", "d", "d"]


def test_waiting_edge_runs_the_target_once_all_sources_ran():
    assert uneven("waiting") == ["a", "b", "c", "d"]


def test_deferred_node_runs_once_when_nothing_else_is_left():
    assert uneven("defer") == ["a", "b", "c", "d"]


def test_router_sees_the_step_start_plus_only_its_own_writes():
    seen = []

    def route(state):
        seen.append(dict(state))
        return END

    app = (
        StateGraph(Log)
        .add_node("a", writer("a", status="from a"))
        .add_node("b", writer("b"))
        .add_edge(START, "a")
        .add_edge(START, "b")
        .add_conditional_edges("a", route)
        .compile()
    )
    app.invoke({"log": ["in"], "status": "start"})
    assert seen == [{"log": ["in", "a"], "status": "from a"}]


def test_command_goto_adds_to_static_edges_and_path_map_errors_name_the_value():
    app = (
        StateGraph(Log)
        .add_node("a", lambda s: Command(update={"log": ["a"]}, goto=["c"]))
        .add_node("b", writer("b"))
        .add_node("c", writer("c"))
        .add_edge(START, "a")
        .add_edge("a", "b")
        .compile()
    )
    assert app.invoke({"log": []})["log"] == ["a", "b", "c"]
    mapped = (
        StateGraph(Log)
        .add_node("a", writer("a"))
        .add_node("b", writer("b"))
        .add_edge(START, "a")
        .add_conditional_edges("a", lambda s: "nowhere", {"go": "b"})
        .compile()
    )
    with pytest.raises(KeyError, match="nowhere"):
        mapped.invoke({"log": []})


# --- limits and input ----------------------------------------------------------------------------


class Loop(TypedDict):
    n: int
    left: RemainingSteps


def loop_app(seen: list):
    def tick(state):
        seen.append(state["left"])
        return {"n": state["n"] + 1}

    return (
        StateGraph(Loop)
        .add_node("tick", tick)
        .add_edge(START, "tick")
        .add_conditional_edges("tick", lambda s: END if s["n"] >= 5 else "tick")
        .compile()
    )


def test_remaining_steps_is_limit_minus_step():
    seen: list = []
    result = loop_app(seen).invoke({"n": 0}, {"recursion_limit": 10})
    assert seen == [9, 8, 7, 6, 5]
    assert "left" not in result  # managed: never stored, never output


def test_recursion_limit_counts_supersteps_and_says_how_to_raise_it():
    assert loop_app([]).invoke({"n": 0}, {"recursion_limit": 6}) == {"n": 5}
    with pytest.raises(GraphRecursionError) as caught:
        loop_app([]).invoke({"n": 0}, {"recursion_limit": 5})
    assert isinstance(caught.value, RecursionError)
    assert "recursion_limit" in str(caught.value)


def test_invoke_none_is_empty_input_error():
    with pytest.raises(EmptyInputError):
        loop_app([]).invoke(None)


def test_input_goes_through_the_reducer_from_an_empty_start():
    class S(TypedDict):
        total: Annotated[int, operator.add]
        items: Annotated[list, "append"]

    app = (
        StateGraph(S)
        .add_node("a", lambda s: {"total": 1, "items": "x"})
        .add_edge(START, "a")
        .compile()
    )
    assert app.invoke({"total": 2}) == {"total": 3, "items": ["x"]}
    first_step = app.last_log.steps[0]
    assert [c.field for c in first_step.changes] == ["total"]


def test_unknown_keys_are_dropped_with_a_warning_kept_in_the_record():
    app = (
        StateGraph(Log)
        .add_node("a", lambda s: {"log": ["a"], "typo": 1})
        .add_edge(START, "a")
        .compile()
    )
    with pytest.warns(UserWarning, match="typo"):
        result = app.invoke({"log": []})
    assert result == {"log": ["a"]}
    assert any("typo" in w for w in app.last_run.warnings)
    assert app.last_log.steps[1].tasks[0].dropped


def test_ephemeral_field_lives_one_superstep():
    class S(TypedDict):
        note: Annotated[str, Ephemeral]
        seen: Annotated[list, operator.add]

    app = (
        StateGraph(S)
        .add_node("a", lambda s: {"note": "hello"})
        .add_node("b", lambda s: {"seen": [s.get("note")]})
        .add_node("c", lambda s: {"seen": [s.get("note")]})
        .add_edge(START, "a")
        .add_edge("a", "b")
        .add_edge("b", "c")
        .compile()
    )
    assert app.invoke({"seen": []}) == {"seen": ["hello", None]}
    assert app.last_log.steps[2].cleared == ("note",)


def test_a_dropped_input_key_warning_points_at_the_callers_line():
    class Small(TypedDict):
        x: int

    app = StateGraph(Small).add_node("a", lambda s: {"x": 1}).add_edge(START, "a").compile()
    for start in (app.invoke, app.run, lambda given: list(app.stream(given))):
        with pytest.warns(UserWarning, match="bogus") as caught:
            start({"x": 0, "bogus": 1})
        assert caught[0].filename == __file__


# --- each call, its own record ------------------------------------------------------------------


class Depth(TypedDict):
    depth: int
    log: Annotated[list, operator.add]


def test_run_returns_its_own_record_when_a_node_runs_the_same_graph():
    holder = {}

    def node(state):
        if state["depth"] == 0:  # a node that starts a sub-run of this very graph
            inner = holder["app"].invoke({"depth": 1, "log": []})
            return {"log": [f"outer saw {inner['log']}"]}
        return {"log": ["inner"]}

    app = StateGraph(Depth).add_node("n", node).add_edge(START, "n").compile()
    holder["app"] = app
    run = app.run({"depth": 0, "log": []})
    assert run.log.input == {"depth": 0, "log": []}
    assert run.output == {"depth": 0, "log": ["outer saw ['inner']"]}
    assert [task.node for task in run.log.tasks()] == ["__start__", "n"]  # no inner task
    assert app.last_run is run  # the latest to finish is the outer one


def test_a_stream_inside_a_node_keeps_its_record_apart():
    holder = {}

    def node(state):
        if state["depth"] == 0:
            chunks = list(holder["app"].stream({"depth": 1, "log": []}))
            return {"log": [f"inner streamed {len(chunks)}"]}
        return {"log": ["inner"]}

    app = StateGraph(Depth).add_node("n", node).add_edge(START, "n").compile()
    holder["app"] = app
    assert app.invoke({"depth": 0, "log": []}) == {"depth": 0, "log": ["inner streamed 1"]}
    assert app.last_log.input["depth"] == 0
    assert app.last_log.final["log"] == ["inner streamed 1"]


def test_runs_in_two_threads_each_return_their_own_record():
    release_slow = threading.Event()

    def node(state):
        if state["depth"] == 0:  # the slow run waits until the fast one has finished
            assert release_slow.wait(10)
        return {"log": [f"depth {state['depth']}"]}

    app = StateGraph(Depth).add_node("n", node).add_edge(START, "n").compile()
    records = {}

    def start(depth):
        records[depth] = app.run({"depth": depth, "log": []})

    slow = threading.Thread(target=start, args=(0,))
    slow.start()
    start(1)  # starts after the slow one, finishes first
    release_slow.set()
    slow.join(10)
    assert records[0].output["log"] == ["depth 0"]
    assert records[1].output["log"] == ["depth 1"]
    assert app.last_run is records[0]  # the run that finished last


def test_async_runs_of_one_graph_keep_their_records_apart():
    import asyncio

    holder = {}

    async def node(state):
        if state["depth"] == 0:
            await holder["app"].ainvoke({"depth": 1, "log": []})
        await asyncio.sleep(0.01 * (2 - state["depth"]))
        return {"log": [f"depth {state['depth']}"]}

    app = StateGraph(Depth).add_node("n", node).add_edge(START, "n").compile()
    holder["app"] = app

    async def both():
        return await asyncio.gather(
            app.ainvoke({"depth": 0, "log": []}), app.ainvoke({"depth": 2, "log": []})
        )

    assert asyncio.run(both()) == [
        {"depth": 0, "log": ["depth 0"]},
        {"depth": 2, "log": ["depth 2"]},
    ]
    assert app.last_log.input["depth"] == 0  # the outer run, which finished last
    assert [task.node for task in app.last_log.tasks()] == ["__start__", "n"]


def test_a_failed_run_returns_its_own_record_even_after_a_later_run():
    holder = {}

    def node(state):
        if state["depth"] == 0:
            holder["app"].invoke({"depth": 1, "log": []})
            raise RuntimeError("outer fails after the inner run")
        return {"log": ["inner"]}

    app = StateGraph(Depth).add_node("n", node).add_edge(START, "n").compile()
    holder["app"] = app
    run = app.run({"depth": 0, "log": []})
    assert run.status == "failed" and "outer fails" in str(run.error)
    assert run.log.input["depth"] == 0


# --- isolation -----------------------------------------------------------------------------------


def test_a_node_mutating_its_input_changes_neither_state_nor_record():
    class S(TypedDict):
        items: list
        meta: dict

    def vandal(state):
        state["items"].append("vandal")
        state["meta"]["k"] = "changed"
        state["new"] = 1
        return None

    app = (
        StateGraph(S)
        .add_node("vandal", vandal)
        .add_node("after", lambda s: {"items": s["items"] + ["after"]})
        .add_edge(START, "vandal")
        .add_edge("vandal", "after")
        .compile()
    )
    given = {"items": ["x"], "meta": {"k": "v"}}
    result = app.invoke(given)
    assert result == {"items": ["x", "after"], "meta": {"k": "v"}}
    assert given == {"items": ["x"], "meta": {"k": "v"}}
    assert app.last_run.state_at(1) == {"items": ["x"], "meta": {"k": "v"}}


def test_a_node_changing_what_it_returned_later_does_not_change_the_record():
    kept = []

    def leaky(state):
        out = ["a"]
        kept.append(out)
        return {"log": out}

    app = StateGraph(Log).add_node("a", leaky).add_edge(START, "a").compile()
    app.invoke({"log": []})
    kept[0].append("sneaky")
    assert app.last_run.state_at(1)["log"] == ["a"]
    assert app.last_log.steps[1].changes[0].writes == (("a", ["a"]),)


def test_unread_fields_are_never_copied(monkeypatch):
    import copy

    from nbgraph import isolation as view

    big = [[i] for i in range(1000)]  # nested: only deepcopy could copy it
    copies = []
    real = copy.deepcopy
    monkeypatch.setattr(
        view.copy, "deepcopy", lambda v, *a: (copies.append(v is big or v == big), real(v, *a))[1]
    )

    class S(TypedDict):
        big: list
        n: int

    app = (
        StateGraph(S)
        .add_node("tick", lambda s: {"n": s["n"] + 1})
        .add_edge(START, "tick")
        .add_conditional_edges("tick", lambda s: END if s["n"] >= 20 else "tick")
        .compile()
    )
    app.invoke({"big": big, "n": 0}, {"recursion_limit": 50})
    assert copies.count(True) == 2  # on intake of the input and for the output, never per step


def test_pydantic_nodes_get_models_and_input_is_validated():
    class S(pydantic.BaseModel):
        n: int
        tags: Annotated[list[str], operator.add] = []

    seen = []
    app = (
        StateGraph(S)
        .add_node("a", lambda s: (seen.append(type(s)), {"n": s.n + 1, "tags": ["a"]})[1])
        .add_edge(START, "a")
        .compile()
    )
    assert app.invoke({"n": 1}) == {"n": 2, "tags": ["a"]}
    assert seen == [S]
    with pytest.raises(pydantic.ValidationError):
        app.invoke({"n": "not a number"})


def test_dataclass_state():
    @dataclass
    class S:
        n: int = 0
        log: Annotated[list, operator.add] = field(default_factory=list)

    app = (
        StateGraph(S)
        .add_node("a", lambda s: {"n": s.n + 10, "log": [type(s).__name__]})
        .add_edge(START, "a")
        .compile()
    )
    assert app.invoke({"n": 1}) == {"n": 11, "log": ["S"]}


def test_private_fields_are_stored_but_not_output():
    class In(TypedDict):
        question: str

    class Out(TypedDict):
        answer: str

    class Full(TypedDict):
        question: str
        answer: str

    class Scratch(TypedDict):
        draft: str

    def think(state: Full) -> Scratch:
        return {"draft": state["question"] + "?"}

    def answer(state: Scratch) -> dict:
        return {"answer": state["draft"] + "!"}

    app = (
        StateGraph(Full, input_schema=In, output_schema=Out)
        .add_node("think", think)
        .add_node("answer", answer)
        .add_edge(START, "think")
        .add_edge("think", "answer")
        .compile()
    )
    with pytest.warns(UserWarning, match="answer"):
        assert app.invoke({"question": "why", "answer": "ignored"}) == {"answer": "why?!"}
    assert app.last_run.state_at(2)["draft"] == "why?"


def test_exception_propagates_unchanged_with_a_note_naming_node_and_step():
    class Boom(Exception):
        pass

    error = Boom("no")

    def explode(state):
        raise error

    app = (
        StateGraph(Log)
        .add_node("a", writer("a"))
        .add_node("explode", explode)
        .add_edge(START, "a")
        .add_edge("a", "explode")
        .compile()
    )
    with pytest.raises(Boom) as caught:
        app.invoke({"log": []})
    assert caught.value is error
    assert any("'explode'" in n and "step 2" in n for n in caught.value.__notes__)
    assert app.last_run.status == "failed"
    assert app.last_log.steps[-1].failed[0].node == "explode"


# --- messages and registered reducers -----------------------------------------------------------


def test_messages_field_with_ids_replace_and_remove():
    class Chat(TypedDict):
        messages: Annotated[list, add_messages]

    def reply(state):
        first = state["messages"][0]
        return {
            "messages": [
                Message(role="user", content="edited", id=first.id),
                ("assistant", "hello"),
            ]
        }

    def forget(state):
        return {"messages": [RemoveMessage(id=state["messages"][-1].id)]}

    app = (
        StateGraph(Chat)
        .add_node("reply", reply)
        .add_node("forget", forget)
        .add_edge(START, "reply")
        .add_edge("reply", "forget")
        .compile()
    )
    out = app.invoke({"messages": [("user", "hi")]})["messages"]
    assert [(m.role, m.content) for m in out] == [("user", "edited")]
    assert out[0].id


def test_registered_reducer_sees_missing_for_a_field_without_start_value():
    calls = []

    @register_reducer("test_loop_keep_first")
    def keep_first(old, new):
        calls.append(old)
        return new if old is MISSING else old

    class S(TypedDict):
        first: Annotated[Any, "test_loop_keep_first"]

    app = StateGraph(S).add_node("a", lambda s: {"first": "later"}).add_edge(START, "a").compile()
    assert app.invoke({"first": "initial"}) == {"first": "initial"}
    assert calls == [MISSING, "initial"]


# --- the seeds' extensions ---------------------------------------------------------------------


def test_join_merge_strategy_resets_the_root_and_names_dropped_fields():
    class S(TypedDict, total=False):
        log: Annotated[list, operator.add]
        scratch: str
        best: str

    def pick(states: list) -> dict:
        return {"log": ["merged"], "best": max(s["log"][-1] for s in states)}

    app = (
        StateGraph(S)
        .add_node("a", lambda s: {"log": ["a"], "scratch": "tmp"})
        .add_node("b", writer("b"))
        .add_node("join", lambda s: {"log": [f"join saw {sorted(s)}"]}, merge=pick)
        .add_edge(START, "a")
        .add_edge(START, "b")
        .add_edge(["a", "b"], "join")
        .compile()
    )
    result = app.invoke({"log": []})
    assert result == {"log": ["merged", "join saw ['best', 'log']"], "best": "b"}
    reset = app.last_log.steps[2].resets[0]
    assert (reset.reason, reset.node, reset.sources) == ("merge", "join", ("a", "b"))
    assert reset.dropped == ("scratch",)


def test_edge_state_filter_resets_the_root_for_its_target():
    app = (
        StateGraph(Log)
        .add_node("a", writer("a", status="secret"))
        .add_node("b", lambda s: {"log": [f"b saw {sorted(s)}"]})
        .add_edge(START, "a")
        .add_edge("a", "b", state_filter=lambda s: {"log": s["log"]})
        .compile()
    )
    assert app.invoke({"log": []}) == {"log": ["a", "b saw ['log']"]}
    reset = app.last_log.steps[2].resets[0]
    assert (reset.reason, reset.dropped) == ("state_filter", ("status",))


class Increment(Mutation):
    def __init__(self, field: str, by: int) -> None:
        self.field, self.by = field, by

    def apply(self, value):
        return (0 if value is MISSING else value) + self.by


def test_mutation_objects_apply_in_order_and_are_recorded_per_field():
    class S(TypedDict):
        count: int
        log: Annotated[list, operator.add]

    app = (
        StateGraph(S)
        .add_node("a", lambda s: [Increment("count", 2), Increment("count", 3)])
        .add_node("b", lambda s: {"count": Increment("count", 10)})
        .add_edge(START, "a")
        .add_edge(START, "b")
        .compile()
    )
    assert app.invoke({"count": 1})["count"] == 16
    change = app.last_log.steps[1].changes[0]
    assert change.field == "count"
    assert [(writer, m.by) for writer, m in change.writes] == [("a", 2), ("a", 3), ("b", 10)]


def test_dict_schema_with_reducers_ephemeral_and_the_langgraphgo_example():
    def node(name: str, count: int, status: str):
        return lambda s: {"count": count, "logs": [f"Processed by {name}"], "status": status}

    app = (
        StateGraph(dict, reducers={"count": "sum", "logs": "append"}, ephemeral={"flash"})
        .add_node("A", node("A", 1, "In Progress (A)"))
        .add_node("B", node("B", 2, "In Progress (B)"))
        .add_node("C", lambda s: {"count": 3, "logs": ["Processed by C"], "status": "Completed"})
        .add_edge(START, "A")
        .add_edge("A", "B")
        .add_edge("B", "C")
        .compile()
    )
    result = app.invoke({"count": 0, "logs": ["Start"], "status": "Init"})
    assert result == {
        "count": 6,
        "logs": ["Start", "Processed by A", "Processed by B", "Processed by C"],
        "status": "Completed",
    }


def test_state_merger_folds_parallel_writes_to_fields_without_reducers():
    def merger(current: dict, updates: list) -> dict:
        return {"status": " + ".join(u["status"] for u in updates)}

    app = (
        StateGraph(dict, state_merger=merger)
        .add_node("a", lambda s: {"status": "a"})
        .add_node("b", lambda s: {"status": "b"})
        .add_edge(START, "a")
        .add_edge(START, "b")
        .compile()
    )
    assert app.invoke({"status": "init"}) == {"status": "a + b"}
    assert app.last_log.steps[1].merged == [("state_merger", "status", "a + b")]
    without = (
        StateGraph(dict)
        .add_node("a", lambda s: {"status": "a"})
        .add_node("b", lambda s: {"status": "b"})
        .add_edge(START, "a")
        .add_edge(START, "b")
        .compile()
    )
    with pytest.raises(InvalidUpdateError, match="status"):
        without.invoke({"status": "init"})


def test_no_warnings_for_a_clean_graph():
    app = StateGraph(Log).add_node("a", writer("a")).add_edge(START, "a").compile()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        app.invoke({"log": []})


def test_nodes_and_routers_that_take_config_receive_the_run_config():
    seen = []

    def node(state, config):
        seen.append(config["configurable"]["user"])
        return {"log": ["n"]}

    def route(state, config):
        seen.append(config["recursion_limit"])
        return END

    app = (
        StateGraph(Log)
        .add_node("n", node)
        .add_edge(START, "n")
        .add_conditional_edges("n", route)
        .compile()
    )
    app.invoke({"log": []}, {"configurable": {"user": "ada"}, "recursion_limit": 7})
    assert seen == ["ada", 7]


def test_command_update_as_pairs_and_a_bad_limit():
    app = (
        StateGraph(Log)
        .add_node("a", lambda s: Command(update=[("log", ["x"]), ("log", ["y"])]))
        .add_edge(START, "a")
        .compile()
    )
    assert app.invoke({"log": []}) == {"log": ["x", "y"]}
    with pytest.raises(ValueError, match="recursion_limit"):
        app.invoke({"log": []}, {"recursion_limit": 0})


def test_a_failing_sibling_keeps_the_step_unapplied_and_the_others_recorded():
    def bad(state):
        raise ValueError("bad input")

    app = (
        StateGraph(Log)
        .add_node("good", writer("good"))
        .add_node("bad", bad)
        .add_edge(START, "good")
        .add_edge(START, "bad")
        .compile()
    )
    with pytest.raises(ValueError, match="bad input"):
        app.invoke({"log": []})
    step = app.last_log.steps[-1]
    assert [t.node for t in step.failed] == ["bad"]
    assert next(t for t in step.tasks if t.node == "good").writes == [("log", ["good"])]


def test_a_send_worker_mutating_its_argument_leaves_the_record_alone():
    def worker(arg):
        arg["items"].append("mutated")
        return {"log": [len(arg["items"])]}

    app = (
        StateGraph(Log)
        .add_node("worker", worker)
        .add_conditional_edges(START, lambda s: [Send("worker", {"items": ["a"]})])
        .compile()
    )
    assert app.invoke({"log": []}) == {"log": [2]}
    assert app.last_log.steps[1].tasks[0].arg == {"items": ["a"]}


def test_a_failing_merge_strategy_is_named_and_unknown_merged_keys_are_reported():
    def broken(states):
        raise ValueError("cannot merge")

    def build(strategy):
        return (
            StateGraph(Log)
            .add_node("a", writer("a"))
            .add_node("b", writer("b"))
            .add_node("j", writer("j"), merge=strategy)
            .add_edge(START, "a")
            .add_edge(START, "b")
            .add_edge(["a", "b"], "j")
            .compile()
        )

    with pytest.raises(ValueError, match="cannot merge") as caught:
        build(broken).invoke({"log": []})
    assert any("'j'" in note and "merge=" in note for note in caught.value.__notes__)
    app = build(lambda states: {"log": ["m"], "bogus": 1})
    with pytest.warns(UserWarning, match="bogus"):
        assert app.invoke({"log": []}) == {"log": ["m", "j"]}
