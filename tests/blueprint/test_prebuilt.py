"""Tests for nbgraph/prebuilt (ToolNode, tools_condition), nbgraph/blueprint/runnables.py,
nbgraph/engine/runnable.py and get_graph's parts, beyond what LangGraph shows (the
differential checks are in test_langgraph_tools.py): nbgraph's own messages, the record of a
tool node, clear errors, and what `import nbgraph` loads.
"""

from __future__ import annotations

import asyncio
import json
import operator
import subprocess
import sys
from typing import Annotated, TypedDict

import pytest

pytest.importorskip("langchain_core")

from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.runnables import RunnableLambda
from langchain_core.tools import tool

import nbgraph
from nbgraph import END, START, StateGraph, add_messages
from nbgraph.engine.runnable import config_list, merge_configs
from nbgraph.errors import InvalidArgumentError
from nbgraph.prebuilt import InjectedToolCallId, ToolNode, tools_condition
from nbgraph.types import Command


class Chat(TypedDict):
    messages: Annotated[list, add_messages]


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def agent(first_reply):
    replies = [first_reply, {"role": "assistant", "content": "done", "id": "ai-2"}]

    def model(state):
        return {"messages": [replies.pop(0)]}

    return (
        StateGraph(Chat)
        .add_node("model", model)
        .add_node(ToolNode([add]))
        .add_edge(START, "model")
        .add_conditional_edges("model", tools_condition)
        .add_edge("tools", "model")
        .compile()
    )


def test_a_tool_node_reads_nbgraphs_own_messages_and_the_record_keeps_its_writes():
    call = {"name": "add", "args": {"a": 2, "b": 3}, "id": "call-1"}
    asking = {"role": "assistant", "content": "", "tool_calls": [call], "id": "ai-1"}
    app = agent(asking)
    run = app.run({"messages": [("user", "sum?")]})
    assert run.status == "done"
    answer = run.output["messages"][2]
    kind = getattr(answer, "role", None) or answer.type  # (nbgraph's Message or langchain's)
    assert (kind, answer.content, answer.tool_call_id, answer.name) == (
        "tool",
        "5",
        "call-1",
        "add",
    )
    rows = run.effects[run.effects["writers"].map(lambda w: list(w) == ["tools"])]
    assert len(rows) == 1  # the tool node's task wrote the answers
    ((writer, written),) = rows.iloc[0]["writes"]
    assert writer == "tools" and [m.tool_call_id for m in written] == ["call-1"]
    assert "tool_call_id='call-1'" in repr(written[0])  # readable in the table


def test_a_tool_node_and_a_runnable_node_get_their_config_without_a_warning():
    import warnings

    call = {"name": "add", "args": {"a": 2, "b": 2}, "id": "c"}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (a `config` nbgraph would not pass warns)
        app = agent({"role": "assistant", "content": "", "tool_calls": [call], "id": "ai-1"})
        out = app.invoke({"messages": [("user", "x")]})
        seen = []
        echo = RunnableLambda(lambda state, config: seen.append(config) or {})
        StateGraph(Chat).add_node("echo", echo).add_edge(START, "echo").compile().invoke(
            {"messages": []}, {"configurable": {"who": "me"}}
        )
    assert [m.content for m in out["messages"]] == ["x", "", "4", "done"]
    assert seen[0]["configurable"]["who"] == "me"


def test_a_tool_node_under_ainvoke_and_as_a_runnable_node():
    call = {"name": "add", "args": {"a": 1, "b": 1}, "id": "c"}
    app = agent({"role": "assistant", "content": "", "tool_calls": [call], "id": "ai-1"})
    out = asyncio.run(app.ainvoke({"messages": [("user", "x")]}))
    assert [m.content for m in out["messages"]] == ["x", "", "2", "done"]


def test_a_tool_node_called_directly_on_a_list_returns_a_list():
    ai = AIMessage("", tool_calls=[{"name": "add", "args": {"a": 1, "b": 2}, "id": "c1"}])
    out = ToolNode([add]).invoke([ai])
    assert isinstance(out, list) and isinstance(out[0], ToolMessage) and out[0].content == "3"
    calls = [{"name": "add", "args": {"a": 5, "b": 5}, "id": "c2", "type": "tool_call"}]
    assert ToolNode([add])(calls)["messages"][0].content == "10"  # (as LangGraph: a dict)


@pytest.mark.parametrize(
    ("state", "expected"),
    [
        ({"other": []}, "ToolNode 'tools': no message found in input"),
        ({"messages": [("user", "hi")]}, "ToolNode 'tools': no AIMessage found in input"),
    ],
)
def test_a_tool_node_without_an_ai_message_says_so(state, expected):
    with pytest.raises(ValueError, match=expected):
        ToolNode([add])(state)


def test_a_tool_node_refuses_what_is_not_a_tool():
    with pytest.raises(TypeError, match="expected a langchain tool or a function, got 42"):
        ToolNode([42])
    with pytest.raises(TypeError, match="ToolNode takes a list of tools, got <function add"):
        ToolNode(add)


def test_a_failing_tool_names_the_tool_node_in_the_run_error():
    def boom(x: int) -> int:
        """Fails."""
        raise KeyError("nope")

    call = {"name": "boom", "args": {"x": 1}, "id": "c"}
    asking = {"role": "assistant", "content": "", "tool_calls": [call], "id": "ai"}
    app = (
        StateGraph(Chat)
        .add_node("model", lambda s: {"messages": [asking]})
        .add_node(ToolNode([boom]))
        .add_edge(START, "model")
        .add_edge("model", "tools")
        .add_edge("tools", END)
        .compile()
    )
    with pytest.raises(KeyError) as caught:
        app.invoke({"messages": [("user", "x")]})
    assert "node 'tools'" in "".join(getattr(caught.value, "__notes__", []))


def test_a_runnable_node_is_named_by_get_name_and_may_be_renamed():
    class S(TypedDict):
        n: Annotated[int, operator.add]

    def double(state):
        return {"n": state["n"]}

    app = (
        StateGraph(S)
        .add_node(RunnableLambda(double))
        .add_node("again", RunnableLambda(double))
        .add_edge(START, "double")
        .add_edge("double", "again")
        .compile()
    )
    assert app.invoke({"n": 1}) == {"n": 4}
    assert list(app.spec.nodes) == ["double", "again"]
    assert asyncio.run(app.ainvoke({"n": 1})) == {"n": 4}


def test_merge_configs_and_config_lists():
    assert merge_configs({"tags": ["b"], "metadata": {"x": 1}}, None, {"tags": ["a"]}) == {
        "tags": ["a", "b"],
        "metadata": {"x": 1},
    }
    assert config_list({"k": 1}, 2) == [{"k": 1}, {"k": 1}]
    with pytest.raises(InvalidArgumentError, match="got 1 configs for 3 inputs"):
        config_list([{}], 3)


def test_with_config_leaves_the_graph_itself_alone():
    class S(TypedDict):
        who: str

    app = (
        StateGraph(S)
        .add_node("n", lambda s, config: {"who": config["configurable"].get("thread_id", "-")})
        .add_edge(START, "n")
        .compile()
    )
    bound = app.with_config(configurable={"thread_id": "b"})
    assert bound.invoke({"who": ""}) == {"who": "b"}
    assert app.invoke({"who": ""}) == {"who": "-"}
    assert bound.last_run.output == {"who": "b"}
    with pytest.raises(InvalidArgumentError, match="config must be a dict"):
        bound.invoke({"who": ""}, "not a config")


def test_get_graph_of_a_tool_agent_and_its_dot_escapes_names():
    app = agent({"role": "assistant", "content": "", "id": "x"})
    graph = app.get_graph()
    assert graph.nodes["tools"].metadata == {"__tools": ["add"]}
    assert (graph.first_node().id, graph.last_node().id) == ("__start__", "__end__")
    odd = StateGraph(Chat).add_node('say "<hi>"', lambda s: {}).add_edge(START, 'say "<hi>"')
    dot = odd.compile().get_graph().to_dot()
    assert 'say \\"<hi>\\"' in dot and "<<" not in dot


def test_import_nbgraph_loads_no_langchain_and_prebuilt_names_load_on_use():
    code = (
        "import json, sys\n"
        "import nbgraph\n"
        "before = 'langchain_core' in sys.modules\n"
        "from nbgraph import ToolNode, tools_condition\n"
        "print(json.dumps([before, 'langchain_core' in sys.modules, ToolNode.__module__]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout) == [False, True, "nbgraph.prebuilt.tool_node"]
    assert nbgraph.ToolNode is ToolNode and nbgraph.tools_condition is tools_condition


class Profile(TypedDict):
    messages: Annotated[list, add_messages]
    name: str


def _profile_app():
    @tool
    def set_name(name: str, tool_call_id: Annotated[str, InjectedToolCallId]):
        """Set the user's name."""
        answer = ToolMessage("ok", tool_call_id=tool_call_id)
        return Command(update={"name": name, "messages": [answer]})

    return StateGraph(Profile).add_node(ToolNode([set_name])).add_edge(START, "tools").compile()


def test_the_record_shows_the_field_a_tool_updated_through_command_as_the_tool_nodes_write():
    call = {"name": "set_name", "args": {"name": "ada"}, "id": "c1"}
    run = _profile_app().run({"messages": [AIMessage("", tool_calls=[call], id="a1")], "name": ""})
    assert run.output["name"] == "ada"
    effects = run.effects[run.effects["step"] == 1]
    by_field = {row["field"]: row for _, row in effects.iterrows()}
    assert set(by_field) == {"name", "messages"}
    assert list(by_field["name"]["writers"]) == ["tools"]
    assert (by_field["name"]["before"], by_field["name"]["after"]) == ("", "ada")
    ((writer, written),) = by_field["messages"]["writes"]
    assert writer == "tools" and [(m.content, m.name) for m in written] == [("ok", "set_name")]


def test_a_tool_node_has_an_async_form_the_engine_runs_in_an_async_run():
    @tool
    async def where(x: int) -> str:
        """Say which loop runs it."""
        return str(id(asyncio.get_running_loop()))

    app = StateGraph(Chat).add_node(ToolNode([where])).add_edge(START, "tools").compile()
    assert app.spec.nodes["tools"].afn is not None and not app.spec.nodes["tools"].is_async
    call = {"name": "where", "args": {"x": 1}, "id": "c1"}

    async def go():
        out = await app.ainvoke({"messages": [AIMessage("", tool_calls=[call], id="a1")]})
        return out["messages"][-1].content, str(id(asyncio.get_running_loop()))

    ran_on, loop = asyncio.run(go())
    assert ran_on == loop  # gathered on the run's own event loop, not a thread's


def test_the_injection_markers_are_exported_from_nbgraph_prebuilt():
    import langchain_core.tools

    import nbgraph.prebuilt as prebuilt

    assert prebuilt.InjectedToolCallId is langchain_core.tools.InjectedToolCallId
    assert {"InjectedState", "InjectedStore", "ToolRuntime"} <= set(prebuilt.__all__)
    assert issubclass(prebuilt.InjectedState, langchain_core.tools.InjectedToolArg)


def test_messages_state_is_a_typed_dict_pydantic_takes_and_keeps_messages_as_they_are():
    import pydantic

    from nbgraph import MessagesState

    message = AIMessage("hi", id="a1")
    state = pydantic.TypeAdapter(MessagesState).validate_python({"messages": [message]})
    assert state["messages"][0] is message
