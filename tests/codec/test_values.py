"""Which values come back exactly from a run file and from each saver (docs/VALUES.md):
one parametrized case per row of its table, through `Run.save`/`Run.load`, `MemorySaver` and
`SqliteSaver`."""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import enum
import math
import sys
import uuid
from typing import Any

import numpy as np
import pydantic
import pytest

from nbgraph import MISSING, START, Message, Overwrite, RemoveMessage, Run, Send, StateGraph
from nbgraph.checkpoint import CheckpointRecord, MemorySaver, SqliteSaver
from nbgraph.codec.nesting import MAX_DEPTH, ValueTooDeepError
from nbgraph.codec.values import (
    RecordedError,
    UnloadedEnum,
    UnloadedModel,
    Unrepresentable,
    decode_value,
    encode_value,
)


class Color(enum.Enum):
    RED = "red"
    BLUE = (0, 0, 255)


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Mode(enum.StrEnum):
    FAST = "fast"


class Perm(enum.Flag):
    R = 4
    W = 2


@dataclasses.dataclass(frozen=True)
class Point:
    x: int
    y: float = 0.0
    tags: tuple[str, ...] = ()


@dataclasses.dataclass
class Box:
    corner: Point
    color: Color
    label: str = dataclasses.field(default="", compare=True)
    area: float = dataclasses.field(init=False, default=0.0)

    def __post_init__(self) -> None:
        self.area = 1.0


class Order(pydantic.BaseModel):
    id: int
    when: datetime.date
    items: tuple[str, ...] = ()


PARIS = datetime.timezone(datetime.timedelta(hours=1))

EXACT: dict[str, Any] = {
    "None": None,
    "bool": True,
    "int": 7,
    "big int": 2**100,
    "int over 4,300 digits": math.factorial(2000),
    "negative int over 4,300 digits": -(10**5000) - 1,
    "float": 0.1,
    "nan": math.nan,
    "-inf": -math.inf,
    "-0.0": -0.0,
    "str": "héllo ✓",
    "str with a lone surrogate": "cut \ud83d",
    "list": [1, "a", [None]],
    "dict": {"a": {"b": [1]}},
    "dict with non-str keys": {1: "a", (2, 3): "b", None: 0},
    "dict with a $type key": {"$type": "pydantic", "class": "x:Y", "data": {}},
    "tuple": (1, (2, "3")),
    "set": {1, 2, 3},
    "frozenset": frozenset({"a", "b"}),
    "bytes": b"\x00\xff",
    "bytearray": bytearray(b"ab"),
    "complex": complex(1.5, -2),
    "datetime": datetime.datetime(2024, 5, 6, 7, 8, 9, 123456),
    "aware datetime": datetime.datetime(2024, 5, 6, 7, 8, 9, tzinfo=PARIS),
    "date": datetime.date(2024, 2, 29),
    "time": datetime.time(23, 59, 1, 5),
    "timedelta": datetime.timedelta(days=-1, seconds=5, microseconds=7),
    "Decimal": decimal.Decimal("3.14159265358979323846"),
    "Decimal NaN": decimal.Decimal("NaN"),
    "UUID": uuid.UUID("12345678-1234-5678-1234-567812345678"),
    "Enum": Color.BLUE,
    "IntEnum": Level.HIGH,
    "StrEnum": Mode.FAST,
    "Flag": Perm.R | Perm.W,
    "dataclass": Point(1, 2.5, ("a",)),
    "nested dataclass": Box(Point(0), Color.RED, "b"),
    "pydantic model": Order(id=3, when=datetime.date(2024, 1, 1), items=("x",)),
    "Message": Message(role="ai", content="hi", id="m1"),
    "RemoveMessage": RemoveMessage(id="m1"),
    "MISSING": MISSING,
    "Overwrite": Overwrite([1]),
    "Send": Send("a", {"x": 1}),
    "numpy array": np.arange(5.0),
    "numpy 2-d int array, Fortran order": np.asfortranarray(
        np.arange(6, dtype="<i4").reshape(2, 3)
    ),
    "numpy str array": np.array(["a", "héllo"]),
    "numpy datetime array": np.array(["2024-01-01T10:00"], dtype="datetime64[ms]"),
    "numpy empty array": np.zeros((0, 3), dtype=bool),
    "numpy scalar": np.float64(1.5),
    "numpy int scalar": np.int8(-3),
}


def same(a: Any, b: Any) -> bool:
    """Equal and of the same type (nan equals nan; -0.0 is not 0.0)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or (
            a == b and math.copysign(1, a) == math.copysign(1, b)
        )
    if isinstance(a, decimal.Decimal) and a.is_nan():
        return b.is_nan()
    if isinstance(a, Box):
        return a == b and a.area == b.area
    if isinstance(a, (Overwrite, Send)):
        return repr(a) == repr(b)
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and a.shape == b.shape and bool(np.array_equal(a, b))
    return a == b


def through_run_file(value: Any, tmp_path) -> Any:
    app = StateGraph(dict).add_node("a", lambda s: {"v": value}).add_edge(START, "a").compile()
    path = app.run({"v": None}).save(tmp_path / "run.json")
    return Run.load(path).output["v"]


def through_saver(saver: Any, value: Any) -> Any:
    """`value` put in a checkpoint's payload and snapshot, and read back (both must agree)."""
    with saver:
        saver.put(CheckpointRecord("t", "c1", None, 0, "loop", 0.0, {"v": value}, {"v": value}))
        record = saver.get("t")
        assert same(record.snapshot["v"], record.payload["v"])
        return record.payload["v"]


ROUTES = ["run file", "MemorySaver", "SqliteSaver"]


def _writable(value: Any) -> bool:
    """A node can write it as a field's plain value (Overwrite, Send and MISSING are
    instructions to the engine; the codec tests below cover them in run files)."""
    return not isinstance(value, (Overwrite, Send)) and value is not MISSING


@pytest.mark.parametrize(
    ("name", "route"),
    [(n, r) for n in EXACT for r in ROUTES if r != "run file" or _writable(EXACT[n])],
)
def test_each_value_in_the_table_comes_back_exactly(name: str, route: str, tmp_path) -> None:
    value = EXACT[name]
    if route == "run file":
        back = through_run_file(value, tmp_path)
    elif route == "MemorySaver":
        back = through_saver(MemorySaver(), value)
    else:
        back = through_saver(SqliteSaver(tmp_path / "c.db"), value)
    assert same(back, value), (back, value)


@pytest.mark.parametrize("name", list(EXACT))
def test_each_value_in_the_table_survives_the_codec(name: str) -> None:
    value = EXACT[name]
    assert same(decode_value(encode_value(value)), value)


def test_a_datetimes_zone_comes_back_as_its_utc_offset() -> None:
    zoneinfo = pytest.importorskip("zoneinfo")
    value = datetime.datetime(2024, 7, 1, 12, tzinfo=zoneinfo.ZoneInfo("Europe/Paris"))
    back = decode_value(encode_value(value))
    assert back == value and back.utcoffset() == datetime.timedelta(hours=2)
    assert back.tzinfo == datetime.timezone(datetime.timedelta(hours=2))


class Opaque:
    def __repr__(self) -> str:
        return "<Opaque 1>"


class Point3(tuple):
    pass


BECOME_OTHER = {
    "an object of another class": (Opaque(), Unrepresentable("<Opaque 1>", f"{__name__}:Opaque")),
    "a subclass of a builtin": (Point3((1, 2)), Unrepresentable("(1, 2)", f"{__name__}:Point3")),
    "an exception": (ValueError("boom"), None),
    "a numpy object array": (
        np.array([Opaque()], dtype=object),
        Unrepresentable("array([<Opaque 1>], dtype=object)", "numpy:ndarray"),
    ),
}


@pytest.mark.parametrize("name", list(BECOME_OTHER))
def test_what_else_becomes(name: str, tmp_path) -> None:
    value, expected = BECOME_OTHER[name]
    if expected is None:  # an exception: a RecordedError of the same name and message
        back = decode_value(encode_value(value))
        assert isinstance(back, Unrepresentable)
        error = RecordedError("ValueError", "boom")
        assert type(error).__name__ == "ValueError" and str(error) == "boom"
        return
    assert through_run_file(value, tmp_path) == expected
    with pytest.warns(UserWarning, match="saved only as its repr"):  # (said when saved)
        assert through_saver(SqliteSaver(tmp_path / "c.db"), value) == expected


def test_a_class_not_at_hand_comes_back_as_a_placeholder_showing_its_data() -> None:
    data = [
        {"$type": "enum", "class": "not_imported_shop:Color", "value": "red"},
        {"$type": "dataclass", "class": "not_imported_shop:Point", "data": {"x": 1}},
        {"$type": "pydantic", "class": "not_imported_shop:Order", "data": {"id": 3}},
    ]
    enum_member, point, order = decode_value(data)
    assert enum_member == UnloadedEnum("not_imported_shop:Color", "red")
    assert "not_imported_shop:Color" in repr(enum_member) and "'red'" in repr(enum_member)
    assert point == UnloadedModel("not_imported_shop:Point", {"x": 1}, kind="dataclass")
    assert order == UnloadedModel("not_imported_shop:Order", {"id": 3})
    assert encode_value([enum_member, point, order]) == data  # saved again unchanged


def test_a_dataclass_comes_back_without_running_its_init_again() -> None:
    calls = []

    @dataclasses.dataclass
    class Counted:
        n: int

        def __post_init__(self) -> None:
            calls.append(self.n)

    from nbgraph.codec.classes import named_classes

    data = encode_value(Counted(4))
    with named_classes([Counted]):
        back = decode_value(data)
    assert back == Counted(4) and calls == [4, 4]  # the two made here, none by decoding


def test_an_enum_value_no_member_has_becomes_a_placeholder() -> None:
    data = {"$type": "enum", "class": f"{__name__}:Color", "value": "green"}
    assert decode_value(data) == UnloadedEnum(f"{__name__}:Color", "green")


# --- depth ---------------------------------------------------------------------------------


def nested(depth: int) -> list:
    value: list = []
    for _ in range(depth - 1):
        value = [value]
    return value


def depth_of(value: Any) -> int:
    """How deep `nested` made `value` (without recursing: == on it would)."""
    depth = 1
    while value:
        assert type(value) is list and len(value) == 1
        value, depth = value[0], depth + 1
    return depth


DEEP = 900  # json.dumps itself stops near 990 levels from a shallow stack


def test_values_nested_as_deep_as_json_takes_are_saved_and_read(tmp_path) -> None:
    value = nested(DEEP)
    assert depth_of(decode_value(encode_value(value))) == DEEP
    app = StateGraph(dict).add_node("a", lambda s: {"tree": value}).add_edge(START, "a")
    path = app.compile().run({"tree": None}).save(tmp_path / "r.json")
    assert depth_of(Run.load(path).output["tree"]) == DEEP
    config = {"configurable": {"thread_id": "t"}}
    for saver in (SqliteSaver(tmp_path / "c.db"), MemorySaver()):
        app.compile(checkpointer=saver).invoke({"tree": None}, config)
        assert depth_of(app.compile(checkpointer=saver).get_state(config).values["tree"]) == DEEP


def test_deeper_values_are_refused_naming_the_field_not_with_a_recursion_error(tmp_path) -> None:
    value = nested(MAX_DEPTH + 50)
    app = StateGraph(dict).add_node("a", lambda s: {"tree": value}).add_edge(START, "a")
    run = app.compile().run({"tree": None})
    with pytest.raises(ValueTooDeepError, match=r"field 'tree'.*nested more than 1000"):
        run.save(tmp_path / "r.json")
    saver = SqliteSaver(tmp_path / "c.db")
    with pytest.raises(ValueTooDeepError, match=r"field 'tree'"):
        app.compile(checkpointer=saver).invoke({"tree": None}, {"configurable": {"thread_id": "t"}})


class Strict(pydantic.BaseModel):
    n: int

    @pydantic.field_validator("n")
    @classmethod
    def never(cls, value: int) -> int:
        raise SystemExit("a validator tried to end the program")


def test_a_class_that_refuses_the_data_gives_a_placeholder_even_by_system_exit() -> None:
    data = {"$type": "pydantic", "class": f"{__name__}:Strict", "data": {"n": 1}}
    assert decode_value(data) == UnloadedModel(f"{__name__}:Strict", {"n": 1})


def test_a_numpy_array_read_where_numpy_is_not_imported_is_kept_as_its_data(monkeypatch) -> None:
    """Reading never imports numpy: a placeholder holds the data, and is saved as it was read."""
    data = encode_value({"a": np.arange(3, dtype="<u2")})
    monkeypatch.setitem(sys.modules, "numpy", None)
    back = decode_value(data)["a"]
    assert isinstance(back, UnloadedModel) and back.kind == "numpy"
    assert back == UnloadedModel(
        "numpy:ndarray", {"dtype": "<u2", "shape": [3], "base64": "AAABAAIA"}, kind="numpy"
    )
    assert encode_value({"a": back}) == data
    monkeypatch.undo()
    assert same(decode_value(data)["a"], np.arange(3, dtype="<u2"))


@pytest.mark.parametrize(
    "bad",
    [
        {"dtype": "O", "shape": [1], "base64": "AAAAAAAAAAA="},  # pointers, never read
        {"dtype": "<f8", "shape": [10**9], "base64": "AAAAAAAAAAA="},  # more than it holds
        {"dtype": "<f8", "shape": ["1"], "base64": "AAAAAAAAAAA="},
        {"dtype": "no such dtype", "shape": [1], "base64": "AAAAAAAAAAA="},
        {"dtype": "<f8", "shape": [1], "base64": "not base64"},
    ],
)
def test_a_damaged_numpy_value_is_refused(bad: dict, tmp_path) -> None:
    with pytest.raises((ValueError, TypeError)):
        decode_value({"$type": "numpy", **bad})


def test_a_big_int_in_a_sqlite_run_is_kept_and_the_run_saved(tmp_path) -> None:
    """Repro2 09: an int over 4,300 digits lost every checkpoint of an "async" SqliteSaver
    run (reported "done"), and the run could not be saved to a file."""
    saver = SqliteSaver(tmp_path / "c.db")
    app = (
        StateGraph(dict)
        .add_node("fact", lambda s: {"v": math.factorial(2000)})
        .add_node("report", lambda s: {"n": len(str(s["v"] % 10**9 + 10**9))})
        .add_edge(START, "fact").add_edge("fact", "report")
        .compile(checkpointer=saver)
    )  # fmt: skip
    config = {"configurable": {"thread_id": "t"}}
    run = app.run({"v": None, "n": 0}, config)
    assert run.status == "done" and len(saver.history("t")) == 4
    assert app.get_state(config).values == {"v": math.factorial(2000), "n": 10}
    assert Run.load(run.save(tmp_path / "run.json")).output["v"] == math.factorial(2000)
    saver.close()
