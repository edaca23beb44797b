"""The record's views read the log column by column, with a short way for the common step
(one task, applied, nothing reset, merged, pinned or cleared): `run.steps` from the tasks
without the state tree, `run.effects` and the `Timeline`'s replay without grouping a lone
task's writes, the drawings' counts and the inspector's runs per node in one shared pass
(benchmarks/README.md, "Looking at a run").

On every run of the compat suite (nbgraph's, and LangGraph's thread imported), each thread
of its checkpoint programs rebuilt from the saver, the compare cases, the subruns of all of
them, each written to a file and read back, and random graphs, each gives what the general
way gives: the tree's task rows, every step's rows grouped, `replay_step` from the input,
and the counts taken task by task.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import operator
import warnings
from typing import Annotated, Any, TypedDict

import numpy as np
import pandas as pd
import pytest

from nbgraph import (
    START,
    CachePolicy,
    Command,
    Ephemeral,
    InMemoryCache,
    MemorySaver,
    Overwrite,
    RetryPolicy,
    Run,
    Send,
    StateGraph,
    interrupt,
)
from nbgraph.engine.facts import initial_values, replay_step
from nbgraph.isolation import isolate
from nbgraph.primitives import END
from nbgraph.record.cells import plain
from nbgraph.record.effects import EFFECT_COLUMNS, SuperstepEffects
from nbgraph.record.replaying import replay_graph
from nbgraph.record.subruns.trees import subrun_positions
from nbgraph.record.tables import column_frame, frame, log_task_frame, task_frame
from nbgraph.record.timeline import Timeline
from nbgraph.views.drawings import overlay
from tests.parity.compat_programs import CASES, CHECKPOINT_CASES
from tests.support import fuzz
from tests.support.compare_cases import compare_cases
from tests.support.every_run import case_runs, every_run
from tests.support.harness import api_for
from tests.support.records import recorded

THREAD = {"configurable": {"thread_id": "t"}}

# --- the general ways, each view's reference -------------------------------------------------


def tree_steps(run: Run) -> pd.DataFrame:
    """`run.steps` as the state tree gives it (a task node per task, in step order)."""
    return task_frame(run.tree.tasks(), subrun_positions(run.log))


def grouped_rows(log: Any) -> list[tuple]:
    """Every step's effect rows the general way (writes grouped), cells as plain values."""
    replay = SuperstepEffects(log)
    return [tuple(map(plain, row)) for step in log.steps for row in replay._rows(step)]


def replayed_states(log: Any) -> list[dict[str, Any]]:
    """The state after each step of the log: `replay_step` from the start, one by one."""
    graph, values, states = replay_graph(log.graph), initial_values(log.graph), []
    for step in log.steps:
        values = replay_step(graph, values, step)
        states.append({name: isolate(plain(value)) for name, value in values.items()})
    return states


def counted(run: Run) -> tuple[dict, dict]:
    """The drawings' counts task by task (the tally without shortcuts) and the totals."""
    spec, found = run.graph, {}
    dead_ends = set(overlay.ends_implicitly(spec))
    tasks = [task for step in run.log.steps[1:] for task in step.tasks]
    for step in run.log.steps[1:]:
        for task in step.tasks:
            found.setdefault("runs", {}).setdefault(task.node, []).append(step.step)
            if overlay.hands_to_parent(task.error):
                handed = (step.step, overlay.handed_text(task.error))
                found.setdefault("handed", {}).setdefault(task.node, []).append(handed)
            elif task.error is not None:
                failed = (step.step, type(task.error))
                found.setdefault("failed", {}).setdefault(task.node, []).append(failed)
            if task.interrupts:
                found.setdefault("paused", {}).setdefault(task.node, []).append(step.step)
            way = {"send": "sends", "call": "calls"}.get(task.kind, "edges")
            for source in task.triggers:
                key = (source, task.node)
                found.setdefault(way, {}).setdefault(key, []).append(step.step)
            if task.error is None and task.kind != "call":
                ends = sum(t == END for t in spec.edges.get(task.node, ()))
                ends += task.node in dead_ends and not task.routes and not task.interrupts
                ends += sum(not isinstance(r, Send) and r == END for r in task.routes)
                if ends:
                    key = (task.node, END)
                    found.setdefault("edges", {}).setdefault(key, []).extend([step.step] * ends)
    totals = {
        "tasks": len(tasks),
        "retried": sum(len(t.attempts) for t in tasks),
        "cached": sum(bool(t.from_cache) for t in tasks),
    }
    return found, totals


# --- the check ---------------------------------------------------------------------------------


def same_state(a: dict, b: dict) -> bool:
    return a == b or repr(a) == repr(b)  # (nan and other values unequal to themselves)


def check(run: Run) -> None:
    """Each view of `run` (a fresh record of its log) agrees with its general way."""
    log = run.log
    fresh = Run(log)
    table = fresh.steps
    pd.testing.assert_frame_equal(pd.DataFrame(table), tree_steps(Run(log)))
    direct = log_task_frame(log, subrun_positions(log))
    if direct is not None:
        pd.testing.assert_frame_equal(direct, tree_steps(Run(log)))
    if log.semantics != "branches":
        try:
            expected = grouped_rows(log)
        except Exception as error:  # the record itself refuses to replay: so must the views
            with pytest.raises(type(error)):
                Run(log).effect_list  # noqa: B018
        else:
            rows = [tuple(map(plain, row)) for row in Run(log).effect_list]
            assert repr(rows) == repr(expected)
            states = replayed_states(log)
            timeline = Timeline(log)
            for step, state in zip(log.steps, states, strict=True):
                assert same_state(timeline.after(step.step), state), step.step
    tally = overlay._tally(Run(log))
    found, totals = counted(run)
    for name in ("runs", "failed", "handed", "paused", "edges", "sends", "calls"):
        assert tally[name] == found.get(name, {}), name
    assert tally["totals"] == totals
    assert overlay.steps_of_nodes(fresh) == found.get("runs", {})
    for sub in getattr(run, "subruns", ()):
        check(sub)


def check_saved(run: Run, folder: Any) -> None:
    """`check`, and on the run written to a file and read back."""
    check(run)
    with contextlib.suppress(Exception):  # (a run a file cannot hold: its own tests say so)
        path = run.save(folder / "run.json")
        check(Run.load(path))


# --- the runs ----------------------------------------------------------------------------------


def imported(case: Any) -> Run | None:
    """The case run on LangGraph with a saver, its thread imported (None: no thread)."""
    from langgraph.checkpoint.memory import InMemorySaver

    try:
        app, graph_input, config = case(api_for("langgraph"))
        app.checkpointer = InMemorySaver()
        config = {**(config or {}), "configurable": {"thread_id": "t"}}
        with contextlib.suppress(Exception):
            if getattr(case, "is_async", False):
                asyncio.run(app.ainvoke(graph_input, config))
            else:
                app.invoke(graph_input, config)
        return Run.from_langgraph(app, config)
    except Exception:  # (no graph on LangGraph, or no checkpoint to read)
        return None


@pytest.mark.parametrize("case", CASES, ids=[c.__name__.removeprefix("case_") for c in CASES])
def test_the_compat_cases_views_agree_with_their_general_ways(case, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for run in case_runs(case):
            check_saved(run, tmp_path)
        lg = imported(case) if importlib.util.find_spec("langgraph") else None
    if lg is not None:
        check(lg)


@pytest.mark.parametrize(
    "program", CHECKPOINT_CASES, ids=[c.__name__.removeprefix("ckpt_") for c in CHECKPOINT_CASES]
)
def test_each_thread_rebuilt_from_its_saver_agrees(program, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        records = recorded("nbgraph", lambda: program(api_for("nbgraph")))
    for record in [*records.calls, *(run for _, run in records.threads)]:
        if isinstance(record, Run):
            check_saved(record, tmp_path)


def test_the_compare_cases_agree(tmp_path):
    for name, pair in compare_cases().items():
        for run in pair:
            try:
                check_saved(run, tmp_path)
            except AssertionError as error:
                raise AssertionError(f"{name}: {error}") from error


@pytest.mark.parametrize("seed", range(40))
def test_the_fuzzs_random_programs_agree(seed, tmp_path):
    """Each run of a random program of the differential fuzz (`tests.support.fuzz`): its
    calls on a thread, invoked and streamed (answers, `update_state`, limits, subgraphs)."""
    with every_run() as found:
        fuzz.observe("nbgraph", fuzz.generate(seed), tmp_path)
    assert found
    for run in found:
        check(run)


class Kept(TypedDict, total=False):
    log: Annotated[list, operator.add]
    n: int
    gone: Annotated[str, Ephemeral]
    text: Annotated[str, operator.add]


def _one_of_each(saver: Any = None) -> Any:
    """A graph whose steps take each way past the common step: a write to the reducer as
    `Overwrite` and as its JSON form, a long str grown then overwritten (a replay's
    `TextTrail`), a field written twice by one task, a key dropped, an ephemeral field
    cleared, a fan-out, a retried task, and a dead end that asks (paused)."""
    tries: list[int] = []

    def flaky(state: dict) -> dict:
        tries.append(1)
        if len(tries) < 2:
            raise ConnectionError("once")
        return {"log": ["flaky"]}

    def twice(state: dict) -> Any:
        return Command(update=[("log", ["x"]), ("log", ["y"]), ("n", 1)])

    return (
        StateGraph(Kept)
        .add_node("bypass", lambda s: {"log": Overwrite(["o"]), "gone": "g", "text": "u" * 9})
        .add_node("json", lambda s: {"log": {"__overwrite__": ["j"]}, "text": Overwrite("v")})
        .add_node("typo", lambda s: {"n": 2, "typo": 1})
        .add_node("twice", twice)
        .add_node("fan", lambda s: [Send("flaky", {}), Send("flaky", {})])
        .add_node("flaky", flaky, retry_policy=RetryPolicy(max_attempts=3, initial_interval=0))
        .add_node("ask", lambda s: {"n": interrupt("more?")})
        .add_edge(START, "bypass")
        .add_edge("bypass", "json")
        .add_edge("json", "typo")
        .add_edge("typo", "twice")
        .add_conditional_edges("twice", lambda s: [Send("flaky", {}), Send("flaky", {})])
        .add_edge("flaky", "ask")
        .compile(checkpointer=saver)
    )


def test_each_way_past_the_common_step_agrees(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run = _one_of_each(MemorySaver()).run({"log": [], "n": 0, "text": "t" * 5000}, THREAD)
    assert run.status == "interrupted"
    assert {"paused", "ok"} <= set(run.steps.status) and run.steps.attempts.max() == 2
    rows = run.effects
    assert rows.overwrite_bypass.sum() == 3 and rows.dropped_key.any()
    assert rows.after[rows.field == "text"].tolist() == ["t" * 5000, "t" * 5000 + "u" * 9, "v"]
    assert (rows.reducer == "cleared").any() and (rows.writes.map(len) == 2).any()
    check_saved(run, tmp_path)
    check(Run.from_checkpointer(run.app.checkpointer, "t", graph=run.app))


def test_a_task_from_the_node_cache_agrees():
    cached = (
        StateGraph(Kept)
        .add_node("slow", lambda s: {"n": s["n"] + 1}, cache_policy=CachePolicy())
        .add_edge(START, "slow")
        .compile(cache=InMemoryCache())
    )
    cached.run({"n": 1})
    again = cached.run({"n": 1})
    assert again.steps.status.tolist() == ["cached"]
    check(again)


# --- the frame ---------------------------------------------------------------------------------


def _public_frame(columns: dict[str, list], length: int) -> pd.DataFrame:
    """What `column_frame` makes, made with pandas' public constructor only."""
    typed = {"step": "int64", "duration": "float64", "attempts": "int64", "changed": "bool"}
    data = {}
    for name, cells in columns.items():
        dtype = typed.get(name, object)
        data[name] = pd.Series(np.fromiter(cells, dtype=dtype, count=length), dtype=dtype)
    return pd.DataFrame(data, columns=list(columns))


def test_a_frame_built_column_by_column_keeps_each_cell_and_types_the_numbers(monkeypatch):
    shared = ["a"]
    columns = {
        "step": [1, 2, 3],
        "field": ["x", "y", "z"],  # (strings stay objects, never pandas' str dtype)
        "writes": [[("n", 1)], [], shared],  # (lists are cells, never a second dimension)
        "duration": [0.5, float("nan"), 2.0],
        "changed": [True, False, True],
    }
    table = column_frame(columns, 3)
    assert [str(t) for t in table.dtypes] == ["int64", "object", "object", "float64", "bool"]
    assert table["writes"].iloc[2] is shared and table["field"].tolist() == ["x", "y", "z"]
    pd.testing.assert_frame_equal(table, _public_frame(columns, 3))
    monkeypatch.delattr(pd.DataFrame, "_from_arrays")  # (a pandas without it: the public way)
    pd.testing.assert_frame_equal(column_frame(columns, 3), _public_frame(columns, 3))
    empty = frame([], EFFECT_COLUMNS)
    assert list(empty.columns) == list(EFFECT_COLUMNS) and len(empty) == 0
    assert str(empty.dtypes["step"]) == "int64" and str(empty.dtypes["field"]) == "object"


def test_the_steps_table_of_a_log_out_of_step_order_is_the_trees():
    """A log whose steps are not in order (never made by the engine) still shows the tree's
    order: the column reading gives way."""
    log = compare_cases()["flat, alike"][0].log
    shuffled = type(log)(**{**vars(log), "steps": [log.steps[0], *log.steps[:0:-1]]})
    assert log_task_frame(shuffled) is None
    pd.testing.assert_frame_equal(pd.DataFrame(Run(shuffled).steps), tree_steps(Run(shuffled)))


def test_the_runs_per_node_are_the_steps_of_each_nodes_runs():
    run = compare_cases()["fan-out, alike"][0]
    ran = overlay.steps_of_nodes(run)
    table = run.steps
    assert ran == {node: table.step[table.node == node].tolist() for node in set(table.node)}
    assert ran is overlay.steps_of_nodes(run)  # (made once a run, shared with its drawings)
