"""Tests for nbgraph/prebuilt/react_agent.py and agent_model.py beyond what LangGraph shows
(the differential programs are in tests/parity/test_langgraph_prebuilt_agent.py): the record
of an agent's run, its run file, clear errors, and `IsLastStep` as a managed field.
"""

from __future__ import annotations

from typing import Annotated

import pytest

pytest.importorskip("langchain_core")

from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool
from typing_extensions import TypedDict

from nbgraph import END, START, IsLastStep, RemainingSteps, Run, StateGraph
from nbgraph.prebuilt import AgentState, create_react_agent
from nbgraph.schema import read_schema
from tests.support.chat_models import ScriptedChatModel, tool_call


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def two_turn_model() -> ScriptedChatModel:
    asking = AIMessage("", tool_calls=[tool_call("add", {"a": 1, "b": 2}, "c1")])
    asking_twice = AIMessage(
        "",
        tool_calls=[
            tool_call("add", {"a": 3, "b": 3}, "c2"),
            tool_call("add", {"a": 4, "b": 4}, "c3"),
        ],
    )
    return ScriptedChatModel(replies=[asking, asking_twice, "3, 6 and 8"])


QUESTION = {"messages": [("user", "some sums")]}


@pytest.mark.parametrize("version", ["v1", "v2"])
def test_the_run_record_shows_the_agent_loop(version):
    """The steps alternate agent / tools (v2: one tools task per call, each a `Send`), and
    every step's effect is the messages reducer appending what its tasks wrote."""
    app = create_react_agent(two_turn_model(), [add], version=version)
    run = app.run(QUESTION)
    assert run.status == "done"
    steps = run.steps
    by_step = steps.groupby("step")["node"].apply(list).tolist()
    calls = [["tools"], ["tools", "tools"]] if version == "v2" else [["tools"], ["tools"]]
    assert by_step == [["agent"], calls[0], ["agent"], calls[1], ["agent"]]
    kinds = steps[steps.node == "tools"].kind.unique().tolist()
    assert kinds == (["send"] if version == "v2" else ["edge"])
    effects = [e for e in run.effect_list if e.step > 0]
    assert {e.field for e in effects} == {"messages"}
    assert all(e.reducer == "append_messages" and e.changed for e in effects)
    tool_step = effects[3]  # the tools' answers to the second model call
    assert tool_step.writers == by_step[3]
    answers = [m for _, written in tool_step.writes for m in written]
    assert [(type(m), m.content, m.tool_call_id) for m in answers] == [
        (ToolMessage, "6", "c2"),
        (ToolMessage, "8", "c3"),
    ]
    assert tool_step.after[-2:] == answers
    assert run.output["messages"][-1].content == "3, 6 and 8"


def test_an_agent_run_file_reads_back_with_its_steps_and_messages():
    app = create_react_agent(two_turn_model(), [add])
    run = app.run(QUESTION)
    back = Run.from_json(run.to_json(), graph=app)
    assert back.steps[["step", "node", "kind"]].equals(run.steps[["step", "node", "kind"]])
    assert [m.content for m in back.output["messages"]] == [
        m.content for m in run.output["messages"]
    ]


def test_the_drawing_of_an_agent_run_counts_the_loop():
    app = create_react_agent(two_turn_model(), [add])
    source = app.run(QUESTION).draw().source
    assert 'label="agent\\nran ×3"' in source
    assert 'label="tools\\nran ×3"' in source
    assert "tools Send ×3" in source


def test_a_prompt_of_the_wrong_kind_is_refused_naming_it():
    with pytest.raises(ValueError, match=r"`prompt` must be .* got 42 \(a int\)"):
        create_react_agent(ScriptedChatModel(), [add], prompt=42)


def test_an_async_model_function_in_a_sync_run_says_what_to_do():
    async def choose(state, runtime):
        return ScriptedChatModel(replies=["hi"])

    app = create_react_agent(choose, [])
    with pytest.raises(TypeError, match=r"'agent' is async.*ainvoke"):
        app.invoke(QUESTION)


def test_a_structured_response_needs_a_chat_model():
    def choose(state, runtime):
        return lambda messages: AIMessage("not a chat model")

    class Answer(TypedDict):
        text: str

    app = create_react_agent(choose, [], response_format=Answer)
    with pytest.raises(TypeError, match="structured response needs a chat model"):
        app.invoke(QUESTION)


def test_is_last_step_is_a_managed_field():
    class State(TypedDict):
        log: list
        last: IsLastStep
        left: RemainingSteps

    problems: list[str] = []
    fields = read_schema(State, problems=problems).fields
    assert not problems
    assert fields["last"].managed and fields["left"].managed and not fields["log"].managed
    seen = []

    def node(state):
        seen.append((state["left"], state["last"]))
        return {"log": [*state["log"], 1]}

    def again(state):
        return "node" if len(state["log"]) < 3 else END

    app = StateGraph(State).add_node("node", node).add_edge(START, "node")
    app = app.add_conditional_edges("node", again).compile()
    out = app.invoke({"log": []}, {"recursion_limit": 4})
    assert seen == [(3, False), (2, False), (1, True)]
    assert out == {"log": [1, 1, 1]}  # (managed fields are never in the output)


def test_agent_state_is_usable_in_a_pydantic_signature():
    """`AgentState` is a `typing_extensions.TypedDict`: pydantic takes it on Python 3.11."""
    import pydantic

    adapter = pydantic.TypeAdapter(Annotated[AgentState, "state"])
    assert adapter.validate_python({"messages": []}) == {"messages": []}
