"""`stream_mode="checkpoints"` under each durability: the saved checkpoints, or none when
nothing is saved while the run goes."""

import pytest

from nbgraph import START, MemorySaver, StateGraph


def app():
    builder = StateGraph(dict).add_node("a", lambda s: {"n": 1}).add_node("b", lambda s: {"m": 2})
    return builder.add_edge(START, "a").add_edge("a", "b").compile(checkpointer=MemorySaver())


@pytest.mark.parametrize("durability", ["sync", "async"])
def test_each_saved_checkpoint_is_streamed_once_oldest_first(durability):
    graph, config = app(), {"configurable": {"thread_id": durability}}
    chunks = list(graph.stream({"n": 0}, config, stream_mode="checkpoints", durability=durability))
    history = list(graph.get_state_history(config))[::-1]
    assert [c["config"] for c in chunks] == [s.config for s in history]
    assert [c["metadata"]["step"] for c in chunks] == [-1, 0, 1, 2]
    assert chunks[-1]["values"] == {"n": 1, "m": 2} and chunks[-1]["next"] == []


def test_nothing_is_streamed_when_nothing_is_saved_until_the_end():
    graph, config = app(), {"configurable": {"thread_id": "exit"}}
    chunks = list(graph.stream({"n": 0}, config, stream_mode="checkpoints", durability="exit"))
    assert chunks == []
    assert graph.get_state(config).values == {"n": 1, "m": 2}
