"""Differential tests: what programs written from LangGraph's docs ran differently on nbgraph
(issue 35's causes), each program run on real LangGraph and on nbgraph with the same code,
the outcomes compared.

- `invoke`/`ainvoke` with `stream_mode=` (a mode, a list of modes) return the chunks, and
  `version="v2"` gives `StreamPart` dicts and a `GraphOutput`;
- `add_node(metadata=...)` reaches `get_graph()`, its mermaid text and the node's config;
- the error classes a docs program catches, and the texts it prints.
"""

# No `from __future__ import annotations`: state classes are defined inside functions.

import asyncio
import contextlib
import dataclasses
import io
import operator
import re
from typing import Annotated, Any, TypedDict

import pytest
from langchain_core.runnables import RunnableConfig
from pydantic import BaseModel

pytestmark = pytest.mark.langgraph
pytest.importorskip("langgraph")

from tests.support.harness import Ids, both, plain, same  # noqa: E402


class State(TypedDict):
    x: int
    log: Annotated[list, operator.add]


def thread(name: str = "1") -> dict:
    return {"configurable": {"thread_id": name}}


def two_steps(api: Any, **compile_options: Any) -> Any:
    def a(state: State) -> dict:
        return {"x": state["x"] + 1, "log": ["a"]}

    def b(state: State) -> dict:
        return {"log": ["b"]}

    builder = api.StateGraph(State).add_node("a", a).add_node("b", b)
    return builder.add_edge(api.START, "a").add_edge("a", "b").compile(**compile_options)


def ordered(value: Any) -> Any:
    """`value` `plain`, with each dict's keys in their order (a program prints them so)."""
    if isinstance(value, dict):
        return [(k, ordered(v)) for k, v in value.items()]
    if isinstance(value, list | tuple):
        return [ordered(v) for v in value]
    return plain(value)


def output(result: Any) -> Any:
    """A `GraphOutput` by what it holds (each library has its own class)."""
    if type(result).__name__ == "GraphOutput":
        return ("GraphOutput", ordered(result.value), ordered(result.interrupts))
    return ordered(result)


# --- invoke(stream_mode=...), version="v2" -------------------------------------------------


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"stream_mode": "values"},
        {"stream_mode": "updates"},
        {"stream_mode": ["updates", "values"]},
        {"stream_mode": ["values"]},
        {"stream_mode": "custom"},
        {"version": "v2"},
        {"stream_mode": "values", "version": "v2"},
        {"stream_mode": "updates", "version": "v2"},
        {"stream_mode": ["updates", "values"], "version": "v2"},
    ],
    ids=repr,
)
def test_invoke_returns_what_its_stream_mode_and_version_ask(options):
    def program(api):
        app = two_steps(api)
        sync = output(app.invoke({"x": 1}, **options))
        return sync, output(asyncio.run(app.ainvoke({"x": 1}, **options)))

    out = same(program)[0]
    assert out[0] == out[1]


def test_invoke_of_a_paused_run_with_a_stream_mode_or_v2():
    def program(api):
        def ask(state: State) -> dict:
            return {"x": api.interrupt("how many?")}

        builder = api.StateGraph(State).add_node("ask", ask).add_edge(api.START, "ask")
        app = builder.compile(checkpointer=api.InMemorySaver())
        out = []
        for n, options in enumerate(
            [{}, {"stream_mode": "updates"}, {"version": "v2"},
             {"stream_mode": ["values", "updates"], "version": "v2"}]
        ):  # fmt: skip
            out.append(output(app.invoke({"x": 1}, thread(str(n)), **options)))
        resumed = app.invoke(api.Command(resume=5), thread("2"), version="v2")
        return out, output(resumed)

    same(program)


def test_a_v2_stream_of_a_model_state_hands_model_instances():
    class Model(BaseModel):
        x: int = 0
        note: str = ""

    @dataclasses.dataclass
    class Data:
        x: int = 0
        note: str = ""

    def program(api):
        out = []
        for schema in (Model, Data):
            builder = api.StateGraph(schema)
            builder.add_node("a", lambda s: {"x": s.x + 1, "note": "a"})
            app = builder.add_edge(api.START, "a").compile(checkpointer=api.InMemorySaver())
            for part in app.stream(
                {"x": 1}, thread(schema.__name__), stream_mode=["values", "checkpoints"],
                version="v2",
            ):  # fmt: skip
                data = part["data"]
                shown = data["values"] if part["type"] == "checkpoints" else data
                out.append((part["type"], part["ns"], type(shown).__name__, repr(shown)))
            final = app.invoke({"x": 1}, thread(schema.__name__ + "2"), version="v2")
            out.append((type(final.value).__name__, repr(final.value)))
        return out

    same(program)


def test_a_v2_stream_of_subgraphs_names_each_parts_namespace():
    def program(api):
        inner = two_steps(api)
        builder = api.StateGraph(State).add_node("inner", inner).add_edge(api.START, "inner")
        app = builder.compile()
        ids = Ids()
        parts = list(app.stream({"x": 1}, stream_mode="updates", subgraphs=True, version="v2"))
        return [(p["type"], tuple(map(ids.text, p["ns"])), plain(p["data"])) for p in parts]

    same(program)


@pytest.mark.parametrize("keys", ["x", ["x"], ["x", "y"], "y", ["log", "x"]], ids=repr)
def test_output_keys_pick_what_the_chunks_and_the_result_show(keys):
    """`output_keys="x"`: each chunk's `x` bare; a list: those fields, in its order; a
    `values` chunk only when one of them changed."""

    def program(api):
        def c(state: Three) -> None:
            return None

        builder = api.StateGraph(Three).add_node("a", lambda s: {"x": s["x"] + 1, "log": ["a"]})
        builder.add_node("b", lambda s: {"log": ["b"]}).add_node("c", c)
        app = builder.add_edge(api.START, "a").add_edge("a", "b").add_edge("b", "c").compile()
        given = {"x": 1}
        return (
            ordered(list(app.stream(given, stream_mode=["values", "updates"], output_keys=keys))),
            ordered(app.invoke(given, output_keys=keys)),
            ordered(asyncio.run(app.ainvoke(given, output_keys=keys))),
        )

    same(program)


def test_output_keys_of_a_paused_run():
    def program(api):
        def ask(state: Three) -> dict:
            return {"x": api.interrupt("how many?")}

        builder = api.StateGraph(Three).add_node("ask", ask).add_edge(api.START, "ask")
        app = builder.compile(checkpointer=api.InMemorySaver())
        return [
            output(app.invoke({"x": 1}, thread("1"), output_keys="x")),
            output(app.invoke({"x": 1}, thread("2"), output_keys=["log"])),
            ordered(list(app.stream({"x": 1}, thread("3"), output_keys="x", stream_mode="values"))),
            output(app.invoke({"x": 1}, thread("4"), output_keys="x", version="v2")),
        ]

    same(program)


class Three(TypedDict):
    x: int
    log: Annotated[list, operator.add]
    y: str


@pytest.mark.parametrize("saver", ["memory", "sqlite"])
def test_a_node_and_get_state_see_the_fields_in_the_schemas_order(saver, tmp_path):
    """A docs program prints the state in a node: its keys in the schema's order, however
    the run first wrote them (a reducer's default, the input's keys, a later step's)."""

    def program(api):
        seen = []

        def a(state: Three) -> dict:
            seen.append(list(state))
            return {"y": "1", "log": ["a"]}

        def b(state: Three) -> dict:
            seen.append(list(state))
            return {"x": 5}

        builder = api.StateGraph(Three).add_node("a", a).add_node("b", b)
        app = builder.add_edge(api.START, "a").add_edge("a", "b").compile(checkpointer=api.saver())
        out = list(app.invoke({"y": "0", "x": 1}, thread()))
        again = builder.compile(checkpointer=app.checkpointer)  # (the thread read back)
        history = [list(s.values) for s in again.get_state_history(thread())]
        return seen, out, list(again.get_state(thread()).values), history

    same(program, saver=saver, folder=tmp_path)


def test_values_chunks_list_fields_in_the_schemas_order():
    def program(api):
        app = two_steps(api)
        chunks = list(app.stream({"x": 1}, stream_mode="values"))
        return [list(chunk) for chunk in chunks], list(app.invoke({"log": ["start"], "x": 0}))

    same(program)


# --- add_node(metadata=...) ----------------------------------------------------------------


def test_a_nodes_metadata_is_drawn_and_in_its_config():
    def program(api):
        seen = []

        def a(state: State, config: RunnableConfig) -> dict:
            own = api.get_config()["metadata"]
            seen.append([(k, v) for k, v in config["metadata"].items() if "langgraph" not in k])
            seen.append([(k, v) for k, v in own.items() if "langgraph" not in k])
            return {"x": 1}

        builder = api.StateGraph(State)
        builder.add_node("a", a, metadata={"owner": "ada", "retries": 1})

        def b(state: State) -> dict:
            return {"log": ["b"]}

        builder.add_node("b", b, metadata={"owner": "bo"})
        app = (
            builder.add_edge(api.START, "a")
            .add_edge(api.START, "b")
            .compile(interrupt_before=["b"], checkpointer=api.InMemorySaver())
        )
        drawn = {key: node.metadata for key, node in app.get_graph().nodes.items()}
        mermaid = app.get_graph().draw_mermaid()
        app.invoke({"x": 0}, {**thread(), "metadata": {"run": "r", "owner": "run"}})
        tasks = list(app.stream(None, thread(), stream_mode="tasks"))
        started = [chunk.get("metadata") for chunk in tasks if "input" in chunk]
        return drawn, mermaid, seen, started

    same(program)


def test_a_node_metadata_that_is_not_a_dict_is_refused():
    """LangGraph fails when it first reads it (a `ValueError`); nbgraph at `compile()`,
    naming the node (a `GraphBuildError`, which is a `ValueError`)."""

    def program(api):
        builder = api.StateGraph(State).add_node("a", lambda state: {}, metadata=["owner"])
        return builder.add_edge(api.START, "a").compile().get_graph().nodes["a"].metadata

    assert same(program, raises=True, catchable=True)[0][0] == "raised"


# --- errors a docs program catches and prints ------------------------------------------------


def words(n: int) -> Any:
    """An outcome's `message`: the first `n` words of an error's text (LangGraph's text,
    where nbgraph's says more after it)."""
    return lambda text: re.findall(r"[\w']+", text)[:n]


def loop_graph(api: Any, **compile_options: Any) -> Any:
    def again(state: State) -> dict:
        return {"x": state["x"] + 1}

    builder = api.StateGraph(State).add_node("again", again).add_edge(api.START, "again")
    return builder.add_edge("again", "again").compile(**compile_options)


def two_writers(api: Any) -> Any:
    def write(state: State) -> dict:
        return {"x": 1}

    builder = api.StateGraph(State).add_node("a", write).add_node("b", write)
    return builder.add_edge(api.START, "a").add_edge(api.START, "b").compile()


def returns_int(api: Any) -> Any:
    builder = api.StateGraph(State).add_node("a", lambda state: 5)
    return builder.add_edge(api.START, "a").compile()


def unknown_as_node(api: Any) -> Any:
    app = two_steps(api, checkpointer=api.InMemorySaver())
    app.invoke({"x": 1}, thread())
    return app.update_state(thread(), {"x": 5}, as_node="unknown")


ERRORS = {
    "update_state(as_node=unknown)": (unknown_as_node, 4),
    "recursion_limit=0": (lambda api: two_steps(api).invoke({"x": 1}, {"recursion_limit": 0}), 6),
    "recursion_limit=-1": (lambda api: two_steps(api).invoke({"x": 1}, {"recursion_limit": -1}), 6),
    "recursion limit reached": (
        lambda api: loop_graph(api).invoke({"x": 1}, {"recursion_limit": 3}),
        10,
    ),
    "two writes to one key": (lambda api: two_writers(api).invoke({"x": 1}), 10),
    "a node returns an int": (lambda api: returns_int(api).invoke({"x": 1}), 4),
    "invoke(None)": (lambda api: two_steps(api).invoke(None), 3),
    "get_state without a checkpointer": (lambda api: two_steps(api).get_state(thread()), 0),
    "no thread id": (
        lambda api: loop_graph(api, checkpointer=api.InMemorySaver()).invoke({"x": 1}),
        0,
    ),
    "edge to an unknown node": (
        lambda api: (
            api.StateGraph(State)
            .add_node("a", lambda s: {})
            .add_edge(api.START, "a")
            .add_edge("a", "zz")
            .compile()
        ),
        0,
    ),
}
"""Each error: the program that raises it, and how many of its first words LangGraph's text
and nbgraph's share (0: only the class is compared; nbgraph's text says more, on purpose)."""


@pytest.mark.parametrize("name", list(ERRORS))
def test_an_error_a_program_catches_is_langgraphs_class_and_starts_with_its_words(name):
    make, n = ERRORS[name]

    def program(api):
        return make(api)

    lg, nb = both(program, raises=True, message=words(n) if n else None)
    assert lg[0] == "raised" and nb == lg


def test_removing_a_message_no_one_has_says_langgraphs_words():
    """LangGraph raises a `ValueError`; nbgraph an `InvalidUpdateError`, which is one."""

    def program(api):
        from langchain_core.messages import HumanMessage, RemoveMessage

        def remove(state: Any) -> dict:
            return {"messages": [RemoveMessage(id="nobody")]}

        builder = api.StateGraph(api.MessagesState).add_node("remove", remove)
        app = builder.add_edge(api.START, "remove").compile()
        try:
            app.invoke({"messages": [HumanMessage("hi", id="1")]})
        except ValueError as error:  # (what a LangGraph program catches)
            return words(11)(str(error))

    assert same(program)[0][0] == "Attempting"


def test_print_mode_prints_the_chunks_of_its_modes_as_langgraph():
    def program(api):
        inner = two_steps(api)
        builder = api.StateGraph(State).add_node("inner", inner).add_edge(api.START, "inner")
        app = builder.compile()
        given = {"x": 1}
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            runs = [
                list(app.stream(given, stream_mode="updates", print_mode="values")),
                list(app.stream(given, stream_mode=["updates"], print_mode=["values", "updates"])),
                app.invoke(given, print_mode="updates"),
                len(list(app.stream(given, print_mode="values", subgraphs=True))),
                asyncio.run(app.ainvoke(given, print_mode=["values"])),
            ]
        shown = re.sub(r"inner:[0-9a-f-]+", "inner:<id>", printed.getvalue())
        return ordered(runs), shown.splitlines()

    same(program)
