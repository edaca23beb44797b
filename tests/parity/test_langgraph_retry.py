"""Differential test: retry policies and the node cache, on real LangGraph and on nbgraph.

Each program is written once against a namespace of names (`api`) and run on both; what it
observed (outputs, stream chunks, error kinds and messages, how often each node ran, the
waits between attempts) must be equal.
"""

# No `from __future__ import annotations`: the state classes are defined in functions.

import asyncio
import operator
import time
from typing import Annotated, Any, TypedDict

import pytest

from tests.support.harness import outcome, same, stable_repr

pytestmark = pytest.mark.langgraph


@pytest.fixture
def sleeps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The waits between attempts, recorded instead of slept (both engines call time.sleep)."""
    waits: list[float] = []
    monkeypatch.setattr(time, "sleep", waits.append)
    return waits


def raised(call) -> tuple:
    """How `call()` ended, with the error's text: `("raised", kind, text)`."""
    return outcome(call, message="full")


class State(TypedDict):
    foo: str
    log: Annotated[list, operator.add]


def flaky(calls: dict, name: str, fails: int, error: type = ValueError):
    """A node that raises `error` on its first `fails` calls."""

    def node(state):
        calls[name] = calls.get(name, 0) + 1
        if calls[name] <= fails:
            raise error(f"{name} attempt {calls[name]}")
        return {"log": [f"{name} after {state['foo']!r}"]}

    node.__name__ = name
    return node


def one_node(api, node, retry_policy, **compile_options):
    return (
        api.StateGraph(State)
        .add_node(node.__name__, node, retry_policy=retry_policy)
        .add_edge(api.START, node.__name__)
        .compile(**compile_options)
    )


# --- retries -------------------------------------------------------------------------------


@pytest.mark.parametrize("jitter", [False, True])
def test_a_node_that_fails_twice_then_succeeds(sleeps: list[float], jitter: bool) -> None:
    def program(api):
        calls: dict = {}
        policy = api.RetryPolicy(
            max_attempts=3, initial_interval=0.5, backoff_factor=3.0, jitter=jitter,
            retry_on=ValueError,
        )  # fmt: skip
        app = one_node(api, flaky(calls, "a", 2), policy)
        out = raised(lambda: app.invoke({"foo": "", "log": []}))
        return {"out": out, "calls": calls}

    if jitter:  # the waits differ by a random 0-1 s: compare the rest
        same(program)
    else:
        same(program, sleeps=sleeps)
        assert sleeps == [0.5, 1.5]


def test_waits_stop_growing_at_max_interval(sleeps: list[float]) -> None:
    def program(api):
        calls: dict = {}
        policy = api.RetryPolicy(
            max_attempts=6, initial_interval=1.0, backoff_factor=2.0, max_interval=3.0,
            jitter=False, retry_on=ValueError,
        )  # fmt: skip
        app = one_node(api, flaky(calls, "a", 5), policy)
        return {"out": raised(lambda: app.invoke({"foo": "", "log": []})), "calls": calls}

    same(program, sleeps=sleeps)
    assert sleeps == [1.0, 2.0, 3.0, 3.0, 3.0]


@pytest.mark.parametrize(
    "retry_on",
    [
        ValueError,
        KeyError,
        (KeyError, ValueError),
        [KeyError],
        lambda error: "attempt 1" in str(error),
        lambda error: False,
    ],
    ids=["class", "other-class", "tuple", "list", "callable", "callable-no"],
)
def test_retry_on_chooses_which_errors_are_retried(sleeps: list[float], retry_on: Any) -> None:
    def program(api):
        calls: dict = {}
        policy = api.RetryPolicy(max_attempts=4, initial_interval=0.01, retry_on=retry_on)
        app = one_node(api, flaky(calls, "a", 2), policy)
        return {"out": raised(lambda: app.invoke({"foo": "", "log": []})), "calls": calls}

    same(program)


@pytest.mark.parametrize(
    "error", [ConnectionError, ValueError, KeyError, TimeoutError, OSError, RuntimeError,
              ZeroDivisionError, AssertionError, Exception],
)  # fmt: skip
def test_the_default_retry_on(sleeps: list[float], error: type) -> None:
    def program(api):
        calls: dict = {}
        policy = api.RetryPolicy(initial_interval=0.01, jitter=False)
        app = one_node(api, flaky(calls, "a", 1, error), policy)
        return {"out": raised(lambda: app.invoke({"foo": "", "log": []})), "calls": calls}

    same(program, sleeps=sleeps)


def test_exhausted_retries_raise_the_last_error(sleeps: list[float]) -> None:
    def program(api):
        calls: dict = {}
        policy = api.RetryPolicy(max_attempts=3, initial_interval=0.01, retry_on=ValueError)
        app = one_node(api, flaky(calls, "a", 10), policy)
        return {"out": raised(lambda: app.invoke({"foo": "", "log": []})), "calls": calls}

    same(program)


def test_the_first_matching_policy_of_a_list_applies(sleeps: list[float]) -> None:
    def program(api):
        calls: dict = {}
        policies = [
            api.RetryPolicy(max_attempts=n, initial_interval=wait, jitter=False, retry_on=error)
            for n, wait, error in ((2, 0.1, KeyError), (4, 1.0, ValueError), (9, 5.0, Exception))
        ]
        out = {}
        for error in (KeyError, ValueError, TypeError):
            app = one_node(api, flaky(calls, error.__name__, 20, error), policies)
            out[error.__name__] = raised(lambda: app.invoke({"foo": "", "log": []}))  # noqa: B023
        return {"out": out, "calls": calls}

    same(program, sleeps=sleeps)


def parallel(api, calls: dict, fails: int, **compile_options):
    b_policy = api.RetryPolicy(max_attempts=3, initial_interval=0.01, retry_on=ValueError)
    return (
        api.StateGraph(State)
        .add_node("a", flaky(calls, "a", 0))
        .add_node("b", flaky(calls, "b", fails), retry_policy=b_policy)
        .add_node("c", flaky(calls, "c", 0))
        .add_edge(api.START, "a")
        .add_edge(api.START, "b")
        .add_edge("a", "c")
        .add_edge("b", "c")
        .compile(**compile_options)
    )


@pytest.mark.parametrize("mode", ["invoke", "updates", "values"])
def test_a_retried_task_does_not_rerun_its_siblings(sleeps: list[float], mode: str) -> None:
    def program(api):
        calls: dict = {}
        app = parallel(api, calls, 2)
        if mode == "invoke":
            out = app.invoke({"foo": "", "log": []})
        else:
            chunks = list(app.stream({"foo": "", "log": []}, stream_mode=mode))
            out = sorted(map(stable_repr, chunks)) if mode == "updates" else chunks
        return {"out": out, "calls": calls}

    same(program)


def test_after_exhaustion_the_checkpoint_keeps_the_siblings_writes(sleeps: list[float]) -> None:
    def program(api):
        calls: dict = {}
        app = parallel(api, calls, 3, checkpointer=api.InMemorySaver())
        config = {"configurable": {"thread_id": "t"}}
        first = raised(lambda: app.invoke({"foo": "", "log": []}, config))
        snapshot = app.get_state(config)
        errors = {task.name: task.error is not None for task in snapshot.tasks}
        failed = (snapshot.values, snapshot.next, errors)
        after_first = dict(calls)
        second = raised(lambda: app.invoke(None, config))
        return {"first": first, "failed": failed, "after_first": after_first,
                "second": second, "calls": calls, "end": app.get_state(config).values}  # fmt: skip

    same(program)


def test_an_async_node_is_retried(sleeps: list[float]) -> None:
    def program(api):
        calls: dict = {}

        async def a(state):
            calls["a"] = calls.get("a", 0) + 1
            await asyncio.sleep(0)
            if calls["a"] < 3:
                raise ValueError(f"attempt {calls['a']}")
            return {"foo": "done", "log": ["a"]}

        policy = api.RetryPolicy(initial_interval=0.001, jitter=False, retry_on=ValueError)
        app = one_node(api, a, policy)
        out = asyncio.run(app.ainvoke({"foo": "", "log": []}))
        chunks = asyncio.run(_collect(app.astream({"foo": "", "log": []}, stream_mode="updates")))
        return {"out": out, "chunks": chunks, "calls": calls}

    same(program)


async def _collect(stream) -> list:
    return [chunk async for chunk in stream]


def test_a_router_after_a_retried_node_sees_the_last_attempt(sleeps: list[float]) -> None:
    def program(api):
        calls: dict = {}
        seen = []

        def route(state):
            seen.append(state["foo"])
            return api.END

        policy = api.RetryPolicy(initial_interval=0.01, retry_on=ValueError)
        app = (
            api.StateGraph(State)
            .add_node("a", flaky(calls, "a", 1), retry_policy=policy)
            .add_edge(api.START, "a")
            .add_conditional_edges("a", route)
            .compile()
        )
        return {"out": app.invoke({"foo": "x", "log": []}), "seen": seen, "calls": calls}

    same(program)


# --- the node cache ------------------------------------------------------------------------


class Numbers(TypedDict):
    x: int
    result: Annotated[list, operator.add]


def counted(calls: list, name: str, write: bool = True):
    def node(state):
        calls.append((name, state.get("x")))
        return {"result": [name, state.get("x")]} if write else None

    node.__name__ = name
    return node


def test_a_cached_node_is_not_called_again_for_the_same_input() -> None:
    def program(api):
        calls: list = []
        app = (
            api.StateGraph(Numbers)
            .add_node("n", counted(calls, "n"), cache_policy=api.CachePolicy())
            .add_edge(api.START, "n")
            .compile(cache=api.InMemoryCache())
        )
        runs = [list(app.stream({"x": x}, stream_mode="updates")) for x in (5, 5, 6, 5)]
        return {"runs": runs, "calls": calls, "invoke": app.invoke({"x": 6})}

    same(program)


def test_a_key_func_decides_what_counts_as_the_same_input() -> None:
    def program(api):
        calls: list = []
        policy = api.CachePolicy(key_func=lambda state: str(state["x"] % 2))
        app = (
            api.StateGraph(Numbers)
            .add_node("n", counted(calls, "n"), cache_policy=policy)
            .add_edge(api.START, "n")
            .compile(cache=api.InMemoryCache())
        )
        runs = [app.invoke({"x": x}) for x in (1, 3, 4, 6, 5)]
        return {"runs": runs, "calls": calls}

    same(program)


def test_cached_and_uncached_tasks_in_one_step_and_a_router() -> None:
    def program(api):
        calls: list = []
        routed: list = []

        def route(state):
            routed.append(state["x"])
            return "c" if state["x"] > 1 else api.END

        app = (
            api.StateGraph(Numbers)
            .add_node("a", counted(calls, "a"), cache_policy=api.CachePolicy())
            .add_node("b", counted(calls, "b"))
            .add_node("c", counted(calls, "c"), cache_policy=api.CachePolicy())
            .add_node("silent", counted(calls, "silent", False), cache_policy=api.CachePolicy())
            .add_edge(api.START, "a")
            .add_edge(api.START, "b")
            .add_edge(api.START, "silent")
            .add_conditional_edges("a", route)
            .compile(cache=api.InMemoryCache())
        )  # fmt: skip
        runs = [
            sorted(map(stable_repr, app.stream({"x": x}, stream_mode="updates"))) for x in (2, 2)
        ]
        return {"runs": runs, "calls": sorted(calls), "routed": routed}

    same(program)


def test_send_tasks_are_cached_by_their_argument() -> None:
    def program(api):
        calls: list = []

        def fan(state):
            return [api.Send("n", {"x": x}) for x in (1, 2, 1)]

        app = (
            api.StateGraph(Numbers)
            .add_node("n", counted(calls, "n"), cache_policy=api.CachePolicy())
            .add_conditional_edges(api.START, fan, ["n"])
            .compile(cache=api.InMemoryCache())
        )
        runs = [sorted(map(stable_repr, app.stream({"x": 0}, stream_mode="updates")))]
        runs.append(sorted(map(stable_repr, app.stream({"x": 0}, stream_mode="updates"))))
        return {"runs": runs, "calls": sorted(calls)}

    same(program)


def test_an_entry_with_ttl_zero_is_never_reused_and_a_policy_without_cache_does_nothing() -> None:
    def program(api):
        calls: list = []
        expiring = (
            api.StateGraph(Numbers)
            .add_node("n", counted(calls, "n"), cache_policy=api.CachePolicy(ttl=0))
            .add_edge(api.START, "n")
            .compile(cache=api.InMemoryCache())
        )
        no_cache = (
            api.StateGraph(Numbers)
            .add_node("m", counted(calls, "m"), cache_policy=api.CachePolicy())
            .add_edge(api.START, "m")
            .compile()
        )
        runs = [list(app.stream({"x": 1})) for app in (expiring, expiring, no_cache, no_cache)]
        return {"runs": runs, "calls": calls}

    same(program)


def test_a_failed_task_is_not_cached(sleeps: list[float]) -> None:
    def program(api):
        calls: dict = {}
        app = (
            api.StateGraph(State)
            .add_node("a", flaky(calls, "a", 1), cache_policy=api.CachePolicy())
            .add_edge(api.START, "a")
            .compile(cache=api.InMemoryCache())
        )
        runs = [raised(lambda: app.invoke({"foo": "", "log": []})) for _ in range(3)]
        return {"runs": runs, "calls": calls}

    same(program)


def test_clear_cache_makes_the_nodes_run_again() -> None:
    def program(api):
        calls: list = []
        app = (
            api.StateGraph(Numbers)
            .add_node("a", counted(calls, "a"), cache_policy=api.CachePolicy())
            .add_node("b", counted(calls, "b"), cache_policy=api.CachePolicy())
            .add_edge(api.START, "a")
            .add_edge("a", "b")
            .compile(cache=api.InMemoryCache())
        )
        out = [app.invoke({"x": 1})]
        app.clear_cache(["b"])
        out.append(list(app.stream({"x": 1})))
        app.clear_cache()
        out.append(list(app.stream({"x": 1})))
        uncached = api.StateGraph(Numbers).add_node("a", counted(calls, "a"))
        uncached = uncached.add_edge(api.START, "a").compile()
        return {"out": out, "calls": calls, "no cache": raised(uncached.clear_cache)[:2]}

    same(program)


def test_two_graphs_sharing_a_cache_keep_their_entries_apart() -> None:
    def program(api):
        calls: list = []
        cache = api.InMemoryCache()
        apps = [
            api.StateGraph(Numbers)
            .add_node("n", fn, cache_policy=api.CachePolicy())
            .add_edge(api.START, "n")
            .compile(cache=cache)
            for fn in (_first_node(calls), _second_node(calls))
        ]
        return {"out": [app.invoke({"x": 1}) for app in apps * 2], "calls": calls}

    same(program)


def _first_node(calls: list):
    def first(state):
        calls.append("first")
        return {"result": ["first"]}

    return first


def _second_node(calls: list):
    def second(state):
        calls.append("second")
        return {"result": ["second"]}

    return second


def test_set_node_defaults_gives_policies_to_the_nodes_without_their_own(
    sleeps: list[float],
) -> None:
    def program(api):
        calls: dict = {}
        cached: list = []
        own = api.RetryPolicy(max_attempts=2, initial_interval=2.0, jitter=False)
        app = (
            api.StateGraph(State)
            .set_node_defaults(
                retry_policy=api.RetryPolicy(initial_interval=1.0, jitter=False, retry_on=KeyError),
                cache_policy=api.CachePolicy(),
            )
            .add_node("a", flaky(calls, "a", 2, KeyError))
            .add_node("b", flaky(calls, "b", 5, KeyError), retry_policy=own)
            .add_node("c", lambda s: cached.append(1) or {"log": ["c"]})
            .add_edge(api.START, "a")
            .add_edge("a", "c")
            .add_edge(api.START, "b")
            .compile(cache=api.InMemoryCache())
        )
        out = [raised(lambda: app.invoke({"foo": "", "log": []})) for _ in range(2)]
        return {"out": out, "calls": calls, "c runs": len(cached)}

    same(program, sleeps=sleeps)


def test_a_cached_task_streams_first_in_its_step() -> None:
    def program(api):
        calls: list = []
        app = (
            api.StateGraph(Numbers)
            .add_node("z_cached", counted(calls, "z"), cache_policy=api.CachePolicy())
            .add_node("a_plain", counted(calls, "a"))
            .add_edge(api.START, "z_cached")
            .add_edge(api.START, "a_plain")
            .compile(cache=api.InMemoryCache())
        )
        modes = ["updates", "values"]
        runs = [list(app.stream({"x": 1, "result": []}, stream_mode=modes)) for _ in range(2)]
        return {"runs": runs, "calls": calls}

    same(program)
