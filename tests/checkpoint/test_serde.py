"""`JsonPlusSerializer` (`nbgraph.checkpoint.serde.jsonplus`): nbgraph's codec as LangGraph's
serializer object, and the savers' `serde=`."""

import datetime
import sqlite3
import uuid
import warnings

import pytest

from nbgraph.checkpoint.memory import InMemorySaver
from nbgraph.checkpoint.serde.base import SerializerProtocol
from nbgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from nbgraph.checkpoint.sqlite import SqliteSaver
from nbgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from nbgraph.errors import InvalidArgumentError


def test_dumps_typed_and_loads_typed_give_a_value_back():
    serde = JsonPlusSerializer()
    values = [
        None,
        b"\x00raw",
        bytearray(b"ab"),
        {"n": (1, 2), "when": datetime.date(2024, 5, 1), "id": uuid.UUID(int=7)},
        [1.5, "x", {"nested": [True, None]}],
    ]
    for value in values:
        kind, data = serde.dumps_typed(value)
        assert isinstance(kind, str) and isinstance(data, bytes)
        assert serde.loads_typed((kind, data)) == value
        assert type(serde.loads_typed((kind, data))) is type(value)
    assert serde.dumps_typed(None) == ("null", b"")
    assert serde.loads(serde.dumps({"a": (1,)})) == {"a": (1,)}
    assert isinstance(serde, SerializerProtocol)


def test_langgraphs_own_forms_are_not_read():
    with pytest.raises(InvalidArgumentError, match="'msgpack'"):
        JsonPlusSerializer().loads_typed(("msgpack", b"\x81"))
    with pytest.raises(InvalidArgumentError, match="'pickle'"):
        JsonPlusSerializer().loads_typed(("pickle", b"\x80"))


def test_pickle_fallback_is_taken_and_nothing_is_pickled():
    class Opaque:
        pass

    serde = JsonPlusSerializer(pickle_fallback=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kind, data = serde.dumps_typed({"thing": Opaque()})
    assert kind == "json" and b"Opaque" in data
    assert serde.pickle_fallback is True


def test_every_saver_takes_serde_and_refuses_another_serializer(tmp_path):
    serde = JsonPlusSerializer()
    assert InMemorySaver(serde=serde).serde is serde
    assert isinstance(InMemorySaver().serde, JsonPlusSerializer)
    with SqliteSaver.from_conn_string(str(tmp_path / "a.db"), serde=serde) as saver:
        assert saver.serde is serde
    conn = sqlite3.connect(str(tmp_path / "b.db"), check_same_thread=False)
    assert SqliteSaver(conn, serde=serde).serde is serde
    assert AsyncSqliteSaver(str(tmp_path / "c.db"), serde=serde).serde is serde

    langgraphs = pytest.importorskip("langgraph.checkpoint.serde.jsonplus").JsonPlusSerializer()
    with pytest.raises(InvalidArgumentError, match=r"MemorySaver\(serde=.*nbgraph.s codec"):
        InMemorySaver(serde=langgraphs)
    with pytest.raises(InvalidArgumentError, match="SqliteSaver"):
        SqliteSaver(":memory:", serde=langgraphs)
