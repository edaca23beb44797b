"""A compiled graph's Runnable surface where nbgraph says more than LangGraph: the errors
`astream_events` and `compile(checkpointer=...)` raise, and what they name."""

import asyncio
import sys

import pytest

from nbgraph import START, StateGraph


def app(**options):
    return (
        StateGraph(dict).add_node("a", lambda s: {"n": 1}).add_edge(START, "a").compile(**options)
    )


def test_astream_events_without_langchain_core_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "langchain_core.tracers.event_stream", None)
    with pytest.raises(ImportError, match=r"pip install nbgraph\[langchain\]"):
        app().astream_events({"n": 0}, version="v2")


@pytest.mark.parametrize("version", ["v1", "v3"])
def test_astream_events_takes_only_version_v2(version):
    with pytest.raises(NotImplementedError, match="version='v2'"):
        app().astream_events({"n": 0}, version=version)


def test_compile_names_the_savers_it_takes_and_what_it_got():
    with pytest.raises(TypeError, match=r"Expected an nbgraph saver .*Received int\."):
        app(checkpointer=5)


def test_config_callbacks_without_langchain_core_name_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "nbgraph.engine.streaming.chain_events", None)
    with pytest.raises(ValueError, match=r"pip install nbgraph\[langchain\]"):
        app().invoke({"n": 0}, {"callbacks": [object()]})


def test_astream_events_yields_the_graph_and_node_runs():
    pytest.importorskip("langchain_core")

    async def names():
        return [(e["event"], e["name"]) async for e in app().astream_events({"n": 0})]

    assert asyncio.run(names()) == [
        ("on_chain_start", "LangGraph"),
        ("on_chain_start", "a"),
        ("on_chain_stream", "a"),
        ("on_chain_end", "a"),
        ("on_chain_stream", "LangGraph"),
        ("on_chain_end", "LangGraph"),
    ]
