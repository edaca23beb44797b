"""A record's replays of a list grown by `operator.add` (LangGraph's way): extended in the
replay's own list, and every table, state and comparison still what the run did."""

import json
import operator
from pathlib import Path
from typing import Annotated, TypedDict

from nbgraph import END, START, Overwrite, Run, StateGraph
from nbgraph.record.files.lazy_steps import LazySteps
from nbgraph.record.replaying import ExtendsLists, replay_graph


class Growing(TypedDict):
    count: int
    log: Annotated[list, operator.add]


def growing(steps: int, wrong_at: int = -1, reset_at: int = -1):
    def tick(state: dict) -> dict:
        n = state["count"]
        if n == reset_at:
            return {"count": n + 1, "log": Overwrite(["reset"])}
        return {"count": n + 1, "log": [-1 if n == wrong_at else n, f"x{n}"]}

    app = (
        StateGraph(Growing)
        .add_node("tick", tick)
        .add_edge(START, "tick")
        .add_conditional_edges("tick", lambda s: END if s["count"] >= steps else "tick")
        .compile()
    )
    return app.run({"count": 0, "log": ["start"]}, {"recursion_limit": steps + 5})


def expected_log(steps: int, wrong_at: int = -1, reset_at: int = -1) -> list[list]:
    """The log after each step 0..steps, folded with `operator.add` by hand."""
    logs, log = [["start"]], ["start"]
    for n in range(steps):
        log = ["reset"] if n == reset_at else [*log, -1 if n == wrong_at else n, f"x{n}"]
        logs.append(log)
    return logs


def test_the_replay_graph_extends_only_concatenated_lists_and_leaves_the_run_graph_alone():
    run = growing(3)
    graph = replay_graph(run.graph)
    assert type(graph.fields["log"].reducer.in_place) is ExtendsLists
    assert run.graph.fields["log"].reducer.in_place is None  # the engine's is untouched
    assert graph.fields["count"] == run.graph.fields["count"]
    plain = growing(1).graph
    assert replay_graph(replay_graph(plain)) is not plain  # (a copy each time, never shared)
    old = (1,)
    assert ExtendsLists(operator.add)(old, (2,)) == (1, 2) and old == (1,)  # not a list: fn


def test_effects_and_states_of_a_concatenated_list_are_what_the_run_made():
    run, logs = growing(30), expected_log(30)
    rows = [e for e in run.effect_list if e.field == "log"]
    assert [e.step for e in rows] == list(range(31))
    for effect in rows:
        assert effect.after == logs[effect.step]
        if effect.step:
            assert effect.before == logs[effect.step - 1]
    table = run.effects[run.effects.field == "log"]
    assert [list(cell) for cell in table["after"]] == logs  # every cell kept its own length
    for k in (0, 7, 30, 12):
        state = run.state_at(k)
        assert state["log"] == logs[k]
        state["log"].append("changed by the caller")  # a copy: the next question unchanged
    assert run.state_at(30)["log"] == logs[30] and run.output["log"] == logs[30]


def test_an_overwrite_in_the_middle_of_a_concatenated_list_is_replayed():
    run, logs = growing(12, reset_at=5), expected_log(12, reset_at=5)
    assert [run.state_at(k)["log"] for k in range(13)] == logs
    assert [e.after for e in run.effect_list if e.field == "log"] == logs


def test_a_loaded_run_replays_a_concatenated_list_the_same(tmp_path):
    run = growing(25, reset_at=9)
    loaded = Run.load(run.save(tmp_path / "run.json"))
    assert loaded.effect_list == run.effect_list
    assert loaded.state_at(25) == run.state_at(25)
    assert loaded.compare(run).empty


def test_compare_of_concatenated_lists_finds_where_they_part_and_where_one_is_reset():
    same = growing(20).compare(growing(20))
    assert same.empty
    parted = growing(20).compare(growing(20, wrong_at=6))
    assert parted[parted.what == "log"].step.tolist() == list(range(7, 21))
    row = parted[parted.what == "log"].iloc[0]
    assert list(row.this) == expected_log(20)[7] and list(row.other)[-2] == -1
    reset = growing(20).compare(growing(20, reset_at=11))
    assert reset[reset.what == "log"].step.tolist() == list(range(12, 21))


def test_a_run_file_keeps_a_step_a_line_and_reads_back_tagged_and_escaped_values(tmp_path):
    run = growing(4)
    path = run.save(tmp_path / "run.json")
    text = path.read_text(encoding="utf-8")
    steps = json.loads(text)["run"]["steps"]
    assert len(steps) == 5 and _step_lines(text) == steps  # steps 0..4, one line each
    run_lines = text.split('\n "run": {\n', 1)[1].splitlines()  # each other entry: a line
    entries = [line.strip().rstrip(",").split(": ", 1) for line in run_lines if line[:3] == '  "']
    data = json.loads(text)["run"]
    assert [key for key, _ in entries] == [json.dumps(key) for key in data]
    assert {json.loads(k): json.loads(v) for k, v in entries if v != "["} == {
        key: value for key, value in data.items() if key != "steps"
    }
    app = (
        StateGraph(dict)
        .add_node("a", lambda s: {"t": (1, 2), "s": "caf\u00e9 \ud800", "u": "\\u0024type"})
        .add_edge(START, "a")
        .compile()
    )
    odd = app.run({"t": (0,), "s": "", "u": ""})
    loaded = Run.load(odd.save(tmp_path / "odd.json"))
    assert loaded.output == odd.output == {"t": (1, 2), "s": "caf\u00e9 \ud800", "u": "\\u0024type"}
    assert loaded.effect_list == odd.effect_list


def _step_lines(text: str) -> list[dict]:
    """The lines of a run file's text that are each one whole step (a JSON object with a
    "step"), in order, however the file spaces its JSON."""
    found = []
    for line in text.splitlines():
        try:
            value = json.loads(line.strip().removesuffix(","))
        except ValueError:
            continue
        if type(value) is dict and "step" in value:
            found.append(value)
    return found


_DATA = Path(__file__).parent / "data"


def test_a_file_an_earlier_nbgraph_wrote_with_spaced_step_lines_loads_the_same(tmp_path):
    """tests/record/data/*_spaced.json were saved by nbgraph before its step lines were
    compact (`{"step": 0, "applied": true, ...}`), and without the header's `step_lines`
    (read whole, not step by step); they load, replay, and save again to the same document,
    with that entry added (read step by step)."""
    old = (_DATA / "growing_spaced.json").read_text(encoding="utf-8")
    assert old.count('   {"step": ') == 5 and '{"step":0,' not in old
    loaded, fresh = Run.load(_DATA / "growing_spaced.json"), growing(4, reset_at=2)
    assert loaded.output == fresh.output == {"count": 4, "log": ["reset", 3, "x3"]}
    assert [loaded.state_at(n) for n in range(5)] == [fresh.state_at(n) for n in range(5)]
    assert loaded.steps.drop(columns="duration").equals(fresh.steps.drop(columns="duration"))
    assert loaded.effect_list == fresh.effect_list
    again = loaded.save(tmp_path / "again.json").read_text(encoding="utf-8")
    assert type(loaded.log.steps) is list and '"step_lines"' not in old
    assert '   {"step":0,' in again and _unsummed(again) == json.loads(old)
    reloaded = Run.load(tmp_path / "again.json")
    assert isinstance(reloaded.log.steps, LazySteps)
    assert reloaded.effect_list == loaded.effect_list
    tagged = Run.load(_DATA / "tagged_spaced.json")
    assert tagged.output == {"t": (1, 2), "s": "caf\u00e9", "u": "\\u0024type"}
    assert _unsummed(tagged.to_json()) == json.loads((_DATA / "tagged_spaced.json").read_text())


def _unsummed(text: str) -> dict:
    """A run file's document without the header's sum of its step lines (`step_lines`)."""
    document = json.loads(text)
    assert set(document.pop("step_lines")) == {"count", "crc32"}
    return document
