"""Differential test: each graph is built with langgraph and with nbgraph and must behave alike.

The programs are in tests/parity/compat_programs.py (the record's import proof runs them too);
tests/support/harness.py runs them on both libraries.
"""

# No `from __future__ import annotations` here: the state classes below are defined inside
# functions and read at run time by both engines.

import operator
import sys
from typing import Annotated, TypedDict

import pytest

from tests.parity.compat_programs import CASES, CHECKPOINT_CASES, case_outcome
from tests.support.harness import SAVER_KINDS, api_for, both

pytestmark = pytest.mark.langgraph


@pytest.mark.parametrize("case", CASES, ids=[c.__name__.removeprefix("case_") for c in CASES])
def test_same_behaviour_as_langgraph(case):
    pytest.importorskip("langgraph")
    expected, actual = both(case_outcome, case)
    assert actual["invoke"] == expected["invoke"]
    assert actual["stream"] == expected["stream"]
    assert actual["chunks"] == expected["chunks"]


def test_node_mutating_its_input_does_not_change_engine_state():
    # nbgraph only: LangGraph does not isolate nodes from the state it hands them, so a node
    # that mutates its input in place changes LangGraph's state too; nbgraph must not.
    nb = api_for("nbgraph")

    class S(TypedDict):
        log: Annotated[list, operator.add]
        data: dict

    def sneaky(state):
        state["log"].append("mutated")
        state["data"]["injected"] = True
        return {"log": ["sneaky"]}

    g = nb.StateGraph(S)
    g.add_node("sneaky", sneaky)
    g.add_node("after", lambda s: {"log": [f"after saw {len(s['log'])} {sorted(s['data'])}"]})
    g.add_edge(nb.START, "sneaky")
    g.add_edge("sneaky", "after")
    result = g.compile().invoke({"log": ["in"], "data": {"k": 1}})
    assert result == {"log": ["in", "sneaky", "after saw 2 ['k']"], "data": {"k": 1}}


@pytest.mark.parametrize("saver_kind", SAVER_KINDS)
@pytest.mark.parametrize(
    "program", CHECKPOINT_CASES, ids=[c.__name__.removeprefix("ckpt_") for c in CHECKPOINT_CASES]
)
def test_checkpoints_as_langgraph_keeps_them(program, saver_kind, tmp_path):
    pytest.importorskip("langgraph.checkpoint.sqlite")
    expected, actual = both(program, saver=saver_kind, folder=tmp_path)
    assert len(actual) == len(expected)
    for got, wanted in zip(actual, expected, strict=True):
        assert got == wanted


# ---------------------------------------------------------------------------------------------
# Self-check, run by hand: `python -m tests.parity.test_langgraph_compat [--show] [--nbgraph]`.
# Runs every case on langgraph several times, checks the canonical outcome is stable, and with
# --show prints it; with --nbgraph also prints each case where nbgraph differs.

KEYS = ("invoke", "stream", "chunks")


def self_check(argv: list[str]) -> int:
    lg = api_for("langgraph")
    show, against_nbgraph = "--show" in argv, "--nbgraph" in argv
    unstable = differing = 0
    nb = api_for("nbgraph") if against_nbgraph else None
    for c in CASES:
        runs = [case_outcome(lg, c) for _ in range(5)]
        if any(run != runs[0] for run in runs[1:]):
            unstable += 1
            print(f"UNSTABLE {c.__name__}")
        if show:
            shown = "".join(f"\n  {key}: {runs[0][key]}" for key in KEYS)
            print(f"--- {c.__name__}{shown}")
        if nb is not None:
            try:
                got = case_outcome(nb, c)
            except Exception as exc:  # the harness itself failed
                got = {"harness": repr(exc)}
            if got != runs[0]:
                differing += 1
                print(f"DIFF {c.__name__}")
                for key in KEYS:
                    if got.get(key) != runs[0][key]:
                        print(f"  {key} langgraph: {runs[0][key]}")
                        print(f"  {key} nbgraph:   {got.get(key, got)}")
    print(f"{len(CASES)} cases, {unstable} unstable, {differing} differ from nbgraph")
    return 1 if unstable or differing else 0


if __name__ == "__main__":
    sys.exit(self_check(sys.argv[1:]))
