"""Damaged run and checkpoint files found by a wider fuzz end in named errors, at load
(a numpy dtype text numpy parses with `ast`, a step missing, a write whose field is a
set), or are read as the engine writes them (a pause write without its answers)."""

import json
import operator
import sqlite3
from typing import Annotated, Any, TypedDict

import pytest

from nbgraph import END, START, Command, Run, Send, StateGraph, interrupt
from nbgraph.checkpoint.sqlite import SqliteSaver
from nbgraph.errors import CheckpointFileError, InvalidArgumentError
from nbgraph.record.files.serialize import RunFileError

np = pytest.importorskip("numpy")


class S(TypedDict):
    log: Annotated[list, operator.add]
    bag: Annotated[frozenset, operator.or_]
    arr: Any


def _a(state):
    return {"log": ["a"], "bag": frozenset({1}), "arr": np.arange(3)}


def _three_steps():
    app = (
        StateGraph(S)
        .add_node("a", _a)
        .add_node("b", lambda s: {"log": ["b"]})
        .add_node("c", lambda s: {"log": ["c"]})
        .add_edge(START, "a")
        .add_edge("a", "b")
        .add_edge("b", "c")
        .add_edge("c", END)
        .compile()
    )
    return app.run({"log": [], "bag": frozenset(), "arr": None}).to_json()


def test_a_damaged_numpy_dtype_is_a_run_file_error():
    with pytest.raises(RunFileError, match="dtype"):
        Run.from_json(_three_steps().replace('"<i8"', '"<04"'))


def test_a_missing_step_is_refused_at_load():
    doc = json.loads(_three_steps())
    del doc["run"]["steps"][1]
    with pytest.raises(RunFileError, match="a step is missing"):
        Run.from_json(json.dumps(doc))


def test_a_write_whose_field_is_a_set_is_shared_as_its_text(tmp_path):
    doc = json.loads(_three_steps())
    writes = doc["run"]["steps"][0]["tasks"][0]["writes"]
    writes[1] = list(reversed(writes[1]))  # (a dict state's key may be any hashable value)
    page = Run.from_json(json.dumps(doc)).save_html(tmp_path / "run.html")
    assert "frozenset({1})" in page.read_text(encoding="utf-8")


def test_a_run_without_steps_loads_and_inspect_says_why_it_shows_nothing():
    doc = json.loads(_three_steps())
    doc["run"]["steps"] = []
    run = Run.from_json(json.dumps(doc))
    with pytest.raises(InvalidArgumentError, match="no steps"):
        run.inspect()


class L(TypedDict, total=False):
    log: Annotated[list, operator.add]
    item: Any


def _worker(state):
    return {"log": [f"w{state['item']}:{interrupt({'i': state['item']})}"]}


def _paused_in_sends(path):
    saver = SqliteSaver(path)
    app = (
        StateGraph(L)
        .add_node("plan", lambda s: {"log": ["plan"]})
        .add_node("w", _worker)
        .add_edge(START, "plan")
        .add_conditional_edges("plan", lambda s: [Send("w", {"item": i}) for i in range(2)], ["w"])
        .compile(checkpointer=saver)
    )
    return saver, app


def _resume_after(tmp_path, sql):
    path = str(tmp_path / "p.db")
    config = {"configurable": {"thread_id": "t"}}
    saver, app = _paused_in_sends(path)
    app.invoke({"log": []}, config)
    saver.close()
    with sqlite3.connect(path) as conn:
        conn.execute(sql)
    saver, app = _paused_in_sends(path)
    try:
        state = app.get_state(config)
        return app.invoke(Command(resume={i.id: "yes" for i in state.interrupts}), config)
    finally:
        saver.close()


def test_a_write_seq_that_is_not_an_integer_is_a_checkpoint_file_error(tmp_path):
    with pytest.raises(CheckpointFileError, match="seq"):
        _resume_after(
            tmp_path, "UPDATE writes SET seq='x' WHERE rowid=(SELECT max(rowid) FROM writes)"
        )


def test_a_pause_write_without_answers_resumes(tmp_path):
    done = _resume_after(
        tmp_path,
        "UPDATE writes SET payload=json_remove(payload, "
        "'$.answers') WHERE rowid=(SELECT min(rowid) FROM writes)",
    )
    assert sorted(done["log"]) == ["plan", "w0:yes", "w1:yes"]
