"""Approving tool calls at a breakpoint (`Run.review_calls`, what the inspector's answer panel
does for a run paused before its tools node) does what LangGraph's own programs do there:
approve — `invoke(None)`; edit — `update_state` with the AI message (same id) and its edited
calls, then `invoke(None)`; reject — a tool message per call written `as_node="tools"`, then
`invoke(None)`. Each program runs an agent to its breakpoint; LangGraph does the steps by
hand, nbgraph through `run.review_calls(decisions)`; the thread's messages, what runs next
and its checkpoints are compared."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langchain_core.tools import tool

from nbgraph.errors import NbgraphError
from tests.support.harness import Ids, same

pytestmark = pytest.mark.langgraph

CONFIG = {"configurable": {"thread_id": "t"}}
CALLS = [
    {"name": "search", "args": {"query": "cats"}, "id": "c1", "type": "tool_call"},
    {"name": "count", "args": {"word": "cats", "times": 2}, "id": "c2", "type": "tool_call"},
]


@tool
def search(query: str) -> str:
    """Search the web."""
    return f"found {query}"


@tool
def count(word: str, times: int) -> str:
    """Count a word."""
    return f"{word} x{times}"


def agent_app(api: Any) -> Any:
    turns = iter([AIMessage("", tool_calls=CALLS, id="m1"), AIMessage("done", id="m2")])
    return (
        api.StateGraph(api.MessagesState)
        .add_node("agent", lambda s: {"messages": [next(turns)]})
        .add_node("tools", api.ToolNode([search, count]))
        .add_edge(api.START, "agent")
        .add_conditional_edges("agent", api.tools_condition)
        .add_edge("tools", "agent")
        .compile(checkpointer=api.saver(), interrupt_before=["tools"])
    )


def rejection(call: dict, reason: str) -> dict:
    """The tool message a rejected call gets (the text `Run.review_calls` writes)."""
    return {
        "role": "tool",
        "content": f"The user rejected the call to {call['name']}: {reason}",
        "tool_call_id": call["id"],
        "name": call["name"],
    }


def by_hand(api: Any, app: Any, decisions: list[dict]) -> None:
    """What a LangGraph program does at the breakpoint for `decisions`."""
    kinds = [d["type"] for d in decisions]
    if set(kinds) == {"reject"}:
        reasons = [d.get("message") or "no reason given" for d in decisions]
        answers = [rejection(c, r) for c, r in zip(CALLS, reasons, strict=True)]
        app.update_state(CONFIG, {"messages": answers}, as_node="tools")
    elif "edit" in kinds:
        message = app.get_state(CONFIG).values["messages"][-1]
        calls = [
            {**c, "args": d["edited_action"]["args"]} if d["type"] == "edit" else c
            for c, d in zip(message.tool_calls, decisions, strict=True)
        ]
        app.update_state(CONFIG, {"messages": [message.model_copy(update={"tool_calls": calls})]})
    app.invoke(None, CONFIG)


def reviewing(api: Any, decisions: list[dict]) -> dict:
    app = agent_app(api)
    graph_input = {"messages": [("user", "go")]}
    if api.lib == "nbgraph":
        run = app.run(graph_input, CONFIG)
        pending = run.pending_calls
        assert pending.node == "tools" and [c["id"] for c in pending.calls] == ["c1", "c2"]
        grown = run.review_calls(decisions)
        assert grown.output == app.get_state(CONFIG).values  # the thread's record
    else:
        app.invoke(graph_input, CONFIG)
        by_hand(api, app, decisions)
    state, ids = app.get_state(CONFIG), Ids()
    return {
        "messages": [
            (m.type, m.content, [(c["name"], c["args"]) for c in getattr(m, "tool_calls", [])])
            for m in state.values["messages"]
        ],
        "answered": [getattr(m, "tool_call_id", None) for m in state.values["messages"]],
        "next": state.next,
        "history": [
            (
                h.metadata["step"],
                h.metadata["source"],
                ids(h.config["configurable"]["checkpoint_id"]),
            )
            for h in app.get_state_history(CONFIG)
        ],
    }


APPROVE, REJECT = {"type": "approve"}, {"type": "reject"}


def edit(args: dict, name: str = "search") -> dict:
    return {"type": "edit", "edited_action": {"name": name, "args": args}}


PROGRAMS = {
    "approve both": [APPROVE, APPROVE],
    "edit one, approve the other": [edit({"query": "dogs"}), APPROVE],
    "edit both": [edit({"query": "dogs"}), edit({"word": "dogs", "times": 3}, "count")],
    "reject both, one with a reason": [{"type": "reject", "message": "not now"}, REJECT],
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_reviewing_calls_at_a_breakpoint_does_what_langgraph_programs_do(name: str) -> None:
    same(reviewing, PROGRAMS[name])


def test_decisions_that_do_not_fit_the_calls_are_refused_by_name() -> None:
    from nbgraph.notebook.answer import AnswerError
    from tests.support.harness import api_for

    app = agent_app(api_for("nbgraph"))
    run = app.run({"messages": [("user", "go")]}, CONFIG)
    for decisions, says in (
        ([APPROVE], "one decision per tool call, in order: 2 for ['search', 'count']"),
        ([APPROVE, {"type": "maybe"}], "Decision 2 (tool call 'count') must be"),
        ([{"type": "edit"}, APPROVE], "Decision 1 (tool call 'search') edits"),
        ([REJECT, APPROVE], "Reject every tool call or none"),
    ):
        with pytest.raises(AnswerError) as caught:
            run.review_calls(decisions)
        assert says in str(caught.value) and isinstance(caught.value, NbgraphError)
    assert app.get_state(CONFIG).next == ("tools",)  # nothing was done
    assert run.answer_problem.startswith("This run stopped at a breakpoint")
    done = run.review_calls([APPROVE, APPROVE])
    assert done.pending_calls is None and done.status == "done"
