"""The record of an entrypoint's run (`nbgraph.func`): each `@task` call is a task of the
run's record with what it returned, and the record's tables, tree, drawing, inspector and
run files work on it as on any run."""

import pytest

from nbgraph import InMemorySaver, Run
from nbgraph.func import entrypoint, task
from nbgraph.types import Command

pd = pytest.importorskip("pandas")


@task
def double(x: int) -> int:
    return 2 * x


@task
def ask(x: int) -> str:
    from nbgraph import interrupt

    return interrupt(f"keep {x}?")


def make_app(checkpointer=None):
    @entrypoint(checkpointer=checkpointer)
    def doubled(n: int, *, previous=None) -> list:
        values = [f.result() for f in [double(i) for i in range(n)]]
        return entrypoint.final(value=values, save=sum(values) + (previous or 0))

    return doubled


def test_each_call_is_a_task_of_the_step_with_what_it_returned():
    run = make_app().run(3)
    steps = run.steps
    calls = steps[steps["kind"] == "call"]
    assert list(calls["node"]) == ["double"] * 3
    assert all(list(t) == ["doubled"] for t in calls["triggers"])
    assert len(set(steps["step"])) == 1  # the calls ran in the entrypoint's step
    call_tasks = [t for t in run.log.steps[-1].tasks if t.kind == "call"]
    assert [t.writes for t in call_tasks] == [[("calls", [0])], [("calls", [2])], [("calls", [4])]]


def test_effects_show_output_saved_value_and_call_results():
    run = make_app().run(3)
    effects = run.effects
    last = effects[effects["step"] == effects["step"].max()].set_index("field")
    assert last.loc["output", "after"] == [0, 2, 4]
    assert last.loc["previous", "after"] == 6
    assert last.loc["calls", "after"] == [0, 2, 4]
    assert list(last.loc["calls", "writers"]) == ["double", "double", "double"]


def test_state_is_input_output_previous():
    app = make_app(InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    app.invoke(2, config)
    run = app.run(3, config)
    final = run.final_state if hasattr(run, "final_state") else run.log.final
    assert final["input"] == 3
    assert final["output"] == [0, 2, 4]
    assert final["previous"] == 6 + 2  # this run's sum plus what the last run saved
    assert app.get_state(config).values == [0, 2, 4]


def test_tree_has_a_box_per_call():
    run = make_app().run(2)
    assert run.tree.by_name["double"] == ["task:1:1:double", "task:1:2:double"]
    merge = [n for n in run.tree.nodes if n.startswith("merge:")][-1]
    assert "task:1:1:double" in run.tree.nodes[merge].parents


def test_drawing_shows_the_called_task():
    source = make_app().run(3).draw().source
    assert "double\\n@task\\nran ×3" in source
    assert 'label="call ×3"' in source


def test_run_file_round_trip(tmp_path):
    run = make_app().run(3)
    path = tmp_path / "run.json"
    run.save(path)
    loaded = Run.load(path)
    pd.testing.assert_frame_equal(loaded.effects, run.effects)
    assert list(loaded.steps["kind"]) == list(run.steps["kind"])
    arg = next(t.arg for t in loaded.log.steps[-1].tasks if t.kind == "call")
    assert list(arg) == [(0,), {}]  # (args, kwargs), as called


def test_inspector_builds_on_an_entrypoint_run():
    pytest.importorskip("ipywidgets")
    from nbgraph import inspect

    widget = inspect(make_app().run(2))
    assert widget is not None


def test_paused_call_is_recorded_and_resumed_run_records_its_answer():
    @entrypoint(checkpointer=InMemorySaver())
    def review(x: int) -> list:
        return [double(x).result(), ask(x).result()]

    config = {"configurable": {"thread_id": "r"}}
    paused = review.run(1, config)
    assert paused.status == "interrupted"
    kinds = {t.node: t for t in paused.log.steps[-1].tasks}
    assert kinds["ask"].interrupts and kinds["review"].interrupts
    done = review.run(Command(resume="yes"), config)
    calls = [t for t in done.log.steps[-1].tasks if t.kind == "call"]
    assert [(t.node, t.cached) for t in calls] == [("double", True), ("ask", False)]
    assert calls[1].writes == [("calls", ["yes"])]
    assert review.get_state(config).values == [2, "yes"]


def test_calls_in_a_state_graph_node_are_tasks_that_write_no_field():
    from typing import TypedDict

    from nbgraph import START, StateGraph

    class State(TypedDict):
        numbers: list
        total: int
        calls: list  # (the graph's own field: a call never writes it)

    def add_up(state: State) -> dict:
        return {"total": sum(f.result() for f in [double(n) for n in state["numbers"]])}

    graph = StateGraph(State).add_node("add_up", add_up).add_edge(START, "add_up")
    app = graph.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "g"}}
    run = app.run({"numbers": [1, 2]}, config)
    assert list(run.steps["kind"]) == ["edge", "call", "call"]
    assert set(run.effects["field"]) == {"numbers", "total"}  # no call wrote a field
    assert app.get_state(config).values == {"numbers": [1, 2], "total": 6}
    calls = [t for t in run.log.steps[-1].tasks if t.kind == "call"]
    assert [t.writes for t in calls] == [[("__return__", [2])], [("__return__", [4])]]


def test_run_from_the_checkpointer_of_an_entrypoint_thread(tmp_path):
    from nbgraph import SqliteSaver

    saver = SqliteSaver(tmp_path / "t.sqlite")
    try:
        app = make_app(saver)
        config = {"configurable": {"thread_id": "s"}}
        app.invoke(2, config)
        assert app.invoke(3, config) == [0, 2, 4]
        run = Run.from_checkpointer(saver, "s", graph=app)
        kinds = list(run.steps["kind"])
        assert kinds.count("call") == 5  # both runs' calls, read back from the saver
    finally:
        saver.close()


def test_a_task_call_in_a_branch_run_is_refused_by_name():
    from typing import TypedDict

    from nbgraph import START, StateGraph

    class State(TypedDict):
        total: int

    def add(state: State) -> dict:
        return {"total": double(state["total"]).result()}

    app = StateGraph(State).add_node("add", add).add_edge(START, "add")
    with pytest.raises(NotImplementedError, match="'double' was called in node 'add'"):
        app.compile(semantics="branches").invoke({"total": 1})
