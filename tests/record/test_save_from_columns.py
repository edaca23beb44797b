"""`run.save` writes a flat step straight from the run's columns (`engine.facts.flat_steps`:
no `StepLog`/`Task` made), the very bytes it writes from the same steps as objects; the
state tree (`run.tree`, `draw_tree()`) reads them the same way, into the same nodes.

Every run of the compat cases, of the checkpoint programs and of the differential fuzz's
random programs is made with its steps sealed as soon as they can be (a batch of two), then
written twice: from its columns, and from a copy of its log whose steps are a list of the
objects. The two texts are equal byte for byte (or both fail with the same error), the
saved file loads back with the same steps, and the two trees and drawings are the same.
"""

from __future__ import annotations

import contextlib
import dataclasses
import operator
import warnings
from typing import Annotated, Any, TypedDict

import pytest

from nbgraph import END, START, Run, StateGraph
from nbgraph.engine.core import columns, loop
from nbgraph.engine.facts import StepColumns, step_numbers
from nbgraph.record.files.serialize import RunFileError, run_to_json
from nbgraph.record.tree import StateTree, build_tree
from tests.parity.compat_programs import CASES, CHECKPOINT_CASES
from tests.support import fuzz
from tests.support.every_run import case_runs, every_run
from tests.support.harness import api_for
from tests.support.records import recorded


@pytest.fixture(autouse=True)
def sealed_soon(monkeypatch):
    """Each run's steps sealed two at a time: a short program's run has columns too."""
    monkeypatch.setattr(columns, "_BATCH", 2)
    monkeypatch.setattr(loop, "SEALS", 1)


def _text(run: Run) -> Any:
    try:
        return run_to_json(run)
    except Exception as error:  # (a run a file cannot hold: both ways say the same)
        return type(error), str(error)


def same_bytes(run: Run, folder: Any) -> bool:
    """Assert `run` writes the same text from its columns as from its steps as objects, and
    that its file loads back; whether it had sealed flat steps to read."""
    log = run.log
    steps = log.steps
    flat = isinstance(steps, StepColumns) and steps.sealed > 0
    flat = flat and steps.sealed > len(steps.columns.rich)
    if isinstance(steps, StepColumns):
        steps._made, steps._upto = None, 0  # (nothing made yet: as a fresh record)
    from_columns = _text(Run(log))
    tree = build_tree(log)
    objects = dataclasses.replace(log, steps=list(steps))
    assert _text(Run(objects)) == from_columns
    same_tree(tree, build_tree(objects))
    with contextlib.suppress(ImportError):  # (no graphviz: no drawing)
        assert Run(log).draw_tree().source == Run(objects).draw_tree().source
    for sub in getattr(run, "subruns", ()):
        same_bytes(sub, folder)
    if isinstance(from_columns, str):
        path = Run(log).save(folder / "run.json")
        loaded = Run.load(path)
        assert len(loaded.log.steps) == len(steps)
        if log.source is None:  # (a run, continued threads' too: read back whole)
            assert step_numbers(list(loaded.log.steps)) == step_numbers(steps)
        else:  # (a thread rebuilt from its saver after a replay skips a number: refused)
            with contextlib.suppress(RunFileError):
                assert step_numbers(list(loaded.log.steps)) == step_numbers(steps)
    return flat


def same_tree(tree: StateTree, other: StateTree) -> None:
    """Assert two trees have the same nodes in the same order (the same written values)."""
    assert list(tree.nodes) == list(other.nodes)
    assert (tree.by_step, tree.by_name) == (other.by_step, other.by_name)
    for node, twin in zip(tree.nodes.values(), other.nodes.values(), strict=True):
        assert (node[:5], node[6:]) == (twin[:5], twin[6:])
        assert [(k, id(v)) for k, v in node.writes] == [(k, id(v)) for k, v in twin.writes]


@pytest.mark.parametrize("case", CASES, ids=[c.__name__.removeprefix("case_") for c in CASES])
def test_the_compat_cases_save_the_same_bytes_from_their_columns(case, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for run in case_runs(case):
            same_bytes(run, tmp_path)


@pytest.mark.parametrize(
    "program", CHECKPOINT_CASES, ids=[c.__name__.removeprefix("ckpt_") for c in CHECKPOINT_CASES]
)
def test_each_checkpoint_programs_runs_save_the_same_bytes(program, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        records = recorded("nbgraph", lambda: program(api_for("nbgraph")))
    for record in [*records.calls, *(run for _, run in records.threads)]:
        if isinstance(record, Run):
            same_bytes(record, tmp_path)


@pytest.mark.parametrize("seed", range(40))
def test_the_fuzzs_random_programs_save_the_same_bytes(seed, tmp_path):
    with every_run() as found:
        fuzz.observe("nbgraph", fuzz.generate(seed), tmp_path)
    assert found
    for run in found:
        same_bytes(run, tmp_path)


class S(TypedDict):
    count: int
    items: list  # no reducer
    total: Annotated[int, operator.add]
    log: Annotated[list, "append"]
    odd: Any


def test_a_long_loop_of_every_kind_of_value_saves_the_same_bytes(tmp_path):
    """Flat steps of one and several tasks, routes as a list, values a file keeps as reprs
    (afters), a value too deep to save: the same from the columns."""

    def tick(state: S) -> dict:
        n = state["count"]
        odd = {1, 2} if n % 3 == 0 else (n, "x", [n] * 2, {"k": float(n) / 3})
        return {"count": n + 1, "log": [n], "total": 2, "items": [1], "odd": odd}

    def side(state: S) -> dict:
        return {"total": 1}

    graph = StateGraph(S).add_node("a", tick).add_node("b", side).add_edge(START, "a")
    graph = graph.add_conditional_edges("a", lambda s: END if s["count"] >= 40 else ["a", "b"])
    app = graph.compile()
    run = app.run({"count": 0, "items": [], "total": 0, "log": [], "odd": None})
    assert same_bytes(run, tmp_path)
    deep: Any = []
    for _ in range(5000):
        deep = [deep]
    flat = StateGraph(S).add_node("a", lambda s: {"count": s["count"] + 1, "odd": deep})
    flat = flat.add_edge(START, "a")
    flat = flat.add_conditional_edges("a", lambda s: END if s["count"] >= 9 else "a").compile()
    run = flat.run({"count": 0, "items": [], "total": 0, "log": [], "odd": None})
    assert same_bytes(run, tmp_path)


def test_saving_a_flat_loop_or_its_tree_makes_no_step_of_it(tmp_path):
    class Flat(TypedDict):
        count: int

    graph = StateGraph(Flat).add_node("a", lambda s: {"count": s["count"] + 1})
    graph = graph.add_edge(START, "a")
    app = graph.add_conditional_edges("a", lambda s: END if s["count"] >= 300 else "a").compile()
    run = app.run({"count": 0}, {"recursion_limit": 400})
    steps = run.log.steps
    assert steps.sealed > 250 and not steps.columns.rich
    run.save(tmp_path / "run.json")
    assert run.tree.tasks()[-1].step == 300
    assert not any(steps._made or ()), "a flat step was made to save it or draw its tree"
    assert same_bytes(run, tmp_path)
    loaded = Run.load(tmp_path / "run.json")

    def rows(log: Any) -> list:
        return [(t.step, t.node, t.writes, tuple(t.triggers)) for s in log.steps for t in s.tasks]

    assert rows(loaded.log) == rows(run.log)
