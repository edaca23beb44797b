"""Differential tests: a compiled graph run as a node (a subgraph), on LangGraph and nbgraph.

Each program builds its graphs from `api.*` names only and returns what it observed (final
states, the parent's `updates`/`values` stream chunks, interrupts); both engines must agree.
"""

# No `from __future__ import annotations`: the state classes are defined inside functions and
# both engines read their annotations at run time.

import asyncio
import operator
from typing import Annotated, Literal, TypedDict

import pytest

from tests.support.harness import (
    MODES,
    api_for,
    both,
    canonical_stream,
    differs,
    observe,
    outcome,
    plain,
)
from tests.support.records import APPLY, NBGRAPH_ONLY, NO_RUN, PARENT, UNDETECTED
from tests.support.subgraphs import Shared, recorded_app, shared_subgraph

pytestmark = pytest.mark.langgraph


# --- the programs ------------------------------------------------------------------------------


def shared_keys_program(api):
    """The docs' first example: a subgraph over the parent's own schema."""

    class State(TypedDict):
        foo: str

    def sub_node(state: State):
        return {"foo": "hi! " + state["foo"]}

    sub = api.StateGraph(State)
    sub.add_node(sub_node)
    sub.add_edge(api.START, "sub_node")
    parent = api.StateGraph(State)
    parent.add_node("node_1", sub.compile())
    parent.add_edge(api.START, "node_1")
    return observe(parent.compile(), {"foo": "foo"})


def add_list_program(api):
    """With `operator.add`, the parent appends the subgraph's whole list (its input too)."""

    def before(state: Shared):
        return {"log": ["before"]}

    parent = api.StateGraph(Shared)
    parent.add_node(before)
    parent.add_node("child", shared_subgraph(api))
    parent.add_edge(api.START, "before")
    parent.add_edge("before", "child")
    return observe(parent.compile(), {"foo": "x", "log": ["start"]})


def wrapper_program(api):
    """A node function calls a subgraph with another schema and maps the keys both ways."""

    class Sub(TypedDict):
        bar: str
        baz: str

    class Parent(TypedDict):
        foo: str

    def sub_1(state: Sub):
        return {"baz": "baz"}

    def sub_2(state: Sub):
        return {"bar": state["bar"] + state["baz"]}

    sub = api.StateGraph(Sub)
    sub.add_node(sub_1)
    sub.add_node(sub_2)
    sub.add_edge(api.START, "sub_1")
    sub.add_edge("sub_1", "sub_2")
    compiled = sub.compile()

    def call_sub(state: Parent):
        answer = compiled.invoke({"bar": state["foo"]})
        return {"foo": answer["bar"]}

    parent = api.StateGraph(Parent)
    parent.add_node("node_1", call_sub)
    parent.add_edge(api.START, "node_1")
    return observe(parent.compile(), {"foo": "foo"})


def own_schemas_program(api):
    """A subgraph with its own input/output schemas and a private key, added directly."""

    class Parent(TypedDict):
        question: str
        answer: str
        notes: Annotated[list[str], operator.add]

    class In(TypedDict):
        question: str

    class Out(TypedDict):
        answer: str

    class Inner(TypedDict):
        question: str
        answer: str
        scratch: str

    def think(state: In):
        return {"scratch": state["question"].upper()}

    def reply(state: Inner):
        return {"answer": state["scratch"] + "?"}

    sub = api.StateGraph(Inner, input_schema=In, output_schema=Out)
    sub.add_node(think)
    sub.add_node(reply)
    sub.add_edge(api.START, "think")
    sub.add_edge("think", "reply")

    def note(state: Parent):
        return {"notes": [state["answer"]]}

    parent = api.StateGraph(Parent)
    parent.add_node("expert", sub.compile())
    parent.add_node(note)
    parent.add_edge(api.START, "expert")
    parent.add_edge("expert", "note")
    return observe(parent.compile(), {"question": "why", "notes": []})


def nested_program(api):
    """Two levels: a subgraph whose node is itself a subgraph, named by `add_node(app)`."""
    inner = shared_subgraph(api, "leaf")

    def mid_step(state: Shared):
        return {"log": ["mid"]}

    middle = api.StateGraph(Shared)
    middle.add_node(mid_step)
    middle.add_node("deep", inner)
    middle.add_edge(api.START, "mid_step")
    middle.add_edge("mid_step", "deep")
    parent = api.StateGraph(Shared)
    parent.add_node(middle.compile(name="team"))
    parent.add_edge(api.START, "team")
    ran = observe(parent.compile(), {"foo": "a", "log": []})
    return {"nodes": sorted(parent.nodes), "run": ran}


def conditional_program(api):
    """A subgraph that routes with a conditional edge, over several inputs."""

    class State(TypedDict):
        n: int
        path: Annotated[list[str], operator.add]

    def check(state: State):
        return {"path": ["check"]}

    def small(state: State):
        return {"path": ["small"], "n": state["n"] + 1}

    def big(state: State):
        return {"path": ["big"], "n": state["n"] * 2}

    def route(state: State) -> Literal["small", "big"]:
        return "small" if state["n"] < 10 else "big"

    sub = api.StateGraph(State)
    for fn in (check, small, big):
        sub.add_node(fn)
    sub.add_edge(api.START, "check")
    sub.add_conditional_edges("check", route)
    sub.add_edge("small", api.END)
    sub.add_edge("big", api.END)

    def after(state: State):
        return {"path": ["after"]}

    parent = api.StateGraph(State)
    parent.add_node("decide", sub.compile())
    parent.add_node(after)
    parent.add_edge(api.START, "decide")
    parent.add_edge("decide", "after")
    app = parent.compile()
    return [observe(app, {"n": n, "path": []}) for n in (3, 30)]


@differs(APPLY.at("run:status"))
def parallel_program(api):
    """Two subgraph nodes in one step, both appending to the parent's list."""
    parent = api.StateGraph(Shared)
    parent.add_node("left", shared_subgraph(api, "l"))
    parent.add_node("right", shared_subgraph(api, "r"))
    parent.add_edge(api.START, "left")
    parent.add_edge(api.START, "right")
    return observe(parent.compile(), {"foo": "x", "log": ["0"]})


def async_program(api):
    """`ainvoke`/`astream` of a parent whose subgraph has async nodes."""

    async def inner(state: Shared):
        await asyncio.sleep(0)
        return {"foo": state["foo"] + "?", "log": ["async"]}

    sub = api.StateGraph(Shared)
    sub.add_node(inner)
    sub.add_edge(api.START, "inner")
    parent = api.StateGraph(Shared)
    parent.add_node("child", sub.compile())
    parent.add_node("sync_child", shared_subgraph(api))
    parent.add_edge(api.START, "child")
    parent.add_edge("child", "sync_child")
    app = parent.compile()

    async def go():
        final = await app.ainvoke({"foo": "a", "log": []})
        chunks = [c async for c in app.astream({"foo": "a", "log": []}, stream_mode=MODES)]
        return {"final": plain(final), "stream": canonical_stream(chunks, MODES)}

    return asyncio.run(go())


def interrupt_program(api):
    """The docs' "view subgraph state": `interrupt()` inside a subgraph pauses the parent
    (which has the only checkpointer) and `Command(resume=...)` continues it."""

    class State(TypedDict):
        foo: str

    def asking(state: State):
        return {"foo": state["foo"] + api.interrupt("Provide value:")}

    sub = api.StateGraph(State)
    sub.add_node("ask", asking)
    sub.add_edge(api.START, "ask")
    parent = api.StateGraph(State)
    parent.add_node("node_1", sub.compile())
    parent.add_edge(api.START, "node_1")
    app = parent.compile(checkpointer=api.MemorySaver())
    config = {"configurable": {"thread_id": "1"}}
    paused = app.invoke({"foo": ""}, config)
    snapshot = app.get_state(config)
    seen = {
        "paused": {k: v for k, v in paused.items() if k != "__interrupt__"},
        "questions": [i.value for i in paused["__interrupt__"]],
        "next": snapshot.next,
        "task_questions": [[i.value for i in t.interrupts] for t in snapshot.tasks],
    }
    seen["resumed"] = app.invoke(api.Command(resume="bar"), config)
    return seen


@differs(
    PARENT.at(
        "run/1:0:subgraph_node:status", "run/1:0:subgraph_node:steps", "run/1:0:subgraph_node:tree"
    )
)
def parent_command_program(api):
    """LangGraph's test_parent_command_goto: a subgraph node's `Command.PARENT` goes to a
    node of the parent, with the command's update (the subgraph's own writes are dropped)."""

    class Dialog(TypedDict):
        dialog_state: Annotated[list[str], operator.add]

    def node_a_child(state):
        return {"dialog_state": ["a_child_state"]}

    def node_b_child(state):
        return api.Command(
            graph=api.Command.PARENT, goto="node_b_parent", update={"dialog_state": ["b_child"]}
        )

    sub = api.StateGraph(Dialog)
    sub.add_node(node_a_child)
    sub.add_node(node_b_child)
    sub.add_edge(api.START, "node_a_child")
    sub.add_edge("node_a_child", "node_b_child")

    def node_b_parent(state):
        return {"dialog_state": ["node_b_parent"]}

    parent = api.StateGraph(Dialog)
    parent.add_node(node_b_parent)
    parent.add_node("subgraph_node", sub.compile(), destinations=("node_b_parent",))
    parent.add_edge(api.START, "subgraph_node")
    return observe(parent.compile(), {"dialog_state": ["init"]})


@differs(PARENT.at("run/1:0:subgraph:status", "run/1:0:subgraph:steps", "run/1:0:subgraph:tree"))
def parent_command_choice_program(api):
    """The docs' "navigate to a node in a parent graph", each way, plus the parent's own
    edge from the subgraph node (the goto is added to it)."""

    class State(TypedDict):
        foo: Annotated[str, operator.add]

    def make(choice: str):
        def node_a(state: State):
            goto = "node_b" if choice == "a" else "node_c"
            return api.Command(update={"foo": choice}, goto=goto, graph=api.Command.PARENT)

        sub = api.StateGraph(State)
        sub.add_node(node_a)
        sub.add_edge(api.START, "node_a")
        parent = api.StateGraph(State)
        parent.add_node("subgraph", sub.compile())
        parent.add_node("node_b", lambda state: {"foo": "b"})
        parent.add_node("node_c", lambda state: {"foo": "c"})
        parent.add_node("always", lambda state: {"foo": "!"})
        parent.add_edge(api.START, "subgraph")
        parent.add_edge("subgraph", "always")
        return parent.compile()

    return [observe(make(choice), {"foo": ""}) for choice in "ab"]


@differs(UNDETECTED.at("run:subruns"))
def parent_command_nested_program(api):
    """Two levels down, `Command.PARENT` reaches the middle graph only; a function node that
    invokes a subgraph takes its `Command.PARENT` as its own output."""

    def leaf_node(state: Shared):
        return api.Command(graph=api.Command.PARENT, goto="fixup", update={"log": ["leaf"]})

    leaf = api.StateGraph(Shared)
    leaf.add_node(leaf_node)
    leaf.add_edge(api.START, "leaf_node")
    middle = api.StateGraph(Shared)
    middle.add_node("deep", leaf.compile())
    middle.add_node("fixup", lambda state: {"log": ["fixup"]})
    middle.add_edge(api.START, "deep")
    compiled_middle = middle.compile()

    def caller(state: Shared):
        return compiled_middle.invoke(state)

    def direct(state: Shared):
        return leaf.compile().invoke(state)

    parent = api.StateGraph(Shared)
    parent.add_node("team", compiled_middle)
    parent.add_node(caller)
    parent.add_node(direct)
    parent.add_node("fixup", lambda state: {"foo": "fixed"})
    parent.add_edge(api.START, "team")
    parent.add_edge("team", "caller")
    parent.add_edge("caller", "direct")
    return observe(parent.compile(), {"foo": "", "log": []})


@differs(PARENT.at("run/1:0:child:status", "run/1:0:child:steps", "run/1:0:child:tree"))
def parent_command_async_program(api):
    """`Command.PARENT` from an async subgraph node, under `ainvoke`."""

    async def ask_parent(state: Shared):
        return api.Command(graph=api.Command.PARENT, goto="done", update={"log": ["up"]})

    sub = api.StateGraph(Shared)
    sub.add_node(ask_parent)
    sub.add_edge(api.START, "ask_parent")
    parent = api.StateGraph(Shared)
    parent.add_node("child", sub.compile())
    parent.add_node("done", lambda state: {"foo": "done"})
    parent.add_edge(api.START, "child")
    return plain(asyncio.run(parent.compile().ainvoke({"foo": "", "log": []})))


@differs(PARENT.at("run:status", "run:steps", "run:tree"))
def parent_command_at_the_top_program(api):
    """`Command.PARENT` in a graph that has no parent: an error on both."""

    def node(state: Shared):
        return api.Command(graph=api.Command.PARENT, goto="x", update={"foo": "x"})

    top = api.StateGraph(Shared)
    top.add_node(node)
    top.add_edge(api.START, "node")
    return observe(top.compile(), {"foo": "", "log": []})


def error_program(api):
    """A subgraph node that raises: the parent's invoke and stream raise the same kind,
    after the same chunks."""

    def boom(state: Shared):
        raise ValueError("boom")

    sub = api.StateGraph(Shared)
    sub.add_node(boom)
    sub.add_edge(api.START, "boom")
    parent = api.StateGraph(Shared)
    parent.add_node("child", sub.compile())
    parent.add_edge(api.START, "child")
    app = parent.compile()
    chunks: list = []
    ended = outcome(lambda: chunks.extend(app.stream({"foo": "", "log": []}, stream_mode=MODES)))
    return {"stream": ended, "chunks": canonical_stream(chunks, MODES)}


def streamed_interrupt_program(api):
    """A node that streams a subgraph (`stream`, and `astream` under `ainvoke`) which asks a
    question: the checkpointed parent pauses, and the resume answers it."""

    class State(TypedDict):
        foo: str

    def ask(state: State):
        return {"foo": state["foo"] + api.interrupt("q?")}

    sub = api.StateGraph(State)
    sub.add_node(ask)
    sub.add_edge(api.START, "ask")
    compiled = sub.compile()

    def caller(state: State):
        return list(compiled.stream(state, stream_mode="values"))[-1]

    async def acaller(state: State):
        return [c async for c in compiled.astream(state, stream_mode="values")][-1]

    seen = []
    for fn in (caller, acaller):
        parent = api.StateGraph(State)
        parent.add_node("caller", fn)
        parent.add_edge(api.START, "caller")
        app = parent.compile(checkpointer=api.MemorySaver())
        config = {"configurable": {"thread_id": fn.__name__}}
        paused = asyncio.run(app.ainvoke({"foo": ""}, config))
        seen.append([i.value for i in paused["__interrupt__"]])
        seen.append(asyncio.run(app.ainvoke(api.Command(resume="A"), config)))
    return seen


PROGRAMS = [
    shared_keys_program,
    add_list_program,
    wrapper_program,
    own_schemas_program,
    nested_program,
    conditional_program,
    parallel_program,
    async_program,
    interrupt_program,
    parent_command_program,
    parent_command_choice_program,
    parent_command_nested_program,
    parent_command_async_program,
    parent_command_at_the_top_program,
    error_program,
    streamed_interrupt_program,
]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_subgraph_programs_behave_as_on_langgraph(program):
    langgraph, ours = both(program)
    assert ours == langgraph


@differs(NO_RUN.at())
def test_a_compiled_graph_added_without_a_name_is_named_as_langgraph_names_it():
    def names(api):
        parent = api.StateGraph(Shared)
        parent.add_node(shared_subgraph(api))
        return list(parent.nodes)

    langgraph, ours = both(names)
    assert ours == langgraph == ["LangGraph"]


# --- the record: a run's subruns ---------------------------------------------------------------


@differs(NBGRAPH_ONLY.at("0 calls recorded"))
def test_a_run_lists_its_subruns_with_their_parent_and_task():
    app = recorded_app()
    app.invoke({"foo": "x", "log": []})
    run = app.last_run
    assert run.parent is None and run.task is None
    subs = run.subruns
    assert sorted(sub.task for sub in subs) == ["2:0:left", "2:1:wrapper"]
    assert all(sub.parent is run for sub in subs)
    assert {sub.task for sub in subs} <= set(run.steps.task_id)
    by_task = {sub.task: sub for sub in subs}
    left, wrapped = by_task["2:0:left"], by_task["2:1:wrapper"]
    assert left.status == wrapped.status == "done"
    assert list(left.steps.node) == ["deep"]
    assert wrapped.output == {"foo": "x!", "log": ["other"]}
    (leaf,) = left.subruns  # a subrun of a subrun nests the same way
    assert leaf.parent is left and leaf.task == "1:0:deep"
    assert list(leaf.steps.node) == ["leaf"] and leaf.subruns == []
    assert leaf.state_at(0) == {"foo": "x", "log": ["first"]}
    assert run.subruns is subs  # built once


@differs(NBGRAPH_ONLY.at("0 calls recorded"))
def test_subruns_are_listed_in_start_order():
    import nbgraph

    api = api_for("nbgraph")
    parent = nbgraph.StateGraph(Shared)
    for name in ("a", "b", "c"):
        parent.add_node(name, shared_subgraph(api, name))
    parent.add_edge(api.START, "a")
    parent.add_edge("a", "b")
    parent.add_edge("b", "c")
    app = parent.compile()
    app.invoke({"foo": "", "log": []})
    subs = app.last_run.subruns
    assert [sub.task for sub in subs] == ["1:0:a", "2:0:b", "3:0:c"]
    assert [list(sub.steps.node) for sub in subs] == [["a"], ["b"], ["c"]]


@differs(NBGRAPH_ONLY.at("0 calls recorded"))
def test_async_runs_keep_their_subruns_too():
    app = recorded_app()
    asyncio.run(app.ainvoke({"foo": "x", "log": []}))
    subs = app.last_run.subruns
    assert sorted(sub.task for sub in subs) == ["2:0:left", "2:1:wrapper"]
    assert all(len(sub.steps) == 1 for sub in subs)


@differs(NBGRAPH_ONLY.at("0 calls recorded"))
def test_run_files_keep_the_subruns(tmp_path):
    import nbgraph

    app = recorded_app()
    app.invoke({"foo": "x", "log": []})
    run = app.last_run
    back = nbgraph.Run.load(run.save(tmp_path / "run.json"))
    assert [sub.task for sub in back.subruns] == [sub.task for sub in run.subruns]
    assert all(sub.parent is back for sub in back.subruns)
    for saved, original in zip(back.subruns, run.subruns, strict=True):
        assert saved.output == original.output
        assert list(saved.steps.node) == list(original.steps.node)
    (leaf,) = {sub.task: sub for sub in back.subruns}["2:0:left"].subruns
    assert leaf.task == "1:0:deep" and leaf.output == {"foo": "x!", "log": ["first", "leaf"]}


@differs(NBGRAPH_ONLY.at("0 calls recorded"))
def test_a_damaged_subrun_in_a_run_file_is_refused_by_name():
    import json

    import nbgraph
    from nbgraph.record import RunFileError

    app = recorded_app()
    app.invoke({"foo": "x", "log": []})
    document = json.loads(app.last_run.to_json())
    document["run"]["subruns"][0]["task"] = "9:9:nowhere"
    with pytest.raises(RunFileError, match="'9:9:nowhere', not a task of the run"):
        nbgraph.Run.from_json(json.dumps(document))
    assert (
        "subruns"
        not in json.loads(shared_subgraph(api_for("nbgraph")).run({"foo": ""}).to_json())["run"]
    )


@differs(NBGRAPH_ONLY.at("0 apps with a saver"))
def test_a_resumed_subgraph_continues_at_the_node_that_asked():
    """As in LangGraph, a subgraph without a checkpointer of its own keeps its checkpoints
    in its parent's saver, and the resumed parent resumes it at the node that asked: the
    nodes before the question do not run again (differential versions of this are in
    tests/parity/test_langgraph_subgraph_checkpoints.py)."""
    import nbgraph

    calls: list[str] = []

    class State(TypedDict):
        foo: str

    def before(state: State):
        calls.append("before")
        return {"foo": state["foo"] + "<"}

    def ask(state: State):
        calls.append("ask")
        return {"foo": state["foo"] + nbgraph.interrupt("first?") + nbgraph.interrupt("second?")}

    sub = nbgraph.StateGraph(State).add_node(before).add_node(ask)
    sub.add_edge(nbgraph.START, "before").add_edge("before", "ask")
    parent = nbgraph.StateGraph(State).add_node("child", sub.compile())
    parent.add_edge(nbgraph.START, "child")
    app = parent.compile(checkpointer=nbgraph.MemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    first = app.invoke({"foo": ""}, config)
    assert [i.value for i in first["__interrupt__"]] == ["first?"]
    second = app.invoke(nbgraph.Command(resume="1"), config)
    assert [i.value for i in second["__interrupt__"]] == ["second?"]
    assert app.invoke(nbgraph.Command(resume="2"), config) == {"foo": "<12"}
    assert calls == ["before", "ask", "ask", "ask"]
