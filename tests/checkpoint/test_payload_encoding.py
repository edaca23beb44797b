"""Checkpoint JSON text: orjson for plain payloads, json for the rest and without orjson; both
read back exactly, and files written either way (by earlier versions: json) read the same."""

from __future__ import annotations

import datetime
import json
import math
from typing import Annotated, TypedDict

import pytest

from nbgraph import END, START, SqliteSaver, StateGraph
from nbgraph.checkpoint.payloads import dump_payload, is_plain, load_payload
from nbgraph.codec import nesting

VALUES = [
    {"n": 1, "s": "plain", "f": 0.1, "b": True, "none": None, "list": [1, [2, [3]]]},
    {"big": 2**70, "negative big": -(2**64), "edge": 2**63 - 1, "low": -(2**63)},
    {"floats": [-0.0, 1e16, 1e-7, 1.5e300, 5e-324, 123456789.123456789]},
    {"unicode": "héllo ✓ 日本 🎉", "escapes": 'quote " backslash \\ newline \n tab \t \x00'},
    {"lone surrogate": "half \ud83c of an emoji"},
    {"tuple": (1, 2), "set": {3}, "$type": "mine", 4: "int key"},
    {"nan": math.nan, "inf": [math.inf, -math.inf]},
    {"when": datetime.date(2026, 1, 2)},
    {"deep": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]},
]


def nested(depth: int) -> list:
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


def same(a, b) -> bool:
    """Equal, with the same types all the way down (and nan equal to nan, -0.0 kept)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or (
            a == b and math.copysign(1, a) == math.copysign(1, b)
        )
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


_WITH_ORJSON = nesting.orjson


def _without_orjson():
    return None


@pytest.fixture(params=["orjson", "json"])
def encoder(request, monkeypatch):
    if request.param == "json":
        monkeypatch.setattr(nesting, "orjson", _without_orjson)
    else:
        pytest.importorskip("orjson")
        monkeypatch.setattr(nesting, "orjson", _WITH_ORJSON)
    return request.param


@pytest.mark.parametrize("value", [*VALUES, {"deep": nested(300)}], ids=range(len(VALUES) + 1))
def test_every_value_reads_back_exactly(encoder, value):
    text = dump_payload(value)
    assert same(load_payload(text, "test"), value)
    assert json.loads(text) is not None  # plain JSON text, whichever encoder wrote it


def test_only_exact_plain_json_data_skips_the_tagging():
    class Text(str):
        pass

    assert is_plain({"a": [1, "x", None, True, 0.5, {"b": []}]})
    for value in ({"a": (1,)}, {1: "a"}, {"$type": 1}, [math.nan], [Text("x")], [b"x"], {1.0}):
        assert not is_plain(value), value
    # a str subclass is not written as a plain str (orjson would): it goes through the tags
    assert type(load_payload(dump_payload([Text("x")]), "test")[0]) is not str


def test_orjson_and_json_write_the_same_data(monkeypatch):
    pytest.importorskip("orjson")
    for value in VALUES:
        data = json.loads(dump_payload(value))
        with monkeypatch.context() as without:
            without.setattr(nesting, "orjson", _without_orjson)
            assert json.loads(dump_payload(value)) == data


class Loop(TypedDict):
    log: Annotated[list, "append"]
    n: int
    when: tuple


def loop(saver):
    def tick(state):
        return {"log": [f"é{state['n']}", 2**65], "n": state["n"] + 1, "when": (state["n"], 0.1)}

    return (
        StateGraph(Loop)
        .add_node("tick", tick)
        .add_edge(START, "tick")
        .add_conditional_edges("tick", lambda s: END if s["n"] >= 80 else "tick")
        .compile(checkpointer=saver)
    )


def test_a_file_written_with_json_reads_the_same_with_orjson_and_back(tmp_path, monkeypatch):
    """Files of earlier versions (json.dumps) and of this one hold the same threads."""
    pytest.importorskip("orjson")
    shown = {}
    for name, fast in (("json", _without_orjson), ("orjson", _WITH_ORJSON)):
        monkeypatch.setattr(nesting, "orjson", fast)
        with SqliteSaver(tmp_path / f"{name}.sqlite") as saver:
            loop(saver).invoke(
                {"log": [], "n": 0, "when": ()}, {"configurable": {"thread_id": "t"}}
            )
    for name in ("json", "orjson"):
        for reader, fast in (("json", _without_orjson), ("orjson", _WITH_ORJSON)):
            monkeypatch.setattr(nesting, "orjson", fast)
            with SqliteSaver(tmp_path / f"{name}.sqlite") as saver:
                history = list(loop(saver).get_state_history({"configurable": {"thread_id": "t"}}))
                shown[name, reader] = [(h.metadata["step"], h.values, h.next) for h in history]
    first = shown["json", "json"]
    assert len(first) == 82 and first[0][1]["when"] == (79, 0.1)
    assert all(view == first for view in shown.values())


@pytest.mark.parametrize(
    "text",
    [
        "[9223372036854775807, -9223372036854775808, 18446744073709551615]",  # (orjson's)
        "[9223372036854775808, -9223372036854775809, 18446744073709551616]",  # (19, 20 digits)
        "[123456789012345678901234567890, 0.1234567890123456789, 1e400, -1e400, NaN]",
        '{"a": 1, "a": [2.5, -0.0, 1E5, 5e-324, 1.7976931348623157e308], "é": "\\u00e9"}',
        '[[[[["deep"]]]], "x"]',
    ],
)
def test_a_sqlite_history_reads_json_text_as_json_does(text):
    """`SqliteSaver`'s bulk reads take orjson's reading only where it is json's: ints past
    64 bits (19 digits in a row or more), what orjson refuses (NaN, 1e400) are json's."""
    from nbgraph.checkpoint.sqlite_reads import _loads

    expected = json.loads(text)
    found = _loads(text)
    assert repr(found) == repr(expected)  # (exact: an int stays an int, -0.0 stays -0.0)
    assert json.dumps(found) == json.dumps(expected)
