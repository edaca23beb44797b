"""The run log: every step's writes kept, state rebuilt on demand, reducer effects per field."""

import operator
from typing import Annotated, ClassVar, TypedDict

from nbgraph import END, MISSING, START, Mutation, StateGraph
from nbgraph.engine.core.runlog import initial_values, replay_step


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
    log = app.last_log
    values = initial_values(log.graph)
    for step in log.steps:  # replaying the recorded writes gives what every node saw
        for task in step.tasks[:1] if step.step == 0 else step.tasks:
            assert step.step == 0 or values in seen[task.node], (step.step, task.node)
        values = replay_step(log.graph, values, step)
    assert values == app.invoke({"count": 0, "log": [], "status": "init", "big": list(range(100))})


def test_untouched_fields_are_not_in_any_step_record():
    app = recording_app({})
    app.invoke({"count": 0, "log": [], "status": "x", "big": list(range(10_000))})
    written = {c.field for step in app.last_log.steps[1:] for c in step.changes}
    assert "big" not in written


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
