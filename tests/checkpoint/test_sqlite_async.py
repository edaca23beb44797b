"""`AsyncSqliteSaver`: what nbgraph adds or refuses beyond LangGraph's (the shared behaviour
is compared with LangGraph's in tests/parity/test_langgraph_async_sqlite.py)."""

import asyncio
import operator
from typing import Annotated, TypedDict

import pytest

from nbgraph import START, Run, StateGraph
from nbgraph.checkpoint import AsyncSqliteSaver, SqliteSaver
from nbgraph.errors import InvalidArgumentError


class Log(TypedDict):
    log: Annotated[list, operator.add]


def app_on(saver):
    builder = StateGraph(Log)
    builder.add_node("a", lambda s: {"log": ["a"]})
    builder.add_edge(START, "a")
    return builder.compile(checkpointer=saver)


CONFIG = {"configurable": {"thread_id": "t"}}


def test_an_aiosqlite_connection_is_refused_by_name(tmp_path):
    aiosqlite = pytest.importorskip("aiosqlite")

    async def main():
        async with aiosqlite.connect(str(tmp_path / "a.db")) as conn:
            with pytest.raises(InvalidArgumentError, match="from_conn_string"):
                AsyncSqliteSaver(conn)

    asyncio.run(main())


def test_from_conn_string_refuses_what_is_not_a_path():
    async def main():
        async with AsyncSqliteSaver.from_conn_string(42):
            pass

    with pytest.raises(InvalidArgumentError, match="file path"):
        asyncio.run(main())


def test_made_outside_a_loop_its_sync_methods_run_anywhere(tmp_path):
    saver = AsyncSqliteSaver(tmp_path / "s.db")
    try:
        app_on(saver).invoke({"log": []}, CONFIG)
        assert [t.metadata["step"] for t in saver.list(CONFIG)] == [1, 0, -1]
        assert saver.get_tuple(CONFIG).checkpoint["channel_values"] == {"log": ["a"]}
        saver.delete_thread("t")
        assert saver.get_tuple(CONFIG) is None
    finally:
        saver.close()


def test_its_file_is_sqlite_savers_and_a_run_reads_back(tmp_path):
    path = tmp_path / "shared.db"

    async def write():
        async with AsyncSqliteSaver.from_conn_string(path) as saver:
            assert repr(saver) == f"AsyncSqliteSaver({str(path)!r})"
            await app_on(saver).ainvoke({"log": ["in"]}, CONFIG)

    asyncio.run(write())
    with SqliteSaver(path) as saver:
        run = Run.from_checkpointer(saver, "t", graph=app_on(saver))
        assert run.output == {"log": ["in", "a"]}


def test_a_closed_saver_says_so(tmp_path):
    async def main():
        async with AsyncSqliteSaver.from_conn_string(tmp_path / "c.db") as saver:
            pass
        return saver

    saver = asyncio.run(main())
    with pytest.raises(ValueError, match="is closed"):
        saver.get("t")
