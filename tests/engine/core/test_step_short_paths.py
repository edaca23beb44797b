"""The engine's short paths for the common step (issue 20): a lone task, a dict output, a
str route, a router's view of a plain overwrite. Each must behave as the general path:
these tests fail if a short path shares a value with the record, skips a reducer, or
reads what a write should have hidden."""

from __future__ import annotations

import operator
from typing import Annotated, TypedDict

from nbgraph import END, START, Overwrite, StateGraph
from nbgraph.isolation import Pending, StateView


class S(TypedDict):
    items: list  # no reducer: a plain overwrite
    total: Annotated[int, operator.add]
    log: Annotated[list, "append"]


def test_a_router_changing_a_written_list_changes_neither_the_state_nor_the_record() -> None:
    def node(state: S) -> dict:
        return {"items": [1, 2], "total": 1, "log": ["a"]}

    def router(state: S) -> str:
        state["items"].append(99)  # the router's own copy
        state["log"].append("router")
        return END

    app = StateGraph(S).add_node("a", node).add_edge(START, "a")
    app = app.add_conditional_edges("a", router).compile()
    out = app.invoke({"items": [], "total": 0, "log": []})
    assert out == {"items": [1, 2], "total": 1, "log": ["a"]}
    task = app.last_log.steps[-1].tasks[0]
    assert task.writes == [("items", [1, 2]), ("total", 1), ("log", ["a"])]


def test_a_router_sees_reducers_overwrites_and_repeated_writes_applied() -> None:
    seen: list[dict] = []

    def node(state: S) -> list:
        from nbgraph import Command

        return [
            Command(update={"total": 5, "items": [7]}),
            Command(update={"total": Overwrite(40), "log": ["b"]}),
        ]

    def router(state: S) -> str:
        seen.append(dict(state))
        return END

    app = StateGraph(S).add_node("a", node).add_edge(START, "a")
    app = app.add_conditional_edges("a", router).compile()
    out = app.invoke({"items": [], "total": 1, "log": ["x"]})
    assert seen == [{"items": [7], "total": 40, "log": ["x", "b"]}] and out == seen[0]


def test_a_list_a_node_returned_and_changes_later_is_not_the_states_or_the_records() -> None:
    held: list[int] = []

    def node(state: S) -> dict:
        held.append(len(held))  # changes what it returned the step before
        return {"items": held, "log": held}

    def again(state: S) -> str:
        return END if len(state["log"]) >= 6 else "a"

    app = StateGraph(S).add_node("a", node).add_edge(START, "a")
    app = app.add_conditional_edges("a", again).compile()
    out = app.invoke({"items": [], "total": 0, "log": []})
    assert out["items"] == [0, 1, 2] and out["log"] == [0, 0, 1, 0, 1, 2]
    writes = [step.tasks[0].writes for step in app.last_log.steps[1:]]
    assert writes[0] == [("items", [0]), ("log", [0])]


def test_a_lone_task_routes_to_a_deferred_node_after_the_others() -> None:
    order: list[str] = []

    def visit(name: str):
        def run(state: S) -> dict:
            order.append(name)
            return {"log": [name]}

        return run

    app = (
        StateGraph(S)
        .add_node("a", visit("a"))
        .add_node("b", visit("b"))
        .add_node("late", visit("late"), defer=True)
        .add_edge(START, "a")
        .add_conditional_edges("a", lambda s: ["late", "b"])
        .add_edge("b", END)
        .compile()
    )
    out = app.invoke({"items": [], "total": 0, "log": []})
    assert order == ["a", "b", "late"] and out["log"] == ["a", "b", "late"]


def test_a_view_made_without_reads_takes_writes_and_pending_values() -> None:
    class Ten(Pending):
        __slots__ = ()

        def compute(self) -> int:
            return 10

    values = {"a": [1], "n": 2}
    view = StateView(values)
    view.set_pending("p", Ten())  # before any read: the copied-keys set is made here
    view["w"] = [5]
    assert view["p"] == 10 and view["w"] == [5] and view["n"] == 2
    view["a"].append(2)
    assert view["a"] == [1, 2] and values == {"a": [1], "n": 2}
    fresh = StateView(values)  # (dict's own __init__: a view of a view copies on read)
    assert StateView(fresh) == {"a": [1], "n": 2}


def test_a_router_changing_an_overwritten_list_changes_neither_the_state_nor_the_record() -> None:
    def node(state: S) -> list:
        from nbgraph import Command

        return [Command(update={"items": Overwrite([1])}), Command(update={"total": 1})]

    def router(state: S) -> str:
        state["items"].append(99)
        return END

    app = StateGraph(S).add_node("a", node).add_edge(START, "a")
    app = app.add_conditional_edges("a", router).compile()
    assert app.invoke({"items": [], "total": 0, "log": []})["items"] == [1]
    assert app.last_log.steps[-1].tasks[0].writes[0][1].value == [1]
