"""An engine run's steps kept as columns (`engine.core.columns.StepColumns`): each program
runs twice, its steps sealed into columns as the engine goes and with every step kept as the
engine's own objects, and everything the record holds must be the same (the steps and their
tasks, effects, the state tree, the steps' frame, outputs). Then the Sequence itself, the
column readers, and what the collector is left to walk."""

from __future__ import annotations

import gc
import re
import threading
from collections.abc import Callable
from typing import Any, TypedDict

import pytest

from nbgraph import END, START, Command, MemorySaver, RetryPolicy, Send, StateGraph
from nbgraph.engine.core import columns, loop
from nbgraph.engine.core.columns import (
    StepColumns,
    _Columns,
    applied_numbers,
    step_numbers,
    task_nodes,
    task_total,
    task_tuples,
)
from nbgraph.engine.node_api import get_stream_writer
from nbgraph.types import interrupt
from tests.support.flat_loop import START_VALUES, S, tick


def again(state: S) -> str:
    return END if state["count"] >= 5 else "a"


def _error(error: BaseException | None) -> Any:
    return None if error is None else (type(error).__name__, str(error), error.__notes__)


def _task(task: Any) -> tuple:
    """A task as data: every slot (an error, attempts and subruns as data too)."""
    return (
        *(repr(getattr(task, name)) for name in ("id", "kind", "arg", "triggers", "writes")),
        type(task.routes),
        *(repr(getattr(task, name)) for name in ("routes", "dropped", "interrupts", "custom")),
        _error(task.error),
        task.ended >= task.started > 0,  # (the times: see the long loop's test)
        (task.held, task.parent, task.cached, task.from_cache, task.cache_key, task.returned),
        [(a.number, _error(a.error), a.wait) for a in task.attempts],
        [fingerprint(sub) for sub in task.subruns],
    )


def fingerprint(log: Any) -> tuple:
    """Everything a `RunLog` holds, as data."""
    steps = [
        (
            s.step,
            [_task(t) for t in s.tasks],
            type(s.tasks),
            *(repr(getattr(s, name)) for name in ("written", "cleared", "applied", "afters")),
            *(repr(getattr(s, name)) for name in ("resets", "merged", "joins", "heads")),
            s.fields is log.graph.fields,
        )
        for s in log.steps
    ]
    return steps, log.status, _error(log.error), log.warnings, repr(log.final), repr(log.input)


def _run_record(run: Any) -> tuple:
    """A run's record as the views read it: its log, effects, state tree, steps' frame."""
    tree = [(n.id, n.kind, n.parents, repr(n.writes)) for n in run.tree.walk()]
    frame = run.steps.drop(columns=[c for c in run.steps.columns if "time" in c or "dur" in c])
    frame = frame.to_dict("records")
    return fingerprint(run.log), repr(run.effect_list), tree, repr(run.output), frame


_CHECKPOINT = re.compile(r"[0-9a-f]{8}-[0-9a-f]{12}")  # (a resumed run's reset names one)


def sealed_and_live(make: Callable[[], Any], call: Callable[[Any], Any]) -> Any:
    """`call(make())` with steps sealed into columns and with none sealed (in both, every
    step but the last two as soon as it can be); assert the two agree; return the sealed
    run's result."""
    results = []
    for sealing in (True, False):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(StepColumns, "sealing", sealing)
            patch.setattr(columns, "_BATCH", 2)  # (every step sealed as soon as it can be)
            patch.setattr(loop, "SEALS", 0)
            results.append(call(make()))
    assert results[0] == results[1]
    return results[0]


def recorded(input: Any = START_VALUES, config: Any = None) -> Callable[[Any], Any]:
    def call(app: Any) -> Any:
        run = app.run(input, config)
        assert isinstance(run.log.steps, StepColumns)
        return _run_record(run), readers(run.log.steps)

    return call


def readers(steps: Any) -> tuple:
    """What the column readers say, checked against the objects'."""
    plain = list(steps)
    assert step_numbers(steps) == [s.step for s in plain]
    assert applied_numbers(steps) == [s.step for s in plain if s.applied]
    assert task_total(steps, 1) == sum(len(s.tasks) for s in plain[1:])
    assert list(task_nodes(steps)) == [tuple(t.node for t in s.tasks) for s in plain]
    rows = [row[:-1] for row in task_tuples(steps)]
    assert rows == [
        (t.step, t.index, t.node, t.kind, t.triggers, tuple(k for k, _ in t.writes), t.routes,
         t.returned, t.started, t.ended) for s in plain for t in s.tasks
    ]  # fmt: skip
    return step_numbers(steps), len(steps)


def chain(
    node: Callable, router: Callable | None = None, saver: Any = None, **options: Any
) -> Callable[[], Any]:
    def make() -> Any:
        graph = StateGraph(S).add_node("a", node, **options).add_edge(START, "a")
        if router is not None:
            graph = graph.add_conditional_edges("a", router)
        return graph.compile(checkpointer=saver() if saver else None)

    return make


def test_a_long_self_loop_is_sealed_into_columns_and_reads_the_same() -> None:
    def longer(state: S) -> str:
        return END if state["count"] >= 100 else "a"

    sealed_and_live(chain(tick, longer), recorded())
    times = {}
    seal = _Columns.seal

    def noted(self: Any, position: int, steps: Any, fields: Any, flat: bool) -> None:
        for step in steps:
            times[step.step] = [(task.started, task.ended) for task in step.tasks]
        seal(self, position, steps, fields, flat)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_Columns, "seal", noted)
        run = chain(tick, longer)().run(START_VALUES)
    assert len(times) == 99 and all(
        times[s.step] == [(t.started, t.ended) for t in s.tasks] for s in run.log.steps[:99]
    )  # the very times
    steps = run.log.steps
    assert len(steps) == 101 and not steps.columns.rich  # every sealed step went into columns
    assert steps.sealed == 99 and len(steps.columns.task_table) == 3
    short = chain(tick, again)().run(START_VALUES).log.steps
    assert len(short) == 6 and short.columns is None  # (a short run makes no columns)
    assert [s.step for s in short] == [0, 1, 2, 3, 4, 5] and short[2] is short[2]
    assert steps[5] is steps[5] and steps[-1] is steps[len(steps) - 1]
    assert [s.step for s in steps[3:6]] == [3, 4, 5] and steps[::20][1].step == 20
    assert [s.step for s in reversed(steps)][:3] == [100, 99, 98]
    task = steps[7].tasks[0]
    assert (task.id, task.writes[0], task.routes, task.returned) == (
        "7:0:a",
        ("count", 7),
        ("a",),
        ("a",),
    )
    with pytest.raises(IndexError, match="101 steps"):
        steps[101]


def test_sends_commands_lists_of_routes_errors_and_retries_read_the_same() -> None:
    def node(state: S) -> Any:
        n = state["count"]
        if n == 0:
            return Command(goto="b", update={"count": 1, "log": ["goto"]})
        if n == 9:
            raise ValueError("nine")
        return {"count": n + 1, "unknown": n} if n == 4 else {"count": n + 1}

    def router(state: S) -> Any:
        n = state["count"]
        if n == 2:
            return ["b", "c"]
        if n == 3:
            return [Send("c", {**START_VALUES, "count": 100})]
        return "a"

    def b(state: S) -> dict:
        return {"log": ["b"]}

    def c(state: S) -> dict:
        return {"log": ["c"], "items": [state["count"]]}

    def make() -> Any:
        graph = StateGraph(S).add_node("a", node).add_node("b", b).add_node("c", c)
        graph = graph.add_edge(START, "a").add_edge("b", "a").add_edge("c", "a")
        return graph.add_conditional_edges("a", router).compile()

    def failed(app: Any) -> Any:
        with pytest.raises(ValueError, match="nine"):
            app.invoke(START_VALUES)
        return fingerprint(app.last_log), readers(app.last_log.steps)

    sealed_and_live(make, failed)
    policy = RetryPolicy(max_attempts=3, initial_interval=0.0, jitter=False, retry_on=ValueError)

    def flaky_chain() -> Any:
        tries: list[int] = []

        def flaky(state: S) -> Any:
            tries.append(1)
            if len(tries) % 3:
                raise ValueError(f"try {len(tries)}")
            return {"count": state["count"] + 1}

        return chain(flaky, again, retry_policy=policy)()

    sealed_and_live(flaky_chain, recorded())


def test_custom_chunks_interrupts_and_a_resumed_thread_read_the_same() -> None:
    def writer(state: S) -> dict:
        get_stream_writer()({"at": state["count"]})
        return {"count": state["count"] + 1}

    sealed_and_live(chain(writer, again), recorded())

    def asks(state: S) -> dict:
        if state["count"] == 3:
            return {"count": 4, "log": [interrupt("go on?")]}
        return {"count": state["count"] + 1}

    def resumed(app: Any) -> Any:
        config = {"configurable": {"thread_id": "t"}}
        app.invoke(START_VALUES, config)
        first = fingerprint(app.last_log)
        app.invoke(Command(resume="yes"), config)
        second = fingerprint(app.last_log)
        return first, _CHECKPOINT.sub("<id>", repr(second)), app.get_state(config).values

    sealed_and_live(chain(asks, again, MemorySaver), resumed)


def test_a_subgraph_as_a_node_keeps_its_runs_with_its_steps() -> None:
    class Inner(TypedDict):
        count: int

    inner = StateGraph(Inner).add_node("i", lambda s: {"count": s["count"] + 1})
    inner = inner.add_edge(START, "i").compile()

    def make() -> Any:
        graph = StateGraph(S).add_node("a", tick).add_node("sub", inner)
        graph = graph.add_edge(START, "a").add_edge("a", "sub")
        graph = graph.add_conditional_edges("sub", lambda s: END if s["count"] > 150 else "a")
        return graph.compile()

    sealed_and_live(make, recorded())
    steps = make().run(START_VALUES).log.steps
    rich = steps.columns.rich
    assert rich and all(s.tasks[0].subruns for s in rich.values())


def test_a_flat_run_leaves_the_collector_nothing_per_step() -> None:
    class Flat(TypedDict):
        count: int

    def make(stop: int) -> Any:
        graph = StateGraph(Flat).add_node("a", lambda s: {"count": s["count"] + 1})
        graph = graph.add_edge(START, "a")
        graph = graph.add_conditional_edges("a", lambda s: END if s["count"] >= stop else "a")
        return graph.compile()

    counts = [_tracked(make(stop).run({"count": 0}, {"recursion_limit": stop + 10}).log.steps)
              for stop in (100, 3100)]  # fmt: skip
    assert counts[1] == counts[0] < 200  # 3,000 steps more, and not one tracked object more


def _tracked(root: Any) -> int:
    """How many objects the collector tracks among those reachable from `root` (the run's
    steps; the graph's fields and the classes aside), after a collection (which stops
    tracking the tuples that hold only untracked items: not yet, depending on when one ran)."""
    gc.collect()
    seen, todo = {id(root), id(root.fields)}, [root]
    while todo:
        for item in gc.get_referents(todo.pop()):
            if gc.is_tracked(item) and id(item) not in seen and not isinstance(item, type):
                seen.add(id(item))
                todo.append(item)
    return len(seen)


def test_a_reader_on_another_thread_sees_every_step_in_place_while_the_run_goes() -> None:
    """The live view reads the steps from its own thread while the engine seals them."""
    stop = 3000

    def node(state: S) -> dict:
        return {"count": state["count"] + 1}

    app = chain(node, lambda s: END if s["count"] >= stop else "a")()
    seen: list[Any] = []
    done = threading.Event()

    def read() -> None:
        log = None
        while not done.is_set():
            log = app.last_log if log is None else log
            steps = log.steps if log is not None else ()
            size = len(steps)
            if size:
                last = steps[size - 1]  # (a position, read while the run seals others)
                middle = steps[size // 2]
                seen.append((size, last.step, middle.step, step_numbers(steps)[:size]))

    reader = threading.Thread(target=read)
    reader.start()
    try:
        app.invoke(START_VALUES, {"recursion_limit": stop + 10})
    finally:
        done.set()
        reader.join()
    assert seen and all(
        last == size - 1 and middle == size // 2 and numbers == list(range(size))
        for size, last, middle, numbers in seen
    )


def test_a_step_is_made_with_the_tasks_fields_in_the_order_the_columns_pass_them() -> None:
    """`_Columns.made` passes a task's every field positionally: a field added to `Task`
    must be added there too."""
    from dataclasses import fields

    from nbgraph.engine.core.tasks import Task

    assert [f.name for f in fields(Task)] == [
        "step", "index", "node", "kind", "arg", "triggers", "writes", "routes", "dropped",
        "error", "started", "ended", "interrupts", "held", "parent", "cached", "custom",
        "attempts", "from_cache", "cache_key", "subruns", "returned",
    ]  # fmt: skip
