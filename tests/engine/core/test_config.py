"""A run's config: defaults, and a clear error for every value a run cannot use, the same
from invoke, stream, ainvoke and run (nbgraph/engine/core/config.py)."""

import asyncio
import operator
from typing import Annotated, TypedDict

import pytest

from nbgraph import END, START, InvalidArgumentError, NbgraphError, StateGraph
from nbgraph.engine.core.config import DEFAULT_RECURSION_LIMIT, run_config


class Count(TypedDict):
    n: int
    log: Annotated[list, operator.add]


def counter():
    """a -> a ... until n > 3: five supersteps with the input."""
    return (
        StateGraph(Count)
        .add_node("a", lambda s: {"n": s["n"] + 1})
        .add_edge(START, "a")
        .add_conditional_edges("a", lambda s: END if s["n"] > 3 else "a", ["a", END])
        .compile()
    )


def fan_out():
    return (
        StateGraph(Count)
        .add_node("a", lambda s: {"log": ["a"]})
        .add_node("b", lambda s: {"log": ["b"]})
        .add_edge(START, "a")
        .add_edge(START, "b")
        .compile()
    )


def every_entry_point(app, config):
    """The error (or result) each way of starting a run gives for `config`."""

    async def astream():
        return [chunk async for chunk in app.astream({"n": 0, "log": []}, config)]

    calls = {
        "invoke": lambda: app.invoke({"n": 0, "log": []}, config),
        "stream": lambda: list(app.stream({"n": 0, "log": []}, config)),
        "run": lambda: app.run({"n": 0, "log": []}, config),
        "ainvoke": lambda: asyncio.run(app.ainvoke({"n": 0, "log": []}, config)),
        "astream": lambda: asyncio.run(astream()),
    }
    outcomes = {}
    for name, call in calls.items():
        with pytest.raises(InvalidArgumentError) as caught:
            call()
        outcomes[name] = str(caught.value)
    return outcomes


@pytest.mark.parametrize("limit", [True, False, 0, -1, 2.0, 1.5, "2", [3]])
def test_a_recursion_limit_that_is_not_a_positive_integer_is_refused(limit):
    outcomes = every_entry_point(counter(), {"recursion_limit": limit})
    (message,) = set(outcomes.values())  # every entry point says the same
    assert message.startswith("recursion_limit must be at least 1 (an integer")
    assert f"got {limit!r}" in message


@pytest.mark.parametrize("value", [0, -1, "2", True, 1.5])
def test_a_max_concurrency_that_is_not_a_positive_integer_is_refused(value):
    outcomes = every_entry_point(fan_out(), {"max_concurrency": value})
    (message,) = set(outcomes.values())  # ainvoke no longer takes 0 as "no limit"
    assert message.startswith("max_concurrency must be at least 1 (an integer")
    assert f"got {value!r}" in message and "None for no limit" in message


def test_the_keyword_forms_are_checked_too():
    with pytest.raises(InvalidArgumentError, match=r"max_concurrency .* got 0\."):
        fan_out().invoke({"log": []}, max_concurrency=0)
    with pytest.raises(InvalidArgumentError, match=r"recursion_limit .* got True \(a bool\)"):
        counter().invoke({"n": 0}, recursion_limit=True)


def test_none_means_the_default_limit_and_no_concurrency_limit():
    app = counter()
    assert app.invoke({"n": 0}, {"recursion_limit": None, "max_concurrency": None})["n"] == 4
    assert app.last_run.log.config["recursion_limit"] == DEFAULT_RECURSION_LIMIT
    assert fan_out().invoke({"log": []}, max_concurrency=None) == {"log": ["a", "b"]}


def test_good_limits_still_run():
    assert counter().invoke({"n": 0}, {"recursion_limit": 5})["n"] == 4
    assert fan_out().invoke({"log": []}, {"max_concurrency": 1}) == {"log": ["a", "b"]}


def test_every_problem_is_named_in_one_error():
    with pytest.raises(InvalidArgumentError) as caught:
        counter().invoke({"n": 0}, {"recursion_limit": 0, "max_concurrency": "4"})
    assert "recursion_limit" in str(caught.value) and "max_concurrency" in str(caught.value)


def test_config_and_configurable_must_be_dicts():
    with pytest.raises(InvalidArgumentError, match=r"config must be a dict .* got 'x' \(a str\)"):
        counter().invoke({"n": 0}, "x")
    with pytest.raises(InvalidArgumentError, match=r"configurable must be a dict .* got 3\."):
        counter().invoke({"n": 0}, {"configurable": 3})


def test_the_error_is_a_value_error_of_nbgraph():
    assert issubclass(InvalidArgumentError, ValueError)
    assert issubclass(InvalidArgumentError, NbgraphError)


def test_run_config_fills_defaults_takes_the_keywords_and_leaves_the_callers_dict():
    given = {"configurable": {"thread_id": "t"}}
    extra = {"max_concurrency": 2, "stream_mode": "values"}
    merged = run_config(given, extra)
    assert merged == {
        "recursion_limit": DEFAULT_RECURSION_LIMIT,
        "configurable": {"thread_id": "t"},
        "max_concurrency": 2,
    }
    assert extra == {"stream_mode": "values"}  # the config keys were taken out
    assert given == {"configurable": {"thread_id": "t"}}
