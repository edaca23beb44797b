"""A wrong argument type to a public call ends in an nbgraph error naming the argument."""

import pytest

import nbgraph
from nbgraph import START, MemorySaver, Run, StateGraph
from nbgraph.errors import GraphBuildError, InvalidArgumentError

CONFIG = {"configurable": {"thread_id": "t"}}


@pytest.fixture(scope="module")
def app():
    graph = StateGraph(dict).add_node("a", lambda s: {"x": 1}).add_edge(START, "a")
    return graph.compile(checkpointer=MemorySaver())


@pytest.fixture(scope="module")
def run(app):
    return app.run({"x": 0}, CONFIG)


@pytest.mark.parametrize(
    ("call", "named"),
    [
        (lambda app, run: app.get_state("t"), "config"),
        (lambda app, run: run.compare(5), "other"),
        (lambda app, run: nbgraph.inspect(5), "run"),
        (lambda app, run: nbgraph.inspect(run, other=5), "other"),
        (lambda app, run: run.draw(branch=5), "branch"),
        (lambda app, run: run.draw(step="1"), "step"),
        (lambda app, run: list(app.checkpointer.list("t")), "config"),
        (lambda app, run: list(app.checkpointer.list(CONFIG, before="x")), "before"),
        (lambda app, run: Run.from_checkpointer(app.checkpointer, "t", graph=5), "graph"),
        (lambda app, run: Run.from_checkpointer(app.checkpointer, "t", 5), "checkpoint_id"),
        (lambda app, run: Run.from_langgraph(app, "t"), "config"),
    ],
)
def test_a_wrong_argument_type_is_named(app, run, call, named):
    with pytest.raises(InvalidArgumentError, match=named):
        call(app, run)


def test_an_unknown_thread_is_an_argument_error(app):
    with pytest.raises(InvalidArgumentError, match="has no"):
        Run.from_checkpointer(app.checkpointer, "no such thread")


@pytest.mark.parametrize(
    ("source", "target"), [(None, "a"), (["a", 1], "a"), (START, None), (START, 5)]
)
def test_an_edge_that_names_no_node_is_a_build_problem(source, target):
    graph = StateGraph(dict).add_node("a", lambda s: {}).add_edge(START, "a")
    graph.add_edge(source, target)
    with pytest.raises(GraphBuildError, match="node name"):
        graph.compile()
