"""Answering a paused run from the notebook (`Run.answer`, what the inspector's answer panel
calls) leaves the thread as LangGraph's own resume does: each program pauses at
`interrupt()`, is answered — on LangGraph with `invoke(Command(resume=...), config)`, on
nbgraph with `run.answer(...)` on the paused run — and the thread's state, what runs next,
the questions still waiting and the checkpoint history are compared after every answer."""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

import pytest

from tests.support.harness import Ids, same

pytestmark = pytest.mark.langgraph

CONFIG = {"configurable": {"thread_id": "t"}}


class S(TypedDict, total=False):
    draft: str
    log: Annotated[list, operator.add]


def observed(api: Any, app: Any, ids: Ids) -> dict[str, Any]:
    state = app.get_state(CONFIG)
    history = [(h.metadata["step"], h.metadata["source"]) for h in app.get_state_history(CONFIG)]
    return {
        "values": state.values,
        "next": state.next,
        "asked": sorted((ids(i.id), repr(i.value)) for i in state.interrupts),
        "history": history,
    }


def answering(api: Any, start: Any, answers: list) -> list:
    """Run `start(api)` (an app and its input), then give `answers` one by one: each a value,
    or `("by id", node, value)` answering the question `node` asked by its interrupt id."""
    app, graph_input = start(api)
    ids = Ids()
    seen = []
    if api.lib == "nbgraph":
        run = app.run(graph_input, CONFIG)
    else:
        app.invoke(graph_input, CONFIG)
    seen.append(observed(api, app, ids))
    for answer in answers:
        if isinstance(answer, tuple):  # by the interrupt id of the question `node` asks
            _, node, value = answer
            waiting = app.get_state(CONFIG).tasks
            asked = next(i.id for t in waiting if t.name == node for i in t.interrupts)
            answer = {asked: value}
        if api.lib == "nbgraph":
            run = run.answer(answer)  # the thread so far, as the inspector shows it
            assert run.status == ("interrupted" if app.get_state(CONFIG).next else "done")
            if run.status == "done":
                assert run.output == app.get_state(CONFIG).values
        else:
            app.invoke(api.Command(resume=answer), CONFIG)
        seen.append(observed(api, app, ids))
    return seen


def reviewed_post(api: Any) -> tuple[Any, Any]:
    """write, then review asks until approved (revise in between), then publish."""

    def review(state: S) -> dict:
        verdict = api.interrupt({"question": "publish?", "draft": state["draft"]})
        return {"log": [f"review: {verdict}"]}

    app = (
        api.StateGraph(S)
        .add_node("write", lambda s: {"draft": "v1", "log": ["write"]})
        .add_node("review", review)
        .add_node("revise", lambda s: {"draft": s["draft"] + "+", "log": ["revise"]})
        .add_node("publish", lambda s: {"log": [f"publish {s['draft']}"]})
        .add_edge(api.START, "write")
        .add_edge("write", "review")
        .add_conditional_edges(
            "review", lambda s: "publish" if s["log"][-1] == "review: ok" else "revise"
        )
        .add_edge("revise", "review")
        .add_edge("publish", api.END)
        .compile(checkpointer=api.saver())
    )
    return app, {"log": []}


def two_askers(api: Any) -> tuple[Any, Any]:
    """Two parallel nodes ask at once; `join` runs when both are answered."""
    graph = api.StateGraph(S)
    for name in ("p", "q"):
        graph.add_node(name, lambda s, n=name: {"log": [f"{n}={api.interrupt(n + '?')}"]})
        graph.add_edge(api.START, name)
    graph.add_node("join", lambda s: {"log": ["join"]}).add_edge(["p", "q"], "join")
    return graph.compile(checkpointer=api.saver()), {"log": []}


PROGRAMS = {
    "one question, answered twice over a loop": (reviewed_post, ["again", "ok"]),
    "a structured answer": (reviewed_post, [{"verdict": "no", "why": ["short"]}, "ok"]),
    "two questions, by id one at a time": (two_askers, [("by id", "q", "Q"), ("by id", "p", 1)]),
    "two questions, both at once": (two_askers, []),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_answering_the_run_resumes_the_thread_as_langgraph_does(name: str) -> None:
    start, answers = PROGRAMS[name]
    same(answering, start, answers)


def test_both_questions_answered_in_one_go_by_id() -> None:
    def program(api: Any) -> list:
        app, graph_input = two_askers(api)
        ids = Ids()
        run = app.run(graph_input, CONFIG) if api.lib == "nbgraph" else None
        if run is None:
            app.invoke(graph_input, CONFIG)
        answer = {i.id: f"to {t.name}" for t in app.get_state(CONFIG).tasks for i in t.interrupts}
        if run is not None:
            assert run.answer(answer).status == "done"
        else:
            app.invoke(api.Command(resume=answer), CONFIG)
        return observed(api, app, ids)

    langgraph, _ = same(program)
    assert sorted(langgraph["values"]["log"]) == ["join", "p=to p", "q=to q"]
