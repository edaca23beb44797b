"""The bounds a replay from a file keeps (docs/VALUES.md, "What loading a file may cost"),
decided in one place, `nbgraph.reducers.FileReducer`; and a growing text replayed for
`run.effects` as one trail (linear), its values the same as the run's."""

import enum
import json
import operator
import re
import time
from typing import Annotated, Any, TypedDict

import pytest

from nbgraph import END, START, Run, StateGraph
from nbgraph.errors import ReplayLimitError
from nbgraph.record.files.serialize import RunFileError
from nbgraph.reducers import REPEAT_LIMIT, FileReducer, replay_budget, units


class Count(enum.IntEnum):
    BIG = 2_000_000


def test_a_repeat_count_of_any_integer_type_is_bounded():
    mul = FileReducer(operator.mul, "a")
    np = pytest.importorskip("numpy")
    for count in (2_000_000, Count.BIG, re.RegexFlag(2_000_000), np.int64(2_000_000)):
        with pytest.raises(ReplayLimitError, match=f"field 'a'.*{REPEAT_LIMIT:,}"):
            mul("x" * 100, count)
        with pytest.raises(ReplayLimitError):
            mul(count, ["x"] * 100)
    assert mul("ab", Count.BIG - 1_999_998) == "abab"
    assert mul(6, 7) == 42


def test_numpy_broadcasting_and_matmul_are_counted_before_they_allocate():
    np = pytest.importorskip("numpy")
    column, row = np.zeros((8000, 1), bool), np.zeros((1, 8000), bool)
    for function in (operator.add, operator.mul, operator.matmul):
        with pytest.raises(ReplayLimitError, match="64,000,000 units"):
            FileReducer(function, "a")(column, row)
    same = FileReducer(operator.add, "a")(np.ones(3), np.ones(3))
    assert same.tolist() == [2.0, 2.0, 2.0]
    assert FileReducer(operator.matmul, "a")(np.ones((2, 3)), np.ones((3, 2))).shape == (2, 2)


def test_a_load_does_work_linear_in_what_it_replays():
    add = FileReducer(operator.add, "a")
    with replay_budget(), pytest.raises(ReplayLimitError, match="work a file's replay may do"):
        value: Any = ()
        for _ in range(5000):  # a 1,000-item tuple copied again and again: quadratic
            value = add(value, tuple(range(1000)))
    with replay_budget():
        value = ()
        for _ in range(100):
            value = add(value, tuple(range(100)))
    assert units(value) == 10_000


class _Text(TypedDict):
    text: Annotated[str, operator.add]
    n: int


def _growing(steps: int, chunk: int):
    app = (
        StateGraph(_Text)
        .add_node("step", lambda s: {"text": str(s["n"] % 10) * chunk, "n": s["n"] + 1})
        .add_edge(START, "step")
        .add_conditional_edges("step", lambda s: END if s["n"] >= steps else "step")
        .compile()
    )
    return app.run({"text": "", "n": 0}, {"recursion_limit": steps + 10})


def test_a_growing_text_is_one_trail_in_the_effects_with_the_runs_values():
    run = _growing(300, 5000)
    started = time.perf_counter()
    rows = [e for e in run.effect_list if e.field == "text"]
    assert time.perf_counter() - started < 2  # (each step copying the text: 300 x 0.75 MB)
    assert rows[150].after == run.state_at(rows[150].step)["text"]
    assert rows[-1].after == run.output["text"] and len(rows[-1].after) == 1_500_000
    assert rows[151].before == rows[150].after and rows[151].changed
    loaded = Run.from_json(run.to_json())
    assert [e.after for e in loaded.effect_list if e.field == "text"][-1] == run.output["text"]


def test_a_file_past_the_work_bound_names_step_field_and_bound_and_loads_with_its_graph():
    class Product(TypedDict):
        a: Annotated[Any, operator.mul]

    app = (
        StateGraph(Product).add_node("n", lambda s: {"a": 3}).add_edge(START, "n")
        .add_edge("n", END).compile()
    )  # fmt: skip
    doc = json.loads(app.run({"a": 1}).to_json())
    doc["run"]["steps"][1]["tasks"][0]["writes"] = [["a", int("7" * 600)]] * 300
    text = json.dumps(doc)
    with pytest.raises(RunFileError, match=r"step 1, field 'a': mul would pass the work"):
        Run.from_json(text)
    loaded = Run.from_json(text, graph=app)  # (its reducers are the program's own)
    assert loaded.effect_list[-1].after == int("7" * 600) ** 300


def test_a_mutation_after_a_growing_text_sees_the_text():
    from nbgraph.types import Mutation

    class Upper(Mutation):
        field = "text"

        def apply(self, value):
            return value.upper()

    def step(state):
        if state["n"] == 3:
            return {"text": Upper(), "n": 4}
        return {"text": "x" * 5000, "n": state["n"] + 1}

    app = (
        StateGraph(_Text).add_node("step", step).add_edge(START, "step")
        .add_conditional_edges("step", lambda s: END if s["n"] >= 6 else "step").compile()
    )  # fmt: skip
    run = app.run({"text": "", "n": 0})
    afters = [e.after for e in run.effect_list if e.field == "text"]
    assert afters[3] == "x" * 15_000 and afters[4] == "X" * 15_000
    assert afters[-1] == "X" * 15_000 + "x" * 10_000
