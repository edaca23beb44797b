"""Retries and the node cache in nbgraph itself: the policies' checks, the waits, the record
of every attempt (tables, run files, checkpoints, the inspector) and the cache's own parts.

How they behave next to LangGraph is tested in tests/parity/test_langgraph_retry.py.
"""

from __future__ import annotations

import asyncio
import json
import operator
import time
from typing import Annotated, Any, TypedDict

import pytest

import nbgraph
from nbgraph import (
    START,
    CachePolicy,
    GraphBuildError,
    InMemoryCache,
    InMemorySaver,
    RetryPolicy,
    Run,
    StateGraph,
)
from nbgraph.engine.core.retrying import matching_policy, retry_wait
from nbgraph.policies import default_cache_key, default_retry_on
from nbgraph.views.panels.panels import attempts_html


class S(TypedDict):
    x: int
    log: Annotated[list, operator.add]


@pytest.fixture(autouse=True)
def no_waiting(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    waits: list[float] = []
    monkeypatch.setattr(time, "sleep", waits.append)
    return waits


def flaky(fails: int, error: type = ValueError, calls: list | None = None):
    calls = [] if calls is None else calls

    def a(state):  # fails its first `fails` attempts for each x
        calls.append(state["x"])
        attempt = calls.count(state["x"])
        if attempt <= fails:
            raise error(f"<b>attempt {attempt}</b>")
        return {"log": [f"a{attempt}"]}

    return a


def retried_run(fails: int = 2, **policy: Any) -> Run:
    policy = {"retry_on": ValueError, "jitter": False, **policy}
    app = (
        StateGraph(S)
        .add_node("a", flaky(fails), retry_policy=RetryPolicy(**policy))
        .add_node("b", lambda s: {"log": ["b"]}, cache_policy=CachePolicy(key_func=lambda s: "b"))
        .add_edge(START, "a")
        .add_edge(START, "b")
        .compile(cache=InMemoryCache())
    )
    app.invoke({"x": 0, "log": []})  # b's writes go into the cache
    return app.run({"x": 1, "log": []})


# --- the policies --------------------------------------------------------------------------


def test_the_names_are_where_langgraph_has_them() -> None:
    assert nbgraph.types.RetryPolicy is RetryPolicy and nbgraph.types.CachePolicy is CachePolicy
    assert {"RetryPolicy", "CachePolicy", "InMemoryCache"} <= set(nbgraph.__all__)
    assert RetryPolicy()._asdict() == {
        "initial_interval": 0.5, "backoff_factor": 2.0, "max_interval": 128.0,
        "max_attempts": 3, "jitter": True, "retry_on": default_retry_on,
    }  # fmt: skip


def test_the_waits_grow_by_the_backoff_factor_up_to_the_max_and_jitter_adds_up_to_a_second():
    policy = RetryPolicy(initial_interval=0.5, backoff_factor=3, max_interval=4, jitter=False)
    assert [retry_wait(policy, n) for n in (1, 2, 3, 4)] == [0.5, 1.5, 4, 4]
    jittered = [retry_wait(policy._replace(jitter=True), 1) for _ in range(50)]
    assert all(0.5 <= wait <= 1.5 for wait in jittered) and len(set(jittered)) > 1


def test_the_first_matching_policy_applies() -> None:
    policies = [RetryPolicy(retry_on=KeyError), RetryPolicy(retry_on=(ValueError, KeyError))]
    assert matching_policy(policies, KeyError()) is policies[0]
    assert matching_policy(policies, ValueError()) is policies[1]
    assert matching_policy(policies, TypeError()) is None


def test_the_default_retry_on_does_not_import_http_libraries() -> None:
    import sys

    before = {"httpx", "requests"} & set(sys.modules)
    assert default_retry_on(ConnectionError()) and not default_retry_on(KeyError())
    assert {"httpx", "requests"} & set(sys.modules) == before


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({"retry_policy": RetryPolicy(max_attempts=0)}, "RetryPolicy.max_attempts must be"),
        ({"retry_policy": RetryPolicy(initial_interval=-1)}, "initial_interval must be"),
        ({"retry_policy": RetryPolicy(retry_on=42)}, "retry_on must be an exception class"),
        ({"retry_policy": [RetryPolicy(), "again"]}, "retry_policy= must be a RetryPolicy"),
        ({"retry_policy": {"max_attempts": 3}}, "retry_policy= must be a RetryPolicy"),
        ({"cache_policy": {"ttl": 3}}, "cache_policy= must be a CachePolicy"),
        ({"cache_policy": CachePolicy(key_func=3)}, "key_func must be callable"),
    ],
)
def test_a_bad_policy_is_refused_naming_the_node(options: dict, expected: str) -> None:
    builder = StateGraph(S).add_node("flaky", flaky(0), **options).add_edge(START, "flaky")
    with pytest.raises(GraphBuildError, match="Node 'flaky'") as caught:
        builder.compile()
    assert expected in str(caught.value)


def test_a_cache_without_get_set_and_clear_is_refused() -> None:
    builder = StateGraph(S).add_node("a", flaky(0)).add_edge(START, "a")
    with pytest.raises(GraphBuildError, match=r"compile\(cache=.*no get, set, clear"):
        builder.compile(cache=object())


def test_langgraphs_older_retry_keyword_works_too(no_waiting: list[float]) -> None:
    calls: list = []
    app = (
        StateGraph(S)
        .add_node("a", flaky(1, calls=calls), retry=RetryPolicy(retry_on=ValueError))
        .add_edge(START, "a")
        .compile()
    )
    assert app.invoke({"x": 1, "log": []})["log"] == ["a2"] and len(calls) == 2


def test_a_retry_on_that_raises_fails_the_task_naming_the_node() -> None:
    def broken(error: Exception) -> bool:
        raise LookupError("no idea")

    app = (
        StateGraph(S)
        .add_node("a", flaky(1), retry_policy=RetryPolicy(retry_on=broken))
        .add_edge(START, "a")
        .compile()
    )
    with pytest.raises(LookupError) as caught:
        app.invoke({"x": 1, "log": []})
    assert "deciding whether to retry node 'a'" in "".join(caught.value.__notes__)
    assert isinstance(caught.value.__cause__, ValueError)


# --- the record ----------------------------------------------------------------------------


def test_the_steps_table_shows_every_attempt_and_the_cached_task() -> None:
    run = retried_run()
    steps = run.steps.set_index("node")
    assert steps.loc["a", "attempts"] == 3 and steps.loc["a", "status"] == "ok"
    assert steps.loc["a", "attempt_errors"] == [
        "ValueError: <b>attempt 1</b>",
        "ValueError: <b>attempt 2</b>",
    ]
    assert steps.loc["b", "attempts"] == 1 and steps.loc["b", "status"] == "cached"
    assert run.log.steps[1].tasks[0].attempts[1].wait == 1.0


def test_a_task_whose_attempts_ran_out_shows_them_all() -> None:
    app = (
        StateGraph(S)
        .add_node("a", flaky(9), retry_policy=RetryPolicy(max_attempts=2, retry_on=ValueError))
        .add_edge(START, "a")
        .compile()
    )
    run = app.run({"x": 1, "log": []})
    row = run.steps.iloc[0]
    assert (row.status, row.attempts, row.error) == ("error", 2, "ValueError: <b>attempt 2</b>")
    assert row.attempt_errors == ["ValueError: <b>attempt 1</b>"]


def test_run_files_keep_the_attempts_and_the_cache_mark(tmp_path) -> None:
    run = retried_run()
    path = tmp_path / "run.json"
    run.save(path)
    task = json.loads(path.read_text())["run"]["steps"][1]["tasks"][0]
    assert [a["error"]["type"] for a in task["attempts"]] == ["ValueError", "ValueError"]
    loaded = Run.load(path)
    columns = ["node", "status", "attempts", "attempt_errors"]
    assert loaded.steps[columns].equals(run.steps[columns])


def test_a_run_file_with_broken_attempts_is_refused(tmp_path) -> None:
    run = retried_run()
    path = tmp_path / "run.json"
    run.save(path)
    document = json.loads(path.read_text())
    document["run"]["steps"][1]["tasks"][0]["attempts"][0]["number"] = "one"
    path.write_text(json.dumps(document))
    with pytest.raises(ValueError, match="attempts"):
        Run.load(path)


@pytest.mark.parametrize("saver", ["memory", "sqlite"])
def test_a_run_rebuilt_from_its_checkpoints_keeps_the_attempts(saver: str, tmp_path) -> None:
    from nbgraph import SqliteSaver

    checkpointer = InMemorySaver() if saver == "memory" else SqliteSaver(tmp_path / "t.db")
    calls: list = []
    app = (
        StateGraph(S)
        .add_node("a", flaky(1, calls=calls), retry_policy=RetryPolicy(retry_on=ValueError))
        .add_node("b", lambda s: {"log": ["b"]}, cache_policy=CachePolicy())
        .add_edge(START, "a")
        .add_edge("a", "b")
        .compile(checkpointer=checkpointer, cache=InMemoryCache())
    )
    app.invoke({"x": 1, "log": []}, {"configurable": {"thread_id": "first"}})
    calls.clear()
    app.invoke({"x": 1, "log": []}, {"configurable": {"thread_id": "t"}})
    rebuilt = Run.from_checkpointer(checkpointer, "t")
    columns = ["node", "status", "attempts", "attempt_errors"]
    assert rebuilt.steps[columns].values.tolist() == [
        ["a", "ok", 2, ["ValueError: <b>attempt 1</b>"]],
        ["b", "cached", 1, []],
    ]


def test_the_inspector_shows_the_attempts_escaped() -> None:
    run = retried_run()
    html = attempts_html(run.log.steps[1].tasks)
    assert "<b>a</b>: 3 attempts, the last succeeded" in html
    assert "attempt 1: ValueError: &lt;b&gt;attempt 1&lt;/b&gt; — retried after 0.5 s" in html
    assert "<b>b</b>: writes from the node cache (not run)" in html
    assert "<b>attempt" not in html
    pytest.importorskip("ipywidgets")
    inspector = run.inspect()
    inspector.go(1)
    assert "3 attempts" in inspector.error.value


def test_a_step_with_no_retries_shows_nothing() -> None:
    app = StateGraph(S).add_node("a", flaky(0)).add_edge(START, "a").compile()
    assert attempts_html(app.run({"x": 1, "log": []}).log.steps[1].tasks) == ""


# --- the cache -----------------------------------------------------------------------------


def test_the_cache_copies_values_in_and_out() -> None:
    cache = InMemoryCache()
    value = [[1], {"a": [2]}]
    cache.set({(("ns",), "k"): (value, None)})
    value[0].append("changed")
    got = cache.get([(("ns",), "k")])[(("ns",), "k")]
    got[1]["a"].append("changed")
    assert cache.get([(("ns",), "k")])[(("ns",), "k")] == [[1], {"a": [2]}]


def test_entries_expire_after_their_ttl_and_clear_drops_namespaces(monkeypatch) -> None:
    cache = InMemoryCache()
    now = [1000.0]
    monkeypatch.setattr(time, "time", lambda: now[0])
    cache.set({(("a",), "k"): (1, 10), (("b",), "k"): (2, None)})
    now[0] += 9
    assert cache.get([(("a",), "k"), (("b",), "k")]) == {(("a",), "k"): 1, (("b",), "k"): 2}
    now[0] += 2
    assert cache.get([(("a",), "k"), (("b",), "k")]) == {(("b",), "k"): 2}
    cache.clear([("b",)])
    assert cache.get([(("b",), "k")]) == {} and "0 entries" in repr(cache)


def test_equal_inputs_give_equal_default_keys_whatever_their_order() -> None:
    assert default_cache_key({"a": 1, "b": {2, 3}}) == default_cache_key({"b": {3, 2}, "a": 1})
    assert default_cache_key({"a": 1}) != default_cache_key({"a": 2})


def test_a_key_func_must_return_str_or_bytes() -> None:
    app = (
        StateGraph(S)
        .add_node("a", flaky(0), cache_policy=CachePolicy(key_func=len))
        .add_edge(START, "a")
        .compile(cache=InMemoryCache())
    )
    with pytest.raises(
        TypeError, match=r"key_func of node .a. returned 2 \(int\) at step 1; expected str or bytes"
    ):
        app.invoke({"x": 1, "log": []})


def test_a_key_func_that_raises_names_the_node() -> None:
    def key(state: Any) -> str:
        raise TypeError("cannot key this")

    app = (
        StateGraph(S)
        .add_node("a", flaky(0), cache_policy=CachePolicy(key_func=key))
        .add_edge(START, "a")
        .compile(cache=InMemoryCache())
    )
    with pytest.raises(TypeError) as caught:
        app.invoke({"x": 1, "log": []})
    assert "cache key of node 'a'" in "".join(caught.value.__notes__)


def test_async_runs_use_the_cache_and_retry() -> None:
    asyncio.run(_async_runs())


async def _async_runs() -> None:
    calls: list = []

    async def a(state):
        calls.append(1)
        if len(calls) == 1:
            raise ValueError("once")
        return {"log": ["a"]}

    app = (
        StateGraph(S)
        .add_node("a", a, retry_policy=RetryPolicy(initial_interval=0, retry_on=ValueError),
                  cache_policy=CachePolicy())
        .add_edge(START, "a")
        .compile(cache=InMemoryCache())
    )  # fmt: skip
    assert (await app.ainvoke({"x": 1, "log": []}))["log"] == ["a"]
    assert (await app.ainvoke({"x": 1, "log": []}))["log"] == ["a"]
    assert len(calls) == 2
    await app.aclear_cache()
    await app.ainvoke({"x": 1, "log": []})
    assert len(calls) == 3


def test_branch_semantics_retry_and_cache_too() -> None:
    calls: list = []
    app = (
        StateGraph(S)
        .add_node("a", flaky(1, calls=calls), retry_policy=RetryPolicy(retry_on=ValueError))
        .add_node("b", lambda s: {"log": ["b"]}, cache_policy=CachePolicy())
        .add_edge(START, "a")
        .add_edge(START, "b")
        .compile(semantics="branches", cache=InMemoryCache())
    )
    first = app.run({"x": 1, "log": []})
    second = app.run({"x": 1, "log": []})
    assert (first.output["log"], second.output["log"]) == (["a2", "b"], ["a3", "b"])
    assert list(first.steps.attempts) == [2, 1] and list(second.steps.status) == ["ok", "cached"]
    assert len(calls) == 3


def test_many_attempts_do_not_grow_the_stack(no_waiting: list[float]) -> None:
    policy = RetryPolicy(max_attempts=3000, initial_interval=0, jitter=False, retry_on=ValueError)
    app = StateGraph(S).add_node("a", flaky(2500), retry_policy=policy).add_edge(START, "a")
    run = app.compile().run({"x": 1, "log": []})
    assert run.output["log"] == ["a2501"] and run.steps.attempts[0] == 2501
    assert len(no_waiting) == 2500


def test_set_node_defaults_refuses_what_nbgraph_does_not_do_and_bad_policies() -> None:
    builder = (
        StateGraph(S)
        .set_node_defaults(error_handler=lambda s: None, timeout=3)
        .set_node_defaults(retry_policy="often")
        .add_node("a", flaky(0))
        .add_edge(START, "a")
    )
    with pytest.raises(GraphBuildError) as caught:
        builder.compile()
    message = str(caught.value)
    assert "set_node_defaults(): error_handler= is not supported yet" in message
    assert "set_node_defaults(): timeout= is not supported yet" in message
    assert "set_node_defaults(): retry_policy= must be a RetryPolicy" in message


def test_the_drawing_says_how_many_attempts_were_retried_and_tasks_cached() -> None:
    source = retried_run().draw().source
    assert "2 tasks, 2 failed attempts retried, 1 from the node cache" in source
