"""Answering a paused run from code (`nbgraph/notebook/answer.py`: `Run.questions`,
`Run.answer`, `Run.answer_problem`): the answer resumes the thread through the app, and the
run returned is the thread so far — the paused run's steps, then the resumed ones — with the
same states a run that was never paused would show."""

from __future__ import annotations

import operator
from typing import Annotated, TypedDict

import pytest

from nbgraph import START, Command, StateGraph, interrupt
from nbgraph.checkpoint import MemorySaver
from nbgraph.notebook.answer import AnswerError, joined


class S(TypedDict, total=False):
    x: int
    log: Annotated[list, operator.add]


def asking_app(saver: MemorySaver | None = None):
    def ask(state: S) -> dict:
        return {"log": [f"ask={interrupt({'q': 'ok?', 'x': state['x']})}"]}

    return (
        StateGraph(S)
        .add_node("a", lambda s: {"x": s["x"] + 1, "log": ["a"]})
        .add_node("ask", ask)
        .add_node("c", lambda s: {"x": s["x"] + 100, "log": ["c"]})
        .add_edge(START, "a")
        .add_edge("a", "ask")
        .add_edge("ask", "c")
        .compile(checkpointer=saver or MemorySaver())
    )


def two_questions_app():
    return (
        StateGraph(S)
        .add_node("p", lambda s: {"log": [f"p={interrupt('name?')}"]})
        .add_node("q", lambda s: {"log": [f"q={interrupt({'pick': [1, 2]})}"]})
        .add_edge(START, "p")
        .add_edge(START, "q")
        .compile(checkpointer=MemorySaver())
    )


CONFIG = {"configurable": {"thread_id": "t"}}


def test_a_paused_run_lists_its_question_and_the_answer_grows_the_run():
    app = asking_app()
    run = app.run({"x": 1, "log": []}, CONFIG)
    assert run.status == "interrupted" and run.answer_problem is None
    [question] = run.questions
    assert (question.node, question.task_id, question.value) == (
        "ask",
        "2:0:ask",
        {"q": "ok?", "x": 2},
    )
    assert question.id == app.get_state(CONFIG).interrupts[0].id
    grown = run.answer("yes")
    assert grown.status == "done" and grown.output == {"x": 102, "log": ["a", "ask=yes", "c"]}
    assert [s.step for s in grown.log.steps] == [0, 1, 2, 3]
    assert [[t.node for t in s.tasks] for s in grown.log.steps[1:]] == [["a"], ["ask"], ["c"]]
    assert grown.state_at(1) == run.state_at(1)  # the paused run's steps, unchanged
    assert grown.state_at(2) == {"x": 2, "log": ["a", "ask=yes"]}
    assert grown.output == app.get_state(CONFIG).values  # what the thread holds
    assert grown.questions == [] and "not paused" in grown.answer_problem
    with pytest.raises(AnswerError, match="not paused at an interrupt"):
        grown.answer("again")


def test_the_thread_so_far_matches_a_run_that_was_never_paused():
    """The joined record replays to the same states as the same program answered at once."""
    app = asking_app()
    grown = app.run({"x": 1, "log": []}, CONFIG).answer("yes")
    straight = (
        StateGraph(S)
        .add_node("a", lambda s: {"x": s["x"] + 1, "log": ["a"]})
        .add_node("ask", lambda s: {"log": ["ask=yes"]})
        .add_node("c", lambda s: {"x": s["x"] + 100, "log": ["c"]})
        .add_edge(START, "a")
        .add_edge("a", "ask")
        .add_edge("ask", "c")
        .compile()
        .run({"x": 1, "log": []})
    )
    assert grown.compare(straight).empty
    assert list(grown.effects["field"]) == list(straight.effects["field"])


def test_several_questions_are_answered_by_id_and_the_rest_keep_waiting():
    app = two_questions_app()
    run = app.run({"log": []}, CONFIG)
    asked = {q.node: q for q in run.questions}
    assert sorted(asked) == ["p", "q"] and asked["q"].value == {"pick": [1, 2]}
    half = run.answer("Ada", interrupt_id=asked["p"].id)
    assert half.status == "interrupted" and [q.node for q in half.questions] == ["q"]
    assert half.questions[0].id == asked["q"].id
    done = half.answer({asked["q"].id: 2})
    assert done.status == "done" and sorted(done.output["log"]) == ["p=Ada", "q=2"]
    assert done.output == app.get_state(CONFIG).values


def test_bad_answers_and_runs_that_cannot_be_answered_say_why():
    app = two_questions_app()
    run = app.run({"log": []}, CONFIG)
    with pytest.raises(AnswerError, match="interrupt_id 'nope' is not one this run waits on"):
        run.answer("x", interrupt_id="nope")
    run.answer({q.id: "a" for q in run.questions})
    assert "has moved on" in run.answer_problem  # another call resumed the thread
    with pytest.raises(AnswerError, match="moved on"):
        run.answer({q.id: "b" for q in run.questions})
    plain = StateGraph(S).add_node("a", lambda s: {"x": 1}).add_edge(START, "a").compile()
    assert "not paused" in plain.run({"x": 0}).answer_problem


def test_a_breakpoint_is_not_a_question():
    app = (
        StateGraph(S)
        .add_node("a", lambda s: {"x": 1})
        .add_edge(START, "a")
        .compile(checkpointer=MemorySaver(), interrupt_before=["a"])
    )
    run = app.run({"x": 0}, CONFIG)
    assert run.status == "interrupted" and run.questions == []
    assert "breakpoint" in run.answer_problem


def test_joined_keeps_the_resumed_call_s_end_and_both_calls_store_ops():
    app = asking_app()
    run = app.run({"x": 1, "log": []}, CONFIG)
    resumed = app.run(Command(resume="no"), CONFIG)
    log = joined(run.log, resumed.log)
    assert log.status == "done" and log.final == resumed.log.final
    assert log.input == run.log.input and [s.step for s in log.steps] == [0, 1, 2, 3]
    assert run.log.steps[-1].applied is False and log.steps[2] is resumed.log.steps[1]
