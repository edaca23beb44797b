"""Damaged run files, checkpoint rows and Runs folders are refused by name, and loading a
file costs no more than docs/VALUES.md states ("What loading a file may cost")."""

import decimal
import itertools
import json
import operator
import os
import sqlite3
import time
import tracemalloc
from typing import Annotated, Any, TypedDict

import pytest

from nbgraph import END, START, Run, StateGraph
from nbgraph.checkpoint.sqlite import SqliteSaver
from nbgraph.errors import CheckpointFileError
from nbgraph.notebook.runs import Runs, RunsFolderError
from nbgraph.record.files.serialize import RunFileError
from nbgraph.reducers import REPEAT_LIMIT


class Sub(TypedDict):
    log: Annotated[list, operator.add]


def _nested_app():
    inner = StateGraph(Sub).add_node("inner", lambda s: {"log": ["i"]})
    inner = inner.add_edge(START, "inner").compile()
    return (
        StateGraph(Sub)
        .add_node("outer", inner)
        .add_node("b", lambda s: {"log": ["b"]})
        .add_edge(START, "outer")
        .add_edge("outer", "b")
        .compile()
    )


@pytest.fixture(scope="module")
def document():
    return json.loads(_nested_app().run({"log": []}).to_json())


def _edited(document, change):
    doc = json.loads(json.dumps(document))
    change(doc)
    return json.dumps(doc)


def _subrun_write_field(doc):
    step = doc["run"]["subruns"][0]["document"]["run"]["steps"][1]
    step["tasks"][0]["writes"][0][0] = [["log", 1]]


@pytest.mark.parametrize(
    "change",
    [
        lambda d: d["run"].__setitem__("input", {"log": {"$type": "decimal", "value": "x"}}),
        lambda d: d["run"]["steps"][1].__setitem__("cleared", [1]),
        _subrun_write_field,
        lambda d: d["run"]["subruns"][0]["document"]["run"]["steps"][1]["tasks"][0].__setitem__(
            "writes", [["log", 5]]
        ),
    ],
    ids=["decimal", "cleared", "subrun-field", "subrun-write"],
)
def test_a_damaged_run_file_is_refused_at_load(document, change):
    with pytest.raises(RunFileError):
        Run.from_json(_edited(document, change))


def test_a_damaged_decimal_is_a_run_file_error():
    class S(TypedDict):
        v: Any

    app = StateGraph(S).add_node("a", lambda s: {"v": decimal.Decimal("1.5")})
    text = app.add_edge(START, "a").compile().run({"v": None}).to_json()
    assert Run.from_json(text).output["v"] == decimal.Decimal("1.5")
    with pytest.raises(RunFileError, match="decimal"):
        Run.from_json(text.replace('"1.5"', '"x"', 1))


# --- checkpoint files --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("ckpt") / "c.db")
    saver = SqliteSaver(path)
    plain = StateGraph(Sub).add_node("a", lambda s: {"log": ["a"]}).add_edge(START, "a")
    plain.compile(checkpointer=saver).invoke({"log": []}, {"configurable": {"thread_id": "p"}})
    branches = StateGraph(dict, reducers={"log": "append"})
    for name in "abc":
        branches.add_node(name, lambda s, name=name: {"log": [name]})
    branches.add_edge(START, "a").add_edge("a", "b").add_edge("a", "c")
    branches.compile(semantics="branches", checkpointer=saver).invoke(
        {"log": []}, {"configurable": {"thread_id": "br"}}
    )
    saver.close()
    return path


def _with_row(source, target, thread, step, change):
    with sqlite3.connect(source) as a, sqlite3.connect(target) as b:
        a.backup(b)
    conn = sqlite3.connect(target)
    cid, payload = conn.execute(
        "SELECT checkpoint_id, payload FROM checkpoints WHERE thread_id=? AND step=?",
        (thread, step),
    ).fetchone()
    data = json.loads(payload)
    change(data)
    conn.execute(
        "UPDATE checkpoints SET payload=? WHERE checkpoint_id=? AND thread_id=?",
        (json.dumps(data), cid, thread),
    )
    conn.commit()
    conn.close()
    return target


def _decimal_write(data):
    data["tasks"][0]["writes"][0][1] = [{"$type": "decimal", "value": "x"}]


@pytest.mark.parametrize(
    ("thread", "step", "change"),
    [
        ("p", 1, lambda d: d.__setitem__("resets", 5)),
        ("br", 1, lambda d: d["points"][0].pop("parent")),
        ("br", 1, lambda d: d["next"]["lineages"].__setitem__("arrivals", [[["a"], ["x"]]])),
        ("p", 1, _decimal_write),
    ],
    ids=["resets", "point-without-parent", "arrivals", "decimal"],
)
def test_a_damaged_checkpoint_row_is_a_checkpoint_file_error(
    checkpoints, tmp_path, thread, step, change
):
    path = _with_row(checkpoints, str(tmp_path / "x.db"), thread, step, change)
    saver = SqliteSaver(path)
    try:
        with pytest.raises(CheckpointFileError):
            Run.from_checkpointer(saver, thread).effect_list  # noqa: B018
    finally:
        saver.close()


def test_a_checkpoint_file_missing_a_column_is_refused_by_name(tmp_path):
    path = str(tmp_path / "other.db")
    conn = sqlite3.connect(path)
    conn.executescript("""
    CREATE TABLE nbgraph_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    INSERT INTO nbgraph_meta VALUES ('format', 'nbgraph.checkpoints'), ('schema_version', '1');
    CREATE TABLE checkpoints (thread_id TEXT, checkpoint_id TEXT, parent_id TEXT, step INTEGER,
        source TEXT, created_at REAL, seq INTEGER, payload TEXT);
    CREATE TABLE writes (thread_id TEXT, checkpoint_id TEXT, task_id TEXT, seq INTEGER,
        payload TEXT);
    CREATE TABLE claims (thread_id TEXT PRIMARY KEY, owner TEXT NOT NULL, claimed_at REAL);
    """)
    conn.commit()
    conn.close()
    with pytest.raises(CheckpointFileError, match="no column snapshot"):
        SqliteSaver(path)


def test_a_runs_index_with_a_bad_duration_is_refused_at_load(tmp_path):
    app = _nested_app()
    folder = tmp_path / "runs"
    app.run_many([{"log": []}, {"log": []}], progress=False).save(folder)
    index = json.loads((folder / "runs.json").read_text())
    index["runs"][0]["duration"] = "x"
    (folder / "runs.json").write_text(json.dumps(index))
    with pytest.raises(RunsFolderError):
        Runs.load(folder, graph=app)


# --- what loading may cost ---------------------------------------------------------------------


class Text(TypedDict):
    s: Annotated[str, operator.add]


def _multiplying_file(initial: Any, factors: list[int]) -> str:
    """A run file whose field's reducer is `operator.mul`, its writes `factors` (the input's
    first, then one node's each)."""
    app = StateGraph(Text)
    names = [f"n{i}" for i in range(len(factors) - 1)]
    for name in names:
        app.add_node(name, lambda s: {"s": "y"})
    app.add_edge(START, names[0])
    for a, b in itertools.pairwise(names):
        app.add_edge(a, b)
    app.add_edge(names[-1], END)
    doc = json.loads(app.compile().run({"s": "x"}).to_json())
    field = doc["graph"]["fields"][0]
    field.update(function="operator.mul", reducer="mul", initial={"type": "text", "value": initial})
    writes = iter(factors)
    for step in doc["run"]["steps"]:
        for task in step["tasks"]:
            task["writes"] = [["s", next(writes)]]
    doc["run"]["final"] = {"s": ""}
    return json.dumps(doc, separators=(",", ":"))


@pytest.mark.parametrize(
    "initial",
    ["x" * 100, {"$type": "tuple", "items": [0] * 100}, [0] * 100],
    ids=["str", "tuple", "list"],
)
def test_a_reducer_bomb_is_refused_within_the_stated_bound(initial):
    text = _multiplying_file(initial, [1000, 1000, 10])  # 10**9 items if replayed
    assert len(text) < 4000
    tracemalloc.start()
    started = time.perf_counter()
    try:
        with pytest.raises(RunFileError, match="ReplayLimitError"):
            Run.from_json(text)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert time.perf_counter() - started < 5
    assert peak < 16 * 2**20  # the file, its record, and one repeat of at most REPEAT_LIMIT


def test_a_repeat_within_the_bound_and_a_product_still_load():
    run = Run.from_json(_multiplying_file("ab", [2, 3]))
    assert run.effect_list[-1].after == "ab" * 6
    grown = Run.from_json(_multiplying_file("x", [1, REPEAT_LIMIT]))
    assert len(grown.effect_list[-1].after) == REPEAT_LIMIT
    with pytest.raises(RunFileError, match=f"{REPEAT_LIMIT:,}"):
        Run.from_json(_multiplying_file("x", [1, REPEAT_LIMIT + 1]))


def test_a_loaded_products_reducer_is_saved_again_by_name():
    text = _multiplying_file("ab", [2, 3])
    again = json.loads(Run.from_json(text).to_json())
    assert again["graph"]["fields"][0]["function"] == "operator.mul"


def test_a_live_graph_multiplies_without_the_file_bound():
    app = StateGraph(dict, reducers={"s": operator.mul})
    app.add_node("a", lambda s: {"s": REPEAT_LIMIT + 1}).add_edge(START, "a")
    assert len(app.compile().invoke({"s": "x"})["s"]) == REPEAT_LIMIT + 1


def test_the_stated_bound_is_in_the_docs():
    docs = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "VALUES.md")
    with open(docs, encoding="utf-8") as handle:
        text = handle.read()
    assert "What loading a file may cost" in text
    assert f"{REPEAT_LIMIT:,}" in text


def test_a_row_whose_text_is_not_utf8_is_a_checkpoint_file_error(checkpoints, tmp_path):
    path = str(tmp_path / "bytes.db")
    with sqlite3.connect(checkpoints) as a, sqlite3.connect(path) as b:
        a.backup(b)
    conn = sqlite3.connect(path)
    conn.execute("UPDATE checkpoints SET payload = CAST(x'7bff22' AS TEXT) WHERE thread_id='p'")
    conn.commit()
    conn.close()
    saver = SqliteSaver(path)
    try:
        with pytest.raises(CheckpointFileError, match="UTF-8"):
            Run.from_checkpointer(saver, "p")
    finally:
        saver.close()


# --- going on from a damaged thread (found by the fuzz once it resumed threads) ---------------


def _apps(saver):
    plain = StateGraph(Sub).add_node("a", lambda s: {"log": ["a"]}).add_edge(START, "a")
    branches = StateGraph(dict, reducers={"log": "append"})
    for name in "abc":
        branches.add_node(name, lambda s, name=name: {"log": [name]})
    branches.add_edge(START, "a").add_edge("a", "b").add_edge("a", "c")
    return {
        "p": plain.compile(checkpointer=saver),
        "br": branches.compile(semantics="branches", checkpointer=saver),
    }


def _edit_sql(source, target, statement):
    with sqlite3.connect(source) as a, sqlite3.connect(target) as b:
        a.backup(b)
    conn = sqlite3.connect(target)
    conn.execute(statement)
    conn.commit()
    conn.close()
    return target


@pytest.mark.parametrize("thread", ["p", "br"])
def test_running_on_from_a_checkpoint_with_an_empty_id_is_refused_by_name(
    checkpoints, tmp_path, thread
):
    statement = f"UPDATE checkpoints SET checkpoint_id = '' WHERE thread_id = '{thread}' AND " + (
        f"seq = (SELECT MAX(seq) FROM checkpoints WHERE thread_id = '{thread}')"
    )
    saver = SqliteSaver(_edit_sql(checkpoints, str(tmp_path / "e.db"), statement))
    try:
        with pytest.raises(CheckpointFileError, match="checkpoint_id is ''"):
            _apps(saver)[thread].invoke({"log": []}, {"configurable": {"thread_id": thread}})
    finally:
        saver.close()


def test_update_state_on_a_thread_written_by_a_node_this_graph_lacks_is_refused(
    checkpoints, tmp_path
):
    def rename(data):
        data["tasks"][0]["node"] = "gone"

    saver = SqliteSaver(_with_row(checkpoints, str(tmp_path / "n.db"), "p", 1, rename))
    try:
        with pytest.raises(CheckpointFileError, match=r"'gone'.*pass as_node"):
            _apps(saver)["p"].update_state({"configurable": {"thread_id": "p"}}, {"log": ["u"]})
    finally:
        saver.close()


def test_a_branch_checkpoint_naming_a_point_it_lacks_is_refused_on_resume(checkpoints, tmp_path):
    def ended(data):
        data["next"]["lineages"]["ended"] = [["a", "join:nowhere"]]

    saver = SqliteSaver(_with_row(checkpoints, str(tmp_path / "b.db"), "br", 2, ended))
    try:
        with pytest.raises(CheckpointFileError, match="join:nowhere"):
            _apps(saver)["br"].invoke(None, {"configurable": {"thread_id": "br"}})
    finally:
        saver.close()


def test_a_run_file_whose_waiting_edge_waits_for_nothing_is_refused_at_load():
    graph = StateGraph(Sub).add_node("a", lambda s: {"log": ["a"]})
    graph.add_node("b", lambda s: {"log": ["b"]}).add_node("c", lambda s: {"log": ["c"]})
    graph.add_edge(START, "a").add_edge(START, "b").add_edge(["a", "b"], "c")
    doc = json.loads(graph.compile().run({"log": []}).to_json())
    doc["graph"]["waiting"][0]["sources"] = []
    with pytest.raises(RunFileError, match="waits for no node"):
        Run.from_json(json.dumps(doc))
