"""Subgraphs in branch lineages (`semantics="branches"`), the builder's drawing of subgraphs,
and how a subrun handed to its parent (`Command.PARENT`) is recorded (nbgraph only: branch
lineages are not LangGraph's; what LangGraph also does is compared with it in
tests/parity/test_langgraph_subgraph_edges.py)."""

import asyncio
import operator
import subprocess
from typing import Annotated, TypedDict

import pytest

import nbgraph
from nbgraph import END, START, Command, MemorySaver, Send, StateGraph, interrupt
from tests.support.dot import EVIL, clusters, labels


class Shared(TypedDict):
    foo: str
    log: Annotated[list[str], operator.add]


def echo(state: Shared):
    return {"foo": state["foo"] + "!", "log": [f"sub saw {state['foo']}"]}


def echo_graph(name: str = "inner", semantics: str = "supersteps"):
    builder = StateGraph(Shared)
    builder.add_node(name, echo)
    builder.add_edge(START, name)
    return builder.compile(semantics=semantics)


def fork(into, *, join: bool = False, semantics: str = "branches"):
    """START -> a (foo=A), b (foo=B); a -> `into["a"]`, b -> `into["b"]` (each a node
    function or a compiled graph); with `join`, both wait for `after`."""
    parent = StateGraph(Shared)
    parent.add_node("a", lambda s: {"foo": "A"})
    parent.add_node("b", lambda s: {"foo": "B"})
    for branch in ("a", "b"):
        parent.add_node(f"s{branch}", into[branch])
        parent.add_edge(START, branch)
        parent.add_edge(branch, f"s{branch}")
    if join:
        parent.add_node("after", lambda s: {"log": [f"after saw {sorted(s['log'])}"]})
        parent.add_edge(["sa", "sb"], "after")
        parent.add_edge("after", END)
    return parent.compile(semantics=semantics)


# --- 1. a subgraph runs inside the lineage of the task that called it -----------------------


def test_two_branches_calling_one_subgraph_each_see_their_own_lineage():
    sub = echo_graph()

    def calls(state: Shared):
        out = sub.invoke({"foo": state["foo"], "log": []})
        return {"log": [f"called: {out['foo']}"]}

    app = fork({"a": sub, "b": calls})
    final = app.invoke({"foo": "x", "log": []})
    run = app.last_run
    assert [(s.task, s.status) for s in run.subruns] == [("2:0:sa", "done"), ("2:1:sb", "done")]
    added, called = run.subruns
    # each subrun's input is its task's lineage, not the other branch's or a merged state
    assert added.state_at(0) == {"foo": "A", "log": []} == dict(run.state_at("task:2:0:sa"))
    assert called.state_at(0) == {"foo": "B", "log": []}
    assert added.output == {"foo": "A!", "log": ["sub saw A"]}
    assert called.output == {"foo": "B!", "log": ["sub saw B"]}
    # the subgraph's write joins that lineage only; END merges the two (delta, routing order)
    effects = run.effects.set_index("point")
    assert effects.loc["task:2:0:sa"].set_index("field").loc["foo", "after"] == "A!"
    assert final == {"foo": "B", "log": ["sub saw A", "called: B!"]}


def test_the_record_hangs_each_subrun_under_its_task_in_its_lineage():
    app = fork({"a": echo_graph(), "b": echo_graph()})
    app.invoke({"foo": "x", "log": []})
    run = app.last_run
    tree = run.tree
    assert tree["task:2:0:sa"].parents == ("task:1:0:a",)  # the lineage it read
    assert tree["task:2:1:sb"].parents == ("task:1:1:b",)
    for task, seen in (("task:2:0:sa", "A"), ("task:2:1:sb", "B")):
        (subtree,) = tree.subtrees[task]
        assert subtree.root.parents == (task,)
        assert dict(subtree.root.writes) == {"foo": seen, "log": []}
    steps = run.steps.set_index("task_id")
    assert steps.loc["2:0:sa", "subruns"] == [0] and steps.loc["2:1:sb", "subruns"] == [1]
    assert [sub.task for sub in run.subruns] == ["2:0:sa", "2:1:sb"]
    assert all(sub.parent is run for sub in run.subruns)


def test_a_branch_runs_drawings_and_inspector_show_each_lineages_subrun():
    app = fork({"a": echo_graph(), "b": echo_graph()}, join=True)
    run = app.run({"foo": "x", "log": []})
    source = run.draw().source
    assert sorted(clusters(source).values()) == [
        "subgraph sa — 1 task inside",
        "subgraph sb — 1 task inside",
    ]
    tree_source = run.draw_tree().source
    assert list(labels(tree_source).values()).count("subgraph input\\nfoo ← 'A'\\nlog ← []") == 1
    for drawing in (source, tree_source):
        subprocess.run(["dot", "-Tsvg"], input=drawing.encode(), check=True, capture_output=True)
    inspector = run.inspect()
    inspector.go(2)
    assert [label for label, _ in inspector.subrun_nav.pick.options] == [
        "sa (task 2:0:sa)",
        "sb (task 2:1:sb)",
    ]
    inspector.subrun_nav.step_into(1)
    assert inspector.run is run.subruns[1] and "B!" in inspector.effects.value
    inspector.subrun_nav.back.click()
    assert inspector.run is run and inspector.step == 2


def test_a_subgraph_node_behaves_as_the_same_function_node_in_branch_lineages():
    """The subgraph node against a plain function making the same write (the subgraph's
    whole output: with `operator.add` the parent appends the subgraph's whole list, its
    input included, as LangGraph does): the same outputs, joins and effects."""

    def whole(state: Shared):
        return {"foo": state["foo"] + "!", "log": [*state["log"], f"sub saw {state['foo']}"]}

    as_graph = fork({"a": echo_graph(), "b": echo_graph()}, join=True)
    as_function = fork({"a": whole, "b": whole}, join=True)
    given = {"foo": "x", "log": ["0"]}
    final = as_graph.invoke(given)
    assert final == as_function.invoke(given)
    assert final["log"][:3] == ["0", "0", "sub saw A"]  # lineage a: its input, then its write
    columns = ["step", "field", "writes", "after", "conflict", "winner", "point"]
    ours, theirs = as_graph.last_run.effects, as_function.last_run.effects
    rows = ours[columns].to_dict("records")
    expected = theirs[columns].to_dict("records")
    for row in (*rows, *expected):  # the writer's name is the node's, in both
        row["writes"] = [(str(w), v) for w, v in row["writes"]]
    assert rows == expected
    assert len(as_graph.last_run.subruns) == 2 and not as_function.last_run.subruns


def test_a_branch_lineage_subgraph_inside_a_branch_parent():
    """A subgraph compiled with branch lineages itself forks inside the task's lineage."""
    inner = StateGraph(Shared)
    inner.add_node("l", lambda s: {"foo": s["foo"] + "L", "log": ["l"]})
    inner.add_node("r", lambda s: {"foo": s["foo"] + "R", "log": ["r"]})
    inner.add_edge(START, "l")
    inner.add_edge(START, "r")
    sub = inner.compile(semantics="branches")
    app = fork({"a": sub, "b": echo})
    final = app.invoke({"foo": "x", "log": []})
    (added,) = app.last_run.subruns
    assert added.log.semantics == "branches"
    assert added.state_at("task:1:0:l") == {"foo": "A", "log": []}
    assert added.output == {"foo": "AR", "log": ["l", "r"]}
    assert final == {"foo": "B!", "log": ["l", "r", "sub saw B"]}
    parent = StateGraph(Shared)  # and inside a supersteps parent: still its own model
    parent.add_node("s", sub)
    parent.add_edge(START, "s")
    app = parent.compile()
    assert app.invoke({"foo": "x", "log": []}) == {"foo": "xR", "log": ["l", "r"]}
    assert app.last_run.subruns[0].log.semantics == "branches"


def test_sends_into_a_subgraph_in_branch_lineages_each_have_their_subrun():
    parent = StateGraph(Shared)
    parent.add_node("w", echo_graph())
    parent.add_conditional_edges(START, lambda s: [Send("w", {"foo": f, "log": []}) for f in "pq"])
    app = parent.compile(semantics="branches")
    final = app.invoke({"foo": "x", "log": []})
    assert [s.state_at(0)["foo"] for s in app.last_run.subruns] == ["p", "q"]
    assert final["log"] == ["sub saw p", "sub saw q"]


def test_an_interrupt_inside_subgraphs_of_two_lineages_pauses_and_resumes_each():
    def ask(state: Shared):
        answer = interrupt(f"q {state['foo']}")
        return {"foo": state["foo"] + answer, "log": [f"{state['foo']} got {answer}"]}

    inner = StateGraph(Shared)
    inner.add_node("ask", ask)
    inner.add_edge(START, "ask")
    parent = StateGraph(Shared)
    parent.add_node("a", lambda s: {"foo": "A"})
    parent.add_node("b", lambda s: {"foo": "B"})
    parent.add_node("s", inner.compile())
    for branch in ("a", "b"):
        parent.add_edge(START, branch)
        parent.add_edge(branch, "s")
    app = parent.compile(semantics="branches", checkpointer=MemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    paused = app.invoke({"foo": "x", "log": []}, config)
    questions = {i.value: i.id for i in paused["__interrupt__"]}
    assert sorted(questions) == ["q A", "q B"]
    assert app.last_run.status == "interrupted"
    snapshot = app.get_state(config)  # one task per lineage waiting at the node
    assert snapshot.next == ("s", "s")
    assert [(t.id, [i.value for i in t.interrupts]) for t in snapshot.tasks] == [
        ("2:0:s", ["q A"]),
        ("2:1:s", ["q B"]),
    ]
    answers = {questions["q A"]: "1", questions["q B"]: "2"}
    final = app.invoke(Command(resume=answers), config)
    assert final == {"foo": "B2", "log": ["A got 1", "B got 2"]}
    run = app.last_run
    assert [(s.task, s.status, s.output["foo"]) for s in run.subruns] == [
        ("2:0:s", "done", "A1"),
        ("2:1:s", "done", "B2"),
    ]


def branch_shapes():
    """Branch graphs paused before `s` (and `j`): two lineages at one node, the same
    lineage twice, a waiting edge's join, a `merge=` join."""
    two = StateGraph(Shared)
    three = StateGraph(Shared)
    waiting = StateGraph(Shared)
    merging = StateGraph(Shared)
    for builder in (two, three, waiting, merging):
        builder.add_node("a", lambda s: {"log": ["a"]})
        builder.add_node("b", lambda s: {"log": ["b"]})
        builder.add_edge(START, "a")
        builder.add_edge(START, "b")
    two.add_node("s", echo_graph())
    two.add_edge("a", "s")
    two.add_edge("b", "s")
    three.add_node("s", echo_graph())
    three.add_node("c", lambda s: Command(goto="s", update={"log": ["c"]}))
    three.add_edge(START, "c")
    three.add_edge("c", "s")  # the same lineage twice (edge and goto): one run
    three.add_edge("a", "s")
    waiting.add_node("s", echo_graph())
    waiting.add_edge(["a", "b"], "s")
    merging.add_node("s", echo_graph(), merge="delta")
    merging.add_edge("a", "s")
    merging.add_edge("b", "s")
    return {"two": two, "three": three, "waiting": waiting, "merging": merging}


@pytest.mark.parametrize("shape", ["two", "three", "waiting", "merging"])
def test_get_state_names_the_tasks_a_branch_checkpoint_runs_next(shape):
    app = branch_shapes()[shape].compile(
        semantics="branches", checkpointer=MemorySaver(), interrupt_before=["s"]
    )
    config = {"configurable": {"thread_id": shape}}
    app.invoke({"foo": "x", "log": []}, config)
    snapshot = app.get_state(config)
    app.invoke(None, config)
    ran = [task for task in app.last_run.log.tasks() if task.node == "s"]
    assert snapshot.next == tuple(task.node for task in ran)
    assert [t.id for t in snapshot.tasks] == [task.id for task in ran]
    assert len(app.last_run.subruns) == len(ran) == {"two": 2, "three": 2}.get(shape, 1)


def test_command_parent_inside_a_subgraph_goes_on_in_its_own_lineage():
    def up(state: Shared):
        return Command(graph=Command.PARENT, goto="fix", update={"log": [f"up {state['foo']}"]})

    inner = StateGraph(Shared)
    inner.add_node("up", up)
    inner.add_edge(START, "up")
    parent = StateGraph(Shared)
    parent.add_node("a", lambda s: {"foo": "A"})
    parent.add_node("b", lambda s: {"foo": "B"})
    parent.add_node("s", inner.compile(), destinations=("fix",))
    parent.add_node("fix", lambda s: {"log": [f"fix saw {s['foo']} {s['log']}"]})
    for branch in ("a", "b"):
        parent.add_edge(START, branch)
        parent.add_edge(branch, "s")
    app = parent.compile(semantics="branches")
    final = app.invoke({"foo": "x", "log": []})
    assert final["log"] == ["up A", "fix saw A ['up A']", "up B", "fix saw B ['up B']"]
    run = app.last_run
    assert [(s.task, s.status, s.error) for s in run.subruns] == [
        ("2:0:s", "to_parent", None),
        ("2:1:s", "to_parent", None),
    ]
    assert run.tree["task:3:0:fix"].parents == ("task:2:0:s",)


def test_async_subgraphs_in_branch_lineages_keep_their_lineage():
    async def aecho(state: Shared):
        return echo(state)

    inner = StateGraph(Shared)
    inner.add_node("inner", aecho)
    inner.add_edge(START, "inner")
    sub = inner.compile()
    app = fork({"a": sub, "b": sub})
    final = asyncio.run(app.ainvoke({"foo": "x", "log": []}))
    assert final == {"foo": "B!", "log": ["sub saw A", "sub saw B"]}
    assert [s.state_at(0)["foo"] for s in app.last_run.subruns] == ["A", "B"]


def test_a_branch_run_file_keeps_its_subruns(tmp_path):
    app = fork({"a": echo_graph(), "b": echo_graph()}, join=True)
    app.invoke({"foo": "x", "log": []})
    run = app.last_run
    back = nbgraph.Run.load(run.save(tmp_path / "run.json"))
    assert [(s.task, s.output) for s in back.subruns] == [(s.task, s.output) for s in run.subruns]
    assert back.tree.subtrees.keys() == run.tree.subtrees.keys()


# --- a subrun handed to its parent (Command.PARENT) is not a failure -----------------------


def handing_app():
    def note(state: Shared):
        return {"log": ["noted"]}

    def up(state: Shared):
        return Command(graph=Command.PARENT, goto="fix", update={"log": ["up"]})

    inner = StateGraph(Shared)
    inner.add_node("note", note)
    inner.add_node("up", up)
    inner.add_edge(START, "note")
    inner.add_edge("note", "up")
    parent = StateGraph(Shared)
    parent.add_node("s", inner.compile(), destinations=("fix",))
    parent.add_node("fix", lambda s: {"foo": "fixed"})
    parent.add_edge(START, "s")
    return parent.compile()


def test_a_subrun_stopped_by_command_parent_is_recorded_as_handed_to_the_parent(tmp_path):
    app = handing_app()
    assert app.invoke({"foo": "", "log": []}) == {"foo": "fixed", "log": ["up"]}
    run = app.last_run
    assert run.status == "done" and run.error is None
    assert list(run.steps.status) == ["ok", "ok"]
    (sub,) = run.subruns
    assert sub.status == "to_parent" and sub.error is None
    assert list(sub.steps.status) == ["ok", "to_parent"]
    handed = sub.log.steps[-1].tasks[0].error  # the command the parent's task took
    assert handed.command.goto == "fix" and handed.command.update == {"log": ["up"]}
    assert sub.tree.occurrence("up", 0).status == "to_parent"
    assert repr(sub).startswith("<Run to_parent: ")
    back = nbgraph.Run.load(run.save(tmp_path / "run.json"))
    (loaded,) = back.subruns
    assert loaded.status == "to_parent" and list(loaded.steps.status) == ["ok", "to_parent"]


def test_a_hand_over_under_ainvoke_is_recorded_the_same_way():
    async def aup(state: Shared):
        return Command(graph=Command.PARENT, goto="fix", update={"log": ["up"]})

    def up(state: Shared):
        return Command(graph=Command.PARENT, goto="fix", update={"log": ["up"]})

    for fn in (aup, up):  # an async subgraph node; a sync one, on a thread
        inner = StateGraph(Shared)
        inner.add_node("up", fn)
        inner.add_edge(START, "up")
        parent = StateGraph(Shared)
        parent.add_node("s", inner.compile(), destinations=("fix",))
        parent.add_node("fix", lambda s: {"foo": "f"})
        parent.add_edge(START, "s")
        app = parent.compile()
        assert asyncio.run(app.ainvoke({"foo": "", "log": []})) == {"foo": "f", "log": ["up"]}
        assert [s.status for s in app.last_run.subruns] == ["to_parent"]


def test_drawings_show_a_command_handed_to_the_parent_not_a_failure():
    app = handing_app()
    run = app.run({"foo": "", "log": []})
    (sub,) = run.subruns
    texts = list(labels(sub.draw().source).values())
    assert "up\\nran ×1\\nto parent: goto fix" in texts
    assert not any("raised" in text for text in texts)
    parent_texts = list(labels(run.draw().source).values())  # the cluster's counts too
    assert any(t.startswith("up\\n") and "to parent: goto fix" in t for t in parent_texts)
    tree_texts = list(labels(run.draw_tree().source).values())
    assert "up\\nstep 2\\nto parent: goto fix" in tree_texts
    assert not any("raised" in text for text in tree_texts)


def test_the_inspector_says_a_step_handed_its_command_to_the_parent():
    run = handing_app().run({"foo": "", "log": []})
    inspector = run.inspect()
    inspector.subrun_nav.step_into(0)
    inspector.go(2)
    assert "handed to the parent graph" in inspector.step_label.value
    assert "failed" not in inspector.step_label.value


def test_command_parent_at_the_top_is_still_a_failure():
    def up(state: Shared):
        return Command(graph=Command.PARENT, goto="x")

    top = StateGraph(Shared)
    top.add_node("up", up)
    top.add_edge(START, "up")
    run = top.compile().run({"foo": "", "log": []})
    assert run.status == "failed" and type(run.error).__name__ == "ParentCommand"


# --- 2. the builder's drawing: subgraphs expanded or as one box --------------------------------


def builder_with_subgraphs():
    team = StateGraph(Shared)
    team.add_node("deep", echo_graph("leaf"))
    team.add_edge(START, "deep")
    parent = StateGraph(Shared)
    parent.add_node("team", team.compile(name="team"))
    parent.add_node("plain", echo)
    parent.add_edge(START, "team")
    parent.add_edge("team", "plain")
    return parent


def test_the_builder_draws_subgraphs_as_clusters_or_as_one_box():
    builder = builder_with_subgraphs()  # not compiled
    source = builder.draw().source
    assert sorted(clusters(source).values()) == ["subgraph deep", "subgraph team"]
    assert {"leaf", "deep", "team", "plain"} <= set(labels(source).values())
    assert builder.draw(expand=True).source == source
    flat = builder.draw(expand=False).source
    assert "cluster" not in flat
    assert {"team", "plain"} <= set(labels(flat).values())
    assert not {"deep", "leaf"} & set(labels(flat).values())
    assert flat == builder.compile().draw(expand=False).source
    assert source == builder.compile().draw().source


def test_the_builder_drawing_escapes_subgraph_labels():
    inner = StateGraph(Shared)
    inner.add_node(EVIL, echo)
    inner.add_edge(START, EVIL)
    builder = StateGraph(Shared)
    builder.add_node(EVIL, inner.compile(name=EVIL))
    builder.add_edge(START, EVIL)
    builder.add_edge(EVIL, "not yet")  # an unfinished builder draws too
    for source in (builder.draw().source, builder.draw(expand=False).source):
        assert "label=<" not in source and '<b>x</b> \\"q\\" & \\\\' in source
        subprocess.run(["dot", "-Tsvg"], input=source.encode(), check=True, capture_output=True)
    (title,) = clusters(builder.draw().source).values()
    assert title.startswith('subgraph <b>x</b> \\"q\\" & \\\\')


@pytest.mark.parametrize("expand", [True, False])
def test_the_builder_drawing_takes_expand_by_keyword_or_position(expand):
    builder = builder_with_subgraphs()
    assert builder.draw(expand).source == builder.draw(expand=expand).source


def test_a_subgraph_breakpoint_stops_a_branch_run_and_resumes_inside_it():
    """A subgraph compiled with `interrupt_before` stops its branch-lineage parent as it
    stops a superstep one (issue 29): the parent's task waits, and `invoke(None)` resumes
    the subgraph past its breakpoint, its first node not run again."""
    ran = []

    def step(name):
        def node(state):
            ran.append(name)
            return {"log": [name]}

        return node

    inner = StateGraph(Shared)
    inner.add_node("s1", step("s1")).add_node("s2", step("s2"))
    inner.add_edge(START, "s1").add_edge("s1", "s2")
    parent = StateGraph(Shared)
    parent.add_node("p1", step("p1")).add_node("sub", inner.compile(interrupt_before=["s2"]))
    parent.add_node("p2", step("p2"))
    parent.add_edge(START, "p1").add_edge("p1", "sub").add_edge("sub", "p2")
    app = parent.compile(checkpointer=MemorySaver(), semantics="branches")
    config = {"configurable": {"thread_id": "t"}}
    assert app.invoke({"foo": "", "log": []}, config) == {"foo": "", "log": ["p1"]}
    assert app.get_state(config).next == ("sub",)
    assert app.last_run.status == "interrupted"
    done = app.invoke(None, config)
    assert done["log"] == ["p1", "p1", "s1", "s2", "p2"]
    assert ran == ["p1", "s1", "s2", "p2"]
