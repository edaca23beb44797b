"""The run record: Run, the state tree, state_at, and the effects/steps/states tables."""

import operator
from typing import Annotated, TypedDict

import pandas as pd
import pytest

from nbgraph import END, MISSING, START, Ephemeral, Overwrite, Run, Send, StateGraph
from nbgraph.record.cells import ListPrefix


class S(TypedDict, total=False):
    count: Annotated[int, operator.add]
    log: Annotated[list, "append"]
    status: str


def node(name: str, **extra):
    def run(state):
        return {"count": 1, "log": [name], **extra}

    run.__name__ = name
    return run


def fan_app():
    return (
        StateGraph(S)
        .add_node("a", node("a", status="A"))
        .add_node("b", node("b"))
        .add_node("c", node("c", status="C"))
        .add_edge(START, "a")
        .add_edge("a", "b")
        .add_edge("a", "c")
        .add_edge(["b", "c"], END)
        .compile()
    )


# --- Run and the state tree --------------------------------------------------------------------


def test_run_returns_a_run_whose_output_is_what_invoke_returns():
    app = fan_app()
    run = app.run({"count": 10, "log": []})
    assert isinstance(run, Run) and run.status == "done"
    assert (
        run.output
        == app.invoke({"count": 10, "log": []})
        == {
            "count": 13,
            "log": ["a", "b", "c"],
            "status": "C",
        }
    )
    assert app.last_run is app.last_run  # cached per run: its tables are built once


def test_tree_has_input_root_tasks_and_merges_with_parents_in_write_order():
    run = fan_app().run({"log": []})
    tree = run.tree
    assert tree.root.kind == "input" and tree.root.parents == ()
    assert tree["merge:0"].parents == ("input",)
    b, c = tree.occurrence("b", 0), tree.occurrence("c", 0)
    assert b.parents == c.parents == ("merge:1",)
    assert tree["merge:2"].parents == (b.id, c.id)
    assert dict(c.writes) == {"count": 1, "log": ["c"], "status": "C"}
    assert b.triggers == ("a",) and b.duration >= 0 and b.status == "ok"
    assert [n.name for n in tree.children("merge:1")] == ["b", "c"]


def test_tree_marks_root_resets_and_send_arguments():
    class J(TypedDict, total=False):
        log: Annotated[list, operator.add]
        scratch: str

    app = (
        StateGraph(J)
        .add_node("a", lambda s: {"log": ["a"], "scratch": "x"})
        .add_node("b", lambda s: {"log": ["b"]})
        .add_node("join", lambda s: {"log": ["j"]}, merge=lambda states: {"log": ["merged"]})
        .add_node("w", lambda arg: {"log": [arg]})
        .add_edge(START, "a")
        .add_edge(START, "b")
        .add_edge(["a", "b"], "join")
        .add_conditional_edges("join", lambda s: [Send("w", 7)])
        .compile()
    )
    run = app.run({"log": []})
    reset = run.tree["reset:2:join"]
    assert reset.kind == "reset" and reset.dropped == ("scratch",) and reset.reason == "merge"
    assert run.tree.occurrence("join", 0).parents == (reset.id,)
    assert run.state_at(reset) == {"log": ["merged"]}
    send = run.tree.occurrence("w", 0)
    assert send.triggers == ("join",) and send.arg == 7
    assert run.state_at(("w", 0)) == 7  # a Send task read its argument


# --- state_at ----------------------------------------------------------------------------------


def test_state_at_steps_nodes_and_occurrences():
    seen = []

    def tick(state):
        seen.append(dict(state))
        return {"count": 1, "log": [state["count"]]}

    app = (
        StateGraph(S)
        .add_node("tick", tick)
        .add_edge(START, "tick")
        .add_conditional_edges("tick", lambda s: END if s["count"] >= 5 else "tick")
        .compile()
    )
    run = app.run({"count": 0, "log": []})
    assert run.state_at(-1) == {"count": 0, "log": []}
    for i, saw in enumerate(seen):
        assert run.state_at(("tick", i)) == saw
        assert run.state_at(run.tree.occurrence("tick", i).id) == saw
    assert run.state_at(("tick", -1)) == seen[-1]
    assert run.state_at(5) == run.output
    mine = run.state_at(3)
    mine["log"].append("mutated")
    assert run.state_at(3)["log"] == [0, 1, 2]  # a copy each time


def test_state_at_names_what_is_not_there():
    run = fan_app().run({"log": []})
    with pytest.raises(ValueError, match="no step 9"):
        run.state_at(9)
    with pytest.raises(KeyError, match="never ran"):
        run.state_at(("zzz", 0))
    with pytest.raises(IndexError, match="ran 1 time"):
        run.state_at(("b", 3))
    with pytest.raises(KeyError, match="No tree node"):
        run.state_at("task:nope")
    with pytest.raises(TypeError, match="step number"):
        run.state_at(1.5)


# --- effects -----------------------------------------------------------------------------------


def test_effects_rows_give_before_writes_reducer_after():
    run = fan_app().run({"count": 5, "log": ["in"]})
    effects = run.effects
    assert isinstance(effects, pd.DataFrame)
    row = effects[(effects.step == 2) & (effects.field == "log")].iloc[0]
    assert row.before == ["in", "a"] and row.after == ["in", "a", "b", "c"]
    assert row.writes == [("b", ["b"]), ("c", ["c"])] and row.writers == ["b", "c"]
    assert row.reducer == "append" and bool(row.changed)
    count = effects[(effects.step == 2) & (effects.field == "count")].iloc[0]
    assert (count.before, count.after, count.reducer) == (6, 8, "add")
    status = effects[(effects.step == 0) & (effects.field == "status")]
    assert status.empty  # the input did not write it
    first = effects[(effects.step == 1) & (effects.field == "status")].iloc[0]
    assert first.before is MISSING and first.after == "A"


def test_effects_flags_conflict_overwrite_dropped_key_and_root_reset():
    clash = (
        StateGraph(S)
        .add_node("x", lambda s: {"status": "X"})
        .add_node("y", lambda s: {"status": "Y", "typo": 1})
        .add_edge(START, "x")
        .add_edge(START, "y")
        .compile()
    )
    with pytest.warns(UserWarning):
        run = clash.run({"status": "init"})
    assert run.status == "failed" and "status" in str(run.error)
    effects = run.effects
    conflict = effects[effects.field == "status"].iloc[-1]
    assert bool(conflict.conflict) and not bool(conflict.applied) and conflict.after is MISSING
    dropped = effects[effects.field == "typo"].iloc[0]
    assert bool(dropped.dropped_key) and dropped.writes == [("y", 1)]

    bypass = (
        StateGraph(S)
        .add_node("r", lambda s: {"log": Overwrite(["fresh"])})
        .add_edge(START, "r")
        .compile()
        .run({"log": ["old"]})
    )
    row = bypass.effects.iloc[-1]
    assert bool(row.overwrite_bypass) and row.after == ["fresh"]

    reset = (
        StateGraph(S)
        .add_node("a", node("a", status="A"))
        .add_node("b", lambda s: {"log": ["b"]})
        .add_edge(START, "a")
        .add_edge("a", "b", state_filter=lambda s: {"log": s["log"]})
        .compile()
        .run({"log": []})
    )
    resets = reset.effects[reset.effects.root_reset]
    assert set(resets.field) == {"count", "status"}
    assert (resets.after == MISSING).all()


def test_ephemeral_clear_is_an_effect_row():
    class E(TypedDict, total=False):
        note: Annotated[str, Ephemeral]
        log: Annotated[list, "append"]

    run = (
        StateGraph(E)
        .add_node("a", lambda s: {"note": "hi"})
        .add_node("b", lambda s: {"log": [s.get("note")]})
        .add_node("c", lambda s: {"log": [s.get("note")]})
        .add_edge(START, "a")
        .add_edge("a", "b")
        .add_edge("b", "c")
        .compile()
        .run({"log": []})
    )
    cleared = run.effects[(run.effects.field == "note") & (run.effects.reducer == "cleared")]
    assert list(cleared.step) == [2] and cleared.iloc[0].before == "hi"
    assert run.output == {"log": ["hi", None]}


# --- steps, states, field history, diff, compare -----------------------------------------------


def test_steps_table_one_row_per_task():
    def boom(state):
        raise RuntimeError("broken tool")

    app = (
        StateGraph(S)
        .add_node("a", node("a"))
        .add_node("boom", boom)
        .add_edge(START, "a")
        .add_edge("a", "boom")
        .compile()
    )
    run = app.run({"log": []})
    steps = run.steps
    assert list(steps.node) == ["a", "boom"] and list(steps.step) == [1, 2]
    assert list(steps.status) == ["ok", "error"]
    assert "broken tool" in steps.error.iloc[1] and steps.writes.iloc[0] == ["count", "log"]
    assert (steps.duration >= 0).all()


def test_states_table_and_field_history():
    run = fan_app().run({"count": 0, "log": []})
    states = run.states
    assert list(states.index) == [0, 1, 2]
    assert states.loc[2, "log"] == ["a", "b", "c"] and states.loc[0, "status"] is MISSING
    # cells stay Python objects; a list is a read-only view of the field's shared list
    cell = states.loc[1, "log"]
    assert isinstance(cell, ListPrefix) and cell == ["a"] and list(cell) == ["a"]
    assert states.loc[2, "log"]._items is cell._items  # one list shared, not one per row
    history = run.field_history("status")
    assert list(history.value) == [MISSING, "A", "C"]
    assert list(history.changed) == [False, True, True]
    assert history.writers.iloc[2] == ["c"]
    with pytest.raises(KeyError, match="nope"):
        run.field_history("nope")


def test_diff_between_two_points_and_compare_two_runs():
    app = fan_app()
    run = app.run({"count": 0, "log": []})
    diff = run.diff(0, 2).set_index("field")
    assert diff.loc["status", "change"] == "added" and diff.loc["log", "to"] == ["a", "b", "c"]
    assert run.diff(2, 2).empty
    other = app.run({"count": 100, "log": []})
    compared = run.compare(other)
    assert set(compared.what) == {"count"}
    assert list(compared.step) == [0, 1, 2]
    assert run.compare(app.run({"count": 0, "log": []})).empty


def test_a_step_that_fails_to_apply_leaves_no_partial_writes():
    class P(TypedDict, total=False):
        total: Annotated[int, operator.add]
        note: str

    app = (
        StateGraph(P)
        .add_node("x", lambda s: {"total": 1, "note": "x"})
        .add_node("y", lambda s: {"total": 2, "note": "y"})
        .add_edge(START, "x")
        .add_edge(START, "y")
        .compile()
    )
    run = app.run({"total": 0})
    assert run.status == "failed"
    assert run.output == run.state_at(run.last_step) == {"total": 0}
    assert app.last_log.final == {"total": 0}  # the engine did not half-apply the step


def test_the_overwrite_name_means_one_write_per_step_like_no_reducer():
    class Named(TypedDict):
        status: Annotated[str, "overwrite"]

    app = (
        StateGraph(Named)
        .add_node("x", lambda s: {"status": "x"})
        .add_node("y", lambda s: {"status": "y"})
        .add_edge(START, "x")
        .add_edge(START, "y")
        .compile()
    )
    assert "status" in str(app.run({"status": "-"}).error)


def test_state_at_a_task_includes_the_remaining_steps_it_saw():
    from nbgraph import RemainingSteps

    class R(TypedDict):
        n: int
        left: RemainingSteps

    seen = []
    app = (
        StateGraph(R)
        .add_node("a", lambda s: seen.append(dict(s)) or {"n": 1})
        .add_edge(START, "a")
        .compile()
    )
    run = app.run({"n": 0}, {"recursion_limit": 10})
    assert run.state_at(("a", 0)) == seen[0] == {"n": 0, "left": 9}


def test_messages_get_their_ids_when_written_so_replays_agree():
    from nbgraph import MessagesState

    app = (
        StateGraph(MessagesState)
        .add_node("bot", lambda s: {"messages": [("assistant", "hello")]})
        .add_edge(START, "bot")
        .compile()
    )
    run = app.run({"messages": [("user", "hi")]})
    ids = [m.id for m in run.output["messages"]]
    assert all(ids)
    assert [m.id for m in run.state_at(1)["messages"]] == ids
    assert [m.id for m in run.state_at(1)["messages"]] == ids  # the same on every replay


def test_a_value_that_cannot_be_copied_is_kept_not_lost():
    import threading

    lock = threading.Lock()

    class H(TypedDict):
        handle: object

    app = StateGraph(H).add_node("a", lambda s: {"handle": lock}).add_edge(START, "a").compile()
    assert app.invoke({"handle": None})["handle"] is lock


def test_last_run_seen_during_a_stream_is_not_stale_afterwards():
    app = fan_app()
    seen_during = []
    for _ in app.stream({"log": []}, stream_mode="updates"):
        seen_during.append(len(app.last_run.steps))
    assert seen_during[0] < len(app.last_run.steps) == 3
    assert app.last_run.status == "done"


def test_a_dict_schemas_undeclared_keys_have_their_own_columns_and_history() -> None:
    from nbgraph import START, StateGraph

    app = (
        StateGraph(dict, reducers={"n": "add"})
        .add_node("a", lambda s: {"n": 1, "status": "done"})
        .add_edge(START, "a")
        .compile()
    )
    run = app.run({"n": 0, "status": "init"})
    assert list(run.states.columns) == ["n", "status"]
    assert run.field_history("status").value.tolist() == ["init", "done"]


def test_state_at_takes_a_task_id_as_the_steps_table_shows_it() -> None:
    from nbgraph import START, StateGraph

    app = StateGraph(dict).add_node("a", lambda s: {"x": 2}).add_edge(START, "a").compile()
    run = app.run({"x": 1})
    task_id = run.steps.task_id.iloc[0]
    assert task_id == "1:0:a"
    assert run.state_at(task_id) == run.state_at(f"task:{task_id}") == {"x": 1}


# --- tables of long runs: one shared list per growing field ----------------------------------


def counting_loop(steps: int, reducer: object = "append"):
    return (
        StateGraph(dict, reducers={"log": reducer})
        .add_node("step", lambda s: {"n": s["n"] + 1, "log": [s["n"]]})
        .add_edge(START, "step")
        .add_conditional_edges("step", lambda s: END if s["n"] >= steps else "step", ["step", END])
        .compile()
    )


def test_a_growing_list_shares_one_list_across_its_rows():
    run = counting_loop(500).run({"n": 0, "log": []}, {"recursion_limit": 600})
    cells = [e.cell("after") for e in run.effect_list if e.field == "log" and e.step > 0]
    assert len(cells) == 500 and all(isinstance(c, ListPrefix) for c in cells)
    assert len({id(c._items) for c in cells}) == 1  # one list of 500 items, not 500 copies
    assert cells[9] == list(range(10)) and cells[-1] == list(range(500))
    row = next(e for e in run.effect_list if (e.step, e.field) == (10, "log"))
    # before and after read as lists of their own
    assert (row.step, row.field, row.before, row.after) == (10, "log", [*range(9)], [*range(10)])
    assert type(row.after) is list and row.after is not row.after
    frame = run.effects[run.effects.field == "log"]
    assert frame.after.iloc[-1] == list(range(500)) and frame.before.iloc[-1][-1] == 498
    assert run.states.loc[500, "log"] == list(range(500))


def test_effects_memory_grows_linearly_with_the_steps():
    import gc
    import tracemalloc

    def kept(steps: int) -> int:
        run = counting_loop(steps).run({"n": 0, "log": []}, {"recursion_limit": steps + 10})
        gc.collect()
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            rows = run.effect_list
            gc.collect()
            assert len(rows) == 2 * steps + 2  # n and log at each step and the input
            return tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()

    small, large = kept(1000), kept(4000)
    assert large < 6 * small, (small, large)  # linear: 4x; one copy per row: 16x


def test_a_list_that_does_not_only_grow_still_shows_each_steps_value():
    def shuffle(state):
        log = state["log"]
        return {"log": Overwrite([*log[1:], log[0]]) if state["n"] % 3 == 2 else [state["n"]],
                "n": state["n"] + 1}  # fmt: skip

    app = (
        StateGraph(dict, reducers={"log": lambda a, b: a + b})
        .add_node("step", shuffle)
        .add_edge(START, "step")
        .add_conditional_edges("step", lambda s: END if s["n"] >= 9 else "step", ["step", END])
        .compile()
    )
    run = app.run({"n": 0, "log": []})
    rows = [e for e in run.effect_list if e.field == "log" and e.step > 0]
    for row in rows:
        assert row.after == run.state_at(row.step)["log"], row.step
        assert row.before == run.state_at(row.step - 1)["log"], row.step


def test_list_prefix_reads_like_the_list_it_stands_for():
    import copy
    import pickle

    shared = [1, [2], 3]
    cell = ListPrefix(shared, 2)
    assert cell == [1, [2]] and [1, [2]].__eq__(cell) is NotImplemented  # so list == cell works
    assert cell != [1, [2], 3] and cell != (1, [2])  # a list is not equal to a tuple either
    assert len(cell) == 2 and cell[-1] == [2] and cell[0:1] == [1] and 3 not in cell
    assert list(cell) == [1, [2]] and cell.__add__([0]) == [1, [2], 0]
    assert cell.__radd__([0]) == [0, 1, [2]]
    assert repr(cell) == "[1, [2]]" and cell == ListPrefix(shared, 2)
    with pytest.raises(IndexError):
        cell[2]
    with pytest.raises(TypeError):
        hash(cell)
    assert pickle.loads(pickle.dumps(cell)) == [1, [2]]
    deep = copy.deepcopy(cell)
    assert type(deep) is list and deep == [1, [2]] and deep[1] is not shared[1]


def test_one_steps_rows_alone_are_the_rows_of_the_whole_table():
    from nbgraph.engine.core.runlog import initial_values
    from nbgraph.record.effects import step_effect_rows

    run = fan_app().run({"count": 0, "log": []})
    steps = [s.step for s in run.log.steps]
    for position, step in enumerate(steps):
        before = run.timeline.after(steps[position - 1]) if position else initial_values(run.graph)
        alone = step_effect_rows(run.log, position, before)
        assert alone == [e for e in Run(run.log).effect_list if e.step == step], step


# --- comparing runs: messages by what they say ------------------------------------------------


def chat_app(reply: str = "hello"):
    from nbgraph import add_messages

    return (
        StateGraph(dict, reducers={"chat": add_messages})
        .add_node("ask", lambda s: {"chat": [("user", "hi")]})
        .add_node("answer", lambda s: {"chat": [("ai", reply)]})
        .add_edge(START, "ask")
        .add_edge("ask", "answer")
        .compile()
    )


def test_compare_reports_fresh_message_ids_apart_from_what_messages_say():
    app = chat_app()
    compared = app.run({"chat": []}).compare(app.run({"chat": []}))
    assert list(compared.what) == ["chat", "chat"] and set(compared.note) == {
        "only message ids differ"
    }
    ids = compared.iloc[-1]
    assert len(ids.this) == len(ids.other) == 2 and not set(ids.this) & set(ids.other)
    changed = app.run({"chat": []}).compare(chat_app("bye").run({"chat": []}))
    said = changed[changed.note == ""]
    assert list(said.step) == [2] and said.iloc[0].other[-1].content == "bye"


def test_compare_reads_langchain_messages_and_tool_call_ids_as_ids():
    from langchain_core.messages import AIMessage, HumanMessage

    def answer(call_id: str, text: str = "ok"):
        calls = [{"name": "search", "args": {"q": "x"}, "id": call_id}]
        return lambda s: {"chat": [HumanMessage("hi"), AIMessage(text, tool_calls=calls)]}

    def run(node):
        return StateGraph(dict).add_node("a", node).add_edge(START, "a").compile().run({})

    compared = run(answer("call_1")).compare(run(answer("call_2")))
    assert list(compared.note) == ["only message ids differ"]
    assert compared.iloc[0].this == [{"id": None, "tool_call_id": None,
                                      "tool_call_ids": ["call_1"]}]  # fmt: skip
    assert list(run(answer("c")).compare(run(answer("c", "other"))).note) == [""]


def test_branch_compare_also_reports_message_ids_apart():
    from nbgraph import add_messages

    graph = StateGraph(dict, reducers={"chat": add_messages})
    graph.add_node("ask", lambda s: {"chat": [("user", "hi")]})
    graph.add_node("answer", lambda s: {"chat": [("ai", "hello")]})
    graph.add_edge(START, "ask").add_edge("ask", "answer")
    branches = graph.compile(semantics="branches").run({"chat": []})
    compared = chat_app().run({"chat": []}).compare(branches)
    assert len(compared) and compared.why.str.startswith("only message ids differ").all()


def test_pausing_the_collector_puts_it_back_and_leaves_anyones_frozen_objects_frozen() -> None:
    """`collector_paused` (around a long run's tables and loading) turns the collector back
    on, moves what it built out of the young generation, and never unfreezes what a caller
    froze with `gc.freeze()`."""
    import gc

    from nbgraph.record.effects import collector_paused

    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
        built = [[n] for n in range(1000)]
    assert gc.isenabled() and gc.get_freeze_count() == 0
    young = {id(item) for item in gc.get_objects(0)}
    assert not any(id(item) in young for item in built)
    theirs = [["a caller's object"]]  # (frozen below, with everything else alive)

    def generations() -> set[int]:  # what the collector may walk (not the frozen)
        return {id(item) for n in range(3) for item in gc.get_objects(n)}

    gc.freeze()
    try:
        assert id(theirs[0]) not in generations()
        with collector_paused():
            more = [[n] for n in range(10)]
        assert gc.isenabled() and gc.get_freeze_count() > 0
        assert id(theirs[0]) not in generations(), "a caller's frozen object was unfrozen"
        assert any(id(item) == id(more[0]) for item in gc.get_objects(0))
    finally:
        gc.unfreeze()
