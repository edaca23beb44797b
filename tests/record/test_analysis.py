"""What-if analyses of a recorded run: writers, order_sensitivity, remerge."""

import operator
import subprocess
import sys
from collections import Counter
from typing import Annotated, Any, TypedDict

import pytest

from nbgraph import END, MISSING, START, InvalidUpdateError, Run, Send, StateGraph
from nbgraph.record.whatif.analysis import _order_dependent
from nbgraph.record.whatif.remerge import RemergedRun
from nbgraph.reducers import get_reducer, reducer_from_callable
from nbgraph.schema import FieldSpec


class S(TypedDict, total=False):
    log: Annotated[list, operator.add]
    total: Annotated[int, "add"]
    best: Annotated[int, "max"]
    note: str


def counted(name: str, calls: Counter, **writes: Any):
    """A node named `name` that writes `writes` and counts its calls."""

    def node(state):
        calls[name] += 1
        return dict(writes)

    node.__name__ = name
    return node


def fan_out(calls: Counter | None = None):
    """a and b in parallel (log, total, best), then c after both (note, log)."""
    calls = Counter() if calls is None else calls
    return (
        StateGraph(S)
        .add_node("a", counted("a", calls, log=["a"], total=1, best=3))
        .add_node("b", counted("b", calls, log=["b"], total=2, best=5))
        .add_node("c", counted("c", calls, note="done", log=["c"]))
        .add_edge(START, "a")
        .add_edge(START, "b")
        .add_edge(["a", "b"], "c")
        .add_edge("c", END)
        .compile()
    )


def sequence(calls: Counter, router=None):
    """a -> b -> c, each appending its name to log; an optional router after b."""
    graph = (
        StateGraph(S)
        .add_node("a", counted("a", calls, log=["a"]))
        .add_node("b", counted("b", calls, log=["b"]))
        .add_node("c", counted("c", calls, log=["c"]))
        .add_edge(START, "a")
        .add_edge("a", "b")
    )
    if router is None:
        graph.add_edge("b", "c")
    else:
        graph.add_conditional_edges("b", router, ["c", END])
    return graph.compile()


def rows_by_field(table) -> dict[str, dict]:
    return {row["field"]: row for row in table.to_dict("records")}


# --- writers -----------------------------------------------------------------------------------


def test_writers_names_writers_steps_and_concurrency_per_field():
    run = fan_out().run({"log": ["in"], "total": 0})
    table = run.writers()
    assert list(table["field"]) == ["log", "total", "best", "note"]  # first-write order
    rows = rows_by_field(table)
    assert rows["log"]["writers"] == ["a", "b", "c"] and rows["log"]["steps"] == [1, 2]
    assert rows["log"]["writes"] == 3 and rows["log"]["concurrent_steps"] == 1
    assert rows["log"]["reducer"] == "add" and rows["best"]["reducer"] == "max"
    assert rows["note"] == {
        "field": "note",
        "reducer": "overwrite",
        "writers": ["c"],
        "steps": [2],
        "writes": 1,
        "concurrent_steps": 0,
        "overwrite_conflict": False,
        "order_dependent": False,
        "order_basis": "guessed",
    }
    assert not table["overwrite_conflict"].any()


def test_writers_tries_orders_where_fields_were_written_together():
    rows = rows_by_field(fan_out().run({"log": ["in"]}).writers())
    assert (rows["log"]["order_dependent"], rows["log"]["order_basis"]) == (True, "tried")
    assert (rows["total"]["order_dependent"], rows["total"]["order_basis"]) == (False, "tried")
    assert (rows["best"]["order_dependent"], rows["best"]["order_basis"]) == (False, "tried")


def test_writers_flags_concurrent_writes_to_a_field_without_reducer():
    app = (
        StateGraph(S)
        .add_node("a", lambda s: {"note": "a"})
        .add_node("b", lambda s: {"note": "b"})
        .add_edge(START, "a")
        .add_edge(START, "b")
        .compile()
    )
    run = app.run({})
    assert run.status == "failed"
    row = rows_by_field(run.writers())["note"]
    assert row["overwrite_conflict"] and row["concurrent_steps"] == 1
    # an error in every order: the order does not change the outcome
    assert (row["order_dependent"], row["order_basis"]) == (False, "tried")


def test_writers_guesses_order_dependence_for_fields_never_written_together():
    class T(TypedDict, total=False):
        log: Annotated[list, operator.add]
        tags: Annotated[list, "append"]
        total: Annotated[int, operator.add]
        best: Annotated[int, "max"]
        seen: Annotated[dict, "merge"]

    writes = {"log": ["x"], "tags": ["t"], "total": 1, "best": 2, "seen": {"k": 1}}
    app = StateGraph(T).add_node("a", lambda s: writes).add_edge(START, "a").compile()
    rows = rows_by_field(app.run({}).writers())
    assert {name: row["order_dependent"] for name, row in rows.items()} == {
        "log": True,
        "tags": True,
        "total": False,
        "best": False,
        "seen": True,
    }
    assert {row["order_basis"] for row in rows.values()} == {"guessed"}


def test_writers_leaves_out_fields_only_the_input_wrote():
    app = StateGraph(S).add_node("a", lambda s: {"note": "x"}).add_edge(START, "a").compile()
    assert list(app.run({"log": ["in"], "total": 4}).writers()["field"]) == ["note"]


def test_guess_reads_numbers_from_the_values_when_the_type_is_not_declared():
    add = get_reducer("add")
    assert _order_dependent(FieldSpec("n", Any, add), [1, 2.5]) is False
    assert _order_dependent(FieldSpec("n", Any, add), [[1], [2]]) is True
    assert _order_dependent(FieldSpec("n", Any, add), []) is True
    assert _order_dependent(FieldSpec("x", float, reducer_from_callable(operator.add))) is False
    assert _order_dependent(FieldSpec("x", str)) is False  # no reducer: one write per step
    assert _order_dependent(FieldSpec("x", int, get_reducer("min"))) is False


# --- order_sensitivity -------------------------------------------------------------------------


def test_order_sensitivity_lists_list_concatenation_but_not_addition_or_max():
    run = fan_out().run({"log": ["in"], "total": 0})
    table = run.order_sensitivity()
    assert table.to_dict("records") == [
        {
            "step": 1,
            "field": "log",
            "reducer": "add",
            "orders_tried": 2,
            "order_a": ["a", "b"],
            "result_a": ["in", "a", "b"],
            "order_b": ["b", "a"],
            "result_b": ["in", "b", "a"],
            "differs_at": "index 1: 'a' vs 'b'",
        }
    ]
    assert table["result_a"][0] == run.state_at(1)["log"]  # the recorded order comes first


def test_order_sensitivity_samples_when_there_are_too_many_orders():
    app = StateGraph(S)
    for i in range(7):
        app.add_node(f"n{i}", counted(f"n{i}", Counter(), log=[i])).add_edge(START, f"n{i}")
    run = app.compile().run({"log": []})
    table = run.order_sensitivity(max_orders=20, seed=3)
    assert list(table["orders_tried"]) == [20]
    assert table["order_a"][0] == [f"n{i}" for i in range(7)]
    assert table["result_b"][0] == [int(name[1]) for name in table["order_b"][0]]
    assert table.equals(run.order_sensitivity(max_orders=20, seed=3))  # seeded: repeatable
    assert list(run.order_sensitivity(max_orders=5040)["orders_tried"]) == [5040]  # 7! all


def test_order_sensitivity_counts_an_error_in_some_order_as_a_result():
    def rising(old, new):
        if new < old:
            raise ValueError(f"{new} < {old}")
        return new

    class R(TypedDict, total=False):
        level: Annotated[int, rising]

    app = (
        StateGraph(R)
        .add_node("a", lambda s: {"level": 1})
        .add_node("b", lambda s: {"level": 2})
        .add_edge(START, "a")
        .add_edge(START, "b")
        .compile()
    )
    row = app.run({"level": 0}).order_sensitivity().to_dict("records")[0]
    assert (row["order_a"], row["result_a"]) == (["a", "b"], 2)
    assert (row["order_b"], row["result_b"]) == (["b", "a"], "error: ValueError: 1 < 2")


def test_order_sensitivity_tells_sends_of_one_node_apart():
    app = (
        StateGraph(S)
        .add_node("split", lambda s: {})
        .add_node("work", lambda arg: {"log": [arg]})
        .add_edge(START, "split")
        .add_conditional_edges("split", lambda s: [Send("work", "x"), Send("work", "y")])
        .compile()
    )
    row = app.run({"log": []}).order_sensitivity().to_dict("records")[0]
    assert (row["order_a"], row["result_a"]) == (["work#0", "work#1"], ["x", "y"])
    assert (row["order_b"], row["result_b"]) == (["work#1", "work#0"], ["y", "x"])


def test_order_sensitivity_is_empty_without_concurrent_writes():
    table = sequence(Counter()).run({"log": []}).order_sensitivity()
    assert table.empty and list(table.columns)[:4] == ["step", "field", "reducer", "orders_tried"]


@pytest.mark.parametrize("bad", [1, 0, 2.5, True])
def test_order_sensitivity_needs_two_orders_at_least(bad):
    with pytest.raises(ValueError, match="max_orders"):
        sequence(Counter()).run({"log": []}).order_sensitivity(max_orders=bad)


# --- remerge -----------------------------------------------------------------------------------


def test_remerge_to_overwrite_in_a_fan_out_fails_with_the_conflict():
    calls = Counter()
    run = fan_out(calls).run({"log": ["in"], "total": 0})
    before = run.output
    new = run.remerge({"log": "overwrite"})
    assert isinstance(new, Run) and isinstance(new, RemergedRun)
    assert new.status == "failed" and isinstance(new.error, InvalidUpdateError)
    assert "'log'" in str(new.error) and "step 1" in str(new.error).lower()
    assert [s.step for s in new.log.steps] == [0, 1] and not new.log.steps[1].applied
    assert new.output == {"log": ["in"], "total": 0, "best": 0}  # the state before step 1
    assert calls == Counter(a=1, b=1, c=1)  # no node ran again
    diff = run.compare(new)
    assert ((diff["step"] == 2) & (diff["what"] == "tasks")).any()
    failed = diff[(diff["step"] == 1) & (diff["what"] == "outcome")]
    assert list(failed["this"]) == ["applied"] and list(failed["other"]) == ["failed"]
    assert any("Step 1 fails" in note for note in new.remerge_notes)
    assert run.status == "done" and run.output == before  # the original run is untouched


def test_remerge_a_sequence_to_overwrite_keeps_only_the_last_write():
    calls = Counter()
    run = sequence(calls).run({"log": ["in"]})
    new = run.remerge({"log": "overwrite"})
    assert new.status == "done" and new.output["log"] == ["c"]
    assert run.output["log"] == ["in", "a", "b", "c"]
    assert calls == Counter(a=1, b=1, c=1)
    diff = run.compare(new)
    assert list(diff["step"]) == [1, 2, 3] and set(diff["what"]) == {"log"}
    assert new.state_at(2)["log"] == ["b"] and new.effects["reducer"].iloc[-1] == "overwrite"
    notes = "\n".join(new.remerge_notes)
    assert "first differs after step 1" in notes
    assert "Nodes ran on a state that differs: 'b' at step 2 (in 'log'); 'c' at step 3" in notes
    assert "replayed as recorded" in notes


def test_remerge_reports_where_a_router_would_choose_otherwise():
    calls = Counter()

    def enough(state) -> str:
        return "c" if len(state["log"]) >= 2 else END

    run = sequence(calls, enough).run({"log": ["in"]})
    assert [t.node for t in run.log.tasks()][1:] == ["a", "b", "c"]
    new = run.remerge({"log": "overwrite"})
    assert new.routing_changes.to_dict("records") == [
        {"step": 2, "node": "b", "recorded": ["c"], "would_route": [END]}
    ]
    notes = "\n".join(new.remerge_notes)
    assert "routing after 'b' changes" in notes and "['c']" in notes
    assert "'c' at step 3 (in 'log')" in notes  # c ran although b might have ended the run
    assert calls == Counter(a=1, b=1, c=1)
    assert run.remerge({"log": "append"}).routing_changes.empty  # same view: same routes


def test_remerge_says_unknown_when_a_router_cannot_be_called_again():
    def picky(state) -> str:
        return "c" if state["log"][1] == "a" else END  # IndexError on a one-item log

    run = sequence(Counter(), picky).run({"log": ["in"]})
    new = run.remerge({"log": "overwrite"})
    assert new.routing_changes.empty
    unknown = [note for note in new.remerge_notes if "unknown" in note]
    assert len(unknown) == 1 and "'b'" in unknown[0] and "IndexError" in unknown[0]


def test_remerge_takes_callables_and_gives_new_reducer_fields_a_starting_value():
    calls = Counter()
    app = (
        StateGraph(S)
        .add_node("a", counted("a", calls, note="x"))
        .add_node("b", counted("b", calls, note="y"))
        .add_edge(START, "a")
        .add_edge("a", "b")
        .compile()
    )
    run = app.run({})
    new = run.remerge({"note": operator.add, "log": "overwrite"})
    assert new.output == {"note": "xy", "total": 0, "best": 0}  # note starts from ""; no log
    assert new.graph.fields["note"].initial is str and new.graph.fields["log"].initial is None
    assert new.reducers == {"note": ("overwrite", "add"), "log": ("add", "overwrite")}
    assert run.graph.fields["note"].reducer is None  # the original graph is unchanged
    assert calls == Counter(a=1, b=1)


def test_remerge_of_a_recorded_conflict_that_now_applies_ends_unfinished():
    app = (
        StateGraph(S)
        .add_node("a", lambda s: {"note": "a"})
        .add_node("b", lambda s: {"note": "b"})
        .add_node("c", lambda s: {})
        .add_edge(START, "a")
        .add_edge(START, "b")
        .add_edge("a", "c")
        .compile()
    )
    run = app.run({})
    assert run.status == "failed"
    new = run.remerge({"note": "add"})
    assert new.status == "running" and new.error is None and new.output["note"] == "ab"
    assert "what would have run next is unknown" in new.remerge_notes[-1]


def test_remerge_keeps_a_node_failure_of_the_recorded_run():
    def broken(state):
        raise RuntimeError("boom")

    app = (
        StateGraph(S)
        .add_node("a", lambda s: {"log": ["a"]})
        .add_node("b", broken)
        .add_edge(START, "a")
        .add_edge("a", "b")
        .compile()
    )
    run = app.run({"log": ["in"]})
    new = run.remerge({"log": "overwrite"})
    assert new.status == "failed" and new.error is run.error
    assert new.output["log"] == ["a"]
    assert "'b' raised in the recorded run (RuntimeError: boom)" in new.remerge_notes[-1]


def test_remerge_replays_a_root_reset_as_recorded_and_says_so():
    def keep_last(state):
        return {"log": state["log"][-1:]}

    app = (
        StateGraph(S)
        .add_node("a", lambda s: {"log": ["a"]})
        .add_node("b", lambda s: {"note": str(len(s["log"]))})
        .add_edge(START, "a")
        .add_edge("a", "b", state_filter=keep_last)
        .compile()
    )
    run = app.run({"log": ["in"]})
    new = run.remerge({"log": "overwrite"})
    assert list(run.compare(new)["step"]) == [1]  # the reset makes the states agree again
    notes = "\n".join(new.remerge_notes)
    assert "Step 2: the state_filter for 'b' (a root reset) was replayed as recorded" in notes
    assert "Nodes ran on a state that differs" not in notes  # b read the reset's state


def test_remerge_with_the_same_reducers_changes_nothing():
    run = fan_out().run({"log": ["in"]})
    new = run.remerge({"log": operator.add})
    assert run.compare(new).empty and new.output == run.output and new.routing_changes.empty
    assert new.remerge_notes[-1].startswith("Nothing differs")


def test_remerge_names_every_bad_reducer_in_one_error():
    run = fan_out().run({"log": []})
    with pytest.raises(ValueError) as caught:
        run.remerge({"nope": "add", "log": "no_such_reducer", "total": lambda x: x, "best": 3})
    message = str(caught.value)
    assert "'nope' is not a field" in message
    assert "'no_such_reducer'" in message and "registered:" in message
    assert "field 'total'" in message and "two arguments" in message
    assert "field 'best'" in message
    with pytest.raises(TypeError, match="dict of field"):
        run.remerge(["log"])


def test_remerge_accepts_fields_a_plain_dict_schema_wrote():
    app = (
        StateGraph(dict)
        .add_node("a", lambda s: {"seen": ["a"]})
        .add_node("b", lambda s: {"seen": ["b"]})
        .add_edge(START, "a")
        .add_edge(START, "b")
        .compile()
    )
    run = app.run({})
    assert run.status == "failed"  # two writes to a field without a reducer
    new = run.remerge({"seen": "append"})
    assert new.output == {"seen": ["a", "b"]} and new.state_at(1)["seen"] == ["a", "b"]
    with pytest.raises(ValueError, match="'unseen' is not a field"):
        run.remerge({"unseen": "append"})


def test_remerged_run_reads_like_any_run():
    new = fan_out().run({"log": ["in"]}).remerge({"best": "add"})
    assert new.output["best"] == 8 and new.states["best"].tolist() == [0, 8, 8]
    assert "re-merged with best: max -> add" in repr(new)
    assert new.tree.root.kind == "input" and new.state_at(("c", 0))["best"] == 8
    assert new.remerge({"best": "max"}).output["best"] == 5


def test_importing_the_analyses_loads_no_pandas():
    code = "import sys, nbgraph.record.whatif.analysis; print('pandas' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_missing_is_what_a_remerged_field_without_value_reads_as():
    run = sequence(Counter()).run({})
    new = run.remerge({"log": "overwrite"})
    assert new.state_at(0).get("log", MISSING) is MISSING and new.output["log"] == ["c"]
