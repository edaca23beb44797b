"""The run log: every step's writes kept, state rebuilt on demand, reducer effects per field."""

import operator
from typing import Annotated, ClassVar, TypedDict

import pytest

from nbgraph import END, MISSING, START, Mutation, StateGraph


class S(TypedDict):
    count: Annotated[int, operator.add]
    log: Annotated[list, "append"]
    status: str
    big: list


def recording_app(seen: dict):
    def node(name: str, **extra):
        def run(state):
            seen.setdefault(name, []).append(dict(state))
            return {"count": 1, "log": [name], **extra}

        return run

    return (
        StateGraph(S)
        .add_node("a", node("a", status="A"))
        .add_node("b", node("b"))
        .add_node("c", node("c", status="C"))
        .add_edge(START, "a")
        .add_edge("a", "b")
        .add_edge("a", "c")
        .add_conditional_edges("c", lambda s: END if s["count"] >= 4 else "a")
        .compile()
    )


def test_rebuilt_state_equals_what_every_node_saw():
    seen: dict = {}
    app = recording_app(seen)
    app.invoke({"count": 0, "log": [], "status": "init", "big": list(range(100))})
    run = app.last_log
    for step in run.steps[1:]:
        before = run.values_after(step.step - 1)
        for task in step.tasks:
            assert before in seen[task.node], (step.step, task.node)
    assert run.values_after(run.steps[-1].step) == app.invoke(
        {"count": 0, "log": [], "status": "init", "big": list(range(100))}
    )


def test_untouched_fields_are_not_in_any_step_record():
    app = recording_app({})
    app.invoke({"count": 0, "log": [], "status": "x", "big": list(range(10_000))})
    written = {c.field for step in app.last_log.steps[1:] for c in step.changes}
    assert "big" not in written


def test_asking_for_a_step_the_run_does_not_have_names_it():
    app = recording_app({})
    app.invoke({"count": 3, "log": [], "status": "x", "big": []})
    with pytest.raises(ValueError, match="no step 99"):
        app.last_log.values_after(99)


class Add(Mutation):
    combined: ClassVar[list] = []

    def __init__(self, field: str, by: int) -> None:
        self.field, self.by = field, by

    def apply(self, value):
        return (0 if value is MISSING else value) + self.by

    def combine(self, other):
        Add.combined.append((self.by, other.by))
        return Add(self.field, self.by + other.by)


def test_consecutive_mutations_are_combined_but_recorded_as_written():
    class C(TypedDict):
        n: int

    app = (
        StateGraph(C)
        .add_node("a", lambda s: [Add("n", 1), Add("n", 2), Add("n", 3)])
        .add_edge(START, "a")
        .compile()
    )
    Add.combined.clear()
    assert app.invoke({"n": 10}) == {"n": 16}
    assert Add.combined == [(1, 2), (3, 3)]
    assert [m.by for _, m in app.last_log.steps[1].changes[0].writes] == [1, 2, 3]
