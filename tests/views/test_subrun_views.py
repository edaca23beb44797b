"""Nested records seen: a run's subruns in its state tree, its `steps` table, its drawings
and the inspector's step-into (nbgraph only; the subgraph semantics themselves are compared
with LangGraph in tests/parity/test_langgraph_subgraphs.py)."""

import operator
import subprocess
from typing import Annotated, TypedDict

import pytest

from nbgraph import END, START, StateGraph
from tests.support.dot import EVIL, clusters, edges, labels
from tests.support.subgraphs import recorded_app


class Shared(TypedDict):
    foo: str
    log: Annotated[list[str], operator.add]


def recorded_run():
    app = recorded_app()
    app.invoke({"foo": "x", "log": []})
    return app.last_run


def evil_app():
    """A parent whose node named EVIL runs a subgraph whose node is named EVIL too."""
    inner = StateGraph(Shared)
    inner.add_node(EVIL, lambda s: {"foo": "<i>" + s["foo"], "log": [EVIL]})
    inner.add_edge(START, EVIL)
    parent = StateGraph(Shared)
    parent.add_node(EVIL, inner.compile(name=EVIL))
    parent.add_edge(START, EVIL)
    return parent.compile()


# --- the tree ----------------------------------------------------------------------------------


def test_a_subruns_tree_hangs_off_the_task_that_ran_it():
    run = recorded_run()
    tree = run.tree
    assert [n.id for n in tree.tasks()] == ["task:1:0:first", "task:2:0:left", "task:2:1:wrapper"]
    (left,) = tree.subtrees["task:2:0:left"]
    assert left.prefix == "task:2:0:left/0/"
    assert left.root.id == "task:2:0:left/0/input" and left.root.parents == ("task:2:0:left",)
    assert dict(left.root.writes) == {"foo": "x", "log": ["first"]}
    children = [n.id for n in tree.children("task:2:0:left")]
    assert children == ["merge:2", "task:2:0:left/0/input"]
    assert [n.name for n in left.tasks()] == ["deep"]
    assert left.merge(1).parents == ("task:2:0:left/0/task:1:0:deep",)
    (deep,) = left.subtrees["task:2:0:left/0/task:1:0:deep"]  # nested the same way
    leaf = deep.occurrence("leaf", 0)
    assert leaf.id == "task:2:0:left/0/task:1:0:deep/0/task:1:0:leaf"
    assert tree.find(leaf.id) is leaf
    assert leaf.id in [n.id for n in tree.walk()]
    # the run's own nodes and lookups are unchanged
    assert len(tree) == 7 and "leaf" not in tree.by_name
    with pytest.raises(KeyError, match="in a subrun's tree"):
        tree[leaf.id]
    with pytest.raises(KeyError, match="No tree node"):
        tree.find("task:2:0:left/0/task:9:9:nowhere")


def test_steps_names_the_subruns_a_task_started():
    run = recorded_run()
    steps = run.steps.set_index("node")
    assert steps.loc["first", "subruns"] == []
    for node in ("left", "wrapper"):
        (index,) = steps.loc[node, "subruns"]
        assert run.subruns[index].task == steps.loc[node, "task_id"]
    (left,) = (run.subruns[i] for i in steps.loc["left", "subruns"])
    assert list(left.steps.subruns) == [[0]]


def test_the_tree_drawing_hangs_each_subruns_tree_off_its_task():
    source = recorded_run().draw_tree().source
    found = labels(source)
    inputs = [i for i, text in found.items() if text.startswith("subgraph input")]
    assert len(inputs) == 3  # left's, left's deep's, wrapper's
    into = {(a, b) for a, b, _ in edges(source) if b in inputs}
    tasks = {found[a].split("\\n")[0] for a, _ in into}
    assert tasks == {"left", "deep", "wrapper"}
    assert "leaf" in {text.split("\\n")[0] for text in found.values()}


def test_subrun_trees_are_escaped_in_the_drawing():
    app = evil_app()
    app.invoke({"foo": "&", "log": []})
    source = app.last_run.draw_tree().source
    assert "label=<" not in source and "<b>" in source  # as text, never markup
    assert '\\"q\\"' in source
    subprocess.run(["dot", "-Tsvg"], input=source.encode(), check=True, capture_output=True)


# --- the graph drawing -------------------------------------------------------------------------


def test_a_run_draws_each_node_that_ran_a_graph_as_a_cluster_with_its_counts():
    run = recorded_run()
    source = run.draw().source
    assert sorted(clusters(source).values()) == [
        "subgraph deep — 1 task inside",
        "subgraph left — 1 task inside",
        "subgraph wrapper — 1 task inside",  # a function that invoked a graph: its subrun's
    ]
    found = labels(source)
    assert "leaf\\nran ×1" in found.values() and "other\\nran ×1" in found.values()
    deep = next(i for i, t in found.items() if t.startswith("deep"))
    leaf = next(i for i, t in found.items() if t.startswith("leaf"))
    assert leaf.startswith(deep.rsplit("_", 1)[0])  # ids nest as the clusters do
    flat = run.draw(expand=False).source
    assert "cluster" not in flat and "leaf" not in flat and "left\\nran ×1" in flat


def test_counts_of_a_subgraph_run_several_times_are_summed():
    inner = StateGraph(Shared)
    inner.add_node("step", lambda s: {"log": ["s"]})
    inner.add_edge(START, "step")
    parent = StateGraph(Shared)
    parent.add_node("loop", inner.compile(name="inner"))
    parent.add_edge(START, "loop")
    parent.add_conditional_edges("loop", lambda s: "loop" if len(s["log"]) < 6 else END)
    app = parent.compile()
    app.invoke({"foo": "", "log": []})
    source = app.last_run.draw().source
    assert list(clusters(source).values()) == ["subgraph loop — 3 tasks inside"]
    assert "step\\nran ×3" in labels(source).values()


def test_the_app_drawing_shows_a_compiled_subgraph_inside_its_node_or_as_one_box():
    app = recorded_app()
    source = app.draw().source
    assert sorted(clusters(source).values()) == ["subgraph deep", "subgraph left"]
    assert "leaf" in labels(source).values()
    assert "wrapper" in labels(source).values()  # a function: nothing to look into
    flat = app.draw(expand=False).source
    assert "cluster" not in flat and "deep" not in flat


def test_subgraph_clusters_are_escaped():
    app = evil_app()
    for source in (app.draw().source, app.run({"foo": "&", "log": []}).draw().source):
        assert "label=<" not in source
        (title,) = clusters(source).values()
        assert title.startswith('subgraph <b>x</b> \\"q\\" & \\\\')
        subprocess.run(["dot", "-Tsvg"], input=source.encode(), check=True, capture_output=True)


# --- the inspector -----------------------------------------------------------------------------


def test_the_inspector_steps_into_a_subrun_and_back():
    run = recorded_run()
    inspector = run.inspect(recorded_run())
    nav = inspector.subrun_nav
    assert inspector.step == 1 and nav.into.disabled and nav.back.disabled
    assert nav.crumbs.value == "<b>run</b>"
    with pytest.raises(ValueError, match="No task of step 1 ran a graph"):
        nav.step_into()
    inspector.go(2)
    assert [label for label, _ in nav.pick.options] == [
        "left (task 2:0:left)",
        "wrapper (task 2:1:wrapper)",
    ]
    # the parent's step shows what the subgraph returned as one write by its node
    effects = inspector.effects.value
    assert effects.count("left: ") == 2  # one write to each of foo and log
    assert "left: &#x27;x!&#x27;" in effects and "deep" not in effects and "leaf: " not in effects
    nav.into.click()
    assert inspector.run is run.subruns[0] and inspector.step == 1
    assert nav.crumbs.value == "run › <b>left</b>" and not nav.back.disabled
    assert "<b>step 1</b> of 1: deep" in inspector.step_label.value
    assert "the other run" not in inspector.compare_mode.options  # it compares the parent
    nav.into.click()  # a subrun of a subrun
    assert inspector.run is run.subruns[0].subruns[0]
    assert nav.crumbs.value == "run › left › <b>deep</b>"
    assert "leaf: &#x27;x!&#x27;" in inspector.effects.value
    nav.back.click()
    assert inspector.run is run.subruns[0] and inspector.step == 1
    nav.back.click()
    assert inspector.run is run and inspector.step == 2 and nav.back.disabled
    assert "the other run" in inspector.compare_mode.options
    nav.pick.value = 1
    nav.into.click()
    assert inspector.run is run.subruns[1] and nav.crumbs.value == "run › <b>wrapper</b>"
    with pytest.raises(ValueError, match="has 0 subrun"):
        nav.step_into(0)


def test_an_inspector_opened_on_a_subrun_goes_back_to_its_parent():
    run = recorded_run()
    inspector = run.subruns[1].inspect()
    assert inspector.subrun_nav.crumbs.value == "run › <b>wrapper</b>"
    inspector.subrun_nav.back.click()
    assert inspector.run is run and inspector.step == 2


def test_the_breadcrumb_is_escaped():
    app = evil_app()
    run = app.run({"foo": "&", "log": []})
    inspector = run.inspect()
    inspector.subrun_nav.step_into(0)
    crumbs = inspector.subrun_nav.crumbs.value
    assert "<b>x</b>" not in crumbs
    assert crumbs == "run › <b>&lt;b&gt;x&lt;/b&gt; &quot;q&quot; &amp; \\</b>"
    assert "<b>x</b>" not in inspector.step_label.value


def test_a_loaded_run_shows_its_subruns_the_same_way(tmp_path):
    from nbgraph import Run

    run = recorded_run()
    back = Run.load(run.save(tmp_path / "run.json"), graph=recorded_app())
    assert [n.id for n in back.tree.walk()] == [n.id for n in run.tree.walk()]
    assert list(back.steps.subruns) == list(run.steps.subruns)
    assert sorted(clusters(back.draw().source).values()) == sorted(
        clusters(run.draw().source).values()
    )
    inspector = back.inspect()
    inspector.go(2)
    inspector.subrun_nav.into.click()
    assert inspector.run is back.subruns[0]
    assert inspector.subrun_nav.crumbs.value == "run › <b>left</b>"


def test_a_failed_subrun_shows_where_it_failed_in_the_drawing_and_the_inspector():
    def boom(state: Shared):
        raise ValueError("<bad>")

    inner = StateGraph(Shared)
    inner.add_node("ok", lambda s: {"log": ["ok"]})
    inner.add_node("boom", boom)
    inner.add_edge(START, "ok")
    inner.add_edge("ok", "boom")
    parent = StateGraph(Shared)
    parent.add_node("sub", inner.compile(name="inner"))
    parent.add_edge(START, "sub")
    run = parent.compile().run({"foo": "", "log": []})
    assert run.status == "failed" and list(run.steps.subruns) == [[0]]
    assert run.tree.find("task:1:0:sub/0/task:2:0:boom").status == "error"
    source = run.draw().source
    assert list(clusters(source).values()) == ["subgraph sub — 2 tasks inside"]
    assert "boom\\nran ×1\\nraised ValueError" in labels(source).values()
    inspector = run.inspect()
    inspector.subrun_nav.step_into()
    assert inspector.step == 2  # the subrun opens at its failing step
    assert "ValueError at step 2:</b> &lt;bad&gt;" in inspector.error.value
