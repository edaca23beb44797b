"""A batch as one table (nbgraph/notebook/runs.py, runs_folder.py; record/batch_columns.py,
batch.py; views/drawings/paths.py, views/inspector/run_picker.py): `runs.effects`, `runs.steps`
and `runs.paths()` built from each run's columns, the same as each run's own tables; a saved
batch's tables read from its index alone; a picker of bounded size; the paths drawn."""

from __future__ import annotations

import json
import operator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Annotated, TypedDict

import pandas as pd
import pytest

from nbgraph import END, START, Send, StateGraph
from nbgraph.notebook import runs_folder
from nbgraph.notebook.runs import Runs, RunsFolderError


class State(TypedDict):
    x: int
    log: Annotated[list, operator.add]
    total: Annotated[int, operator.add]
    note: str


def fan(state: State) -> list[Send]:
    return [Send("part", {"x": state["x"] + k, "log": [], "total": 0, "note": ""}) for k in (1, 2)]


def part(state: State) -> dict:
    if state["x"] == 6:  # input 4's second part
        raise ValueError("no fours <here>")
    return {"log": [f"part {state['x']}"], "total": state["x"]}


def start(state: State) -> dict:
    return {"log": ["start"], "note": f"x={state['x']}"}


def loop(state: State) -> dict:
    return {"log": ["loop"], "total": 1}


def again(state: State) -> str:
    return "loop" if state["total"] < 12 else END


APP = (
    StateGraph(State)
    .add_node("start", start)
    .add_node("part", part)
    .add_node("loop", loop)
    .add_edge(START, "start")
    .add_conditional_edges("start", fan, ["part"])
    .add_edge("part", "loop")
    .add_conditional_edges("loop", again, ["loop", END])
    .compile()
)
"""Module-level: process workers find it by reference. Two `Send` tasks write `log` and
`total` in one step (several writers a field), `loop` grows `log` step by step (shared list
cells), input 4 fails."""

INPUTS = [{"x": x, "log": [], "total": 0, "note": ""} for x in range(5)]


@dataclass(frozen=True)
class Point:
    x: int
    tags: tuple


class Rich(TypedDict):
    text: Annotated[str, operator.add]
    points: Annotated[list, operator.add]
    seen: set


def grow(state: Rich) -> dict:
    n = len(state["points"])
    return {"text": f" word{n}", "points": [Point(n, ("a", n))], "seen": state["seen"] | {n}}


RICH = (
    StateGraph(Rich)
    .add_node("grow", grow)
    .add_edge(START, "grow")
    .add_conditional_edges("grow", lambda s: "grow" if len(s["points"]) < 4 else END)
    .compile()
)
"""Values of other kinds: a str grown step by step (`TextPrefix` cells), dataclasses in a
growing list, sets, tuples."""


def same_frames(batch: pd.DataFrame, runs: Runs, table: str) -> None:
    """`batch` (runs.effects or runs.steps) holds each run's own table, in order."""
    having = [i for i, run in zip(runs.indexes, runs, strict=True) if len(getattr(run, table))]
    assert list(batch["run"].unique()) == having
    for index, run in zip(runs.indexes, runs, strict=True):
        mine = batch[batch["run"] == index].drop(columns="run").reset_index(drop=True)
        pd.testing.assert_frame_equal(mine, getattr(run, table), check_frame_type=False)
    assert len(batch) == sum(len(getattr(run, table)) for run in runs)


@pytest.mark.parametrize("where", ["threads", "processes"])
def test_the_batch_tables_are_every_runs_own_tables(where):
    if where == "processes":
        with ProcessPoolExecutor(2) as pool:
            runs = APP.run_many(INPUTS, executor=pool, progress=False)
    else:
        runs = APP.run_many(INPUTS, progress=False)
    effects, steps = runs.effects, runs.steps
    assert [run.status for run in runs].count("failed") == 1 and runs[4].status == "failed"
    several = effects[effects["writers"].map(len) > 1]
    assert not several.empty and set(several["field"]) == {"log", "total"}
    same_frames(effects, runs, "effects")
    same_frames(steps, runs, "steps")
    assert effects.columns[0] == "run" and effects["run"].dtype == "int64"
    assert steps["step"].dtype == "int64" and effects["changed"].dtype == "bool"


def test_values_of_every_kind_come_back_as_each_runs_own(tmp_path):
    inputs = [{"text": f"t{k}", "points": [], "seen": set()} for k in range(3)]
    with ProcessPoolExecutor(2) as pool:
        runs = RICH.run_many(inputs, executor=pool, progress=False)
    same_frames(runs.effects, runs, "effects")
    after = runs.effects[runs.effects["field"] == "points"]["after"].tolist()
    assert after[-1] == [Point(k, ("a", k)) for k in range(4)]
    back = Runs.load(runs.save(tmp_path / "rich"), models=[Point], graph=RICH)
    pd.testing.assert_frame_equal(back.effects, runs.effects)
    threads = RICH.run_many(inputs, progress=False)
    back = Runs.load(threads.save(tmp_path / "threads"), models=[Point], graph=RICH)
    pd.testing.assert_frame_equal(back.effects, threads.effects)
    texts = back.effects[back.effects["field"] == "text"]["after"].tolist()
    assert texts[-1] == "t2 word0 word1 word2 word3"


def test_the_batch_tables_read_no_run_sent_as_json():
    with ProcessPoolExecutor(2) as pool:
        runs = APP.run_many(INPUTS, executor=pool, progress=False)
    runs.effects, runs.steps, runs.paths(), runs.table
    assert all(slot._run is None for slot in runs._slots)  # (no run read back)


def test_a_failed_and_a_refused_run_are_rows_too():
    runs = APP.run_many([*INPUTS, 42], progress=False)  # (42: refused, not a state)
    assert runs[5].status == "failed" and len(runs[5].effects) == 0
    same_frames(runs.effects, runs, "effects")
    assert "error" in set(runs.steps[runs.steps["run"] == 4]["status"])
    same_frames(runs.steps, runs, "steps")
    empty = Runs([])
    assert list(empty.effects.columns)[:3] == ["run", "step", "field"] and empty.effects.empty


def test_save_and_load_read_the_tables_from_the_index_alone(tmp_path, monkeypatch):
    runs = APP.run_many(INPUTS, progress=False)
    runs.save(tmp_path / "batch")
    read = []
    real_load = runs_folder.Run.load
    counted = classmethod(lambda cls, *a, **k: read.append(a) or real_load(*a, **k))
    monkeypatch.setattr(runs_folder.Run, "load", counted)
    back = Runs.load(tmp_path / "batch", graph=APP)
    pd.testing.assert_frame_equal(back.paths(), runs.paths())
    pd.testing.assert_frame_equal(back.steps, runs.steps)
    pd.testing.assert_frame_equal(back.effects, runs.effects)
    assert read == []  # no run file read for the tables
    assert back[2].output == runs[2].output and len(read) == 1  # a run: read when asked
    same_frames(back.effects, back, "effects")


def test_a_batch_folder_damaged_or_missing_names_what_is_wrong(tmp_path):
    with pytest.raises(RunsFolderError, match="is not a folder"):
        Runs.load(tmp_path / "nowhere")
    folder = APP.run_many(INPUTS[:2], progress=False).save(tmp_path / "b")
    index = json.loads((folder / "runs.json").read_text())

    def damaged(change, match):
        document = json.loads(json.dumps(index))
        change(document)
        (folder / "runs.json").write_text(json.dumps(document))
        with pytest.raises(RunsFolderError, match=match):
            _ = Runs.load(folder).effects

    damaged(lambda d: d["runs"][1].pop("summary"), r"entry 1 \(run 1\) has no summary")
    damaged(lambda d: d["runs"][0]["summary"].update(path=3), "without a proper path")
    damaged(lambda d: d["runs"][0]["summary"]["columns"]["tasks"].pop("node"), "lack the col")
    damaged(lambda d: d["runs"][0]["summary"]["columns"]["effects"]["step"].pop(), "lengths")
    values = lambda d: d["runs"][1]["summary"]["columns"]["effects"]["values"]  # noqa: E731
    damaged(lambda d: values(d)["cells"].append(["p", 99, 1]), "run 1: its effects' values")
    damaged(lambda d: d.update(version=9), "version 9")
    (folder / "runs.json").write_text(json.dumps(index))
    (folder / "run-00001.json").unlink()
    with pytest.raises(RunsFolderError, match=r"lacks run files .*run-00001\.json"):
        Runs.load(folder)
    (folder / "runs.json").write_text("{")
    with pytest.raises(RunsFolderError, match="not JSON"):
        Runs.load(folder)


def test_an_index_of_version_1_still_loads(tmp_path):
    runs = APP.run_many(INPUTS[:2], progress=False)
    folder = runs.save(tmp_path / "old")
    index = json.loads((folder / "runs.json").read_text())
    index["version"] = 1
    for entry in index["runs"]:
        del entry["summary"]
    (folder / "runs.json").write_text(json.dumps(index))
    back = Runs.load(folder, graph=APP)
    pd.testing.assert_frame_equal(back.effects, runs.effects)


def test_the_paths_drawing_counts_runs_marks_failures_and_escapes_names():
    runs = APP.run_many(INPUTS, progress=False)
    source = runs.draw_paths().source
    assert 'label="paths taken by 5 runs"' in source
    ways = [line.strip() for line in source.splitlines() if "->" in line]
    assert ways == [
        'n0 -> n1 [label="5 (1 failed)" arrowsize=0.31 penwidth=8.00]',  # START -> start
        'n1 -> n2 [label="5 (1 failed)" arrowsize=0.31 penwidth=8.00]',  # start -> part
        "n2 -> n3 [label=4 arrowsize=0.39 penwidth=6.40]",  # part -> loop
        "n3 -> n3 [label=4 arrowsize=0.39 penwidth=6.40]",  # loop, again
        "n3 -> n4 [label=4 arrowsize=0.39 penwidth=6.40]",  # loop -> END
        'n2 -> n5 [label="1 failed" arrowsize=1.00 color="#990000" fontcolor="#990000" '
        "penwidth=1.60]",
    ]
    assert 'n5 [label=failed color="#990000"' in source
    evil = (
        StateGraph(State)
        .add_node('a"b\\', lambda s: {"log": ["x"]})
        .add_node("<i>", lambda s: {"log": ["y"]})
        .add_edge(START, 'a"b\\')
        .add_edge('a"b\\', "<i>")
        .compile()
    )
    source = evil.run_many(INPUTS[:2], progress=False).draw_paths().source
    assert 'label="a\\"b\\\\"' in source and 'label="<i>"' in source
    assert "->" in source and source.count("label=2") + source.count('label="2"') == 3


def test_the_picker_holds_a_bounded_number_of_options_at_ten_thousand_runs():
    pytest.importorskip("ipywidgets")
    from nbgraph.views.inspector.run_picker import PAGE, PATHS

    routes = StateGraph(State)
    for k in range(60):
        routes.add_node(f"n{k}", loop)
    names = [f"n{k}" for k in range(60)]
    routes.add_conditional_edges(START, lambda s: f"n{s['x'] % 60}", names)
    inputs = [{"x": k, "log": [], "total": 0, "note": ""} for k in range(10_000)]
    runs = routes.compile().run_many(inputs, progress=False)
    assert len(runs.paths()) == 60
    picker = runs.inspect()
    assert len(picker.run.options) == PAGE and len(picker.path.options) == PATHS + 1
    assert picker.page.max == 10_000 // PAGE and "60 distinct" in picker.path.options[0][0]
    picker.page.value = 7
    assert picker.run.options[0][1] == 6 * PAGE and picker.inspector.run is runs[6 * PAGE]
    assert picker.pick(9_999).run is runs[9_999] and picker.page.value == 10_000 // PAGE
    picker.path.value = "n0"  # 167 runs: two pages
    assert len(picker.matching) == 167 and picker.page.max == 2 and len(picker.run.options) == PAGE
    picker.page.value = 2
    assert [value for _, value in picker.run.options][-1] == 9_960
    assert picker.pick(1).run is runs[1] and picker.path.index == 0  # filter cleared
    with pytest.raises(IndexError, match="no run of input 10000 in this batch; inputs: 0, 1"):
        picker.pick(10_000)


def test_a_batch_of_runs_made_one_by_one_has_the_same_tables_and_index(tmp_path):
    made = Runs([APP.run(i) for i in INPUTS])  # (input 4 fails)
    assert made._slots[0].summary["columns"] is None  # (paths first: no columns made)
    assert made.paths()["count"].sum() == 5
    same_frames(made.effects, made, "effects")
    fresh = Runs([APP.run(i) for i in INPUTS])  # (input 4 fails)
    fresh.save(tmp_path / "made")  # (the index gets every run's columns)
    index = json.loads((tmp_path / "made" / "runs.json").read_text())
    assert all(entry["summary"]["columns"] is not None for entry in index["runs"])
    pd.testing.assert_frame_equal(Runs.load(tmp_path / "made").steps, fresh.steps)
