"""Differential programs: savers as LangGraph's, root-channel states, `{"__overwrite__": ...}`.

Each program takes an `api` namespace (LangGraph's names, or nbgraph's) and returns what a
user of it observes; the test runs it on real LangGraph and on nbgraph and compares.
"""

# No `from __future__ import annotations`: states are defined inside functions with `api.*`
# names in their annotations, which both engines read at run time.

import contextlib
import itertools
import operator
import sqlite3
from typing import Annotated, Any, TypedDict

import pytest

from tests.support.harness import Programs, api_for, canonical_stream, plain, same, streamed

pytestmark = pytest.mark.langgraph

PROGRAMS = Programs()
program = PROGRAMS.add


@pytest.mark.parametrize("prog", PROGRAMS, ids=lambda p: p.__name__)
def test_same_as_langgraph(prog, tmp_path) -> None:
    same(prog, folder=tmp_path, raises=True, shape=plain)


# ---------------------------------------------------------------------------------------------
# {"__overwrite__": value}: Overwrite's JSON form


class ListState(TypedDict):
    items: Annotated[list, operator.add]
    plain: Any


def overwrite_graph(api, node_writes: dict, checkpointer: Any = None):
    builder = api.StateGraph(ListState)
    for name, write in node_writes.items():
        builder.add_node(name, lambda state, write=write: write)
    names = list(node_writes)
    builder.add_edge(api.START, names[0])
    for a, b in itertools.pairwise(names):
        builder.add_edge(a, b)
    return builder.compile(checkpointer=checkpointer)


def collected(app, graph_input, config=None, modes=("updates", "values")) -> list:
    return list(app.stream(graph_input, config, stream_mode=list(modes)))


@program
def overwrite_json_from_a_node(api):
    app = overwrite_graph(api, {"a": {"items": ["a"]}, "b": {"items": {"__overwrite__": ["b"]}}})
    return app.invoke({"items": ["in"]}), collected(app, {"items": ["in"]})


@program
def overwrite_json_in_input_and_update_state(api):
    app = overwrite_graph(api, {"a": {"items": ["a"]}}, api.InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    first = app.invoke({"items": {"__overwrite__": ["in"]}}, config)
    app.update_state(config, {"items": {"__overwrite__": ["upd"]}})
    return first, app.get_state(config).values, app.invoke({"items": ["x"]}, config)


@program
def overwrite_json_on_a_field_without_reducer_is_a_dict(api):
    app = overwrite_graph(api, {"a": {"plain": {"__overwrite__": 1}}})
    return app.invoke({"items": []}), collected(app, {"items": []})


@program
def overwrite_json_with_other_keys_goes_through_the_reducer(api):
    class DictState(TypedDict):
        d: Annotated[dict, operator.or_]

    app = (
        api.StateGraph(DictState)
        .add_node("a", lambda s: {"d": {"__overwrite__": 1, "k": 2}})
        .add_edge(api.START, "a")
        .compile()
    )
    return app.invoke({"d": {"x": 0}})


@program
def overwrite_json_parallel_with_plain_writes(api):
    builder = api.StateGraph(ListState)
    builder.add_node("a", lambda s: {"items": ["a"]})
    builder.add_node("b", lambda s: {"items": {"__overwrite__": ["b"]}})
    builder.add_node("c", lambda s: {"items": ["c"]})
    builder.add_node("d", lambda s: {"items": ["d"]})
    builder.add_edge(api.START, "a")
    builder.add_edge("a", "b")
    builder.add_edge("a", "c")
    builder.add_edge(["b", "c"], "d")
    app = builder.compile()
    return app.invoke({"items": ["in"]})


@program
def overwrite_json_twice_in_one_step_raises(api):
    builder = api.StateGraph(ListState)
    builder.add_node("a", lambda s: {"items": ["a"]})
    builder.add_node("b", lambda s: {"items": {"__overwrite__": ["b"]}})
    builder.add_node("c", lambda s: {"items": api.Overwrite(["c"])})
    builder.add_edge(api.START, "a")
    builder.add_edge("a", "b")
    builder.add_edge("a", "c")
    app = builder.compile()
    try:
        app.invoke({"items": []})
    except api.InvalidUpdateError as error:
        return "InvalidUpdateError", "Overwrite" in str(error)
    return "no error"


@program
def overwrite_json_of_messages(api):
    from langchain_core.messages import AIMessage, HumanMessage

    class Chat(TypedDict):
        messages: Annotated[list, api.add_messages]

    app = (
        api.StateGraph(Chat)
        .add_node("a", lambda s: {"messages": {"__overwrite__": [AIMessage("x", id="1")]}})
        .add_edge(api.START, "a")
        .compile()
    )
    out = app.invoke({"messages": [HumanMessage("hi", id="0")]})
    return [(m.content, m.id) for m in out["messages"]]  # (the class: part A)


# ---------------------------------------------------------------------------------------------
# Savers: SqliteSaver(conn), from_conn_string, delete_thread


class PairState(TypedDict):
    foo: str
    bar: Annotated[list, operator.add]


def pair_graph(api, checkpointer):
    builder = api.StateGraph(PairState)
    builder.add_node("node_a", lambda s: {"foo": "a", "bar": ["a"]})
    builder.add_node("node_b", lambda s: {"foo": "b", "bar": ["b"]})
    builder.add_edge(api.START, "node_a")
    builder.add_edge("node_a", "node_b")
    return builder.compile(checkpointer=checkpointer)


def snapshot_view(snapshot) -> tuple:
    meta = snapshot.metadata or {}
    return snapshot.values, snapshot.next, meta.get("step"), meta.get("source")


THREAD = {"configurable": {"thread_id": "1"}}


@program
def sqlite_saver_on_a_connection_then_reopened_from_conn_string(api):
    path = str(api.folder / "checkpoints.db")
    conn = sqlite3.connect(path, check_same_thread=False)
    app = pair_graph(api, api.SqliteSaver(conn))
    first = app.invoke({"foo": ""}, THREAD)
    history = [snapshot_view(s) for s in app.get_state_history(THREAD)]
    with api.SqliteSaver.from_conn_string(path) as reopened:
        again = pair_graph(api, reopened)
        seen = snapshot_view(again.get_state(THREAD))
        more = again.invoke({"foo": "x"}, THREAD)
    conn.execute("SELECT 1").fetchone()  # the saver left the caller's connection open
    return first, history, seen, more


@program
def sqlite_saver_in_memory_connection_and_conn_string(api):
    out = []
    app = pair_graph(api, api.SqliteSaver(sqlite3.connect(":memory:", check_same_thread=False)))
    out.append(app.invoke({"foo": ""}, THREAD))
    out.append(app.invoke({"foo": ""}, THREAD))
    with api.SqliteSaver.from_conn_string(":memory:") as saver:
        app = pair_graph(api, saver)
        out.append(app.invoke({"foo": ""}, THREAD))
        out.append(len(list(app.get_state_history(THREAD))))
    return out


def delete_thread_program(api, saver):
    app = pair_graph(api, saver)
    other = {"configurable": {"thread_id": "2"}}
    app.invoke({"foo": ""}, THREAD)
    app.invoke({"foo": ""}, other)
    saver.delete_thread("1")
    saver.delete_thread("never-used")
    after = (
        list(app.get_state_history(THREAD)),
        snapshot_view(app.get_state(THREAD)),
        len(list(app.get_state_history(other))),
    )
    return after, app.invoke({"foo": "new"}, THREAD), len(list(app.get_state_history(THREAD)))


@program
def delete_thread_in_memory(api):
    return delete_thread_program(api, api.InMemorySaver())


@program
def delete_thread_in_sqlite(api):
    with api.SqliteSaver.from_conn_string(str(api.folder / "d.db")) as saver:
        return delete_thread_program(api, saver)


def numpy_interrupt_program(api):
    """Repro2 12: a numpy array in the state, an SqliteSaver and an `interrupt()`: the
    resumed node gets the array back from the file (nbgraph gave it an `Unrepresentable`)."""
    import numpy as np

    class Arrays(TypedDict):
        arr: Any
        grid: Any
        total: float

    def load(state):
        return {"arr": np.arange(5.0), "grid": np.arange(6, dtype=np.int32).reshape(2, 3)}

    def confirm(state):
        api.interrupt("sum it?")
        return {"total": float(state["arr"].sum() + state["grid"][1].sum())}

    app = (
        api.StateGraph(Arrays).add_node("load", load).add_node("confirm", confirm)
        .add_edge(api.START, "load").add_edge("load", "confirm").add_edge("confirm", api.END)
        .compile(checkpointer=api.saver())
    )  # fmt: skip
    config = {"configurable": {"thread_id": "t"}}
    app.invoke({"arr": None, "grid": None, "total": 0.0}, config)
    total = app.invoke(api.Command(resume=True), config)["total"]
    values = app.get_state(config).values
    grid = values["grid"]
    return total, type(grid).__name__, str(grid.dtype), grid.shape, grid.tolist()


def test_a_numpy_array_in_a_sqlite_thread_comes_back_on_resume(tmp_path) -> None:
    same(numpy_interrupt_program, saver="sqlite", folder=tmp_path)


# ---------------------------------------------------------------------------------------------
# Unit tests of the savers' LangGraph-shaped methods


def test_delete_thread_takes_the_id_as_str_and_refuses_a_running_thread(tmp_path) -> None:
    from nbgraph.checkpoint import MemorySaver, SqliteSaver, ThreadBusyError

    for saver in (MemorySaver(), SqliteSaver(tmp_path / "busy.db")):
        app = pair_graph(api_for("nbgraph"), saver)
        app.invoke({"foo": ""}, {"configurable": {"thread_id": 7}})
        saver.delete_thread(7)  # (LangGraph's InMemorySaver would keep the thread '7')
        assert saver.history("7") == []
        app.invoke({"foo": ""}, THREAD)
        with saver.claim("1"), pytest.raises(ThreadBusyError, match="'1'"):
            saver.delete_thread("1")
        assert len(saver.history("1")) == 4
        saver.close()


def test_a_connection_to_another_applications_database_is_refused() -> None:
    from nbgraph.checkpoint import CheckpointFileError, SqliteSaver

    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE orders (id INTEGER)")
    with pytest.raises(CheckpointFileError, match=r"another application.*orders"):
        SqliteSaver(conn)
    with pytest.raises(CheckpointFileError, match="no checkpoint database to read"):
        SqliteSaver(sqlite3.connect(":memory:"), readonly=True)


def test_a_saver_on_a_connection_leaves_it_open_and_from_conn_string_closes(tmp_path) -> None:
    from nbgraph.checkpoint import SqliteSaver
    from nbgraph.errors import InvalidArgumentError

    conn = sqlite3.connect(tmp_path / "mine.db", check_same_thread=False)
    saver = SqliteSaver(conn)
    assert saver.path == str(tmp_path / "mine.db")
    saver.close()
    assert conn.execute("SELECT COUNT(*) FROM checkpoints").fetchone() == (0,)
    with SqliteSaver.from_conn_string(str(tmp_path / "mine.db")) as reopened:
        assert reopened.threads() == []
    with pytest.raises(ValueError, match="closed"):
        reopened.threads()
    with pytest.raises(InvalidArgumentError, match=r"open sqlite3\.Connection"):
        SqliteSaver(42)


# ---------------------------------------------------------------------------------------------
# Root-channel states: StateGraph(Annotated[list, operator.add]), StateGraph(int)


@program
def root_list_invoke_stream_get_state_update_state(api):
    builder = api.StateGraph(Annotated[list, operator.add])
    builder.add_node("a", lambda s: [f"a{len(s)}"])
    builder.add_node("b", lambda s: None)
    builder.add_node("c", lambda s: api.Command(update=["c"], goto=api.END))
    builder.add_edge(api.START, "a")
    builder.add_edge("a", "b")
    builder.add_edge("b", "c")
    app = builder.compile(checkpointer=api.InMemorySaver())
    first = app.invoke(["x"], THREAD)
    state = snapshot_view(app.get_state(THREAD))
    chunks = streamed(app, ["y"], THREAD)
    app.update_state(THREAD, ["u"])
    history = [snapshot_view(s) for s in app.get_state_history(THREAD)]
    return first, state, chunks, history


@program
def root_list_sends_and_routers(api):
    def node(name):
        def run(state):
            return [name] if isinstance(state, list) else [f"{name}|{state}"]

        run.__name__ = name
        return run

    builder = api.StateGraph(Annotated[list, operator.add])
    for name in ("1", "1.1", "2", "3", "3.1"):
        builder.add_node(name, node(name))
    builder.add_edge(api.START, "1")
    builder.add_edge(api.START, "1.1")
    builder.add_conditional_edges("1", lambda s: [api.Send("2", 1), api.Send("2", 2), "3.1"])
    builder.add_conditional_edges("1.1", lambda s: [api.Send("2", len(s))])
    builder.add_conditional_edges("2", lambda s: "3" if isinstance(s, list) else api.END)
    app = builder.compile()
    return app.invoke(["0"]), streamed(app, ["0"])


@program
def root_int_without_reducer(api):
    builder = api.StateGraph(int)
    builder.add_node("inc", lambda s: s + 1)
    builder.add_node("double", lambda s: s * 2)
    builder.add_edge(api.START, "inc")
    builder.add_edge("inc", "double")
    app = builder.compile()
    return app.invoke(1), streamed(app, 5), list(app.stream(3))


@program
def root_str_two_writers_in_one_step_raise(api):
    builder = api.StateGraph(str)
    builder.add_node("x", lambda s: s + "!")
    builder.add_node("y", lambda s: s + "?")
    builder.add_edge(api.START, "x")
    builder.add_edge(api.START, "y")
    try:
        builder.compile().invoke("h")
    except api.InvalidUpdateError:
        return "InvalidUpdateError"
    return "no error"


@program
def root_messages_with_add_messages(api):
    from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage

    builder = api.StateGraph(Annotated[list, api.add_messages])
    builder.add_node("chat", lambda s: [AIMessage("Hello!", id="a1"), AIMessage("Help?", id="a2")])
    builder.add_node("drop", lambda s: [RemoveMessage(id=s[-2].id)])
    builder.add_edge(api.START, "chat")
    builder.add_edge("chat", "drop")
    out = builder.compile().invoke([HumanMessage("Hi", id="h")])
    return [(m.content, m.id) for m in out]  # (the message class: part A)


@program
def root_list_async(api):
    import asyncio

    async def node(state):
        return [len(state)]

    builder = api.StateGraph(Annotated[list, operator.add])
    builder.add_node("n", node)
    builder.add_edge(api.START, "n")
    app = builder.compile()

    async def main():
        modes = ["values", "updates"]
        chunks = canonical_stream([c async for c in app.astream([0], stream_mode=modes)], modes)
        return await app.ainvoke([0]), chunks

    return asyncio.run(main())


def test_the_record_shows_a_root_state_as_one_field_named_root() -> None:
    import nbgraph

    builder = nbgraph.StateGraph(Annotated[list, operator.add])
    builder.add_node("a", lambda s: ["a"])
    builder.add_edge(nbgraph.START, "a")
    app = builder.compile()
    assert app.invoke(["x"]) == ["x", "a"]
    run = app.last_run
    assert list(app.spec.fields) == ["__root__"]
    assert run.output == {"__root__": ["x", "a"]}
    effects = run.effect_list
    assert {effect.field for effect in effects} == {"__root__"}
    run2 = type(run).from_json(run.to_json())
    assert run2.output == run.output


# ---------------------------------------------------------------------------------------------
# saver.list(config, *, filter, before, limit): LangGraph's CheckpointTuples


def tuple_view(item) -> tuple:
    """What both libraries' tuples agree on (LangGraph's own `branch:to:*` channels, and the
    ids of checkpoints and tasks, left out; parents by position)."""
    values = {
        k: v for k, v in item.checkpoint["channel_values"].items() if not k.startswith("branch:")
    }
    writes = sorted((c, repr(v)) for _, c, v in item.pending_writes if not c.startswith("branch:"))
    return values, item.metadata, item.parent_config is None, writes


def list_program(api, saver):
    app = pair_graph(api, saver)
    app.invoke({"foo": "", "bar": ["in"]}, THREAD)
    app.invoke({"foo": "x"}, THREAD)
    items = list(saver.list(THREAD))
    ids = [item.config["configurable"]["checkpoint_id"] for item in items]
    parents = [
        ids.index(item.parent_config["configurable"]["checkpoint_id"])
        if item.parent_config
        else None
        for item in items
    ]
    return (
        [tuple_view(item) for item in items],
        parents,
        [len(list(saver.list(THREAD, limit=n))) for n in (0, 1, 3, 100)],
        [tuple_view(i) for i in saver.list(THREAD, before=items[2].config, limit=2)],
        [tuple_view(i) for i in saver.list(THREAD, filter={"source": "input"})],
        [tuple_view(i) for i in saver.list({"configurable": items[3].config["configurable"]})],
        len(list(saver.list(None))),
        list(saver.list({"configurable": {"thread_id": "nobody"}})),
    )


@program
def saver_list_in_memory(api):
    return list_program(api, api.InMemorySaver())


@program
def saver_list_in_sqlite(api):
    with api.SqliteSaver.from_conn_string(str(api.folder / "list.db")) as saver:
        return list_program(api, saver)


@program
def saver_list_pending_writes_of_a_failed_task(api):
    class State(TypedDict):
        steps: Annotated[list, operator.add]
        attempt: int

    def failing(state):
        if state["attempt"] == 1:
            raise RuntimeError("Simulated failure")
        return {"steps": ["node1"]}

    builder = api.StateGraph(State)
    builder.add_node("node1", failing)
    builder.add_edge(api.START, "node1")
    saver = api.InMemorySaver()
    app = builder.compile(checkpointer=saver)
    with contextlib.suppress(RuntimeError):
        app.invoke({"steps": ["start"], "attempt": 1}, THREAD)
    return [tuple_view(item) for item in saver.list(THREAD)]


@program
def root_list_interrupt_and_resume(api):
    builder = api.StateGraph(Annotated[list, operator.add])
    builder.add_node("ask", lambda s: [api.interrupt("q?")])
    builder.add_edge(api.START, "ask")
    app = builder.compile(checkpointer=api.InMemorySaver())
    paused = app.invoke(["x"], THREAD)
    asked = [i.value for i in paused["__interrupt__"]]
    resumed = streamed(app, api.Command(resume="yes"), THREAD)
    other = {"configurable": {"thread_id": "2"}}
    chunks = list(app.stream(["z"], other, stream_mode="values"))
    shown = [c if isinstance(c, list) else sorted(c) for c in chunks]
    return sorted(paused), asked, resumed, shown, snapshot_view(app.get_state(other))[:2]
