"""A lone task's step takes the one task path's short cuts (`engine.core.plans`: a node's
plain edges queued at once, a router's view made in one pass, one task's writes applied
without grouping) and must leave the same record as without them. Each program runs twice,
as the engine runs it and with every plan made general (`general_plans`: no plain edges, no
viewed node or router, one task's writes grouped as a step's), and everything the record
holds is compared (durations aside): the steps and their tasks, effects, the state tree,
outputs, warnings, errors, retries, stream chunks, a stepper's steps and a resumed
interrupt."""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from typing import Annotated, Any, TypedDict

import pytest

from nbgraph import END, START, Command, MemorySaver, Overwrite, Send, StateGraph
from nbgraph.engine.core import loop as run_loop
from nbgraph.engine.core import plans
from nbgraph.engine.core.attempt import TaskRunner
from nbgraph.engine.core.writes import apply_writes, group_task_writes
from nbgraph.engine.node_api import get_stream_writer
from nbgraph.errors import GraphRecursionError


class S(TypedDict):
    count: int
    items: list  # no reducer
    total: Annotated[int, operator.add]
    log: Annotated[list, "append"]


_CHECKPOINT = re.compile(r"[0-9a-f]{8}-[0-9a-f]{12}")
START_VALUES = {"count": 0, "items": [], "total": 0, "log": []}


def _error(error: BaseException | None) -> Any:
    if error is None:
        return None
    return type(error).__name__, str(error), getattr(error, "__notes__", None)


def _task(task: Any) -> tuple:
    attempts = [(a.number, _error(a.error), a.wait) for a in task.attempts]
    timed = task.ended >= task.started > 0 or task.cached or not task.ended
    return (
        task.id,
        task.kind,
        repr(task.arg),
        task.triggers,
        repr(task.writes),
        type(task.routes),
        repr(task.routes),
        repr(task.dropped),
        _error(task.error),
        repr(task.interrupts),
        task.parent,
        task.cached,
        repr(task.custom),
        attempts,
        task.from_cache,
        [fingerprint(sub) for sub in task.subruns],
        timed,
    )


def fingerprint(log: Any) -> tuple:
    """Everything a `RunLog` holds, but the times."""
    steps = [
        (
            s.step,
            [_task(t) for t in s.tasks],
            s.written,
            repr(s.resets),
            s.cleared,
            repr(s.merged),
            s.applied,
            s.afters,
            repr(s.joins),
            s.heads,
        )
        for s in log.steps
    ]
    return steps, log.status, _error(log.error), log.warnings, repr(log.final), repr(log.input)


def _run_record(app: Any, run: Any) -> tuple:
    tree = [(n.id, n.kind, n.parents, repr(n.writes)) for n in run.tree.walk()]
    frame = run.steps.drop(columns=[c for c in run.steps.columns if "time" in c or "dur" in c])
    return (
        fingerprint(run.log),
        repr(run.effect_list),
        tree,
        repr(run.output),
        frame.to_dict("records"),
    )


def _lone_grouped(
    fields: Any, values: dict, writes: Any, step: int, source: Any = None
) -> tuple[str, ...]:
    """`apply_writes` with a lone task's writes (`source`, its node) grouped by field first,
    as a step's are: the lone case's short cut not taken."""
    if source is not None:
        writes = group_task_writes({}, source, writes)
    return apply_writes(fields, values, writes, step)


def general_plans(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make every plan general: no plain edges, no viewed node or router, and a lone task's
    writes grouped as a step's."""
    made = plans.NodePlan.__init__

    def general(self: Any, spec: Any, name: str, viewed: bool) -> None:
        made(self, spec, name, viewed)
        self.plain = self.viewed = False
        for router in self.routers:
            router.viewed = False

    monkeypatch.setattr(plans.NodePlan, "__init__", general)
    monkeypatch.setattr(run_loop, "apply_writes", _lone_grouped)


def both(make: Callable[[], Any], call: Callable[[Any], Any], *, fuses: bool = True) -> Any:
    """`call(make())` with the plans' short cuts and without; assert the two agree; return
    the first result. With `fuses`, assert a short cut really ran (a viewed node)."""
    results, calls = [], []
    real = TaskRunner.execute

    def counted(self: Any, task: Any, stream: Any = None) -> Any:
        if self.run.plans.of(task.node).viewed:  # (a short cut: the node handed a view at once)
            calls.append(task.id)
        return real(self, task, stream)

    for short in (True, False):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(TaskRunner, "execute", counted)
            if not short:
                general_plans(patch)
            results.append(call(make()))
            if short:
                assert bool(calls) == fuses
    assert results[0] == results[1]
    return results[0]


def record(input: Any = START_VALUES, config: Any = None) -> Callable[[Any], Any]:
    def call(app: Any) -> Any:
        run = app.run(input, config)
        return _run_record(app, run)

    return call


def invoked(input: Any = START_VALUES, config: Any = None) -> Callable[[Any], Any]:
    def call(app: Any) -> Any:
        try:
            out = app.invoke(input, config)
        except Exception as error:
            out = _error(error)
        return out, fingerprint(app.last_log)

    return call


def loop(node: Callable, router: Callable | None = None, **options: Any) -> Callable[[], Any]:
    def make() -> Any:
        graph = StateGraph(S).add_node("a", node, **options).add_edge(START, "a")
        if router is not None:
            graph = graph.add_conditional_edges("a", router)
        return graph.compile()

    return make


def tick(state: S) -> dict:
    return {"count": state["count"] + 1, "log": [state["count"]], "total": 2, "items": [1]}


def again(state: S) -> str:
    return END if state["count"] >= 5 else "a"


def test_the_self_loop_records_the_same_both_ways() -> None:
    out = both(loop(tick, again), record())
    assert out[3] == repr({"count": 5, "items": [1], "total": 10, "log": [0, 1, 2, 3, 4]})
    both(loop(tick, again), invoked())


def test_edges_commands_gotos_sends_and_path_maps() -> None:
    def node(state: S) -> Any:
        n = state["count"]
        if n == 0:
            return Command(goto="b", update={"count": 1, "log": ["goto"]})
        if n == 1:
            return [Command(update={"total": 5}), Command(update={"total": Overwrite(40)})]
        return {"count": n + 1, "items": Overwrite([n])}

    def router(state: S) -> Any:
        n = state["count"]
        if n == 2:
            return ["b", "c"]
        if n == 3:
            return [Send("c", {"count": 100, "items": [], "total": 0, "log": []})]
        return "x" if n < 6 else "y"

    def b(state: S) -> dict:
        return {"count": state["count"] + 1, "log": ["b"]}

    def c(state: S) -> dict:
        return {"log": ["c"], "items": [state["count"]]}

    def make() -> Any:
        graph = StateGraph(S).add_node("a", node).add_node("b", b).add_node("c", c)
        graph = graph.add_edge(START, "a").add_edge("b", "a").add_edge("c", "a")
        graph = graph.add_conditional_edges("a", router, {"x": "a", "y": END})
        return graph.compile()

    both(make, record())
    both(make, invoked())


def test_errors_in_the_node_and_in_the_router_and_an_async_node() -> None:
    def fails(state: S) -> dict:
        if state["count"] >= 2:
            raise ValueError("boom")
        return {"count": state["count"] + 1}

    def router_fails(state: S) -> str:
        if state["count"] >= 3:
            raise KeyError("route")
        return "a"

    async def coro(state: S) -> dict:
        return {}

    both(loop(fails, lambda s: "a"), record())
    both(loop(fails, lambda s: "a"), invoked())
    both(loop(tick, router_fails), record())
    both(loop(tick, router_fails), invoked())
    both(loop(tick, lambda s: "nowhere"), invoked())
    both(loop(coro), invoked())  # (an async node: refused the same way, on the same path)


def test_retries_and_a_dropped_key_and_a_node_returning_nothing() -> None:
    from nbgraph import RetryPolicy

    def make() -> Any:
        tries = []

        def flaky(state: S) -> Any:
            tries.append(1)
            if len(tries) % 3:
                raise ValueError(f"try {len(tries)}")
            if len(tries) > 6:
                return None
            return {"count": state["count"] + 1, "unknown": 1}

        policy = RetryPolicy(
            max_attempts=3, initial_interval=0.0, jitter=False, retry_on=ValueError
        )
        return loop(flaky, again, retry_policy=policy)()

    out = both(make, record())
    assert any(task[13] for step in out[0][0] for task in step[1])  # attempts were kept
    both(make, invoked())


def test_a_recursion_limit_hit_and_a_router_reading_its_own_writes() -> None:
    seen: list[Any] = []

    def router(state: S) -> str:
        seen.append((state["count"], list(state["log"]), state["total"], state["items"]))
        return "a"

    both(loop(tick, router), invoked(config={"recursion_limit": 7}))
    both(loop(tick, router), record(config={"recursion_limit": 7}))
    half = len(seen) // 2
    assert seen[:half] == seen[half:] and half
    with pytest.raises(GraphRecursionError):
        loop(tick, router)().invoke(START_VALUES, {"recursion_limit": 3})


def test_injections_custom_chunks_and_the_config() -> None:
    def node(state: S, config: dict, runtime: Any) -> dict:
        get_stream_writer()({"at": state["count"]})
        runtime.stream_writer("second")
        return {"count": state["count"] + 1, "items": [config["metadata"]["langgraph_step"]]}

    def router(state: S, config: dict) -> str:
        return END if config["metadata"]["langgraph_step"] > 3 else "a"

    both(loop(node, router), record())


def test_stream_chunks_the_stepper_and_waiting_and_deferred_targets() -> None:
    def streamed(app: Any) -> Any:
        modes = ["values", "updates", "debug", "tasks", "custom"]
        chunks = list(app.stream(START_VALUES, stream_mode=modes))
        return repr([(mode, _no_times(chunk)) for mode, chunk in chunks])

    both(loop(tick, again), streamed)  # (streams take the same path: its short cuts too)

    def stepped(app: Any) -> Any:
        stepper = app.stepper(START_VALUES)
        stepper.step()
        stepper.step()
        stepper.finish()
        return fingerprint(stepper.run.log)

    both(loop(tick, again), stepped)

    def make() -> Any:
        graph = StateGraph(S).add_node("a", tick).add_node("b", tick).add_node("j", tick)
        graph = graph.add_node("d", tick, defer=True).add_edge(START, "a")
        graph = graph.add_edge("a", "b").add_edge(["a", "b"], "j").add_edge("b", "d")
        return graph.compile()

    both(make, record())


def _no_times(chunk: Any) -> Any:
    if isinstance(chunk, dict):
        return {k: _no_times(v) for k, v in chunk.items() if k not in ("timestamp", "id")}
    return chunk


def test_a_subgraph_run_inside_a_node_pauses_and_resumes_the_same() -> None:
    from nbgraph import interrupt

    def ask(state: S) -> dict:
        answer = interrupt("more?")
        return {"count": state["count"] + 1, "log": [answer]}

    def make() -> Any:
        inner = loop(tick, lambda s: "ask" if s["count"] < 3 else END)
        inner_graph = StateGraph(S).add_node("a", tick).add_node("ask", ask)
        inner_graph = inner_graph.add_edge(START, "a").add_conditional_edges(
            "a", lambda s: "ask" if s["count"] == 2 else "a"
        )
        del inner
        sub = inner_graph.compile()
        outer = StateGraph(S).add_node("sub", sub).add_edge(START, "sub")
        return outer.compile(checkpointer=MemorySaver())

    def call(app: Any) -> Any:
        config = {"configurable": {"thread_id": "t"}}
        first = app.invoke(START_VALUES, config)
        first_log = fingerprint(app.last_log)
        second = app.invoke(Command(resume="yes"), config)
        second_log = fingerprint(app.last_log)  # (a resume's checkpoint id is its own)
        return repr(first), first_log, repr(second), _CHECKPOINT.sub("<id>", repr(second_log))

    both(make, call)  # (the outer lone step, checkpointed, is fused; the inner run is not)


def _history(app: Any, config: Any) -> str:
    """Every checkpoint of the thread (ids and times masked) and what the saver holds."""
    snaps = [
        (s.values, s.next, s.metadata, repr(s.tasks), repr(s.interrupts))
        for s in app.get_state_history(config)
    ]
    saver = [(c.metadata, c.pending_writes) for c in app.checkpointer.list(config)]
    text = repr(snaps) + repr(saver)
    return re.sub(r"\d{4}-\d\d-\d\dT[\d:.+]+", "<t>", _CHECKPOINT.sub("<id>", text))


def saved(*inputs: Any, **kwargs: Any) -> Callable[[Any], Any]:
    """Invoke once per input on one thread (a checkpointer): outputs, records, history."""

    def call(app: Any) -> Any:
        config = {"configurable": {"thread_id": "t"}}
        results = []
        for input in inputs:
            try:
                out = app.invoke(input, config, **kwargs)
            except Exception as error:
                out = _error(error)
            log = _CHECKPOINT.sub("<id>", repr(fingerprint(app.last_log)))
            results.append((repr(out), log))
        return results, _history(app, config)

    return call


def saver_loop(node: Callable, router: Callable, **options: Any) -> Callable[[], Any]:
    def make() -> Any:
        graph = StateGraph(S).add_node("a", node).add_edge(START, "a")
        return graph.add_conditional_edges("a", router).compile(
            checkpointer=MemorySaver(), **options
        )

    return make


@pytest.mark.parametrize("durability", [None, "sync", "async", "exit"])
def test_a_checkpointed_loop_saves_the_same_checkpoints(durability: Any) -> None:
    kwargs = {} if durability is None else {"durability": durability}
    both(saver_loop(tick, again), saved(START_VALUES, None, **kwargs))


def test_checkpointed_interrupts_errors_breakpoints_and_resumes() -> None:
    from nbgraph import interrupt

    def asks(state: S) -> dict:
        if state["count"] == 2:
            return {"count": 3, "log": [interrupt("more?")]}
        return tick(state)

    both(saver_loop(asks, again), saved(START_VALUES, Command(resume="yes"), None))
    failed: list[int] = []

    def fails_once(state: S) -> dict:
        if state["count"] == 3 and not failed:
            failed.append(1)
            raise ValueError("once")
        return tick(state)

    def make() -> Any:
        failed.clear()
        return saver_loop(fails_once, again)()

    both(make, saved(START_VALUES, None))
    after = saver_loop(tick, again, interrupt_after=["a"])
    both(after, saved(START_VALUES, None, None))
    from nbgraph import RetryPolicy

    def with_retry() -> Any:
        failed.clear()
        policy = RetryPolicy(max_attempts=2, initial_interval=0, jitter=False, retry_on=ValueError)
        graph = StateGraph(S).add_node("a", fails_once, retry_policy=policy)
        graph = graph.add_edge(START, "a").add_conditional_edges("a", again)
        return graph.compile(checkpointer=MemorySaver())

    both(with_retry, saved(START_VALUES))
