"""Differential tests: subgraph checkpoints, on LangGraph and nbgraph.

A subgraph compiled without a checkpointer (LangGraph's default) keeps its checkpoints in its
parent's saver under `checkpoint_ns = "<node>:<task id>"`, resumes at the node that asked,
shows under its task in `get_state(config, subgraphs=True)`, and its thread is read, listed
and updated through the parent with that namespace; `checkpointer=True` keeps one thread per
node across the parent's runs; `checkpointer=False` keeps none. Each program returns what it
observed; ids (task ids, checkpoint ids, interrupt ids) are compared by structure only: the
same id in the same positions (`Ids`).
"""

# No `from __future__ import annotations`: state classes are read at run time by both engines.

import os
import subprocess
import sys
import textwrap

import pytest

from tests.parity.subgraph_checkpoint_programs import (
    CONFIG,
    PROGRAMS,
    S,
    nested_program,
    parent_of,
    resume_at_the_node_program,
    three_node_subgraph,
    update_subgraph_state_program,
)
from tests.support.harness import api_for, both, differs
from tests.support.records import NBGRAPH_ONLY, NO_RUN

pytestmark = pytest.mark.langgraph


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_subgraph_checkpoint_programs_behave_as_on_langgraph(program):
    langgraph, nbgraph = both(program)
    assert nbgraph == langgraph


@pytest.mark.parametrize(
    "program",
    [resume_at_the_node_program, nested_program, update_subgraph_state_program],
    ids=lambda p: p.__name__,
)
def test_subgraph_checkpoints_in_sqlite_behave_as_on_langgraph(program, tmp_path):
    """nbgraph's SqliteSaver against LangGraph's in-memory saver: the same outcome."""
    langgraph, nbgraph = both(program, saver=("memory", "sqlite"), folder=tmp_path)
    assert nbgraph == langgraph


# --- another process, and the record -----------------------------------------------------------

PAUSE_IN_A_CHILD = """
import operator, sys
from typing import Annotated, TypedDict
import nbgraph
from nbgraph.checkpoint import SqliteSaver

class S(TypedDict):
    x: Annotated[list, operator.add]

def node(name, ask=False):
    def run(state: S):
        print("ran", name)
        value = nbgraph.interrupt(name + "?") if ask else ""
        return {"x": [name + value]}
    return run

sub = nbgraph.StateGraph(S).add_node("a", node("a")).add_node("b", node("b", ask=True))
sub.add_edge(nbgraph.START, "a").add_edge("a", "b")
parent = nbgraph.StateGraph(S).add_node("sub", sub.compile())
parent.add_edge(nbgraph.START, "sub")
with SqliteSaver(sys.argv[1]) as saver:
    app = parent.compile(checkpointer=saver)
    config = {"configurable": {"thread_id": "t"}}
    if sys.argv[2] == "start":
        print(app.invoke({"x": ["i"]}, config))
    else:
        print(app.invoke(nbgraph.Command(resume="!"), config))
"""


@differs(NO_RUN.at())
def test_a_subgraph_paused_in_one_process_resumes_at_its_node_in_another(tmp_path):
    """SqliteSaver: the subgraph's checkpoints outlive the process that paused it; a new
    process resumes it at `b` (`a` does not run again)."""
    script = tmp_path / "child.py"
    script.write_text(textwrap.dedent(PAUSE_IN_A_CHILD))
    path = str(tmp_path / "threads.sqlite")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}

    def child(mode: str) -> list[str]:
        done = subprocess.run(
            [sys.executable, str(script), path, mode], capture_output=True, text=True,
            env=env, check=True, timeout=120,
        )  # fmt: skip
        return done.stdout.splitlines()

    started = child("start")
    assert started[:2] == ["ran a", "ran b"]
    assert "__interrupt__" in started[2] and "'x': ['i']" in started[2]
    resumed = child("resume")
    assert resumed == ["ran b", "{'x': ['i', 'i', 'a', 'b!']}"]


@differs(NBGRAPH_ONLY.at("0 apps with a saver"))
def test_run_from_checkpointer_rebuilds_subruns_as_the_live_run_has_them():
    """`Run.from_checkpointer` hangs each subgraph thread's rebuilt run on the task that ran
    it, nested as deep as the live run's: the tables are equal."""
    import nbgraph

    api = api_for("nbgraph")
    inner = api.StateGraph(S).add_node("ia", lambda s: {"x": ["ia"]})
    inner.add_edge(api.START, "ia")
    middle = api.StateGraph(S).add_node("m", lambda s: {"x": ["m"]})
    middle.add_node("inner", inner.compile()).add_edge(api.START, "m").add_edge("m", "inner")
    parent = api.StateGraph(S).add_node("p", lambda s: {"x": ["p"]})
    parent.add_node("outer", middle.compile()).add_node("other", middle.compile())
    twice_graph = inner.compile()

    def twice(state: S):
        return {"x": twice_graph.invoke({"x": []})["x"] + twice_graph.invoke({"x": []})["x"]}

    parent.add_node("twice", twice)
    parent.add_edge(api.START, "p").add_edge("p", "outer").add_edge("p", "other")
    parent.add_edge("p", "twice")
    saver = nbgraph.MemorySaver()
    app = parent.compile(checkpointer=saver)
    app.invoke({"x": ["i"]}, CONFIG)
    live = app.last_run
    for rebuilt in (nbgraph.Run.from_checkpointer(saver, "t"),
                    nbgraph.Run.from_checkpointer(saver, "t", graph=app)):  # fmt: skip
        assert rebuilt.steps.equals(live.steps)
        assert [s.task for s in rebuilt.subruns] == [s.task for s in live.subruns]
        assert len(live.subruns) == 4  # outer, other, and the two runs of `twice`
        for got, want in zip(rebuilt.subruns, live.subruns, strict=True):
            assert got.steps.equals(want.steps)
            assert got.effects.equals(want.effects)
            assert got.states.equals(want.states)
            assert got.parent is rebuilt
            assert len(got.subruns) == len(want.subruns)
            for got_inner, want_inner in zip(got.subruns, want.subruns, strict=True):
                assert got_inner.steps.equals(want_inner.steps)
                assert got_inner.task == want_inner.task


@differs(NBGRAPH_ONLY.at("0 apps with a saver"))
def test_delete_thread_deletes_its_subgraphs_threads(tmp_path):
    """`delete_thread` of a parent's thread deletes its subgraphs' threads too."""
    from nbgraph.checkpoint import SqliteSaver

    api = api_for("nbgraph")
    for saver in (api.saver(), SqliteSaver(str(tmp_path / "t.sqlite"))):
        app = parent_of(api, three_node_subgraph(api, []), saver)
        app.invoke({"x": ["i"]}, CONFIG)
        app.invoke({"x": ["i"]}, {"configurable": {"thread_id": "other"}})
        assert len(saver.threads()) == 4
        saver.delete_thread("t")
        assert [key.split("\x1f")[0] for key in saver.threads()] == ["other", "other"]
        assert list(saver.list(CONFIG)) == []
