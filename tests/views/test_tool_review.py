"""Tool-call reviews (`nbgraph/views/panels/tool_review.py`) against their real consumer:
langchain's
`HumanInTheLoopMiddleware` in a `create_agent` run on LangGraph pauses with its review; the
answer `review_answer` writes for a person's decisions is resumed with, and the middleware
must do what the person decided (the edited call runs, the rejected one does not)."""

from __future__ import annotations

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from nbgraph.views.panels.tool_review import ReviewAnswerError, review_answer, review_of
from tests.support.scripted_model import ScriptedChatModel, calls, tool_call

pytestmark = pytest.mark.langgraph


def agent_paused(mode: str, ran: list, respond: bool = False):
    """An agent whose model calls search(query="cats") and send(to="bob"), both reviewed
    (send may only be approved or rejected), paused at its first review."""

    @tool
    def search(query: str) -> str:
        """Search."""
        ran.append(("search", query))
        return f"found {query}"

    @tool
    def send(to: str, text: str) -> str:
        """Send."""
        ran.append(("send", to))
        return "sent"

    model = ScriptedChatModel.of(
        [
            calls(
                tool_call("search", {"query": "cats"}, "c1"),
                tool_call("send", {"to": "bob", "text": "hi"}, "c2"),
            ),
            "done",
        ]
    )
    send_decisions = ["approve", "reject", "respond"] if respond else ["approve", "reject"]
    hitl = HumanInTheLoopMiddleware(
        interrupt_on={"search": True, "send": {"allowed_decisions": send_decisions}},
        interrupt_mode=mode,
    )
    agent = create_agent(model, [search, send], middleware=[hitl], checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": mode}}
    out = agent.invoke({"messages": [("user", "go")]}, config)
    return agent, config, out["__interrupt__"]


def tool_messages(out: dict) -> dict[str, str]:
    return {m.tool_call_id: m.content for m in out["messages"] if m.type == "tool"}


def test_a_batched_review_answered_with_an_edit_and_a_rejection():
    ran: list = []
    agent, config, [asked] = agent_paused("batched", ran)
    review = review_of(asked.value)
    assert review is not None and review.shape == "batched"
    assert [(a.name, a.args) for a in review.actions] == [
        ("search", {"query": "cats"}),
        ("send", {"to": "bob", "text": "hi"}),
    ]
    assert review.actions[1].allowed == ("approve", "reject")  # the middleware's config
    with pytest.raises(ReviewAnswerError, match=r"tool call 2 \('send'\).*allows"):
        review_answer(review, [("approve", None), ("edit", {"to": "eve"})])
    answer = review_answer(review, [("edit", {"query": "dogs"}), ("reject", "not now")])
    out = agent.invoke(Command(resume=answer), config)
    assert ran == [("search", "dogs")]  # the edited call ran; the rejected one did not
    said = tool_messages(out)
    assert "found dogs" in said["c1"] and "not now" in said["c2"]
    assert out["messages"][-1].content == "done"


def test_per_call_reviews_answered_one_by_one_by_interrupt_id():
    ran: list = []
    agent, config, asked = agent_paused("per_call", ran)
    assert [review_of(a.value).shape for a in asked] == ["per_call", "per_call"]
    # (the calls run in parallel: their questions come in either order)
    [search] = [a for a in asked if review_of(a.value).actions[0].name == "search"]
    first = review_answer(review_of(search.value), [("approve", None)])
    out = agent.invoke(Command(resume={search.id: first}), config)
    [left] = out["__interrupt__"]  # send still waits
    assert review_of(left.value).actions[0].name == "send" and ran == [("search", "cats")]
    second = review_answer(review_of(left.value), [("reject", "")])
    out = agent.invoke(Command(resume={left.id: second}), config)
    assert ran == [("search", "cats")] and "rejected" in tool_messages(out)["c2"]


def test_a_respond_decision_answers_in_the_tool_s_place():
    ran: list = []
    agent, config, [asked] = agent_paused("batched", ran, respond=True)
    review = review_of(asked.value)
    assert "respond" in review.actions[1].allowed
    answer = review_answer(review, [("approve", None), ("respond", "bob is away")])
    out = agent.invoke(Command(resume=answer), config)
    assert ran == [("search", "cats")] and tool_messages(out)["c2"] == "bob is away"


def test_langgraph_s_human_interrupt_gets_human_responses():
    request = {
        "action_request": {"action": "run_command", "args": {"command": "ls"}},
        "config": {
            "allow_ignore": True,
            "allow_respond": True,
            "allow_edit": True,
            "allow_accept": True,
        },
        "description": "check it",
    }
    review = review_of([request])
    assert review.shape == "human_interrupts" and review.actions[0].name == "run_command"
    assert review_answer(review, [("approve", None)]) == [{"type": "accept", "args": None}]
    assert review_answer(review, [("edit", {"command": "pwd"})]) == [
        {"type": "edit", "args": {"action": "run_command", "args": {"command": "pwd"}}}
    ]
    assert review_answer(review, [("reject", "no")]) == [{"type": "response", "args": "no"}]
    assert review_answer(review, [("reject", "")]) == [{"type": "ignore", "args": None}]
    one = review_of({**request, "config": {"allow_accept": True}})
    assert one.shape == "human_interrupt" and one.actions[0].allowed == ("approve",)
    assert review_answer(one, [("approve", None)]) == {"type": "accept", "args": None}


def test_other_values_are_not_reviews():
    for value in ("name?", {"question": "ok?"}, [1, 2], [], {"type": "tool_approval"}, None):
        assert review_of(value) is None
