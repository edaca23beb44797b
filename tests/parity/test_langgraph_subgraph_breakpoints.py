"""Differential programs: breakpoints compiled into a subgraph (`interrupt_before/after`,
no checkpointer of its own), run inside a checkpointed parent, as LangGraph runs them.

The subgraph stops at its breakpoint and so does its parent (no question: `invoke` shows
no `__interrupt__`, `stream` ends with an empty one); `get_state(subgraphs=True)` shows the
subgraph's state on the parent's task; `invoke(None, config)` resumes inside the subgraph.
Task ids differ between the libraries, so namespaces are compared by their node names.
"""

# No `from __future__ import annotations`: states are defined with `api.*` names in their
# annotations, which both engines read at run time.

import asyncio

import pytest

from tests.support.harness import Log, Programs, chain, plain, same

pytestmark = pytest.mark.langgraph

PROGRAMS = Programs()
program = PROGRAMS.add


@pytest.mark.parametrize("saver", ["memory", "sqlite"])
@pytest.mark.parametrize("prog", PROGRAMS, ids=lambda p: p.__name__)
def test_same_as_langgraph(prog, saver, tmp_path) -> None:
    same(prog, saver=saver, folder=tmp_path, raises=True, shape=plain)


def parent_of(api, sub, checkpointer, after=("p2",)):
    """`p1 -> sub -> p2 ...`: the subgraph as a node of a parent."""
    builder = api.StateGraph(Log)
    builder.add_node("p1", lambda s: {"log": ["p1"]})
    builder.add_node("sub", sub)
    builder.add_edge(api.START, "p1")
    builder.add_edge("p1", "sub")
    last = "sub"
    for name in after:
        builder.add_node(name, lambda s, name=name: {"log": [name]})
        builder.add_edge(last, name)
        last = name
    return builder.compile(checkpointer=checkpointer)


CONFIG = {"configurable": {"thread_id": "t"}}


def shown(snapshot):
    """A snapshot as both libraries give it: values, next, and each task's name, questions
    and (nested) state."""
    if isinstance(snapshot, dict):  # (a task's state without subgraphs=True: its config)
        return sorted(snapshot["configurable"])
    if snapshot is None:
        return None
    tasks = sorted((t.name, t.interrupts, shown(t.state)) for t in snapshot.tasks)
    return snapshot.values, snapshot.next, tasks


def ns_names(chunk):
    """A `subgraphs=True` chunk with its namespace's task ids dropped."""
    ns, *rest = chunk
    return (tuple(part.split(":")[0] for part in ns), *rest)


# ---------------------------------------------------------------------------------------------
# Stopping and resuming


@program
def interrupt_before_in_a_subgraph_stops_the_parent(api):
    sub = chain(api, ["s1", "s2", "s3"], interrupt_before=["s2"])
    app = parent_of(api, sub, api.saver())
    first = app.invoke({"log": []}, CONFIG)
    paused = shown(app.get_state(CONFIG, subgraphs=True))
    shallow = shown(app.get_state(CONFIG))
    done = app.invoke(None, CONFIG)
    return first, paused, shallow, done, shown(app.get_state(CONFIG))


@program
def interrupt_after_twice_in_a_subgraph(api):
    sub = chain(api, ["s1", "s2", "s3"], interrupt_after=["s1", "s2"])
    app = parent_of(api, sub, api.saver())
    outs = [app.invoke({"log": []}, CONFIG)]
    states = [shown(app.get_state(CONFIG, subgraphs=True))]
    for _ in range(2):
        outs.append(app.invoke(None, CONFIG))
        states.append(shown(app.get_state(CONFIG, subgraphs=True)))
    return outs, states


@program
def streams_end_with_one_empty_interrupt(api):
    sub = chain(api, ["s1", "s2"], interrupt_before=["s2"])
    app = parent_of(api, sub, api.saver())
    first = list(app.stream({"log": []}, CONFIG, stream_mode="updates"))
    resumed = list(app.stream(None, CONFIG, stream_mode=["updates", "values"]))
    return first, resumed


@program
def streams_with_subgraphs_show_the_stop_once(api):
    sub = chain(api, ["s1", "s2"], interrupt_before=["s2"])
    app = parent_of(api, sub, api.saver())
    chunks = app.stream({"log": []}, CONFIG, stream_mode=["updates", "values"], subgraphs=True)
    first = [ns_names(c) for c in chunks]
    resumed = [ns_names(c) for c in app.stream(None, CONFIG, subgraphs=True)]
    return first, resumed


@program
def a_parallel_sibling_is_not_run_again(api):
    ran = []

    def side(state):
        ran.append("side")
        return {"log": ["side"]}

    sub = chain(api, ["s1", "s2"], interrupt_before=["s2"])
    builder = api.StateGraph(Log)
    builder.add_node("p1", lambda s: {"log": ["p1"]})
    builder.add_node("sub", sub)
    builder.add_node("side", side)
    builder.add_edge(api.START, "p1")
    builder.add_edge("p1", "sub")
    builder.add_edge("p1", "side")
    app = builder.compile(checkpointer=api.saver())
    first = app.invoke({"log": []}, CONFIG)
    paused = shown(app.get_state(CONFIG, subgraphs=True))
    done = app.invoke(None, CONFIG)
    return first, paused, done, ran


@program
def a_subgraph_two_levels_down(api):
    inner = chain(api, ["i1", "i2"], interrupt_before=["i2"])
    builder = api.StateGraph(Log)
    builder.add_node("m1", lambda s: {"log": ["m1"]})
    builder.add_node("inner", inner)
    builder.add_edge(api.START, "m1")
    builder.add_edge("m1", "inner")
    app = parent_of(api, builder.compile(), api.saver())
    first = app.invoke({"log": []}, CONFIG)
    paused = shown(app.get_state(CONFIG, subgraphs=True))
    return first, paused, app.invoke(None, CONFIG)


@program
def a_node_function_that_invokes_the_subgraph(api):
    sub = chain(api, ["s1", "s2"], interrupt_before=["s2"])

    def call(state):
        return {"log": sub.invoke({"log": ["called"]})["log"]}

    builder = api.StateGraph(Log)
    builder.add_node("call", call)
    builder.add_edge(api.START, "call")
    app = builder.compile(checkpointer=api.saver())
    first = app.invoke({"log": []}, CONFIG)
    return first, shown(app.get_state(CONFIG, subgraphs=True)), app.invoke(None, CONFIG)


@program
def the_parent_history_through_the_stop(api):
    sub = chain(api, ["s1", "s2"], interrupt_before=["s2"])
    app = parent_of(api, sub, api.saver())
    app.invoke({"log": []}, CONFIG)
    app.invoke(None, CONFIG)
    return [(s.values, s.next, s.metadata["step"]) for s in app.get_state_history(CONFIG)]


@program
def ainvoke_and_astream_stop_and_resume(api):
    sub = chain(api, ["s1", "s2"], interrupt_before=["s2"])

    async def run(saver):
        app = parent_of(api, sub, saver)
        first = await app.ainvoke({"log": []}, CONFIG)
        paused = shown(await app.aget_state(CONFIG, subgraphs=True))
        resumed = [c async for c in app.astream(None, CONFIG, stream_mode="updates")]
        return first, paused, resumed

    async def main():
        if api.saver_kind == "memory":
            return await run(api.saver())
        path = str(api.folder / "async.sqlite")  # (LangGraph's sync SqliteSaver is sync only)
        async with api.AsyncSqliteSaver.from_conn_string(path) as saver:
            return await run(saver)

    return asyncio.run(main())


@program
def update_state_on_the_parent_while_stopped(api):
    sub = chain(api, ["s1", "s2"], interrupt_before=["s2"])
    app = parent_of(api, sub, api.saver())
    app.invoke({"log": []}, CONFIG)
    app.update_state(CONFIG, {"log": ["edited"]})
    edited = shown(app.get_state(CONFIG))
    return edited, app.invoke(None, CONFIG)


# ---------------------------------------------------------------------------------------------
# Without checkpoints


@program
def breakpoints_compile_without_a_checkpointer(api):
    app = chain(api, ["a", "b", "c"], interrupt_before=["b"], interrupt_after=["c"])
    return app.invoke({"log": ["in"]}), list(app.stream({"log": ["in"]}))


@program
def a_parent_without_a_checkpointer_stops_too(api):
    sub = chain(api, ["s1", "s2"], interrupt_before=["s2"])
    app = parent_of(api, sub, None)
    return app.invoke({"log": []}), list(app.stream({"log": []}, stream_mode="updates"))


@program
def a_subgraph_without_checkpoints_starts_over(api):
    sub = chain(api, ["s1", "s2"], interrupt_before=["s2"], checkpointer=False)
    app = parent_of(api, sub, api.saver())
    first = app.invoke({"log": []}, CONFIG)
    again = app.invoke(None, CONFIG)
    return first, again, shown(app.get_state(CONFIG))
