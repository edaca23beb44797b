"""A graph run inside a node starts and ends cheaply: it is freed when it ends (no cycle left
for the collector), what every run of a graph reads is worked out once per graph, and its
input is read from the node's view without a copy while the run still keeps copies."""

from __future__ import annotations

import gc
import operator
from typing import Annotated, TypedDict

from nbgraph import START, StateGraph
from nbgraph.engine.core import plans


class S(TypedDict):
    n: int
    log: Annotated[list, operator.add]


def parent_with_subgraph(sub_node: object) -> object:
    sub = StateGraph(S).add_node("inner", sub_node).add_edge(START, "inner").compile()
    return (
        StateGraph(S)
        .add_node("sub", sub)
        .add_node("after", lambda s: {"n": s["n"] + 1})
        .add_edge(START, "sub")
        .add_edge("sub", "after")
        .compile()
    )


def left_for_the_collector(app: object, runs: int) -> int:
    """The objects only the cyclic collector frees after `runs` invokes of `app`."""
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(runs):
            assert app.invoke({"n": 0, "log": []})["n"] == 11
        return gc.collect()
    finally:
        if enabled:
            gc.enable()


def test_a_finished_run_inside_a_node_leaves_no_cycle_for_the_collector():
    app = parent_with_subgraph(lambda s: {"n": s["n"] + 10})
    left_for_the_collector(app, 2)  # (first-use caches, and what other tests left behind)
    # a run left to the collector leaves its loop, runner, schedule, their bound methods...
    # (19 objects a subgraph call): none is, however many runs there are
    assert left_for_the_collector(app, 40) < 10


def test_the_runs_of_one_graph_share_its_tuples_and_the_table_is_capped():
    app = parent_with_subgraph(lambda s: {"n": s["n"] + 1})
    first, second = (app.run({"n": 0, "log": []}) for _ in range(2))
    one, two = first.log.steps[1].tasks[0], second.log.steps[1].tasks[0]
    assert one.triggers == two.triggers == (START,) and one.triggers is two.triggers
    table = plans._Interned()
    for i in range(plans._INTERNED + 5):
        assert table[(f"n{i}",)] == (f"n{i}",)
    assert len(table) == plans._INTERNED


def test_a_subgraph_reads_the_parents_values_uncopied_and_keeps_copies():
    def grow(state: dict) -> dict:
        state["log"].append("changed in place")  # (its own copy: nobody else sees this)
        return {"log": ["written"]}

    app = parent_with_subgraph(grow)
    given = ["given"]
    run = app.run({"n": 0, "log": given})
    assert given == ["given"]
    # the subgraph returns its whole state: the parent appends it (operator.add)
    assert run.output["log"] == ["given", "given", "written"]
    (sub,) = run.log.steps[1].tasks[0].subruns
    assert sub.input == {"n": 0, "log": ["given"]}
    assert sub.final["log"] == ["given", "written"]
    assert run.state_at(0)["log"] == ["given"]
