"""`Run.from_langgraph` of threads whose nodes run subgraphs: each subgraph's run, read from
its `checkpoint_ns` in the same saver and thread, is a subrun of the task that ran it
(`run.subruns`, `.parent`, `.task`), nested to any depth, paused ones too. The proof: every
checkpointed program of tests/parity/test_langgraph_subgraph_checkpoints.py (in
subgraph_checkpoint_programs.py) runs on LangGraph and on nbgraph, and each thread imported
from LangGraph agrees with nbgraph's record of it rebuilt from its saver
(`Run.from_checkpointer`), subruns included (effects, steps, final state). Then every other
differential program, replayed with its runs recorded (tests/record/replay.py).
"""

import operator
from typing import Annotated, Any, TypedDict

import pytest

import nbgraph
from tests.parity.subgraph_checkpoint_programs import PROGRAMS as SUBGRAPH_PROGRAMS
from tests.record.import_views import deep_differences, deep_view
from tests.record.replay import differential_programs, program_differences
from tests.support.harness import api_for, both, known_difference
from tests.support.records import (
    APPLY,
    NBGRAPH_ONLY,
    NO_RUN,
    PAIRING,
    PARENT,
    SAVER_RECORD,
    checkpointed,
)

pytestmark = pytest.mark.langgraph

THREAD = {"configurable": {"thread_id": "t"}}


CANNOT_IMPORT = {
    "root_checkpointer_modes_program": "no graph of it is compiled with a checkpointer "
    "(checkpointer=True alone is refused by both, a parent without one keeps no history)",
}
"""Programs with no thread to import, and why (each checked to have none)."""


@pytest.mark.parametrize("program", SUBGRAPH_PROGRAMS, ids=lambda p: p.__name__)
def test_imported_subgraph_threads_agree_with_nbgraphs_record(program):
    pytest.importorskip("langgraph")
    known = known_difference(program)
    expected = sorted(known.keys) if known else []
    lg, nb = both(program, records=True)
    assert len(checkpointed(lg.apps)) == len(checkpointed(nb.apps))
    assert [t for t, _ in lg.threads] == [t for t, _ in nb.threads]
    assert bool(nb.threads) == (program.__name__ not in CANNOT_IMPORT)
    for (thread_id, run), (_, our_run) in zip(lg.threads, nb.threads, strict=True):
        imported, ours = deep_view(run), deep_view(our_run)
        assert sorted(deep_differences(imported, ours)) == expected, (thread_id, imported, ours)
        if program.__name__ == "checkpointer_true_program":
            assert any("checkpointer=True" in note for note in run.warnings)


# --- one program, step by step ---------------------------------------------------------------


class S(TypedDict):
    log: Annotated[list, operator.add]


def nested(api: Any, saver: Any) -> Any:
    """`sub` runs `x` then `deep`, a subgraph whose `ask` asks; then `b`."""
    deepest = api.StateGraph(S).add_node("y", lambda s: {"log": ["y"]})
    deepest.add_node("ask", lambda s: {"log": [api.interrupt("q?")]})
    deepest.add_edge(api.START, "y").add_edge("y", "ask")
    inner = api.StateGraph(S).add_node("x", lambda s: {"log": ["x"]})
    inner.add_node("deep", deepest.compile()).add_edge(api.START, "x").add_edge("x", "deep")
    outer = api.StateGraph(S).add_node("sub", inner.compile())
    outer.add_node("b", lambda s: {"log": ["b"]})
    outer.add_edge(api.START, "sub").add_edge("sub", "b")
    return outer.compile(checkpointer=saver)


def test_a_paused_nested_subgraph_then_resumed():
    pytest.importorskip("langgraph")
    lg_api = api_for("langgraph")
    app = nested(lg_api, lg_api.saver())
    app.invoke({"log": []}, THREAD)
    paused = nbgraph.Run.from_langgraph(app, THREAD)
    assert paused.status == "interrupted"
    (sub,) = paused.subruns
    assert (sub.parent, sub.task, sub.status) == (paused, "1:0:sub", "interrupted")
    (deep,) = sub.subruns
    assert (deep.task, deep.status, deep.output) == ("2:0:deep", "interrupted", {"log": ["x", "y"]})
    asked = [t for t in deep.log.tasks() if t.interrupts]
    assert [(t.node, t.interrupts[0].value) for t in asked] == [("ask", "q?")]
    app.invoke(lg_api.Command(resume="A"), THREAD)
    done = nbgraph.Run.from_langgraph(app, THREAD)
    assert done.output == {"log": ["x", "x", "y", "A", "b"]}
    assert done.subruns[0].subruns[0].output == {"log": ["x", "y", "A"]}
    assert list(done.steps.subruns) == [[0], []]
    assert not [w for w in done.warnings if "subgraph" in w]
    nb_api = api_for("nbgraph")
    ours = nested(nb_api, nb_api.saver())
    ours.invoke({"log": []}, THREAD)
    ours.invoke(nb_api.Command(resume="A"), THREAD)
    rebuilt = nbgraph.Run.from_checkpointer(ours.checkpointer, "t", graph=ours)
    assert deep_differences(deep_view(done), deep_view(rebuilt)) == []
    assert len(done.compare(rebuilt)) == 0
    assert len(done.subruns[0].compare(rebuilt.subruns[0])) == 0


def test_a_paused_subgraph_agrees_with_nbgraphs_live_run():
    pytest.importorskip("langgraph")
    lg_api, nb_api = api_for("langgraph"), api_for("nbgraph")
    app = nested(lg_api, lg_api.saver())
    app.invoke({"log": []}, THREAD)
    imported = nbgraph.Run.from_langgraph(app, THREAD)
    live = nested(nb_api, nb_api.saver()).run({"log": []}, THREAD)
    assert live.status == imported.status == "interrupted"
    assert deep_differences(deep_view(imported), deep_view(live)) == []


def test_a_subgraph_that_keeps_no_checkpoints_is_said():
    pytest.importorskip("langgraph")
    lg_api = api_for("langgraph")
    inner = lg_api.StateGraph(S).add_node("x", lambda s: {"log": ["x"]})
    inner.add_edge(lg_api.START, "x")
    outer = lg_api.StateGraph(S).add_node("sub", inner.compile(checkpointer=False))
    app = outer.add_edge(lg_api.START, "sub").compile(checkpointer=lg_api.saver())
    app.invoke({"log": []}, THREAD)
    run = nbgraph.Run.from_langgraph(app, THREAD)
    assert run.output == {"log": ["x"]}
    assert run.subruns == []
    assert any("'sub'" in w and "checkpointer=False" in w for w in run.warnings)


# --- every differential program: each top-level call recorded on both ----------------------


PROGRAMS_ALL = differential_programs()


@pytest.mark.parametrize(
    ("run", "known"), [(r, k) for _, r, k in PROGRAMS_ALL], ids=[i for i, _, _ in PROGRAMS_ALL]
)
def test_every_differential_program_imported_agrees_with_nbgraph(run, known):
    """Each program's records agree, or differ as the program declares (`@differs` where it
    is written, with the reason and the docs/langgraph.md heading that says so)."""
    pytest.importorskip("langgraph")
    count, found = program_differences(run)
    why = known and known.why
    if why == NO_RUN.text:
        assert count == 0
        return
    assert count > 0
    if why == PAIRING.text:  # (which calls pair depends on the threads: not judged)
        return
    assert found == (sorted(known.keys) if known else []), found


def test_the_proofs_count():
    """The counts the README quotes: programs run, and how many agree."""
    whys = [known and known.why for _, _, known in PROGRAMS_ALL]
    differential = [w for w in whys if w not in (NO_RUN.text, NBGRAPH_ONLY.text)]
    assert (len(PROGRAMS_ALL), len(differential), differential.count(None)) == (216, 179, 123)
    counts = [whys.count(why.text) for why in (APPLY, PARENT, SAVER_RECORD, PAIRING)]
    assert counts == [18, 6, 16, 8]
    told = [p for p in SUBGRAPH_PROGRAMS if known_difference(p) and p.__name__ not in CANNOT_IMPORT]
    assert (len(SUBGRAPH_PROGRAMS), len(told), len(CANNOT_IMPORT)) == (15, 2, 1)


def test_each_known_difference_names_a_heading_of_the_langgraph_doc():
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "langgraph.md").read_text()
    declared = {known.doc for _, _, known in PROGRAMS_ALL if known}
    assert declared and all(f"## {heading}\n" in doc for heading in declared), declared
