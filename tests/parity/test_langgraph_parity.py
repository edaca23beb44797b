"""Core parity with real LangGraph programs: each program runs on langgraph and on nbgraph with
only its imports changed, and what it observes must be the same.

The programs here are the core-engine cases found by running real LangGraph programs
(docs, how-tos, tests) on nbgraph: `typing_extensions.TypedDict` states, interrupts in streams,
`Command(resume=..., update=...)`, what a node typed with a schema sees, and a string
`path_map`.
"""

# No `from __future__ import annotations`: the schemas below are built inside functions and
# both engines read their annotations at run time.

import operator
import threading
import time
from typing import Annotated

import pytest
import typing_extensions
from typing_extensions import TypedDict

from tests.support.harness import Programs, plain, same

pytestmark = pytest.mark.langgraph


def cfg(thread: str) -> dict:
    return {"configurable": {"thread_id": thread}}


PROGRAMS = Programs()
program = PROGRAMS.add


# --- typing_extensions.TypedDict states ------------------------------------------------------


@program
def extensions_typeddict_with_input_and_output_schemas(api) -> list:
    class In(TypedDict):
        question: str

    class Out(TypedDict):
        answer: str

    class Overall(In, Out):
        log: typing_extensions.NotRequired[Annotated[list, operator.add]]

    def answer(state: In):
        return {"answer": state["question"] + "!", "log": ["answered"]}

    app = (
        api.StateGraph(Overall, input_schema=In, output_schema=Out)
        .add_node("answer", answer)
        .add_edge(api.START, "answer")
        .add_edge("answer", api.END)
        .compile()
    )
    return [
        app.invoke({"question": "hi"}),
        list(app.stream({"question": "hi"})),
        list(app.stream({"question": "hi"}, stream_mode="values")),
    ]


# --- what a node typed with a schema is handed ---------------------------------------------


@program
def private_and_input_only_keys_do_not_leak(api) -> list:
    class Overall(TypedDict):
        a: str

    class Asked(TypedDict):
        a: str
        question: str

    class Private(TypedDict):
        secret: str

    seen: list = []

    def n1(state: Overall) -> Private:
        seen.append(("n1", dict(state)))
        return {"secret": "s"}

    def n2(state: Private) -> Overall:
        seen.append(("n2", dict(state)))
        return {"a": "n2"}

    def n3(state: Overall) -> Overall:
        seen.append(("n3", dict(state)))
        return {"a": "n3"}

    def n4(state):
        seen.append(("n4", dict(state)))
        return {}

    def route(state: Private):
        seen.append(("route", dict(state)))
        return "n2"

    builder = api.StateGraph(Overall, input_schema=Asked).add_sequence([n1, n2, n3, n4])
    builder.add_edge(api.START, "n1").add_conditional_edges("n1", route)
    out = builder.compile().invoke({"a": "x", "question": "q"})
    return [out, sorted(seen, key=repr)]


# --- a string path_map ---------------------------------------------------------------------


@program
def string_path_map(api) -> list:
    class S(TypedDict):
        log: Annotated[list, operator.add]

    builder = (
        api.StateGraph(S)
        .add_node("first", lambda s: {"log": ["first"]})
        .add_node("second", lambda s: {"log": ["second"]})
        .add_edge(api.START, "first")
        .add_conditional_edges("first", lambda s: "second", "second")
    )
    return [builder.compile().invoke({"log": []})]


# --- interrupts in streams ---------------------------------------------------------------------


class Asking(TypedDict):
    log: Annotated[list, operator.add]
    answer: str


def asking_chain(api, **compile_options):
    """START -> first -> ask (asks a question) -> last."""

    def ask(state):
        return {"answer": api.interrupt("name?"), "log": ["ask"]}

    return (
        api.StateGraph(Asking)
        .add_node("first", lambda s: {"log": ["first"]})
        .add_node("ask", ask)
        .add_node("last", lambda s: {"log": ["last"]})
        .add_edge(api.START, "first")
        .add_edge("first", "ask")
        .add_edge("ask", "last")
        .compile(checkpointer=api.InMemorySaver(), **compile_options)
    )


MODES = ["updates", "values", ["values", "updates"], ["updates"]]


@program
def interrupt_in_every_stream_mode(api) -> list:
    app = asking_chain(api)
    seen = []
    for index, mode in enumerate(MODES):
        config = cfg(f"t{index}")
        seen.append(list(app.stream({"log": [], "answer": ""}, config, stream_mode=mode)))
        seen.append(list(app.stream(api.Command(resume="Ada"), config, stream_mode=mode)))
    config = cfg("invoke")
    seen += [app.invoke({"log": [], "answer": ""}, config), app.get_state(config).next]
    return seen


@program
def static_breakpoints_in_streams(api) -> list:
    app = asking_chain(api, interrupt_before=["first"], interrupt_after=["first"])
    seen = []
    for index, mode in enumerate(MODES):
        config = cfg(f"t{index}")
        seen.append(list(app.stream({"log": [], "answer": ""}, config, stream_mode=mode)))
        seen.append(list(app.stream(None, config, stream_mode=mode)))
        seen.append(list(app.stream(None, config, stream_mode=mode)))
    config = cfg("invoke")
    seen += [app.invoke({"log": [], "answer": ""}, config), app.invoke(None, config)]
    return seen


@program
def interrupt_with_a_finished_sibling(api) -> list:
    def ask(state):
        return {"answer": api.interrupt("name?"), "log": ["ask"]}

    app = (
        api.StateGraph(Asking)
        .add_node("ask", ask)
        .add_node("side", lambda s: {"log": ["side"]})
        .add_node("done", lambda s: {"log": ["done"]})
        .add_edge(api.START, "ask")
        .add_edge(api.START, "side")
        .add_edge(["ask", "side"], "done")
        .compile(checkpointer=api.InMemorySaver())
    )
    seen = []
    for index, mode in enumerate(["updates", "values", ["values", "updates"]]):
        chunks = list(app.stream({"log": [], "answer": ""}, cfg(f"t{index}"), stream_mode=mode))
        # the question and the sibling finish in either order: compare them as a multiset
        seen.append((sorted(repr(plain(c)) for c in chunks), plain(chunks[-1])))
        # on resume the sibling's kept writes come first, marked as cached
        seen.append(list(app.stream(api.Command(resume="Ada"), cfg(f"t{index}"), stream_mode=mode)))
    seen.append(app.invoke({"log": [], "answer": ""}, cfg("invoke")))
    return seen


@program
def resume_after_a_failure_streams_the_kept_writes_as_cached(api) -> list:
    fail = [True]
    steady_done = threading.Event()

    def flaky(state):
        if fail[0]:
            # fail only once the sibling has finished, so both engines keep its writes
            # (a loaded machine could otherwise start `steady` after the failure)
            steady_done.wait(10)
            time.sleep(0.05)
            raise ValueError("boom")
        return {"log": ["flaky"]}

    def steady(state):
        steady_done.set()
        return {"log": ["steady"]}

    app = (
        api.StateGraph(Asking)
        .add_node("flaky", flaky)
        .add_node("steady", steady)
        .add_node("done", lambda s: {"log": ["done"]})
        .add_edge(api.START, "flaky")
        .add_edge(api.START, "steady")
        .add_edge(["flaky", "steady"], "done")
        .compile(checkpointer=api.InMemorySaver())
    )
    seen = []
    for index, mode in enumerate(["updates", ["values", "updates"]]):
        fail[0] = True
        steady_done.clear()
        with pytest.raises(ValueError):
            list(app.stream({"log": []}, cfg(f"t{index}"), stream_mode=mode))
        fail[0] = False
        seen.append(list(app.stream(None, cfg(f"t{index}"), stream_mode=mode)))
    return seen


# --- Command(resume=..., update=...) -------------------------------------------------------


@program
def command_resume_with_an_update(api) -> list:
    class S(TypedDict):
        k: Annotated[str, operator.add]
        other: str

    seen: list = []

    def ask(state):
        seen.append(dict(state))
        return {"k": " " + api.interrupt("q")}

    app = (
        api.StateGraph(S)
        .add_node("first", lambda s: {"k": "1"})
        .add_node("ask", ask)
        .add_node("last", lambda s: {"k": "!"})
        .add_edge(api.START, "first")
        .add_edge("first", "ask")
        .add_edge("ask", "last")
        .compile(checkpointer=api.InMemorySaver())
    )
    for index, mode in enumerate(["updates", "values", ["values", "updates"]]):
        config = cfg(f"t{index}")
        seen.append(list(app.stream({"k": "DE"}, config, stream_mode=mode)))
        command = api.Command(resume="answer", update={"k": " foo"})
        seen.append(list(app.stream(command, config, stream_mode=mode)))
    config = cfg("invoke")
    seen.append(app.invoke({"k": "DE"}, config))
    seen.append(app.invoke(api.Command(update={"other": "kept"}), config))  # asks again
    seen.append(app.get_state(config).values)
    seen.append(app.invoke(api.Command(resume="yes", update={"k": " more"}), config))
    seen.append(app.get_state(config).values)
    return seen


@program
def command_resume_with_a_goto(api) -> list:
    app = asking_chain(api)
    config = cfg("goto")
    app.invoke({"log": [], "answer": ""}, config)
    return [app.invoke(api.Command(resume="Ada", goto="last"), config)]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_same_as_langgraph(program) -> None:
    same(program, shape=plain)
