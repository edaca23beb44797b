"""The inspector's answer panel (`nbgraph/views/panels/answer_panel.py`), headless: a run paused at
`interrupt()` shows its questions; an answer resumes the thread and the inspector shows the
run grown by the resumed steps; tool-call reviews get approve / edit / reject; bad answers
get a message naming the question and the field; everything shown is escaped."""

from __future__ import annotations

import json
import operator
from typing import Annotated, Any, TypedDict

from nbgraph import START, StateGraph, interrupt
from nbgraph.checkpoint import MemorySaver

EVIL = "<img src=x onerror=alert(1)>"
CONFIG = {"configurable": {"thread_id": "t"}}


class S(TypedDict, total=False):
    x: int
    log: Annotated[list, operator.add]


def paused(asks: dict[str, Any], then: bool = True):
    """A run paused at step 2: each node of `asks` interrupts with its value and logs the
    answer; `a` runs first, `c` after them."""
    graph = StateGraph(S).add_node("a", lambda s: {"x": 1, "log": ["a"]}).add_edge(START, "a")
    for node, value in asks.items():
        graph.add_node(node, lambda s, v=value, n=node: {"log": [(n, interrupt(v))]})
        graph.add_edge("a", node)
    if then:
        graph.add_node("c", lambda s: {"log": ["c"]}).add_edge(list(asks), "c")
    app = graph.compile(checkpointer=MemorySaver())
    return app, app.run({"x": 0, "log": []}, CONFIG)


def test_the_question_shows_escaped_and_an_answer_resumes_and_grows_the_run():
    app, run = paused({"ask": {"question": EVIL, "x": 1}})
    inspector = run.inspect()
    panel = inspector.answer_panel
    assert panel.box.layout.display == "" and len(panel.rows) == 1
    head = panel.rows[0].box.children[0].value
    assert "<b>ask</b> asks" in head and EVIL not in head and "&lt;img" in head
    assert panel.rows[0].mode.value == "JSON"  # a structured question: a JSON answer
    panel.rows[0].text.value = '{"ok": true, "note": "' + EVIL.replace('"', "'") + '"}'
    panel.button.click()
    grown = panel.last_run
    assert grown is inspector.run and grown.status == "done", panel.status.value
    assert inspector.steps == [0, 1, 2, 3] and inspector.step == 3  # the run grew, shown at its end
    assert grown.output["log"][1] == ("ask", {"ok": True, "note": EVIL.replace('"', "'")})
    assert grown.output == app.get_state(CONFIG).values
    assert "<b>Resumed</b>: 2 steps ran (done)" in panel.status.value
    assert panel.box.children == (panel.status,)  # nothing waits: what it did stays said
    assert EVIL not in inspector.state.value  # (the answer in the state panel, escaped)


def test_a_bad_answer_names_the_question_and_nothing_resumes():
    app, run = paused({"ask": {"x": 1}})
    inspector = run.inspect()
    panel = inspector.answer_panel
    panel.rows[0].text.value = "yes " + EVIL
    panel.button.click()
    status = panel.status.value
    assert "The answer to &#x27;ask&#x27; is not valid JSON" in status and EVIL not in status
    assert inspector.run is run and app.get_state(CONFIG).next == ("ask",)  # not resumed
    panel.rows[0].text.value = ""
    panel.button.click()
    assert "Write an answer" in panel.status.value
    panel.rows[0].mode.value = "text"  # the same words as text are a fine answer
    panel.rows[0].text.value = "yes " + EVIL
    panel.button.click()
    assert inspector.run.output["log"][1] == ("ask", "yes " + EVIL)


def test_several_questions_are_answered_by_interrupt_id_the_rest_keep_waiting():
    _, run = paused({"p": "name?", "q": "colour?"})
    inspector = run.inspect()
    panel = inspector.answer_panel
    assert [r.question.node for r in panel.rows] == ["p", "q"]
    assert all(r.question.id in r.box.children[0].value for r in panel.rows)
    assert panel.rows[0].mode.value == "text"  # a string question: a text answer
    panel.rows[1].text.value = "blue"
    panel.button.click()
    assert inspector.run.status == "interrupted", panel.status.value
    assert [r.question.node for r in panel.rows] == ["p"]  # q was answered, p still waits
    panel.rows[0].text.value = "Ada"
    panel.button.click()
    assert inspector.run.status == "done", panel.status.value
    assert sorted(map(tuple, inspector.run.output["log"][1:3])) == [("p", "Ada"), ("q", "blue")]


REVIEW = {
    "action_requests": [
        {"name": "search", "args": {"query": "cats"}, "description": "search " + EVIL},
        {"name": "send", "args": {"to": "bob", "text": "hi"}},
    ],
    "review_configs": [
        {"action_name": "search", "allowed_decisions": ["approve", "edit", "reject"]},
        {"action_name": "send", "allowed_decisions": ["approve", "reject"]},
    ],
}


def test_a_tool_call_review_is_approved_edited_or_rejected():
    _, run = paused({"review": REVIEW}, then=False)
    inspector = run.inspect()
    panel = inspector.answer_panel
    row = panel.rows[0]
    assert row.review is not None and [d.action.name for d in row.decisions] == ["search", "send"]
    assert "asks: a review of 2 tool calls" in row.box.children[0].value
    search, send = row.decisions
    assert list(search.pick.options) == ["approve", "edit", "reject"]
    assert list(send.pick.options) == ["approve", "reject"]  # as its review config allows
    shown = search.box.children[0].value
    assert "search(" in shown and EVIL not in shown and "&lt;img" in shown
    search.pick.value = "edit"
    assert search.args.layout.display == "" and json.loads(search.args.value) == {"query": "cats"}
    search.args.value = '{"qery": "dogs"}'  # a typo: an arg the tool call does not have
    send.pick.value = "reject"
    send.reason.value = "not now"
    panel.button.click()
    assert "unknown arg &#x27;qery&#x27;; its args are [&#x27;query&#x27;]" in panel.status.value
    assert inspector.run is run
    search.args.value = '{"query": "dogs"'  # not JSON
    panel.button.click()
    assert "edited args of tool call &#x27;search&#x27; are not valid JSON" in panel.status.value
    search.args.value = '{"query": "dogs"}'
    panel.button.click()
    assert inspector.run.status == "done", panel.status.value
    answer = inspector.run.output["log"][1][1]
    assert answer == {
        "decisions": [
            {"type": "edit", "edited_action": {"name": "search", "args": {"query": "dogs"}}},
            {"type": "reject", "message": "not now"},
        ]
    }


def test_a_review_needs_every_tool_call_decided():
    _, run = paused({"review": REVIEW}, then=False)
    panel = run.inspect().answer_panel
    panel.rows[0].decisions[0].pick.value = "approve"
    panel.button.click()
    assert "decide the tool call(s) [&#x27;send&#x27;] too" in panel.status.value


def test_a_run_that_cannot_be_resumed_shows_its_question_and_says_why():
    _, run = paused({"ask": "name?"})
    run.app = None  # (as a run read from a file)
    panel = run.inspect().answer_panel
    assert len(panel.rows) == 1 and panel.button.disabled
    assert "no app to resume it with" in panel.status.value


def test_a_run_not_paused_has_no_answer_panel():
    run = StateGraph(S).add_node("a", lambda s: {"x": 1}).add_edge(START, "a").compile().run({})
    panel = run.inspect().answer_panel
    assert panel.rows == [] and panel.box.layout.display == "none"
    assert panel.box.children == ()


def test_tool_calls_waiting_at_a_breakpoint_are_decided_in_the_panel():
    from langchain_core.messages import AIMessage
    from langchain_core.tools import tool

    from nbgraph import MessagesState
    from nbgraph.prebuilt import ToolNode, tools_condition

    @tool
    def search(query: str) -> str:
        """Search."""
        return f"found {query}"

    call = {"name": "search", "args": {"query": EVIL}, "id": "c1", "type": "tool_call"}
    turns = iter([AIMessage("", tool_calls=[call], id="m1"), AIMessage("done", id="m2")])
    app = (
        StateGraph(MessagesState)
        .add_node("agent", lambda s: {"messages": [next(turns)]})
        .add_node("tools", ToolNode([search]))
        .add_edge(START, "agent")
        .add_conditional_edges("agent", tools_condition)
        .add_edge("tools", "agent")
        .compile(checkpointer=MemorySaver(), interrupt_before=["tools"])
    )
    inspector = app.run({"messages": [("user", "go")]}, CONFIG).inspect()
    panel = inspector.answer_panel
    assert "Paused before tools: 1 tool call waits for approval" in panel.title.value
    [decision] = panel.rows[0].decisions
    assert (
        EVIL not in decision.box.children[0].value and "search(" in decision.box.children[0].value
    )
    decision.pick.value = "edit"
    decision.args.value = '{"query": "dogs", "page": 2}'
    panel.button.click()
    assert (
        "unknown arg &#x27;page&#x27;" in panel.status.value
        and inspector.run.status == "interrupted"
    )
    decision.args.value = '{"query": "dogs"}'
    panel.button.click()
    assert inspector.run.status == "done", panel.status.value
    said = [m.content for m in inspector.run.output["messages"]]
    assert said[-2:] == ["found dogs", "done"]
    assert [t.kind for t in inspector.run.log.steps[2].tasks] == ["update"]  # the edit, a step
    assert inspector.step == inspector.steps[-1] and "Resumed" in panel.status.value


def _descendants(widget) -> list:
    found = [widget]
    for child in getattr(widget, "children", ()):
        found += _descendants(child)
    return found


def test_the_panel_is_part_of_the_shown_inspector():
    _, run = paused({"ask": "why?"})
    inspector = run.inspect()
    assert inspector.answer_panel.box in _descendants(inspector)
    assert inspector.answer_panel.box.layout.display != "none"


def test_fixed_width_boxes_shrink_to_a_narrow_output():
    """The answer and fork panels' text boxes and pickers keep their width when there is room
    and never push a narrow (stacked) inspector into scrolling sideways."""
    _, run = paused({"ask": {"question": "why?", "x": 1}})
    inspector = run.inspect()
    widths = [  # wider than a third of the narrowest output seen (368 px in JupyterLab)
        widget for widget in _descendants(inspector)
        if str(getattr(getattr(widget, "layout", None), "width", "") or "").endswith("px")
        and int(widget.layout.width[:-2]) > 240
    ]  # fmt: skip
    assert len(widths) >= 4  # the answer box, the branch picker, the fork's as and value
    assert [w for w in widths if w.layout.max_width != "100%"] == []
