"""Saving and loading runs: JSON in and out, lossless where the values allow, never pickle."""

import json
import math
import operator
import os
from typing import Annotated, Any, TypedDict

import pydantic
import pytest

from nbgraph import (
    END,
    MISSING,
    START,
    Ephemeral,
    Message,
    MessagesState,
    Mutation,
    Overwrite,
    RemoveMessage,
    Run,
    Send,
    StateGraph,
)
from nbgraph.codec.values import (
    RecordedError,
    RecordedMutation,
    UnavailableFunctionError,
    UnloadedModel,
    Unrepresentable,
    decode_value,
    encode_value,
)
from nbgraph.engine.core.config import DEFAULT_RECURSION_LIMIT
from nbgraph.errors import GraphMismatchError
from nbgraph.record.files.serialize import _FORMAT_VERSION, RunFileError
from nbgraph.reducers import plain_function
from tests.support.step_damages import STEP_DAMAGES, loop_document, loop_run, step_view


class S(TypedDict, total=False):
    log: Annotated[list, "append"]
    count: Annotated[int, operator.add]
    title: str
    item: object
    flash: Annotated[str, Ephemeral]


class Item(pydantic.BaseModel):
    name: str
    tags: tuple[str, ...] = ()


class Custom:
    def __repr__(self) -> str:
        return "<Custom thing>"


class Increment(Mutation):
    def __init__(self, field: str, by: int) -> None:
        self.field, self.by = field, by

    def apply(self, value):
        return (0 if value is MISSING else value) + self.by


def assert_same_run(loaded: Run, run: Run) -> None:
    """What the issue promises: same effects, states, steps, tree and output."""
    assert loaded.effect_list == run.effect_list
    for step in run.timeline.steps():
        assert loaded.state_at(step) == run.state_at(step), step
    assert [n.id for n in loaded.tree] == [n.id for n in run.tree]
    assert list(loaded.steps["task_id"]) == list(run.steps["task_id"])
    assert list(loaded.states.index) == list(run.states.index)
    assert loaded.output == run.output
    assert loaded.status == run.status
    assert loaded.to_json() == run.to_json()  # saving it again changes nothing


def fan_run() -> Run:
    app = (
        StateGraph(S)
        .add_node("a", lambda s: {"log": ["a"], "count": 1, "title": "A", "flash": "now"})
        .add_node("b", lambda s: {"log": ["b"], "count": 2, "item": Item(name="x", tags=("t",))})
        .add_node("c", lambda s: {"log": ["c"], "count": 3})
        .add_edge(START, "a")
        .add_edge("a", "b")
        .add_edge("a", "c")
        .add_edge(["b", "c"], END)
        .compile()
    )
    return app.run({"log": [], "count": 0, "title": "start"})


# --- round trips -----------------------------------------------------------------------------


def test_typeddict_run_round_trips_through_text():
    run = fan_run()
    loaded = Run.from_json(run.to_json())
    assert_same_run(loaded, run)
    assert loaded.state_at(1) == {"log": ["a"], "count": 1, "title": "A", "flash": "now"}
    assert "flash" not in loaded.state_at(2)  # the ephemeral field was cleared again
    assert loaded.graph.fields["log"].reducer.name == "append"
    assert loaded.graph.fields["log"].initial is list
    assert [w.sources for w in loaded.graph.waiting] == [("b", "c")]


def test_pydantic_value_comes_back_as_its_model():
    run = fan_run()
    item = Run.from_json(run.to_json()).output["item"]
    assert type(item) is Item and item == Item(name="x", tags=("t",))


def test_model_whose_class_cannot_be_imported_is_kept_as_data():
    class Local(pydantic.BaseModel):
        size: int

    data = encode_value(Local(size=3))
    assert data["class"].endswith("Local") and data["data"] == {"size": 3}
    value = decode_value(data)
    assert isinstance(value, UnloadedModel) and dict(value) == {"size": 3}
    assert value.class_name == data["class"]
    assert encode_value(value) == data  # saving a loaded run again keeps it


def test_messages_round_trip_as_messages():
    def reply(state):
        return {"messages": [Message(role="ai", content="hello", id="m2", metadata={"k": (1, 2)})]}

    def forget(state):
        return {"messages": [RemoveMessage(id="m1")]}

    app = (
        StateGraph(MessagesState)
        .add_node("reply", reply)
        .add_node("forget", forget)
        .add_edge(START, "reply")
        .add_edge("reply", "forget")
        .compile()
    )
    run = app.run({"messages": [Message(role="user", content="hi", id="m1")]})
    loaded = Run.from_json(run.to_json())
    assert_same_run(loaded, run)
    written = loaded.log.steps[2].tasks[0].writes[0][1][0]
    assert type(written) is RemoveMessage and written.id == "m1"
    [kept] = loaded.output["messages"]
    assert type(kept) is Message and kept.metadata == {"k": (1, 2)}


def test_awkward_values_survive():
    value = {
        "pair": (1, "two", [3]),
        "by_number": {1: "one", 2: "two"},
        "looks_tagged": {"$type": "tuple", "items": [1]},
        "nan": float("nan"),
        "inf": float("-inf"),
        "bag": {3, 1, 2},
        "raw": b"\x00\xff",
        "nothing": MISSING,
    }
    back = decode_value(json.loads(json.dumps(encode_value(value), allow_nan=False)))
    assert back["pair"] == (1, "two", [3]) and type(back["pair"]) is tuple
    assert back["by_number"] == {1: "one", 2: "two"}
    assert back["looks_tagged"] == {"$type": "tuple", "items": [1]}
    assert math.isnan(back["nan"]) and back["inf"] == float("-inf")
    assert back["bag"] == {1, 2, 3} and back["raw"] == b"\x00\xff"
    assert back["nothing"] is MISSING


def test_awkward_values_in_a_run_survive():
    app = (
        StateGraph(dict)
        .add_node("a", lambda s: {"pair": (1, 2), "keys": {1: "x"}, "odd": {"$type": "no"}})
        .add_node("b", lambda s: {"ratio": float("nan")})
        .add_edge(START, "a")
        .add_edge("a", "b")
        .compile()
    )
    run = app.run({"start": True})
    loaded = Run.from_json(run.to_json())
    final = loaded.output
    assert final["pair"] == (1, 2) and final["keys"] == {1: "x"} and final["odd"] == {"$type": "no"}
    assert math.isnan(final["ratio"])
    assert encode_value(loaded.effect_list) == encode_value(run.effect_list)  # nan != nan


def test_objects_without_json_form_are_kept_as_their_repr():
    app = (
        StateGraph(S)
        .add_node("a", lambda s: {"item": Custom(), "log": [len]})
        .add_edge(START, "a")
        .compile()
    )
    run = app.run({"log": []})
    text = run.to_json()
    loaded = Run.from_json(text)
    item = loaded.output["item"]
    assert isinstance(item, Unrepresentable) and repr(item) == "<Custom thing>"
    assert item.class_name == f"{__name__}:Custom"
    assert item == Unrepresentable("<Custom thing>", f"{__name__}:Custom")
    assert isinstance(loaded.output["log"][0], Unrepresentable)
    assert "pickle" not in text and json.loads(text)["run"]["final"]["item"]["$type"] == "repr"
    assert Run.from_json(text).to_json() == text


def test_overwrite_write_survives():
    app = (
        StateGraph(S)
        .add_node("a", lambda s: {"log": Overwrite(["fresh"])})
        .add_edge(START, "a")
        .compile()
    )
    run = app.run({"log": ["old"]})
    loaded = Run.from_json(run.to_json())
    assert_same_run(loaded, run)
    row = loaded.effect_list[-1]
    assert row.overwrite_bypass and row.writes == [("a", Overwrite(["fresh"]))]


def test_lambda_and_foreign_reducers_replay_from_saved_afters():
    class L(TypedDict):
        words: Annotated[list, lambda old, new: old + [w.upper() for w in new]]
        total: Annotated[int, operator.add]  # named "add", but not nbgraph's add

    app = (
        StateGraph(L)
        .add_node("a", lambda s: {"words": ["x"], "total": 2})
        .add_node("b", lambda s: {"words": ["y"], "total": 3})
        .add_edge(START, "a")
        .add_edge("a", "b")
        .compile()
    )
    run = app.run({"words": [], "total": 0})
    document = json.loads(run.to_json())
    afters = [step["afters"] for step in document["run"]["steps"]]
    assert afters == [None, None, None]  # operator.add is found again: never pinned
    kept = [step.get("kept") for step in document["run"]["steps"]]
    assert kept[1:] == [{"words": ["extend", ["X"]]}, {"words": ["extend", ["Y"]]}]
    loaded = Run.from_json(run.to_json())
    assert_same_run(loaded, run)
    assert loaded.state_at(2) == {"words": ["X", "Y"], "total": 5}
    reducer = loaded.graph.fields["words"].reducer
    with pytest.raises(UnavailableFunctionError, match="loaded from a file"):
        reducer.fn([], ["z"])


def test_fields_with_nbgraph_or_operator_reducers_get_no_afters():
    document = json.loads(fan_run().to_json())  # "log": append, "count": operator.add
    assert [step["afters"] for step in document["run"]["steps"]] == [None, None, None]
    assert not any("kept" in step for step in document["run"]["steps"])
    count = next(f for f in document["graph"]["fields"] if f["name"] == "count")
    assert count["function"] == "operator.add"
    loaded = Run.from_json(json.dumps(document)).graph.fields["count"].reducer.fn
    assert plain_function(loaded) is operator.add  # (bounded for a file: docs/VALUES.md)


class Money:
    def __init__(self, cents: int = 0) -> None:
        self.cents = cents

    def __add__(self, other: "Money") -> "Money":
        return Money(self.cents + other.cents)

    def __repr__(self) -> str:
        return f"Money({self.cents})"


def test_registered_reducer_over_objects_kept_as_repr_replays_from_saved_afters():
    class Wallet(TypedDict):
        total: Annotated[Money, "add"]
        note: str

    app = (
        StateGraph(Wallet)
        .add_node("a", lambda s: {"total": Money(5)})
        .add_node("b", lambda s: {"total": Money(7), "note": "paid"})
        .add_edge(START, "a")
        .add_edge("a", "b")
        .compile()
    )
    run = app.run({"note": "start"})
    loaded = Run.from_json(run.to_json())
    for step in (0, 1, 2):  # "add" would fail on the reprs: the values after were saved
        assert repr(loaded.state_at(step)) == repr(run.state_at(step))
    assert loaded.state_at(2)["total"] == Unrepresentable("Money(12)", f"{__name__}:Money")
    assert [e.field for e in loaded.effect_list] == [e.field for e in run.effect_list]
    assert loaded.to_json() == run.to_json()


def test_mutation_write_replays_from_saved_afters():
    app = (
        StateGraph(dict, reducers={"count": "add"})  # nbgraph's add: only the Mutation needs afters
        .add_node("a", lambda s: {"count": Increment("count", 5)})
        .add_node("b", lambda s: [Increment("count", 1), Increment("count", 1)])
        .add_edge(START, "a")
        .add_edge("a", "b")
        .compile()
    )
    run = app.run({"count": 1})
    loaded = Run.from_json(run.to_json())
    assert [loaded.state_at(k)["count"] for k in (0, 1, 2)] == [1, 6, 8]
    for k in (0, 1, 2):
        assert loaded.state_at(k) == run.state_at(k)
    written = loaded.log.steps[1].tasks[0].writes[0][1]
    assert isinstance(written, Mutation) and repr(written) == "Increment('count', by=5)"
    assert isinstance(written, RecordedMutation)
    with pytest.raises(UnavailableFunctionError):
        written.apply(1)


def test_state_merger_step_replays_from_saved_afters():
    app = (
        StateGraph(dict, state_merger=lambda current, updates: {"status": "merged"})
        .add_node("a", lambda s: {"status": "a"})
        .add_node("b", lambda s: {"status": "b"})
        .add_edge(START, "a")
        .add_edge(START, "b")
        .compile()
    )
    run = app.run({"status": "init"})
    document = json.loads(run.to_json())
    assert document["run"]["steps"][1]["afters"] == {"status": "merged"}
    loaded = Run.from_json(run.to_json())
    assert_same_run(loaded, run)
    assert loaded.log.steps[1].merged == [("state_merger", "status", "merged")]


def test_root_reset_from_a_join_merge_survives():
    app = (
        StateGraph(S)
        .add_node("a", lambda s: {"log": ["a"], "title": "x"})
        .add_node("b", lambda s: {"log": ["b"]})
        .add_node("join", lambda s: {"log": ["j"]}, merge=lambda states: {"log": ["merged"]})
        .add_edge(START, "a")
        .add_edge(START, "b")
        .add_edge(["a", "b"], "join")
        .compile()
    )
    run = app.run({"log": []})
    loaded = Run.from_json(run.to_json())
    assert_same_run(loaded, run)
    reset = loaded.log.steps[2].resets[0]
    assert (reset.node, reset.reason, reset.sources, reset.dropped) == (
        "join",
        "merge",
        ("a", "b"),
        ("count", "title"),
    )
    assert loaded.state_at("reset:2:join") == {"log": ["merged"]}
    with pytest.raises(UnavailableFunctionError, match="merge of node 'join'"):
        loaded.graph.nodes["join"].merge([])


def test_failed_run_keeps_status_and_error():
    def boom(state):
        raise KeyError("missing thing")

    app = StateGraph(S).add_node("a", boom).add_edge(START, "a").compile()
    run = app.run({"log": []})
    loaded = Run.from_json(run.to_json())
    assert_same_run(loaded, run)
    assert loaded.status == "failed" and not loaded.log.steps[1].applied
    error = loaded.error
    assert isinstance(error, RecordedError) and type(error).__name__ == "KeyError"
    assert str(error) == str(run.error) == "'missing thing'"
    assert error.__notes__ == run.error.__notes__
    assert list(loaded.steps["error"]) == list(run.steps["error"])
    assert list(loaded.steps["status"]) == ["error"]


def test_send_task_argument_and_routes_survive():
    app = (
        StateGraph(S)
        .add_node("a", lambda s: {"log": ["a"]})
        .add_node("w", lambda arg: {"log": [arg["n"]]})
        .add_edge(START, "a")
        .add_conditional_edges("a", lambda s: [Send("w", {"n": i}) for i in (1, 2)])
        .compile()
    )
    run = app.run({"log": []})
    loaded = Run.from_json(run.to_json())
    assert_same_run(loaded, run)
    tasks = loaded.log.steps[2].tasks
    assert [(t.kind, t.arg, t.triggers) for t in tasks] == [
        ("send", {"n": 1}, ("a",)),
        ("send", {"n": 2}, ("a",)),
    ]
    assert loaded.log.steps[1].tasks[0].routes == [Send("w", {"n": 1}), Send("w", {"n": 2})]
    assert loaded.state_at(("w", 1)) == {"n": 2}


def test_pydantic_state_schema_round_trips():
    class Doc(pydantic.BaseModel):
        log: Annotated[list, "append"] = []
        title: str = ""

    app = (
        StateGraph(Doc)
        .add_node("a", lambda s: {"log": ["a"], "title": s.title + "!"})
        .add_edge(START, "a")
        .compile()
    )
    run = app.run(Doc(title="t"))
    loaded = Run.from_json(run.to_json())
    assert_same_run(loaded, run)
    assert loaded.graph.state.kind == "pydantic" and loaded.graph.state.cls.__name__ == "Doc"


def test_loaded_functions_say_they_are_not_available():
    loaded = Run.from_json(fan_run().to_json())
    with pytest.raises(UnavailableFunctionError, match="node functions are not available"):
        loaded.graph.nodes["a"].fn({})


def test_config_keeps_json_values_and_drops_the_rest():
    app = StateGraph(S).add_node("a", lambda s: None).add_edge(START, "a").compile()
    run = app.run({"log": []}, {"configurable": {"user": "ann", "db": object()}, "cb": print})
    loaded = Run.from_json(run.to_json())
    assert loaded.log.config == {
        "recursion_limit": DEFAULT_RECURSION_LIMIT,
        "configurable": {"user": "ann"},
    }


def test_saving_a_loaded_run_again_gives_the_same_text():
    text = fan_run().to_json()
    assert Run.from_json(text).to_json() == text


def _deep(levels: int) -> list:
    value: list = []
    for _ in range(levels):
        value = [value]
    return value


def test_step_lines_are_the_same_document_with_orjson_without_it_and_for_what_it_refuses(
    monkeypatch,
):
    """Each step is a compact line, by orjson or, without it (or for a value orjson refuses:
    an int over 64 bits, a lone surrogate, nesting past 255), by json: the same JSON data
    (but for the lines' sum in the header, `step_lines`: the bytes may differ), each file
    read step by step (its sum agrees)."""
    from nbgraph.record.files import serialize
    from nbgraph.record.files.lazy_steps import LazySteps

    app = (
        StateGraph(dict)
        .add_node("a", lambda s: {"big": 2**70, "cut": "x\ud83d", "deep": _deep(300), "n": 1.5})
        .add_node("b", lambda s: {"n": 1e-5, "word": "caf\u00e9"})
        .add_edge(START, "a")
        .add_edge("a", "b")
        .compile()
    )
    run = app.run({"n": 0.0})
    fast = run.to_json()
    monkeypatch.setattr(serialize, "_orjson_dumps", lambda: None)
    slow = run.to_json()
    unsummed = [{k: v for k, v in json.loads(t).items() if k != "step_lines"} for t in (fast, slow)]
    assert unsummed[0] == unsummed[1]
    for text in (fast, slow):
        lines = text.splitlines()
        step_lines = [line for line in lines if line.startswith('   {"step":')]
        assert [json.loads(line.rstrip(",")) for line in step_lines] == json.loads(text)["run"][
            "steps"
        ]
        assert all(", " not in line and '": ' not in line for line in step_lines)  # compact
        loaded = Run.from_json(text)
        assert isinstance(loaded.log.steps, LazySteps)
        assert loaded.output == run.output and loaded.output["big"] == 2**70
        assert loaded.output["cut"] == "x\ud83d" and loaded.output["deep"] == _deep(300)


@pytest.mark.parametrize("number", [2**63 - 1, -(2**63), 2**64 - 1, -(2**63) - 1, 2**70, 10**30])
def test_a_run_file_reads_back_each_int_as_that_int(number):
    """The reader takes orjson where it reads the same data: an int past 64 bits (which orjson
    would read as a float) is read by json."""
    app = StateGraph(dict).add_node("a", lambda s: {"n": number}).add_edge(START, "a").compile()
    text = app.run({"n": 0, "text": "caf\u00e9"}).to_json()
    loaded = Run.from_json(text)
    assert loaded.output["n"] == number and type(loaded.output["n"]) is int
    assert [type(value) for _, value in loaded.log.steps[1].tasks[0].writes] == [int]


# --- files -----------------------------------------------------------------------------------


def test_save_and_load_a_file(tmp_path):
    run = fan_run()
    path = run.save(tmp_path / "run.json")
    assert path == tmp_path / "run.json"
    assert os.listdir(tmp_path) == ["run.json"]  # no temporary file left behind
    document = json.loads(path.read_text(encoding="utf-8"))
    assert (document["format"], document["version"]) == ("nbgraph.run", _FORMAT_VERSION)
    assert path.read_text(encoding="utf-8").startswith('{\n "format"')  # indented
    assert_same_run(Run.load(str(path)), run)


def test_save_writes_utf8_and_replaces_an_existing_file(tmp_path):
    app = StateGraph(S).add_node("a", lambda s: {"title": "héllo ✓"}).add_edge(START, "a")
    run = app.compile().run({"log": []})
    path = tmp_path / "run.json"
    path.write_text("old")
    run.save(path)
    assert "héllo ✓" in path.read_bytes().decode("utf-8")
    assert Run.load(path).output["title"] == "héllo ✓"
    assert os.listdir(tmp_path) == ["run.json"]


def test_save_that_fails_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    path = tmp_path / "run.json"
    path.write_text("the old run")

    def refuse(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(OSError, match="disk full"):
        fan_run().save(path)
    assert path.read_text() == "the old run"
    assert os.listdir(tmp_path) == ["run.json"]


def broken_files(tmp_path):
    text = fan_run().to_json()
    newer = json.loads(text)
    newer["version"] = _FORMAT_VERSION + 1
    return {
        "not json": ("this is not json", "not valid JSON"),
        "truncated": (text[: len(text) // 2], "truncated"),
        "empty": ("", "it is empty"),
        "not a run": (json.dumps({"cells": []}), 'not an nbgraph run.*no "format" entry'),
        "a list": ("[1, 2]", "not an nbgraph run.*JSON list"),
        "newer": (json.dumps(newer), f"format version {_FORMAT_VERSION + 1}.*up to 1"),
        "incomplete": (json.dumps({"format": "nbgraph.run", "version": 1}), "'graph' is missing"),
    }


@pytest.mark.parametrize(
    "case", ["not json", "truncated", "empty", "not a run", "a list", "newer", "incomplete"]
)
def test_load_names_the_file_and_what_was_expected(tmp_path, case):
    content, message = broken_files(tmp_path)[case]
    path = tmp_path / "broken.json"
    path.write_text(content, encoding="utf-8")
    before = (path.read_bytes(), path.stat().st_mtime_ns)
    with pytest.raises(RunFileError, match=message) as caught:
        Run.load(path)
    assert str(path) in str(caught.value)
    assert (path.read_bytes(), path.stat().st_mtime_ns) == before  # load never writes
    assert os.listdir(tmp_path) == ["broken.json"]


def test_load_of_a_file_that_is_not_text(tmp_path):
    path = tmp_path / "run.pkl"
    path.write_bytes(b"\x80\x04\x95\xff\x00")
    with pytest.raises(RunFileError, match="not UTF-8 text") as caught:
        Run.load(path)
    assert str(path) in str(caught.value)


def test_load_of_a_missing_file_names_it(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"nowhere\.json"):
        Run.load(tmp_path / "nowhere.json")


def test_run_file_error_is_a_value_error():
    with pytest.raises(ValueError, match="The text is not valid JSON"):
        Run.from_json("{")


# --- files never run code ----------------------------------------------------------------------

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

PLANTED = """
import os
with open(os.environ["PLANTED_MARKER"], "a") as marker:
    marker.write(__name__ + " was imported\\n")
raise SystemExit("a planted module ran")
"""


def crafted_values(module: str) -> dict:
    """A value of each kind a file may name a class for, all naming `module`."""
    return {
        "model": {"$type": "pydantic", "class": f"{module}:Order", "data": {"id": 1}},
        "member": {"$type": "enum", "class": f"{module}:Color", "value": "red"},
        "point": {"$type": "dataclass", "class": f"{module}:Point", "data": {"x": 1}},
        "main": {"$type": "pydantic", "class": "unittest.__main__:Any", "data": {}},
    }


def run_child(code: str, folder) -> dict:
    """Run `code` in a fresh Python whose path holds `folder` (where the planted module is);
    its last line of output is JSON."""
    import subprocess
    import sys

    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([REPO_ROOT, str(folder)]),
        "PLANTED_MARKER": str(folder / "marker.txt"),
    }
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=folder,
        timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


CHILD_LOADS_RUN = """
import json, sys
before = set(sys.modules)
from nbgraph import Run
imported_by_nbgraph = set(sys.modules)
run = Run.load("crafted.json")
values = run.log.input["x"]
print(json.dumps({
    "new": sorted(set(sys.modules) - imported_by_nbgraph),
    "kinds": {k: type(v).__name__ for k, v in values.items()},
    "shown": {k: repr(v) for k, v in values.items()},
}))
"""


def test_loading_a_run_file_imports_no_module_it_names(tmp_path) -> None:
    (tmp_path / "planted_shop.py").write_text(PLANTED)
    app = StateGraph(dict).add_node("a", lambda s: {"y": 1}).add_edge(START, "a").compile()
    document = json.loads(app.run({"x": 0}).to_json())
    document["run"]["input"]["x"] = crafted_values("planted_shop")
    (tmp_path / "crafted.json").write_text(json.dumps(document))
    seen = run_child(CHILD_LOADS_RUN, tmp_path)
    assert not (tmp_path / "marker.txt").exists()  # the planted module never ran
    assert not [name for name in seen["new"] if "planted" in name or "unittest" in name]
    assert seen["kinds"] == {
        "model": "UnloadedModel", "member": "UnloadedEnum", "point": "UnloadedModel",
        "main": "UnloadedModel",
    }  # fmt: skip
    assert "planted_shop:Color" in seen["shown"]["member"] and "'red'" in seen["shown"]["member"]
    assert "{'x': 1}" in seen["shown"]["point"]


def test_a_modules_lazy_getattr_is_not_called_to_find_a_class(monkeypatch) -> None:
    import sys
    import types

    asked: list[str] = []
    lazy = types.ModuleType("lazy_shop")
    lazy.__getattr__ = lambda name: asked.append(name) or pydantic.BaseModel  # type: ignore
    monkeypatch.setitem(sys.modules, "lazy_shop", lazy)
    value = decode_value({"$type": "pydantic", "class": "lazy_shop:Order", "data": {}})
    assert isinstance(value, UnloadedModel) and asked == []


def test_models_names_the_classes_a_run_file_may_give_back(tmp_path) -> None:
    class Order(pydantic.BaseModel):  # a local class: no module holds it by name
        id: int

    app = StateGraph(dict).add_node("a", lambda s: {"order": Order(id=2)}).add_edge(START, "a")
    path = app.compile().run({"order": None}).save(tmp_path / "run.json")
    assert Run.load(path).output["order"] == UnloadedModel(
        f"{__name__}:{Order.__qualname__}", {"id": 2}
    )
    assert Run.load(path, models=[Order]).output["order"] == Order(id=2)
    text = path.read_text().replace(__name__, "elsewhere")  # saved from another module
    assert Run.from_json(text, models=[Order]).output["order"] == Order(id=2)


def test_models_must_be_classes_a_file_can_name(tmp_path) -> None:
    from nbgraph.codec.classes import ModelsArgumentError

    with pytest.raises(ModelsArgumentError, match="'not a class'"):
        Run.from_json("{}", models=["not a class"])
    with pytest.raises(ModelsArgumentError, match="list of classes"):
        Run.from_json("{}", models=Item)


# --- malformed files ---------------------------------------------------------------------------


def saved_document() -> dict:
    graph = StateGraph(dict, reducers={"n": "add"}).add_node("a", lambda s: {"n": 1})
    return json.loads(graph.add_edge(START, "a").compile().run({"n": 0}).to_json())


def edited(change) -> str:
    document = saved_document()
    change(document)
    return json.dumps(document)


MALFORMED = {
    "nested 100,000 deep": ("[" * 100_000 + "]" * 100_000, "nested"),
    "a 5,000-digit number": ('{"format": ' + "1" * 5000 + "}", "digits"),
    "a reducer named 7": (
        edited(lambda d: d["graph"]["fields"][0].update(reducer=7)),
        r"\['reducer'\]",
    ),
    "a task's step as text": (
        edited(lambda d: d["run"]["steps"][1]["tasks"][0].update(step="1")),
        r"\['step'\]",
    ),
    "a task of a node the graph lacks": (
        edited(lambda d: d["run"]["steps"][1]["tasks"][0].update(node="zz")),
        "'zz'",
    ),
    "steps out of order": (edited(lambda d: d["run"]["steps"].reverse()), "does not come after"),
    "a repr that is not text": (
        edited(lambda d: d["run"].update(input={"n": {"$type": "repr", "repr": 5, "class": 1}})),
        "should be a str",
    ),
    "a reducer the file cannot replay": (
        edited(lambda d: d["graph"]["fields"][0].update(registered=False)),
        "cannot be replayed",
    ),
}


@pytest.mark.parametrize("name", list(MALFORMED))
def test_a_malformed_run_file_is_refused_at_load_time(name: str) -> None:
    text, message = MALFORMED[name]
    with pytest.raises(RunFileError, match=message):
        Run.from_json(text)


# --- graph= ------------------------------------------------------------------------------------


def concat_app():
    return (
        StateGraph(dict, reducers={"f": lambda a, b: a + b})
        .add_node("a", lambda s: {"f": [1]})
        .add_node("b", lambda s: {"f": [2]})
        .add_edge(START, "a")
        .add_edge(START, "b")
        .compile()
    )


def test_load_with_the_graph_has_its_real_reducers(tmp_path):
    app = concat_app()
    run = app.run({"f": [0]})
    path = run.save(tmp_path / "run.json")
    without = Run.load(path)
    with pytest.raises(UnavailableFunctionError, match=r"Run.load\(path, graph=app\)"):
        without.graph.fields["f"].reducer.fn([0], [1])
    assert without.order_sensitivity().empty
    loaded = Run.load(path, graph=app)
    assert loaded.graph.fields["f"].reducer is app.spec.fields["f"].reducer
    assert loaded.graph.nodes["a"].fn is app.spec.nodes["a"].fn
    assert_same_run(loaded, run)
    row = loaded.order_sensitivity().iloc[0]
    assert (row.result_a, row.result_b) == ([0, 1, 2], [0, 2, 1])
    assert Run.from_json(run.to_json(), graph=app).output == run.output


def test_load_with_another_graph_is_refused_naming_the_file_and_difference(tmp_path):
    path = concat_app().run({"f": [0]}).save(tmp_path / "run.json")
    other = (
        StateGraph(dict, reducers={"f": operator.add})
        .add_node("a", lambda s: None)
        .add_edge(START, "a")
        .compile()
    )
    with pytest.raises(GraphMismatchError) as caught:
        Run.load(path, graph=other)
    message = str(caught.value)
    assert str(path) in message and "nodes ['b'] are missing" in message
    assert "field 'f' has reducer 'add', recorded '<lambda>'" in message
    with pytest.raises(GraphMismatchError, match="the text"):
        Run.from_json(concat_app().run({"f": [0]}).to_json(), graph=other)


def test_a_growing_field_with_a_foreign_reducer_costs_the_file_what_it_added():
    def sizes(steps: int) -> int:
        app = (
            StateGraph(dict, reducers={"f": lambda a, b: a + b})
            .add_node("tick", lambda s: {"f": [f"item-{s['n']}"], "n": s["n"] + 1})
            .add_edge(START, "tick")
            .add_conditional_edges("tick", lambda s: END if s["n"] >= steps else "tick")
            .compile()
        )
        return len(app.run({"f": [], "n": 0}, {"recursion_limit": steps + 5}).to_json())

    small, large = sizes(100), sizes(400)
    assert large / 400 < 1.2 * small / 100  # bytes per step stay flat: linear, not quadratic


def test_the_run_file_codec_is_importable_from_its_old_home():
    """`nbgraph.record.serialize` (the codec's home before issue 27's sub-packages) still gives
    the same names, so scripts importing it keep working."""
    from nbgraph.record import files
    from nbgraph.record import serialize as old_home

    assert old_home.RunFileError is files.serialize.RunFileError
    assert old_home.log_from_json is files.serialize.log_from_json


def test_a_paused_run_file_keeps_what_its_tasks_asked():
    from nbgraph import MemorySaver, interrupt

    class Asked(TypedDict):
        answer: Any

    app = (
        StateGraph(Asked)
        .add_node("ask", lambda s: {"answer": interrupt({"question": "why?", "n": 2})})
        .add_edge(START, "ask")
        .compile(checkpointer=MemorySaver())
    )
    run = app.run({"answer": None}, {"configurable": {"thread_id": "t"}})
    loaded = Run.from_json(run.to_json())
    asked = [(t.node, t.interrupts) for step in loaded.log.steps for t in step.tasks]
    assert asked == [(t.node, t.interrupts) for step in run.log.steps for t in step.tasks]
    assert asked[-1][1][0].value == {"question": "why?", "n": 2}
    assert loaded.status == "interrupted"


def test_a_router_loops_steps_are_read_by_the_fast_check_and_decoding() -> None:
    """A plain step whose task went through a router (routes and `returned` saved) is checked
    and decoded by the fast paths, and reads back the same as the general decoding gives."""
    from nbgraph.record.files.log_shape import fits_plain_step
    from nbgraph.record.files.step_decoding import decode_step

    run = loop_run()
    steps = json.loads(run.to_json())["run"]["steps"]
    assert steps[1]["tasks"][0]["returned"] == ["tick"]
    assert all(fits_plain_step(step) for step in steps)
    spec = run.log.graph
    for data, recorded in zip(steps, run.log.steps, strict=True):
        fast, general = decode_step(data, spec, False, plain=True), decode_step(data, spec, False)
        for task in (*fast.tasks, *general.tasks):
            original = recorded.tasks[task.index]
            assert (task.returned, list(task.routes)) == (original.returned, list(original.routes))
    assert Run.from_json(run.to_json()).log.steps[3].tasks[0].returned == ("__end__",)


@pytest.mark.parametrize("damage", STEP_DAMAGES)
def test_a_step_checked_as_it_is_decoded_is_refused_as_the_whole_check_refuses_it(damage):
    """`Run.from_json` checks each step as it decodes it: a damaged step of a plain file (no
    tagged value) is refused with the message `check_document` gives for the whole document
    (or, if that finds nothing wrong, read as the general decoding reads it)."""
    from nbgraph.record.files.log_shape import LogShapeError, check_document
    from nbgraph.record.files.serialize import _decode_log
    from nbgraph.record.files.step_decoding import BrokenDocument

    document = loop_document()
    STEP_DAMAGES[damage](document["run"]["steps"][2])
    text = json.dumps(document)
    assert "$type" not in text
    try:
        check_document(json.loads(text))
    except LogShapeError as error:
        with pytest.raises(RunFileError) as refused:
            Run.from_json(text)
        assert str(refused.value) == f"The text is not a complete nbgraph run: {error}"
        return
    try:
        general = _decode_log(json.loads(text), None, "The text")
    except BrokenDocument as error:
        with pytest.raises(RunFileError) as refused:
            Run.from_json(text)
        assert str(refused.value) == f"The text is not a complete nbgraph run: {error}."
        return
    loaded = Run.from_json(text).log
    assert [step_view(step) for step in loaded.steps] == [step_view(s) for s in general.steps]
