"""The views read a sealed run's steps from its columns: `run.steps`, `run.effects`, the
inspector's step list and the drawings' tally make no `StepLog`/`Task` for a flat step, and
say what they say when every step is kept as an object (`StepColumns.sealing` off).

Each program (as in `tests/engine/core/test_columns.py`) runs with its steps sealed as soon as they
can be and with none sealed; the views of a fresh record of each (nothing made before) must
agree, and the accessors of `engine.facts` (`common_steps`, `numbered_tasks`, `kept_tasks`,
`unapplied_positions`) must read as the objects do.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypedDict

import pytest

from nbgraph import END, START, MemorySaver, Run, StateGraph
from nbgraph.engine.core import columns
from nbgraph.engine.facts import (
    StepColumns,
    common_steps,
    kept_tasks,
    numbered_tasks,
    task_columns,
    task_tuples,
    unapplied_positions,
)
from nbgraph.types import interrupt
from tests.support.flat_loop import START_VALUES, S, tick


def chain(node: Callable, router: Callable, saver: Any = None) -> Callable[[], Any]:
    def make() -> Any:
        graph = StateGraph(S).add_node("a", node).add_edge(START, "a")
        graph = graph.add_conditional_edges("a", router)
        return graph.compile(checkpointer=saver() if saver else None)

    return make


def sealed_and_live(make: Callable[[], Any], call: Callable[[Any], Any]) -> Any:
    """`call(make())` with every step but the last two sealed as soon as it can be, and with
    none sealed (each kept as its object); assert the two agree."""
    results = []
    for sealing in (True, False):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(StepColumns, "sealing", sealing)
            patch.setattr(columns, "_BATCH", 2)
            results.append(call(make()))
    assert results[0] == results[1]
    return results[0]


def _made(steps: Any) -> int:
    """How many sealed steps a reader made as objects."""
    made = getattr(steps, "_made", None) or []
    return sum(step is not None for step in made)


def _views(run: Any) -> tuple:
    """What the views read of a fresh record of `run`, each before anything else is made."""
    log = run.log
    fresh = Run(log)
    steps_frame = fresh.steps.drop(columns=["duration"]).to_dict("records")
    effects = repr(Run(log).effect_list)
    inspector = Run(log).inspect()
    inspector.go(inspector.steps[len(inspector.steps) // 2])
    from nbgraph.views.drawings.overlay import _tally

    tally = _tally(Run(log))
    shown = (inspector.steps, inspector.failed_step, dict(inspector._runs), repr(tally))
    middle = inspector.steps[len(inspector.steps) // 2]
    fresh = Run(log)
    states = [repr(fresh.state_at(n)) for n in (middle, inspector.steps[-1], middle - 1, 3)]
    shown += (states, repr(inspector.effects_at(middle)), inspector.step_label.value)
    return steps_frame, effects, shown, _accessors(log.steps)


def _accessors(steps: Any) -> tuple:
    """The facts' accessors, checked against the objects."""
    plain = list(steps)
    common = list(common_steps(steps))
    for (number, node, writes, step), real in zip(common, plain, strict=True):
        assert number == real.step
        if step is None:  # (a common step read from the columns)
            assert (real.applied, real.cleared, len(real.tasks)) == (True, (), 1)
            assert (node, writes) == (real.tasks[0].node, real.tasks[0].writes)
        else:
            assert step is real
    assert [shape for _, shape, _ in numbered_tasks(steps, 1)] == [
        _shape(task) for step in plain[1:] for task in step.tasks
    ]
    assert [number for number, _, _ in numbered_tasks(steps)] == [
        step.step for step in plain for _ in step.tasks
    ]
    for start in (0, 1, len(plain) // 2):
        tuples = [(*r[:6], *r[8:10]) for r in task_tuples(steps, start)]
        found = task_columns(steps, start)
        assert [t is None for t in found.pop("task")] == [
            r[-1] is None for r in task_tuples(steps, start)
        ]
        assert list(zip(*found.values(), strict=True)) == tuples
    kept = {id(task) for task in kept_tasks(steps)}
    assert all(id(t) in kept for s in plain for t in s.tasks if t.subruns or t.error)
    assert unapplied_positions(steps) == [p for p, s in enumerate(plain) if not s.applied]
    return [(n, shape) for n, shape, _ in numbered_tasks(steps)], unapplied_positions(steps)


def _shape(task: Any) -> tuple:
    """A task as `numbered_tasks` gives its shape."""
    names = tuple(name for name, _ in task.writes)
    return (task.node, task.index, task.kind, task.triggers, task.routes, task.returned, names)


def viewed(input: Any = START_VALUES, config: Any = None) -> Any:
    def call(app: Any) -> Any:
        run = app.run(input, config)
        assert isinstance(run.log.steps, StepColumns)
        return _views(run)

    return call


def test_a_long_loop_reads_the_same_from_its_columns() -> None:
    def longer(state: S) -> str:
        return END if state["count"] >= 100 else "a"

    sealed_and_live(chain(tick, longer), viewed())


def test_a_failed_step_a_pause_and_subruns_read_the_same_from_the_columns() -> None:
    def fails(state: S) -> dict:
        if state["count"] == 70:
            raise ValueError("seventy")
        return {"count": state["count"] + 1}

    def failed(app: Any) -> Any:
        with pytest.raises(ValueError, match="seventy"):
            app.invoke(START_VALUES, {"recursion_limit": 200})
        return _views(Run(app.last_log))

    sealed_and_live(chain(fails, lambda s: "a"), failed)

    def asks(state: S) -> dict:
        if state["count"] == 80:
            return {"count": 81, "log": [interrupt("go on?")]}
        return {"count": state["count"] + 1}

    thread = {"configurable": {"thread_id": "t"}, "recursion_limit": 200}
    sealed_and_live(chain(asks, lambda s: "a", MemorySaver), viewed(START_VALUES, thread))

    class Inner(TypedDict):
        count: int

    inner = StateGraph(Inner).add_node("i", lambda s: {"count": s["count"] + 1})
    inner = inner.add_edge(START, "i").compile()

    def make() -> Any:
        graph = StateGraph(S).add_node("a", tick).add_node("sub", inner)
        graph = graph.add_edge(START, "a").add_edge("a", "sub")
        graph = graph.add_conditional_edges("sub", lambda s: END if s["count"] > 150 else "a")
        return graph.compile()

    sealed_and_live(make, viewed())


def test_run_steps_effects_and_the_inspector_make_no_step_of_a_flat_run() -> None:
    class Flat(TypedDict):
        count: int

    graph = StateGraph(Flat).add_node("a", lambda s: {"count": s["count"] + 1})
    graph = graph.add_edge(START, "a")
    app = graph.add_conditional_edges("a", lambda s: END if s["count"] >= 500 else "a").compile()
    log = app.run({"count": 0}, {"recursion_limit": 600}).log
    steps = log.steps
    assert steps.sealed > 400 and not steps.columns.rich
    assert len(Run(log).steps) == 500 and len(Run(log).effects) == 501
    assert _made(steps) == 0
    inspector = Run(log).inspect()
    inspector.go(250)
    assert _made(steps) <= 2 * (2 * 30 + 1)  # (the step list's two windows: at 1, at 250)
