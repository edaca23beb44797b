"""Graphs that run graphs: the small subgraph the subgraph suites share, and a recorded app
whose run has subruns two levels deep and one made by a node's function."""

# No `from __future__ import annotations`: both engines read the state's annotations.

import operator
from typing import Annotated, Any, TypedDict


class Shared(TypedDict):
    foo: str
    log: Annotated[list[str], operator.add]


def shared_subgraph(api: Any, name: str = "inner") -> Any:
    """One node `name` that appends its name and an "!" to `foo`, built from `api.*`."""

    def step(state: Shared):
        return {"foo": state["foo"] + "!", "log": [name]}

    builder = api.StateGraph(Shared)
    builder.add_node(name, step)
    builder.add_edge(api.START, name)
    return builder.compile()


def recorded_app() -> Any:
    """START -> first -> (left, wrapper): `left` a two-level subgraph, `wrapper` a function
    that invokes a subgraph itself (nbgraph)."""
    import nbgraph

    api = nbgraph
    team = api.StateGraph(Shared)
    team.add_node("deep", shared_subgraph(api, "leaf"))
    team.add_edge(api.START, "deep")
    other = shared_subgraph(api, "other")

    def first(state: Shared):
        return {"log": ["first"]}

    def wrapper(state: Shared):
        return {"log": other.invoke({"foo": state["foo"], "log": []})["log"]}

    parent = nbgraph.StateGraph(Shared)
    parent.add_node(first)
    parent.add_node("left", team.compile(name="team"))
    parent.add_node(wrapper)
    parent.add_edge(api.START, "first")
    parent.add_edge("first", "left")
    parent.add_edge("first", "wrapper")
    return parent.compile()
