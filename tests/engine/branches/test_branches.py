"""Branch lineages (`compile(semantics="branches")`): each rule of docs/BRANCHES.md, the record
of a branch run, and the differences from supersteps that `Run.compare` explains."""

from __future__ import annotations

import asyncio
import dataclasses
import operator
import warnings
from typing import Annotated, TypedDict

import pytest

from nbgraph import (
    END,
    START,
    Command,
    GraphBuildError,
    InvalidUpdateError,
    MemorySaver,
    Run,
    Send,
    SqliteSaver,
    StateGraph,
    first_write_wins,
    interrupt,
    last_write_wins,
)
from nbgraph.types import MISSING


class Log(TypedDict):
    log: Annotated[list, operator.add]
    who: str


def writer(name: str, seen: dict | None = None):
    """A node that appends `name:<len(log) it saw>` and overwrites `who`."""

    def node(state: dict) -> dict:
        if seen is not None:
            seen.setdefault(name, []).append({k: list(v) if isinstance(v, list) else v
                                               for k, v in state.items()})  # fmt: skip
        return {"log": [f"{name}:{len(state['log'])}"], "who": name}

    node.__name__ = name
    return node


def diamond(merge=None, seen=None) -> StateGraph:
    """a forks into b and c; a waiting edge joins them into d."""
    graph = StateGraph(Log)
    for name in "abc":
        graph.add_node(name, writer(name, seen))
    graph.add_node("d", writer("d", seen), merge=merge)
    graph.add_edge(START, "a").add_edge("a", "b").add_edge("a", "c")
    graph.add_edge(["b", "c"], "d").add_edge("d", END)
    return graph


START_STATE = {"log": [], "who": ""}


# --- rules ------------------------------------------------------------------------------------


def test_a_branch_sees_only_its_own_lineage_before_the_join():
    seen: dict = {}
    run = diamond(seen=seen).compile(semantics="branches").run(dict(START_STATE))
    assert run.status == "done"
    # b and c each saw a's write only; d saw the join of both
    assert seen["b"][0]["log"] == ["a:0"] and seen["c"][0]["log"] == ["a:0"]
    assert seen["d"][0]["log"] == ["a:0", "b:1", "c:1"]
    assert run.output["log"] == ["a:0", "b:1", "c:1", "d:3"]


def test_sibling_visibility_differs_from_supersteps():
    """With supersteps, a node after a plain edge reads its sibling's writes of the last
    step; with branch lineages it reads only its own lineage."""

    class S(TypedDict):
        log: Annotated[list, operator.add]

    graph = StateGraph(S)
    graph.add_node("a", lambda s: {"log": ["a"]})
    graph.add_node("b", lambda s: {"log": ["b"]})
    graph.add_node("c", lambda s: {"log": ["c"]})
    graph.add_node("after_b", lambda s: {"log": [f"after_b saw {len(s['log'])}"]})
    graph.add_edge(START, "a").add_edge("a", "b").add_edge("a", "c").add_edge("b", "after_b")
    shared = graph.compile().run({"log": []})
    lineage = graph.compile(semantics="branches").run({"log": []})
    assert "after_b saw 3" in shared.output["log"]
    assert "after_b saw 2" in lineage.output["log"]
    table = shared.compare(lineage)
    row = table[(table.node == "after_b") & (table.what == "log")].iloc[0]
    assert row.this == ["a", "b", "c"] and row.other == ["a", "b"]
    assert "its own lineage" in row.why


def test_plain_edges_run_once_per_lineage_and_a_join_runs_once():
    class S(TypedDict):
        log: Annotated[list, operator.add]
        n: int

    def build(merge=None):
        graph = StateGraph(S)
        graph.add_node("split", lambda s: None)
        graph.add_conditional_edges(
            "split", lambda s: [Send("work", {"n": i, "log": []}) for i in range(3)]
        )
        graph.add_node("work", lambda s: {"log": [f"w{s['n']}"]})
        graph.add_node("reduce", lambda s: {"log": [f"reduce saw {len(s['log'])}"]}, merge=merge)
        graph.add_edge(START, "split").add_edge("work", "reduce")
        return graph

    shared = build().compile().run({"log": [], "n": 0})
    lineage = build().compile(semantics="branches").run({"log": [], "n": 0})
    joined = build("delta").compile(semantics="branches").run({"log": [], "n": 0})
    assert len(shared.tree.by_name["reduce"]) == 1
    assert len(lineage.tree.by_name["reduce"]) == 3
    assert lineage.output["log"] == ["w0", "reduce saw 1", "w1", "reduce saw 1", "w2",
                                     "reduce saw 1"]  # fmt: skip
    assert len(joined.tree.by_name["reduce"]) == 1
    assert joined.output["log"] == ["w0", "w1", "w2", "reduce saw 3"]
    table = shared.compare(lineage)
    runs = table[(table.node == "reduce") & (table.what == "runs")].iloc[0]
    assert (runs.this, runs.other) == (1, 3)
    assert "once per arriving lineage" in runs.why


def test_the_same_lineage_arriving_twice_runs_once():
    class S(TypedDict):
        log: Annotated[list, operator.add]

    graph = StateGraph(S)
    graph.add_node("a", lambda s: Command(update={"log": ["a"]}, goto="b"))
    graph.add_node("b", lambda s: {"log": ["b"]})
    graph.add_edge(START, "a").add_edge("a", "b")
    run = graph.compile(semantics="branches").run({"log": []})
    assert run.output == {"log": ["a", "b"]}
    (task,) = run.tree.tasks(2)
    assert task.triggers == ("a", "a")


def test_plain_edges_from_branches_of_different_lengths():
    graph = StateGraph(Log)
    for name in ["a", "b", "b2", "c", "d"]:
        graph.add_node(name, writer(name))
    graph.add_edge(START, "a").add_edge("a", "b").add_edge("b", "b2").add_edge("a", "c")
    graph.add_edge("b2", "d").add_edge("c", "d")
    run = graph.compile(semantics="branches").run(dict(START_STATE))
    # d runs on c's lineage (step 3) and on b2's (step 4), each seeing only its own
    assert [t.parents for t in (run.tree[i] for i in run.tree.by_name["d"])] == [
        ("task:2:1:c",),
        ("task:3:0:b2",),
    ]
    assert run.output["log"] == ["a:0", "c:1", "d:2", "b:1", "b2:2", "d:3"]
    assert run.output["who"] == "d"


def test_delta_merge_appends_each_entry_once_in_routing_order():
    run = diamond().compile(semantics="branches").run({"log": ["in"], "who": ""})
    join = run.state_at("join:3:d")
    assert join["log"] == ["in", "a:1", "b:2", "c:2"]  # the shared prefix once
    (record,) = run.log.steps[3].joins
    assert record.strategy == "delta" and record.base == "task:1:0:a"
    assert record.parents == ("task:2:0:b", "task:2:1:c")
    assert record.applied == ("task:2:0:b", "task:2:1:c")


def test_nested_fork_inside_a_branch_is_not_counted_twice():
    class S(TypedDict):
        log: Annotated[list, operator.add]

    graph = StateGraph(S)
    for name in ["a", "b", "b1", "b2", "bj", "c", "end"]:
        graph.add_node(name, (lambda n: lambda s: {"log": [n]})(name))
    graph.add_edge(START, "a").add_edge("a", "b").add_edge("a", "c")
    graph.add_edge("b", "b1").add_edge("b", "b2").add_edge(["b1", "b2"], "bj")
    graph.add_edge(["bj", "c"], "end")
    run = graph.compile(semantics="branches").run({"log": []})
    # c arrived at the join first (step 2), bj later (step 4): routing order
    assert run.output["log"] == ["a", "c", "b", "b1", "b2", "bj", "end"]
    assert run.state_at("join:5:end") == {"log": ["a", "c", "b", "b1", "b2", "bj"]}
    assert run.log.steps[5].joins[0].applied == (
        "task:2:1:c", "task:2:0:b", "task:3:0:b1", "task:3:1:b2", "task:4:0:bj"
    )  # fmt: skip


def test_fold_appends_what_branches_share_once_per_branch():
    run = diamond("fold").compile(semantics="branches").run({"log": ["in"], "who": ""})
    assert run.state_at("join:3:d")["log"] == ["in", "a:1", "b:2", "in", "a:1", "c:2"]
    rows = run.effects[run.effects.point == "join:3:d"].set_index("field")
    log = rows.loc["log"]
    assert log.reducer == "fold" and log.root_reset
    assert log.writes == [("b", ["in", "a:1", "b:2"]), ("c", ["in", "a:1", "c:2"])]
    assert log.after == ["in", "a:1", "b:2", "in", "a:1", "c:2"]
    assert log.before == ["in", "a:1"]
    # the same graph merged by delta does not duplicate
    delta = diamond().compile(semantics="branches").run({"log": ["in"], "who": ""})
    table = delta.compare(run)
    final = table[(table.node == "END") & (table.what == "log")].iloc[0]
    assert "folded whole branch states" in final.why


def test_fold_adds_shared_counts_once_per_branch():
    class S(TypedDict):
        n: Annotated[int, operator.add]

    graph = StateGraph(S)
    graph.add_node("a", lambda s: {"n": 1}).add_node("b", lambda s: {"n": 10})
    graph.add_node("c", lambda s: {"n": 100}).add_node("d", lambda s: None, merge="fold")
    graph.add_edge(START, "a").add_edge("a", "b").add_edge("a", "c").add_edge(["b", "c"], "d")
    # fold: (5 + 1 + 10) + (5 + 1 + 100): the shared 6 counted twice; then d adds nothing
    assert graph.compile(semantics="branches").invoke({"n": 5}) == {"n": 122}
    graph.nodes["d"] = dataclasses.replace(graph.nodes["d"], merge="delta")
    assert graph.compile(semantics="branches").invoke({"n": 5}) == {"n": 116}  # once each


@pytest.mark.parametrize(
    ("strategy", "kept"), [(last_write_wins, "c:1"), (first_write_wins, "b:1")]
)
def test_a_strategy_resets_the_root(strategy, kept):
    run = diamond(strategy).compile(semantics="branches").run(dict(START_STATE))
    join = run.state_at("join:3:d")
    assert join["log"] == ["a:0", kept]  # the other branch's entry is gone
    rows = run.effects[run.effects.point == "join:3:d"]
    assert rows.root_reset.all() and set(rows.reducer) == {strategy.__name__}
    node = run.tree["join:3:d"]
    assert node.kind == "join" and node.reason == strategy.__name__


def test_a_strategy_that_drops_a_field_names_it():
    def only_log(states):
        return {"log": states[0]["log"] + states[1]["log"]}

    run = diamond(only_log).compile(semantics="branches").run(dict(START_STATE))
    assert run.tree["join:3:d"].dropped == ("who",)
    assert run.log.steps[3].joins[0].dropped == ("who",)
    assert "who" not in run.state_at("join:3:d")


def test_a_state_filter_starts_a_new_root():
    class S(TypedDict, total=False):
        log: Annotated[list, operator.add]
        secret: str

    seen = {}

    def b(state):
        seen["b"] = dict(state)
        return {"log": ["b"]}

    graph = StateGraph(S)
    graph.add_node("a", lambda s: {"log": ["a"], "secret": "x"}).add_node("b", b)
    graph.add_edge(START, "a")
    graph.add_edge("a", "b", state_filter=lambda s: {"log": s["log"]})
    run = graph.compile(semantics="branches").run({"log": []})
    assert seen["b"] == {"log": ["a"]}
    (reset,) = run.log.steps[2].resets
    assert reset.reason == "state_filter" and reset.dropped == ("secret",)
    assert reset.parent == "task:1:0:a"
    assert run.tree[reset.id].parents == ("task:1:0:a",)
    rows = run.effects[run.effects.root_reset]
    assert list(rows.field) == ["secret"] and rows.iloc[0].after is MISSING


def test_overwrite_written_by_two_branches_is_a_merge_not_an_error():
    shared = diamond().compile().run(dict(START_STATE))
    assert isinstance(shared.error, InvalidUpdateError)
    run = diamond().compile(semantics="branches").run(dict(START_STATE))
    assert run.status == "done"
    row = run.effects[(run.effects.point == "join:3:d") & (run.effects.field == "who")].iloc[0]
    assert row.conflict and row.winner == "c" and row.after == "c"
    assert row.writes == [("b", "b"), ("c", "c")]
    table = shared.compare(run)
    outcome = table[table.what == "outcome"].iloc[0]
    assert outcome.this.startswith("failed: InvalidUpdateError") and outcome.other == "done"
    assert "overwrite field" in outcome.why


def test_two_writes_by_one_task_are_still_an_error():
    class S(TypedDict):
        who: str

    graph = StateGraph(S)
    graph.add_node("a", lambda s: [Command(update={"who": "x"}), Command(update={"who": "y"})])
    graph.add_edge(START, "a")
    run = graph.compile(semantics="branches").run({"who": ""})
    assert isinstance(run.error, InvalidUpdateError) and "'who'" in str(run.error)


def test_end_collects_every_lineage_in_routing_order():
    graph = StateGraph(Log)
    for name in ["a", "b", "c", "c2"]:
        graph.add_node(name, writer(name))
    graph.add_edge(START, "a").add_edge("a", "b").add_edge("a", "c").add_edge("c", "c2")
    graph.add_edge("b", END)  # c2 is a dead end: its lineage ends there too
    run = graph.compile(semantics="branches").run(dict(START_STATE))
    assert run.log.end.parents == ("task:2:0:b", "task:3:0:c2")
    assert run.output == {"log": ["a:0", "b:1", "c:1", "c2:2"], "who": "c2"}
    node = run.tree["join:end"]
    assert node.kind == "join" and node.name == "END"


def test_end_merge_can_fold_or_use_a_strategy():
    graph = StateGraph(Log)
    for name in "abc":
        graph.add_node(name, writer(name))
    graph.add_edge(START, "a").add_edge("a", "b").add_edge("a", "c")
    fold = graph.compile(semantics="branches", end_merge="fold").invoke(dict(START_STATE))
    assert fold["log"] == ["a:0", "b:1", "a:0", "c:1"]
    first = graph.compile(semantics="branches", end_merge=first_write_wins)
    assert first.invoke(dict(START_STATE)) == {"log": ["a:0", "b:1"], "who": "b"}


def test_a_join_that_never_fires_does_not_lose_its_lineage():
    graph = StateGraph(Log)
    for name in "abcd":
        graph.add_node(name, writer(name))
    graph.add_edge(START, "a").add_conditional_edges("a", lambda s: ["b"])
    graph.add_edge(["b", "c"], "d")
    with pytest.warns(UserWarning, match=r"Waiting edge \['b', 'c'\] -> 'd' never fired"):
        run = graph.compile(semantics="branches").run(dict(START_STATE))
    assert run.output["log"] == ["a:0", "b:1"]
    assert any("never fired" in w for w in run.warnings)


def test_a_deferred_node_joins_every_lineage_that_reached_it():
    graph = StateGraph(Log)
    for name in ["a", "b", "c", "c2"]:
        graph.add_node(name, writer(name))
    graph.add_node("last", writer("last"), defer=True)
    graph.add_edge(START, "a").add_edge("a", "b").add_edge("a", "c").add_edge("c", "c2")
    graph.add_edge("b", "last").add_edge("c2", "last")
    run = graph.compile(semantics="branches").run(dict(START_STATE))
    assert len(run.tree.by_name["last"]) == 1
    assert run.output["log"] == ["a:0", "b:1", "c:1", "c2:2", "last:4"]


@pytest.mark.filterwarnings("ignore:Node .* cannot be reached")
def test_sends_and_commands_in_branch_lineages():
    class S(TypedDict):
        log: Annotated[list, operator.add]
        item: int

    seen = []

    def work(arg):
        seen.append(arg)
        return {"log": [f"w{arg['item']}"]}

    graph = StateGraph(S)
    graph.add_node("plan", lambda s: Command(goto=[Send("work", {"item": i}) for i in (1, 2)]))
    graph.add_node("work", work)
    graph.add_node("sum", lambda s: {"log": [f"sum of {len(s['log'])}"]}, merge="delta")
    graph.add_edge(START, "plan").add_edge("work", "sum")
    run = graph.compile(semantics="branches").run({"log": ["x"], "item": 0})
    assert seen == [{"item": 1}, {"item": 2}]  # a send task reads its argument
    assert run.output["log"] == ["x", "w1", "w2", "sum of 3"]
    assert [t.parents for t in run.tree.tasks(2)] == [("task:1:0:plan",), ("task:1:0:plan",)]


def test_a_loop_in_one_lineage_matches_supersteps():
    class S(TypedDict):
        n: int
        log: Annotated[list, operator.add]

    graph = StateGraph(S)
    graph.add_node("tick", lambda s: {"n": s["n"] + 1, "log": [s["n"]]})
    graph.add_edge(START, "tick")
    graph.add_conditional_edges("tick", lambda s: END if s["n"] >= 50 else "tick")
    a = graph.compile().invoke({"n": 0, "log": []})
    run = graph.compile(semantics="branches").run({"n": 0, "log": []})
    assert run.output == a == {"n": 50, "log": list(range(50))}
    assert run.state_at(("tick", 10)) == {"n": 10, "log": list(range(10))}
    assert run.state_at(25) == {"n": 25, "log": list(range(25))}


def test_state_at_equals_what_each_node_saw():
    seen: dict = {}
    graph = StateGraph(Log)
    names = ["a", "b", "c", "b2", "c2", "j", "k"]
    for name in names:
        graph.add_node(name, writer(name, seen), merge="fold" if name == "k" else None)
    graph.add_edge(START, "a").add_edge("a", "b").add_edge("a", "c").add_edge("b", "b2")
    graph.add_edge("c", "c2").add_edge(["b2", "c"], "j").add_edge(["j", "c2"], "k")
    run = graph.compile(semantics="branches").run(dict(START_STATE))
    assert run.status == "done"
    for name, states in seen.items():
        for k, state in enumerate(states):
            assert run.state_at((name, k)) == state, (name, k)
    loaded = Run.from_json(run.to_json())
    for name, states in seen.items():
        for k, state in enumerate(states):
            assert loaded.state_at((name, k)) == state, (name, k)
    assert loaded.output == run.output
    assert loaded.effects.astype(str).equals(run.effects.astype(str))


def test_a_branch_writing_in_place_does_not_change_its_sibling():
    class S(TypedDict):
        items: Annotated[list, "append"]

    graph = StateGraph(S)
    graph.add_node("a", lambda s: {"items": ["a"]})
    for name in "bc":
        graph.add_node(name, (lambda n: lambda s: {"items": [n] * 3})(name))
        graph.add_node(f"{name}2", (lambda n: lambda s: {"items": [f"{n}2:{len(s['items'])}"]})(
            name))  # fmt: skip
    graph.add_edge(START, "a").add_edge("a", "b").add_edge("a", "c")
    graph.add_edge("b", "b2").add_edge("c", "c2")
    run = graph.compile(semantics="branches").run({"items": []})
    assert run.state_at(("b2", 0)) == {"items": ["a", "b", "b", "b"]}
    assert run.state_at(("c2", 0)) == {"items": ["a", "c", "c", "c"]}
    assert run.output["items"] == ["a", "b", "b", "b", "b2:4", "c", "c", "c", "c2:4"]


def test_states_table_and_stream_show_lineages_met():
    app = diamond().compile(semantics="branches")
    run = app.run(dict(START_STATE))
    assert list(run.states.index) == [0, 1, 2, 3]
    assert run.states.loc[2, "log"] == ["a:0", "b:1", "c:1"]
    chunks = list(app.stream(dict(START_STATE), stream_mode="values"))
    assert chunks[-1] == run.output
    assert {"log": ["a:0", "b:1", "c:1"], "who": "c"} in chunks


def test_async_runs_branch_lineages_too():
    graph = StateGraph(Log)

    async def b(state):
        return {"log": [f"b:{len(state['log'])}"], "who": "b"}

    graph.add_node("a", writer("a")).add_node("b", b).add_node("c", writer("c"))
    graph.add_edge(START, "a").add_edge("a", "b").add_edge("a", "c")
    app = graph.compile(semantics="branches")
    out = asyncio.run(app.ainvoke(dict(START_STATE)))
    assert out == {"log": ["a:0", "b:1", "c:1"], "who": "c"}
    assert app.last_run.state_at(("b", 0)) == {"log": ["a:0"], "who": "a"}


def test_the_tree_drawing_shows_joins_with_their_lineages_numbered():
    run = diamond().compile(semantics="branches").run(dict(START_STATE))
    source = run.draw_tree().source
    assert "join for d" in source and "merge: delta" in source and "END" in source
    assert "[label=1]" in source and "[label=2]" in source  # (in the tree's one font size)


# --- bad input --------------------------------------------------------------------------------


def test_bad_semantics_and_merges_are_named():
    with pytest.raises(GraphBuildError, match="semantics='lineage'"):
        diamond().compile(semantics="lineage")
    with pytest.raises(GraphBuildError, match="end_merge='sum'"):
        diamond().compile(semantics="branches", end_merge="sum")
    with pytest.raises(GraphBuildError, match=r"Node 'd': merge= must be .*'delta' or 'fold'"):
        diamond("union").compile()


def test_a_strategy_returning_no_state_is_named():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run = diamond(lambda states: 42).compile(semantics="branches").run(dict(START_STATE))
    assert isinstance(run.error, InvalidUpdateError)
    assert "the merge for 'd' at step 3" in str(run.error)


# --- checkpoints, interrupts, time travel ---------------------------------------------------


def asking_diamond(seen: dict) -> StateGraph:
    """a forks into b and c; c asks a person; [b, c] join into d."""

    def ask(state):
        seen.setdefault("c", []).append(list(state["log"]))
        answer = interrupt("ok?")
        return {"log": [f"c:{answer}:{len(state['log'])}"], "who": "c"}

    graph = StateGraph(Log)
    for name in "abd":
        graph.add_node(name, writer(name, seen))
    graph.add_node("c", ask)
    graph.add_edge(START, "a").add_edge("a", "b").add_edge("a", "c").add_edge(["b", "c"], "d")
    return graph


@pytest.fixture(params=["memory", "sqlite"])
def saver(request, tmp_path):
    return MemorySaver() if request.param == "memory" else SqliteSaver(tmp_path / "t.sqlite")


def test_an_interrupt_in_one_branch_resumes_with_its_lineage(saver):
    seen: dict = {}
    app = asking_diamond(seen).compile(checkpointer=saver, semantics="branches")
    config = {"configurable": {"thread_id": "t"}}
    paused = app.invoke(dict(START_STATE), config)
    assert paused["__interrupt__"][0].value == "ok?"
    assert app.get_state(config).next == ("b", "c")
    done = app.invoke(Command(resume="yes"), config)
    assert done == {"log": ["a:0", "b:1", "c:yes:1", "d:3"], "who": "d"}
    assert seen["c"] == [["a:0"], ["a:0"]]  # asked, then re-run answered: its own lineage
    assert seen["d"][0]["log"] == ["a:0", "b:1", "c:yes:1"]
    # the resumed run's record starts from the restored lineages and agrees with the nodes
    run = app.last_run
    assert run.state_at(("d", 0)) == seen["d"][0]
    assert run.output == done
    join = run.effects[(run.effects.point == "join:3:d") & (run.effects.field == "who")]
    assert join.iloc[0].winner == "c"


def test_history_and_a_record_rebuilt_from_a_branch_thread(saver):
    seen: dict = {}
    app = asking_diamond(seen).compile(checkpointer=saver, semantics="branches")
    config = {"configurable": {"thread_id": "h"}}
    app.invoke(dict(START_STATE), config)
    app.invoke(Command(resume="yes"), config)
    history = list(app.get_state_history(config))
    assert [h.metadata["step"] for h in history] == [3, 2, 1, 0, -1]
    assert history[-1].next == ("__start__",) and history[-1].values == {}
    assert history[1].values == {"log": ["a:0", "b:1", "c:yes:1"], "who": "c"}  # merged view
    assert history[1].next == ("d",)
    rebuilt = Run.from_checkpointer(saver, "h", graph=app)
    assert rebuilt.log.semantics == "branches"
    assert rebuilt.output == app.get_state(config).values
    assert rebuilt.state_at(("d", 0)) == seen["d"][0]
    assert rebuilt.state_at(("b", 0)) == {"log": ["a:0"], "who": "a"}


def test_replay_and_fork_a_branch_thread(saver):
    seen: dict = {}
    app = asking_diamond(seen).compile(checkpointer=saver, semantics="branches")
    config = {"configurable": {"thread_id": "f"}}
    app.invoke(dict(START_STATE), config)
    app.invoke(Command(resume="yes"), config)
    after_a = next(h for h in app.get_state_history(config) if h.metadata["step"] == 1)
    replay = app.invoke(None, after_a.config)  # b and c run again from a's lineage
    assert replay["__interrupt__"] and replay["log"] == ["a:0"]
    assert app.invoke(Command(resume="no"), config)["log"] == ["a:0", "b:1", "c:no:1", "d:3"]
    forked = app.update_state(after_a.config, {"log": ["edited"]}, as_node="a")
    app.invoke(None, forked)
    out = app.invoke(Command(resume="ok"), forked)
    assert out["log"] == ["a:0", "edited", "b:2", "c:ok:2", "d:4"]


def test_new_input_on_a_branch_thread_starts_from_its_state(saver):
    graph = diamond()
    app = graph.compile(checkpointer=saver, semantics="branches")
    config = {"configurable": {"thread_id": "n"}}
    first = app.invoke(dict(START_STATE), config)
    second = app.invoke({"log": ["again"]}, config)
    assert second["log"] == [*first["log"], "again", "a:5", "b:6", "c:6", "d:8"]
    run = app.last_run
    assert run.state_at(("a", 0)) == {"log": [*first["log"], "again"], "who": "d"}
    assert Run.from_json(run.to_json()).output == second


def test_a_long_branch_thread_restores_from_snapshots():
    class S(TypedDict):
        n: int
        log: Annotated[list, operator.add]

    graph = StateGraph(S)
    graph.add_node("tick", lambda s: {"n": s["n"] + 1, "log": [s["n"]]})
    graph.add_node("side", lambda s: {"log": [f"side{s['n']}"]})
    graph.add_edge(START, "tick").add_edge("tick", "side")
    graph.add_conditional_edges("tick", lambda s: END if s["n"] >= 300 else "tick")
    saver = MemorySaver()
    app = graph.compile(checkpointer=saver, semantics="branches")
    config = {"configurable": {"thread_id": "long"}}
    out = app.invoke({"n": 0, "log": []}, config)
    assert out == graph.compile(semantics="branches").invoke({"n": 0, "log": []})
    records = saver.history("long")
    snapshots = [r for r in records if r.snapshot is not None]
    assert 1 < len(snapshots) < len(records) / 4  # not every checkpoint holds the state
    assert app.get_state(config).values == out
    middle = next(h for h in app.get_state_history(config) if h.metadata["step"] == 150)
    assert middle.values["n"] == 150 and middle.values["log"][:3] == [0, "side1", 1]


def test_static_breakpoints_in_branch_lineages():
    app = diamond().compile(
        checkpointer=MemorySaver(), semantics="branches", interrupt_before=["d"]
    )
    config = {"configurable": {"thread_id": "b"}}
    stopped = app.invoke(dict(START_STATE), config)
    assert stopped == {"log": ["a:0", "b:1", "c:1"], "who": "c"}
    assert app.get_state(config).next == ("d",)
    assert app.invoke(None, config) == {"log": ["a:0", "b:1", "c:1", "d:3"], "who": "d"}


# --- edge cases -------------------------------------------------------------------------------


def test_a_waiting_edge_into_end_collects_its_lineages():
    graph = StateGraph(Log)
    for name in "abc":
        graph.add_node(name, writer(name))
    graph.add_edge(START, "a").add_edge("a", "b").add_edge("a", "c").add_edge(["b", "c"], END)
    run = graph.compile(semantics="branches").run(dict(START_STATE))
    assert run.status == "done"
    assert run.output == {"log": ["a:0", "b:1", "c:1"], "who": "c"}


def test_a_one_source_waiting_edge_joins_every_send():
    class S(TypedDict):
        log: Annotated[list, operator.add]
        n: int

    graph = StateGraph(S)
    graph.add_node("split", lambda s: None)
    graph.add_conditional_edges("split", lambda s: [Send("w", {"n": i, "log": []}) for i in (1, 2)])
    graph.add_node("w", lambda s: {"log": [f"w{s['n']}"]})
    graph.add_node("r", lambda s: {"log": [f"r saw {len(s['log'])}"]})
    graph.add_edge(START, "split").add_edge(["w"], "r")
    out = graph.compile(semantics="branches").invoke({"log": [], "n": 0})
    assert out["log"] == ["w1", "w2", "r saw 2"]
    assert graph.compile().invoke({"log": [], "n": 0})["log"] == ["w1", "w2", "r saw 2"]


def test_lineages_held_at_a_join_are_met_in_the_order_they_came():
    graph = StateGraph(Log)
    for name in ["a", "b", "c1", "c2", "d"]:
        graph.add_node(name, writer(name))
    graph.add_edge(START, "a").add_edge("a", "b").add_edge("a", "c1").add_edge("c1", "c2")
    graph.add_edge(["b", "c2"], "d")
    run = graph.compile(semantics="branches").run(dict(START_STATE))
    assert run.state_at(2)["log"] == ["a:0", "b:1", "c1:1"]  # b arrived first
    assert run.output["log"] == ["a:0", "b:1", "c1:1", "c2:2", "d:4"]


def test_conflict_marks_a_branch_that_lost_not_every_append():
    run = diamond().compile(semantics="branches").run(dict(START_STATE))
    rows = run.effects[run.effects.point == "join:3:d"].set_index("field")
    assert not rows.loc["log"].conflict and rows.loc["log"].winner == ""
    assert rows.loc["who"].conflict and rows.loc["who"].winner == "c"
    lost = diamond(last_write_wins).compile(semantics="branches").run(dict(START_STATE))
    rows = lost.effects[lost.effects.point == "join:3:d"].set_index("field")
    assert rows.loc["log"].conflict and rows.loc["log"].winner == "c"


def test_compare_shows_different_failures():
    class S(TypedDict):
        who: str

    def boom(state):
        raise ValueError("boom")

    graph = StateGraph(S)
    graph.add_node("a", lambda s: {"who": "a"}).add_node("b", lambda s: {"who": "b"})
    graph.add_node("c", boom)
    graph.add_edge(START, "a").add_edge(START, "b").add_edge("a", "c")
    shared = graph.compile().run({"who": ""})
    lineage = graph.compile(semantics="branches").run({"who": ""})
    assert shared.status == lineage.status == "failed"
    table = shared.compare(lineage)
    outcome = table[table.what == "outcome"].iloc[0]
    assert "InvalidUpdateError" in outcome.this and "ValueError: boom" in outcome.other
    runs = table[(table.node == "c") & (table.what == "runs")].iloc[0]
    assert "supersteps run failed at step 1" in runs.why


def test_superstep_what_ifs_say_clearly_they_do_not_apply_to_branch_runs():
    run = diamond().compile(semantics="branches").run(dict(START_STATE))
    with pytest.raises(NotImplementedError, match=r"run\.remerge\(\) replays supersteps"):
        run.remerge({"log": "overwrite"})
    with pytest.raises(NotImplementedError, match=r"join rows of run\.effects"):
        run.order_sensitivity()


def test_ephemeral_fields_live_one_task_in_a_lineage_and_through_a_join_and_a_resume():
    seen: dict = {}

    def node(name, note=False):
        def run(state):
            seen.setdefault(name, []).append(dict(state))
            return {"log": [name], **({"note": f"from {name}"} if note else {})}

        return run

    graph = StateGraph(dict, reducers={"log": "append"}, ephemeral={"note"})
    graph.add_node("a", node("a", note=True)).add_node("b", node("b", note=True))
    graph.add_node("c", node("c")).add_node("ask", node("ask")).add_node("d", node("d"))
    graph.add_edge(START, "a").add_edge("a", "b").add_edge("a", "c").add_edge("c", "ask")
    graph.add_edge(["b", "ask"], "d")
    app = graph.compile(checkpointer=MemorySaver(), semantics="branches", interrupt_before=["d"])
    config = {"configurable": {"thread_id": "e"}}
    app.invoke({"log": []}, config)
    app.invoke(None, config)  # resumed from the checkpoint before d: the join is made then
    assert seen["b"][0]["note"] == seen["c"][0]["note"] == "from a"  # a's writes, one task on
    assert "note" not in seen["ask"][0]  # c wrote none, so a's note did not outlive c
    assert seen["d"][0]["note"] == "from b"  # b's lineage still had its note at the join
    run = app.last_run
    assert run.state_at(("d", 0)) == seen["d"][0]
    cleared = run.effects[run.effects.reducer == "cleared"]
    assert list(cleared.field) == ["note"] and list(cleared.point) == ["task:4:0:d"]
