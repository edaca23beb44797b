"""Time travel and stateful subgraphs (`engine.persistence.travel`): which past checkpoint a
`checkpointer=True` subgraph starts from is read from the checkpoints' `created_at`, which
must order them even when the clock does not move (a coarse clock)."""

import itertools
import operator
from typing import Annotated, TypedDict

import pytest

from nbgraph import START, MemorySaver, SqliteSaver, StateGraph
from nbgraph.engine.persistence import travel


class Outer(TypedDict):
    trail: Annotated[list, operator.add]


class Kept(TypedDict):
    kept: Annotated[list, operator.add]


def test_checkpoint_times_strictly_increase_even_when_the_clock_stands_still(monkeypatch):
    monkeypatch.setattr(travel.time, "time", lambda: 1000.0)
    stamps = [travel.now() for _ in range(1000)]
    assert all(a < b for a, b in itertools.pairwise(stamps))


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_a_replay_finds_the_subgraph_state_of_its_time_on_a_frozen_clock(
    kind, tmp_path, monkeypatch
):
    """Every checkpoint made at one clock reading: the replay of the second run still starts
    the stateful subgraph from its state after the first run, not its latest."""
    monkeypatch.setattr(travel.time, "time", lambda: 1000.0)
    seen: list[int] = []

    def keep(state):
        seen.append(len(state["kept"]))
        return {"kept": ["x"]}

    sub = StateGraph(Kept).add_node("keep", keep).add_edge(START, "keep").compile(checkpointer=True)
    saver = MemorySaver() if kind == "memory" else SqliteSaver(tmp_path / "t.sqlite")
    app = (
        StateGraph(Outer)
        .add_node("stamp", lambda s: {"trail": ["s"]})
        .add_node("keeper", sub)
        .add_edge(START, "stamp")
        .add_edge("stamp", "keeper")
        .compile(checkpointer=saver)
    )
    config = {"configurable": {"thread_id": "frozen"}}
    app.invoke({"trail": []}, config)
    app.invoke({"trail": []}, config)
    second = next(s for s in app.get_state_history(config) if s.next == ("stamp",))
    app.invoke(None, second.config)
    app.invoke({"trail": []}, config)
    assert seen == [0, 1, 1, 2]
