"""Differential tests: langchain_core messages in state, on real LangGraph and on nbgraph.

Each program is built with one engine's names (`api`), run, and returns what it observed;
the outcome is put into a canonical form (messages as class + every field, uuid-like ids
replaced by labels in order of first appearance, so "same positions equal/different" is
compared) and must be the same on both engines.
"""

import io
import json
import operator
import subprocess
import sys
from contextlib import redirect_stdout
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest

pytest.importorskip("langchain_core")
pytest.importorskip("langgraph")

from langchain_core.language_models.fake_chat_models import (
    FakeListChatModel,
    GenericFakeChatModel,
)
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)

from tests.support.harness import Ids, Programs, differs, same
from tests.support.records import APPLY, NO_RUN, UPDATE

pytestmark = pytest.mark.langgraph

ROOT = Path(__file__).resolve().parents[2]


def canonical(value: Any, ids: Ids | None = None) -> Any:
    """`value` with messages as (class, fields) and generated ids by structure (`Ids`)."""
    ids = Ids() if ids is None else ids
    if isinstance(value, BaseMessage):
        fields = {k: canonical(v, ids) for k, v in value.model_dump().items()}
        return (type(value).__name__, fields)
    if isinstance(value, dict):
        return {str(k): canonical(v, ids) for k, v in sorted(value.items(), key=str)}
    if isinstance(value, (list, tuple)):
        return [canonical(v, ids) for v in value]
    return ids.text(value)


PROGRAMS = Programs()
program = PROGRAMS.add


def chat_state(api):
    class Chat(TypedDict):
        messages: Annotated[list, api.add_messages]

    return Chat


def one_node(api, fn, state=None):
    graph = api.StateGraph(state or chat_state(api)).add_node("node", fn)
    return graph.add_edge(api.START, "node").add_edge("node", api.END).compile()


# --- the programs -------------------------------------------------------------------------------


@program
def chat_model_reads_state_messages(api):
    llm = FakeListChatModel(responses=["hello there"])
    seen = []

    def chat(state):
        seen.append([type(m).__name__ for m in state["messages"]])
        return {"messages": [llm.invoke(state["messages"])]}

    out = one_node(api, chat).invoke({"messages": [HumanMessage(content="hi")]})
    return {"out": out, "seen": seen}


@program
def tuples_dicts_and_strings_become_langchain_classes(api):
    def node(state):
        return {
            "messages": [
                ("ai", "a tuple"),
                ("system", "sys"),
                {"role": "user", "content": "a dict"},
                {"type": "ai", "content": "typed", "id": "fixed"},
                {"role": "tool", "content": "42", "tool_call_id": "call-1"},
                "a str",
            ]
        }

    return one_node(api, node).invoke({"messages": [("user", "go")]})


@program
def a_single_message_not_in_a_list(api):
    return one_node(api, lambda s: {"messages": AIMessage("one")}).invoke({"messages": "hi"})


@program
def ids_same_id_replaces_in_place(api):
    def node(state):
        first = state["messages"][0]
        return {"messages": [HumanMessage("edited", id=first.id), AIMessage("new")]}

    return one_node(api, node).invoke({"messages": [HumanMessage("hi", id="h1"), ("ai", "x")]})


@program
def remove_message_by_id(api):
    def node(state):
        return {"messages": [RemoveMessage(id=m.id) for m in state["messages"][:2]]}

    start = [("user", "a"), ("ai", "b"), ("user", "c")]
    return one_node(api, node).invoke({"messages": start})


@program
def remove_all_messages(api):
    def node(state):
        return {"messages": [RemoveMessage(id=api.REMOVE_ALL_MESSAGES), ("ai", "fresh")]}

    return one_node(api, node).invoke({"messages": [("user", "a"), ("ai", "b")]})


@differs(APPLY.at("run:status"))
@program
def remove_an_unknown_id_is_an_error(api):
    return one_node(api, lambda s: {"messages": [RemoveMessage(id="nope")]}).invoke(
        {"messages": [("user", "a")]}
    )


@program
def remove_then_readd_in_one_update_keeps_the_place(api):
    def node(state):
        return {"messages": [RemoveMessage(id="a"), AIMessage("again", id="a")]}

    start = [HumanMessage("x", id="a"), HumanMessage("y", id="b")]
    return one_node(api, node).invoke({"messages": start})


@program
def message_chunks_become_messages(api):
    def node(state):
        return {"messages": [AIMessageChunk(content="stre") + AIMessageChunk(content="amed")]}

    return one_node(api, node).invoke({"messages": []})


def tool_agent(api, replies):
    llm = GenericFakeChatModel(messages=iter(replies))

    def agent(state):
        return {"messages": [llm.invoke(state["messages"])]}

    def tools(state):
        last = state["messages"][-1]
        assert isinstance(last, AIMessage)
        return {
            "messages": [
                ToolMessage(content=str(sum(call["args"].values())), tool_call_id=call["id"])
                for call in last.tool_calls
            ]
        }

    def route(state):
        last = state["messages"][-1]
        return "tools" if isinstance(last, AIMessage) and last.tool_calls else api.END

    graph = api.StateGraph(api.MessagesState).add_node("agent", agent).add_node("tools", tools)
    graph.add_edge(api.START, "agent").add_conditional_edges("agent", route, ["tools", api.END])
    return graph.add_edge("tools", "agent").compile()


AGENT_REPLIES = [
    AIMessage("", tool_calls=[{"name": "add", "args": {"a": 1, "b": 2}, "id": "call_1"}]),
    AIMessage(
        "",
        tool_calls=[
            {"name": "add", "args": {"a": 3, "b": 4}, "id": "call_2"},
            {"name": "add", "args": {"a": 5, "b": 6}, "id": "call_3"},
        ],
    ),
    AIMessage("the sums are 3, 7 and 11", response_metadata={"finish": "stop"}),
]


@program
def tool_calling_agent_loop(api):
    app = tool_agent(api, list(AGENT_REPLIES))
    return app.invoke({"messages": [SystemMessage("be brief"), ("user", "add things")]})


@program
def tool_calling_agent_stream_updates(api):
    app = tool_agent(api, list(AGENT_REPLIES))
    return list(app.stream({"messages": [("user", "add")]}, stream_mode="updates"))


@program
def stream_values_with_messages(api):
    llm = FakeListChatModel(responses=["one", "two"])

    def chat(state):
        return {"messages": [llm.invoke(state["messages"])]}

    app = one_node(api, chat)
    return list(app.stream({"messages": [("user", "hi")]}, stream_mode="values"))


@program
def pretty_print_and_type_in_a_node(api):
    printed = io.StringIO()

    def node(state):
        with redirect_stdout(printed):
            for message in state["messages"]:
                message.pretty_print()
        return {"messages": [("ai", ",".join(m.type for m in state["messages"]))]}

    out = one_node(api, node).invoke({"messages": [("user", "hi"), ("system", "s")]})
    return {"out": out, "printed": printed.getvalue()}


@program
def memory_saver_keeps_a_conversation(api):
    llm = FakeListChatModel(responses=["first answer", "second answer"])
    app = (
        api.StateGraph(api.MessagesState)
        .add_node("chat", lambda s: {"messages": [llm.invoke(s["messages"])]})
        .add_edge(api.START, "chat")
        .add_edge("chat", api.END)
        .compile(checkpointer=api.MemorySaver())
    )
    config = {"configurable": {"thread_id": "t1"}}
    app.invoke({"messages": [("user", "one")]}, config)
    app.invoke({"messages": [HumanMessage("two", name="bob")]}, config)
    state = app.get_state(config)
    history = [len(s.values.get("messages", [])) for s in app.get_state_history(config)]
    return {"values": state.values, "history": history}


@differs(UPDATE.at("run:effects", "run:steps"))
@program
def update_state_with_messages(api):
    app = (
        api.StateGraph(api.MessagesState)
        .add_node("chat", lambda s: {"messages": [("ai", "hi")]})
        .add_edge(api.START, "chat")
        .add_edge("chat", api.END)
        .compile(checkpointer=api.MemorySaver())
    )
    config = {"configurable": {"thread_id": "t"}}
    out = app.invoke({"messages": [("user", "hello")]}, config)
    first = out["messages"][0].id
    app.update_state(config, {"messages": [HumanMessage("rewritten", id=first), ("ai", "more")]})
    app.update_state(config, {"messages": [RemoveMessage(id=first)]})
    return app.get_state(config).values


@differs(NO_RUN.at())
@program
def add_messages_called_directly(api):
    merged = api.add_messages([("user", "a"), HumanMessage("b", id="b")], [("ai", "c")])
    replaced = api.add_messages(merged, [AIMessage("B", id="b")])
    return {"merged": merged, "replaced": replaced}


@program
def operator_add_field_keeps_messages_as_given(api):
    class State(TypedDict):
        messages: Annotated[list, operator.add]

    app = one_node(api, lambda s: {"messages": [AIMessage("x")]}, State)
    return app.invoke({"messages": [HumanMessage("a")]})


@differs(APPLY.at("run:status", "run:steps", "run:tree"))
@program
def a_value_neither_library_reads_is_an_error(api):
    return one_node(api, lambda s: {"messages": [object()]}).invoke({"messages": []})


@program
def async_chat_node_with_ainvoke(api):
    import asyncio

    llm = FakeListChatModel(responses=["async hello"])

    async def chat(state):
        return {"messages": [await llm.ainvoke(state["messages"])]}

    app = one_node(api, chat)
    return asyncio.run(app.ainvoke({"messages": [("user", "hi")]}))


@program
def messages_state_subclass_routes_on_message_class(api):
    class State(api.MessagesState):
        turns: int

    def talk(state):
        return {"messages": [("ai", f"turn {state['turns']}")], "turns": state["turns"] + 1}

    def route(state):
        last = state["messages"][-1]
        done = isinstance(last, AIMessage) and last.type == "ai" and state["turns"] >= 3
        return api.END if done else "talk"

    graph = api.StateGraph(State).add_node("talk", talk).add_edge(api.START, "talk")
    app = graph.add_conditional_edges("talk", route, ["talk", api.END]).compile()
    return app.invoke({"messages": [("user", "go")], "turns": 0})


@program
def stream_a_list_of_modes_with_messages(api):
    app = tool_agent(api, list(AGENT_REPLIES))
    return list(app.stream({"messages": [("user", "add")]}, stream_mode=["values", "updates"]))


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_same_as_langgraph(program) -> None:
    same(program, raises=True, catchable=True, shape=canonical)


@differs(NO_RUN.at())
def test_the_canonical_form_keeps_id_structure() -> None:
    a = canonical([HumanMessage("x", id="1b4e28ba-2fa1-11d2-883f-0016d3cca427")] * 2)
    b = canonical(
        [
            HumanMessage("x", id="1b4e28ba-2fa1-11d2-883f-0016d3cca427"),
            HumanMessage("x", id="2b4e28ba-2fa1-11d2-883f-0016d3cca427"),
        ]
    )
    assert a != b


# --- SQLite across processes ---------------------------------------------------------------------

SQLITE_PROGRAM = """
import json, sqlite3, sys
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
engine, path, phase = sys.argv[1:4]
if engine == "langgraph":
    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.graph import END, START, MessagesState, StateGraph
    saver = SqliteSaver(sqlite3.connect(path, check_same_thread=False))
else:
    from nbgraph import END, START, MessagesState, SqliteSaver, StateGraph
    saver = SqliteSaver(path)
llm = FakeListChatModel(responses=["from the model"])
def chat(state):
    call = {"name": "f", "args": {"x": [1, 2]}, "id": "call_9"}
    return {"messages": [
        llm.invoke(state["messages"]),
        AIMessage("", tool_calls=[call], additional_kwargs={"k": {"n": 1}},
                  response_metadata={"model": "m"}, name="bot"),
        ToolMessage("done", tool_call_id="call_9", status="error", artifact={"a": 1}),
    ]}
app = (StateGraph(MessagesState).add_node("chat", chat).add_edge(START, "chat")
       .add_edge("chat", END).compile(checkpointer=saver))
config = {"configurable": {"thread_id": "t"}}
if phase == "write":
    app.invoke({"messages": [HumanMessage("hi", id="h1")]}, config)
values = app.get_state(config).values
print(json.dumps([[type(m).__name__, m.model_dump()] for m in values["messages"]]))
"""


def sqlite_outcome(engine: str, folder: Path) -> Any:
    script = folder / "program.py"
    script.write_text(SQLITE_PROGRAM)
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    outputs = []
    for phase in ("write", "read"):
        done = subprocess.run(
            [sys.executable, str(script), engine, str(folder / "db.sqlite"), phase],
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
            check=False,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        outputs.append(json.loads(done.stdout))
    return canonical(outputs)


@differs(NO_RUN.at())
def test_sqlite_saver_keeps_langchain_messages_across_processes(tmp_path: Path) -> None:
    (tmp_path / "lg").mkdir()
    (tmp_path / "nb").mkdir()
    written, read = sqlite_outcome("nbgraph", tmp_path / "nb")
    assert read == written  # the process that reopens the file sees what the writer saw
    assert [written, read] == sqlite_outcome("langgraph", tmp_path / "lg")
