"""Differential programs: the names `nbgraph` gives at LangGraph's paths do what LangGraph's do.

Every program imports what it uses from `<library>.<LangGraph's module>` (the plain rename
of the imports), and runs on LangGraph and on nbgraph: a node raising `NodeInterrupt`,
`MessageGraph`, `push_message`, a saver given `serde=JsonPlusSerializer()`, a
`HumanInterrupt` request answered with a `HumanResponse`, LangGraph's exception classes
caught by LangGraph's `except` clauses, `get_checkpoint_id`, `create_error_message`.
"""

# No `from __future__ import annotations`: states are read at run time by both engines.

import importlib
import operator
import warnings
from typing import Annotated, TypedDict

import pytest

from tests.support.harness import Programs, same

pytestmark = pytest.mark.langgraph

PROGRAMS = Programs()
program = PROGRAMS.add


@pytest.mark.parametrize("prog", PROGRAMS, ids=lambda p: p.__name__)
def test_same_as_langgraph(prog) -> None:
    same(prog, raises=True)


def lg(api, module: str):
    """`<library>.<module>`: LangGraph's module path with the library's name."""
    return importlib.import_module(f"{api.lib}.{module}")


class Log(TypedDict):
    log: Annotated[list, operator.add]


@program
def a_node_raising_node_interrupt_pauses_the_run(api):
    errors, graph = lg(api, "errors"), lg(api, "graph")
    memory = lg(api, "checkpoint.memory")

    def guard(state):
        if len(state["log"]) < 2:
            raise errors.NodeInterrupt(f"too short: {len(state['log'])}")
        return {"log": ["passed"]}

    builder = graph.StateGraph(Log)
    builder.add_node("guard", guard)
    builder.add_edge(graph.START, "guard")
    app = builder.compile(checkpointer=memory.InMemorySaver())
    config = {"configurable": {"thread_id": "1"}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        first = app.invoke({"log": ["a"]}, config)
        paused = app.get_state(config)
        app.update_state(config, {"log": ["b"]})
        last = app.invoke(None, config)
    return (
        [i.value for i in first["__interrupt__"]],
        paused.next,
        [i.value for t in paused.tasks for i in t.interrupts],
        last,
        issubclass(errors.NodeInterrupt, errors.GraphInterrupt),
    )


@program
def message_graph(api):
    from langchain_core.messages import AIMessage

    message = lg(api, "graph.message")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        builder = message.MessageGraph()
    builder.add_node("reply", lambda messages: AIMessage(f"{len(messages)} so far", id="r"))
    builder.add_edge("__start__", "reply")
    out = builder.compile().invoke([("user", "hi")])
    kinds = (
        isinstance(builder, message.MessageGraph),
        isinstance(builder, lg(api, "graph").StateGraph),
    )
    return [(type(m).__name__, m.content) for m in out], kinds


@program
def push_message_streams_and_writes(api):
    from langchain_core.messages import AIMessage

    graph, message = lg(api, "graph"), lg(api, "graph.message")

    class State(TypedDict):
        messages: Annotated[list, message.add_messages]

    def chat(state):
        try:
            message.push_message(AIMessage("no id"))
        except ValueError as error:  # (nbgraph's text says more, from LangGraph's words)
            refused = "Message ID is required" in str(error)
        message.push_message(AIMessage("first", id="1"))
        message.push_message({"role": "user", "content": "again", "id": "3"})
        message.push_message(AIMessage("second", id="4"), state_key=None)  # (streamed only)
        return {"messages": [AIMessage(f"refused: {refused}", id="2")]}

    builder = graph.StateGraph(State)
    builder.add_node("chat", chat)
    builder.add_edge(graph.START, "chat")
    chunks = list(builder.compile().stream({"messages": []}, stream_mode=["messages", "values"]))
    streamed = [c[1][0].content for c in chunks if c[0] == "messages"]
    final = [m.content for m in chunks[-1][1]["messages"]]
    return streamed, final


@program
def a_saver_given_a_json_plus_serializer(api):
    graph, memory = lg(api, "graph"), lg(api, "checkpoint.memory")
    jsonplus = lg(api, "checkpoint.serde.jsonplus")
    builder = graph.StateGraph(Log)
    builder.add_node("a", lambda s: {"log": [["t", 1]]})
    builder.add_edge(graph.START, "a")
    saver = memory.InMemorySaver(serde=jsonplus.JsonPlusSerializer())
    app = builder.compile(checkpointer=saver)
    config = {"configurable": {"thread_id": "s"}}
    app.invoke({"log": []}, config)
    serde = jsonplus.JsonPlusSerializer()
    value = {"n": [1, 2.5, "x", None, True], "nested": {"k": "v"}}
    return app.get_state(config).values, serde.loads_typed(serde.dumps_typed(value)) == value


@program
def a_human_interrupt_request_answered(api):
    graph, types = lg(api, "graph"), lg(api, "types")
    memory, prebuilt = lg(api, "checkpoint.memory"), lg(api, "prebuilt.interrupt")

    def review(state):
        request = prebuilt.HumanInterrupt(
            action_request=prebuilt.ActionRequest(action="send", args={"to": "ada"}),
            config=prebuilt.HumanInterruptConfig(
                allow_ignore=True, allow_respond=True, allow_edit=True, allow_accept=True
            ),
            description="Send it?",
        )
        response = types.interrupt([request])[0]
        return {"log": [response["type"], response["args"]]}

    builder = graph.StateGraph(Log)
    builder.add_node("review", review)
    builder.add_edge(graph.START, "review")
    app = builder.compile(checkpointer=memory.InMemorySaver())
    config = {"configurable": {"thread_id": "h"}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        asked = app.invoke({"log": []}, config)["__interrupt__"][0].value
        answer = [{"type": "response", "args": "not now"}]
        done = app.invoke(types.Command(resume=answer), config)
    return asked, done


@program
def langgraphs_except_clauses_catch(api):
    errors, graph = lg(api, "errors"), lg(api, "graph")
    caught = []
    builder = graph.StateGraph(Log)
    builder.add_node("loop", lambda s: {"log": ["x"]})
    builder.add_edge(graph.START, "loop")
    builder.add_edge("loop", "loop")
    try:
        builder.compile().invoke({"log": []}, {"recursion_limit": 3})
    except errors.GraphRecursionError:
        caught.append("GraphRecursionError")
    code = errors.ErrorCode.INVALID_CONCURRENT_GRAPH_UPDATE
    message = errors.create_error_message(message="Two writes.", error_code=code)
    base = lg(api, "checkpoint.base")
    config = {"configurable": {"thread_id": "1", "checkpoint_id": "c1"}}
    return caught, message, base.get_checkpoint_id(config), [c.value for c in errors.ErrorCode]


@program
def the_constants_and_type_aliases(api):
    constants, types = lg(api, "constants"), lg(api, "types")
    return (
        constants.START,
        constants.END,
        constants.TAG_NOSTREAM,
        constants.TAG_HIDDEN,
        constants.CONF,
        types.Durability.__args__,
        types.StreamMode.__args__,
        types.All.__args__,
    )


@program
def a_builder_lists_its_managed_fields(api):
    from typing import NotRequired, Required

    graph, managed = lg(api, "graph"), lg(api, "managed")

    class Plain(TypedDict):
        left: managed.RemainingSteps
        last: managed.IsLastStep
        log: list

    class Optional(TypedDict):
        left: NotRequired[managed.RemainingSteps]

    class Needed(TypedDict):
        left: Required[managed.RemainingSteps]

    return [sorted(graph.StateGraph(s).managed) for s in (Plain, Optional, Needed)]


@program
def interrupt_with_a_response_schema(api):
    import pydantic

    graph, types = lg(api, "graph"), lg(api, "types")
    errors, memory = lg(api, "errors"), lg(api, "checkpoint.memory")

    class Answer(pydantic.BaseModel):
        ok: bool

    class State(TypedDict):
        out: str

    def ask(state):
        answer = types.interrupt("ok?", response_schema=Answer)
        loose = types.interrupt("and?", response_schema={"type": "string"})
        return {"out": f"{type(answer).__name__} {answer.ok} {loose}"}

    builder = graph.StateGraph(State)
    builder.add_node("ask", ask)
    builder.add_edge(graph.START, "ask")
    app = builder.compile(checkpointer=memory.InMemorySaver())
    one, two = {"configurable": {"thread_id": "1"}}, {"configurable": {"thread_id": "2"}}
    asked = app.invoke({"out": ""}, one)["__interrupt__"][0]
    kept = app.get_state(one).tasks[0].interrupts[0].response_schema
    second = app.invoke(types.Command(resume={"ok": True}), one)["__interrupt__"][0]
    done = app.invoke(types.Command(resume=7), one)
    app.invoke({"out": ""}, two)
    try:
        app.invoke(types.Command(resume={"ok": "maybe?"}), two)
        refused = None
    except pydantic.ValidationError as error:
        refused = errors.is_invalid_resume(error)
    return asked.response_schema, kept, second.response_schema, done, refused


@program
def overwrite_carries_its_tag(api):
    types = lg(api, "types")
    return types.Overwrite(["x"]).type, types.Overwrite(value=[1]) == types.Overwrite([1])


@program
def node_interrupt_warns_with_langgraphs_category(api):
    errors, lg_warnings = lg(api, "errors"), lg(api, "warnings")
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        errors.NodeInterrupt("stop")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.filterwarnings("ignore", category=lg_warnings.LangGraphDeprecatedSinceV10)
        errors.NodeInterrupt("quiet")
    return [w.category.__name__ for w in seen], issubclass(
        lg_warnings.LangGraphDeprecatedSinceV10, DeprecationWarning
    )


@program
def a_node_cache_in_an_sqlite_file(api):
    import os
    import tempfile
    import time

    graph, types, sqlite = lg(api, "graph"), lg(api, "types"), lg(api, "cache.sqlite")
    path = os.path.join(tempfile.mkdtemp(), "cache.db")
    calls = []

    def slow(state):
        calls.append(state["log"][-1])
        return {"log": [f"done {state['log'][-1]}"]}

    def app(ttl=None):
        builder = graph.StateGraph(Log)
        builder.add_node("slow", slow, cache_policy=types.CachePolicy(ttl=ttl))
        builder.add_edge(graph.START, "slow")
        return builder.compile(cache=sqlite.SqliteCache(path=path))

    outs = [app().invoke({"log": ["x"]}), app().invoke({"log": ["x"]})]  # (two caches)
    outs.append(app().invoke({"log": ["y"]}))
    short = app(ttl=1)
    outs.append(short.invoke({"log": ["z"]}))
    time.sleep(1.2)
    outs.append(short.invoke({"log": ["z"]}))
    short.clear_cache()
    outs.append(app().invoke({"log": ["x"]}))
    return outs, calls


@program
def add_messages_in_openai_format(api):
    from langchain_core.messages import AIMessage, HumanMessage

    graph, message = lg(api, "graph"), lg(api, "graph.message")

    class State(TypedDict):
        messages: Annotated[list, message.add_messages(format="langchain-openai")]

    def talk(state):
        image = {
            "type": "image",
            "source": {"type": "base64", "media_type": "image/png", "data": "AA"},
        }
        return {
            "messages": [
                HumanMessage([{"type": "text", "text": "look"}, image], id="h"),
                AIMessage(
                    [{"type": "tool_use", "name": "f", "input": {"a": 1}, "id": "t"}], id="a"
                ),
            ]
        }

    builder = graph.StateGraph(State)
    builder.add_node("talk", talk)
    builder.add_edge(graph.START, "talk")
    out = builder.compile().invoke({"messages": [("user", "hi")]})["messages"]
    try:
        message.add_messages([("user", "x")])
        one_side = None
    except ValueError as error:  # (nbgraph's texts say more, from LangGraph's words)
        one_side = "Must specify non-null arguments for both 'left' and 'right'" in str(error)
    try:
        message.add_messages([], [("user", "x")], format="other")
        unknown = None
    except ValueError as error:
        unknown = "Unrecognized format='other'" in str(error)
    shapes = [(type(m).__name__, m.content, getattr(m, "tool_calls", None)) for m in out[1:]]
    return shapes, one_side, unknown


@program
def ui_messages_pushed_merged_and_deleted(api):
    from langchain_core.messages import AIMessage

    graph, views = lg(api, "graph"), lg(api, "graph.ui")

    class State(TypedDict):
        ui: Annotated[list, views.ui_message_reducer]
        log: list

    def first(state):
        views.push_ui_message(
            "card", {"title": "a", "n": 1}, id="c1", message=AIMessage("x", id="m")
        )
        views.push_ui_message("note", {"text": "t"}, id="c2", state_key=None)  # (streamed only)
        views.push_ui_message("gone", {}, id="c3")
        return {"log": ["first"]}

    def second(state):
        views.push_ui_message("card", {"n": 2}, id="c1", merge=True)
        views.delete_ui_message("c3")
        return {"log": ["second"]}

    builder = graph.StateGraph(State)
    builder.add_node("first", first)
    builder.add_node("second", second)
    builder.add_edge(graph.START, "first")
    builder.add_edge("first", "second")
    chunks = list(builder.compile().stream({"ui": [], "log": []}, stream_mode=["custom", "values"]))
    custom = [
        (c["type"], c["id"], c.get("props"), c.get("metadata"))
        for mode, c in chunks
        if mode == "custom"
    ]
    final = [
        (m["id"], m["name"], m["props"], m["metadata"].get("message_id"))
        for m in chunks[-1][1]["ui"]
    ]
    try:
        views.ui_message_reducer([], {"type": "remove-ui", "id": "nope"})
        refused = None
    except ValueError as error:
        refused = str(error)
    return custom, final, refused
