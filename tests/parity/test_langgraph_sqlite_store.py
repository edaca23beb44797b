"""Differential programs: `SqliteStore`, the store in an SQLite file, as LangGraph's.

Each program imports `SqliteStore` from `<library>.store.sqlite` (the plain rename; the
async store from `.store.sqlite.aio`) and runs on LangGraph's (`langgraph-checkpoint-sqlite`)
and nbgraph's: put, get, search with filters, limits and offsets (most recently written
first), delete, namespaces, TTLs with their sweep, a file opened again, batches of ops, and a
store in a graph's nodes. LangGraph's store compares times to the second, so the programs
that wait sleep past one.
"""

import asyncio
import contextlib
import importlib
import os
import sqlite3
import tempfile
import time
from typing import TypedDict

import pytest

from tests.support.harness import Programs, lib_module, python_sqlite_datetimes

pytestmark = pytest.mark.langgraph

PROGRAMS = Programs()
program = PROGRAMS.add
test_same_as_langgraph = PROGRAMS.test(raises=True)


def store_class(api, name="SqliteStore"):
    return getattr(importlib.import_module(f"{api.lib}.store.sqlite"), name)


@contextlib.contextmanager
def sqlite_store(api, path=":memory:", **options):
    with python_sqlite_datetimes(), store_class(api).from_conn_string(path, **options) as store:
        store.setup()
        yield store


def found(items) -> list:
    return [(tuple(i.namespace), i.key, i.value, i.score) for i in items]


@program
def put_get_delete(api):
    with sqlite_store(api) as store:
        store.put(("users", "1"), "a", {"name": "Ada", "tags": ["x", "y"]})
        store.put(("users", "1"), "b", {"name": "Bob"})
        store.put(("users", "1"), "a", {"name": "Ada L."})
        got = store.get(("users", "1"), "a")
        store.delete(("users", "1"), "b")
        store.put(("users", "1"), "c", {"n": 1})
        store.put(("users", "1"), "c", None)  # (None deletes)
        return (
            got.value,
            got.key,
            got.namespace,
            got.created_at.tzinfo is not None,
            got.updated_at >= got.created_at,
            store.get(("users", "1"), "b"),
            store.get(("users", "1"), "c"),
            store.get(("nobody",), "a"),
            store.supports_ttl,
        )


@program
def search_prefix_filter_limit_offset(api):
    with sqlite_store(api) as store:
        for i, (ns, color) in enumerate(
            [
                (("docs", "a"), "red"),
                (("docs", "b"), "blue"),
                (("docs",), "red"),
                (("other",), "red"),
            ]
        ):
            store.put(ns, f"k{i}", {"color": color, "n": i, "meta": {"size": i * 10}})
            time.sleep(1.1)  # (LangGraph orders by a time to the second)
        return (
            found(store.search(("docs",))),
            found(store.search(("docs",), filter={"color": "red"})),
            found(store.search(("docs",), filter={"n": {"$gte": 1}})),
            found(store.search(("docs",), filter={"meta.size": 10})),
            found(store.search(("docs",), filter={"n": {"$gt": 0, "$lt": 2}, "color": "blue"})),
            found(store.search(("docs",), limit=1, offset=1)),
            found(store.search(("docs", "a"))),
            found(store.search((), limit=2)),
        )


@program
def a_filter_of_a_dict_without_operators_is_refused(api):
    with sqlite_store(api) as store:
        store.put(("docs",), "k", {"meta": {"size": 10}})
        return store.search(("docs",), filter={"meta": {"size": 10}})


@program
def a_filter_key_with_other_characters_is_refused(api):
    with sqlite_store(api) as store:
        return store.search(("docs",), filter={"a'b": 1})


@program
def the_namespaces(api):
    with sqlite_store(api) as store:
        for ns in [("a", "b", "c"), ("a", "b", "d"), ("a", "e"), ("f", "b")]:
            store.put(ns, "k", {"v": 1})
        store.get(("never", "written"), "k")
        return (
            store.list_namespaces(),
            store.list_namespaces(prefix=("a",)),
            store.list_namespaces(suffix=("b",)),
            store.list_namespaces(prefix=("a", "*")),
            store.list_namespaces(max_depth=1),
            store.list_namespaces(limit=2, offset=1),
        )


@program
def a_file_opened_again(api):
    path = os.path.join(tempfile.mkdtemp(), "store.db")
    with sqlite_store(api, path) as store:
        store.put(("m",), "k", {"text": "kept", "when": 2024})
    with sqlite_store(api, path) as again:
        return again.get(("m",), "k").value, found(again.search(("m",)))


@program
def a_connection_given(api):
    conn = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
    store = store_class(api)(conn)
    store.setup()
    store.put(("c",), "k", {"v": 1})
    value = store.get(("c",), "k").value
    conn.close()
    return value


@program
def default_ttl_and_sweep(api):
    with sqlite_store(api, ttl={"default_ttl": 0.01}) as store:  # (0.6 s)
        store.put(("t",), "short", {"v": 1})
        store.put(("t",), "never", {"v": 2}, ttl=None)
        store.put(("t",), "long", {"v": 3}, ttl=10)
        before = store.sweep_ttl()
        time.sleep(2.2)
        swept = store.sweep_ttl()
        keys = sorted(i.key for i in store.search(("t",), refresh_ttl=False))
        return before, swept, keys, store.get(("t",), "short"), store.ttl_config


@program
def refresh_on_read_keeps_an_item(api):
    with sqlite_store(api, ttl={"default_ttl": 0.05, "refresh_on_read": True}) as store:
        for key in ("read", "unread", "read_no_refresh", "searched"):
            store.put(("r",), key, {"k": key})
        time.sleep(2)
        store.get(("r",), "read")
        store.get(("r",), "read_no_refresh", refresh_ttl=False)
        store.search(("r",), filter={"k": "searched"})
        time.sleep(2)
        return store.sweep_ttl(), sorted(i.key for i in store.search(("r",), refresh_ttl=False))


@program
def the_ttl_sweeper(api):
    with sqlite_store(api, ttl={"default_ttl": 1, "sweep_interval_minutes": 1}) as store:
        future = store.start_ttl_sweeper()
        running = future.done()
        stopped = store.stop_ttl_sweeper(timeout=5)
        return running, stopped, store.stop_ttl_sweeper()


@program
def the_async_store(api):
    async def main():
        aio = lib_module(api, "store.sqlite.aio")
        async with aio.AsyncSqliteStore.from_conn_string(":memory:") as store:
            if api.lib == "langgraph":
                await store.setup()
            await store.aput(("a",), "k", {"v": 1})
            got = await store.aget(("a",), "k")
            items = await store.asearch(("a",))
            spaces = await store.alist_namespaces()
            await store.adelete(("a",), "k")
            return got.value, found(items), spaces, await store.aget(("a",), "k")

    return asyncio.run(main())


def test_nbgraphs_sqlite_store_answers_awaitables_too(tmp_path):
    """Where LangGraph's `SqliteStore` raises `NotImplementedError` for `aput`/`aget`/...
    (its async store is another class), nbgraph's answers them (docs/langgraph.md, "What
    differs on purpose")."""
    from nbgraph.store.sqlite import SqliteStore

    async def main():
        with SqliteStore.from_conn_string(str(tmp_path / "s.db")) as store:
            await store.aput(("a",), "k", {"v": 1})
            return (await store.aget(("a",), "k")).value, len(await store.asearch(("a",)))

    assert asyncio.run(main()) == ({"v": 1}, 1)


@program
def in_a_graph(api):
    class State(TypedDict):
        user: str
        seen: list

    def remember(state, *, store):
        store.put(("memories", state["user"]), "last", {"user": state["user"]})
        return {"seen": [i.value for i in store.search(("memories",))]}

    with sqlite_store(api) as store:
        builder = api.StateGraph(State)
        builder.add_node("remember", remember)
        builder.add_edge(api.START, "remember")
        app = builder.compile(store=store)
        app.invoke({"user": "ada", "seen": []})
        return app.invoke({"user": "bob", "seen": []})["seen"]


def run_batch(store, base):
    """Batches of puts, of reads, and of both (the reads see the store before the batch)."""
    batches = [
        [
            base.PutOp(("docs", "a"), "1", {"n": 1}),
            base.PutOp(("docs", "b"), "2", {"n": 0}),
            base.PutOp(("docs", "b"), "2", {"n": 2}),
            base.PutOp(("other",), "3", {"n": 3}),
        ],
        [
            base.GetOp(("docs", "a"), "1"),
            base.SearchOp(("docs",), filter={"n": 2}),
            base.ListNamespacesOp(match_conditions=(base.MatchCondition("prefix", ("docs",)),)),
            base.ListNamespacesOp(max_depth=1),
        ],
        [base.PutOp(("docs", "a"), "1", None), base.GetOp(("docs", "a"), "1")],
        [base.GetOp(("docs", "a"), "1")],
    ]
    seen = []
    for ops in batches:
        for result in store.batch(ops):
            if isinstance(result, list) and result and hasattr(result[0], "key"):
                seen.append(found(result))
            else:
                seen.append(getattr(result, "value", result))
    return seen


@program
def a_batch_of_ops(api):
    base, memory = lib_module(api, "store.base"), lib_module(api, "store.memory")
    with sqlite_store(api) as store:
        on_file = run_batch(store, base)
    in_memory = run_batch(memory.InMemoryStore(), base)

    async def awaited():
        return await memory.InMemoryStore().abatch(
            [base.PutOp(("a",), "k", {"v": 1}), base.GetOp(("a",), "k")]
        )

    later = asyncio.run(awaited())
    return on_file, in_memory, [getattr(r, "value", r) for r in later]


def test_a_nodes_batch_is_kept_op_by_op_in_the_run():
    """A node's `store.batch([...])` is kept in `run.store_ops` as the calls it stands for."""
    from nbgraph.graph import START, StateGraph
    from nbgraph.store.base import GetOp, PutOp
    from nbgraph.store.memory import InMemoryStore

    class State(TypedDict):
        seen: dict

    def node(state, *, store):
        store.batch([PutOp(("m",), "k", {"v": 1}), GetOp(("m",), "k")])  # (reads first)
        return {"seen": store.batch([GetOp(("m",), "k")])[0].value}

    builder = StateGraph(State)
    builder.add_node("node", node)
    builder.add_edge(START, "node")
    app = builder.compile(store=InMemoryStore())
    assert app.invoke({"seen": {}}) == {"seen": {"v": 1}}
    assert list(app.last_run.store_ops["op"]) == ["get", "put", "get"]
