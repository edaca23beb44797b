"""Differential programs: `AsyncSqliteSaver` as LangGraph's (`langgraph.checkpoint.sqlite.aio`).

Each program takes an `api` namespace (LangGraph's names, or nbgraph's), runs its async part
with `asyncio.run`, and returns what a user of it observes; the test runs it on real
LangGraph and on nbgraph and compares. Checkpoint ids differ in form between the libraries,
so programs compare what the ids point at, never the ids.
"""

# No `from __future__ import annotations`: states are defined with `api.*` names in their
# annotations, which both engines read at run time.

import asyncio
import operator
from typing import Annotated, TypedDict

import pytest

from tests.support.harness import Log, Programs, chain, plain, same

pytestmark = pytest.mark.langgraph

PROGRAMS = Programs()
program = PROGRAMS.add


@pytest.mark.parametrize("prog", PROGRAMS, ids=lambda p: p.__name__)
def test_same_as_langgraph(prog, tmp_path) -> None:
    same(prog, folder=tmp_path, raises=True, shape=plain)


def path_of(api, name="async.sqlite"):
    return str(api.folder / name)


CONFIG = {"configurable": {"thread_id": "t"}}


def snapshot(state):
    return state.values, state.next, state.metadata["source"], state.metadata["step"]


# ---------------------------------------------------------------------------------------------
# A graph run on the async saver


@program
def ainvoke_then_aget_state(api):
    async def main():
        async with api.AsyncSqliteSaver.from_conn_string(path_of(api)) as saver:
            app = chain(api, ["a", "b"], checkpointer=saver)
            out = await app.ainvoke({"log": ["in"]}, CONFIG)
            return out, snapshot(await app.aget_state(CONFIG))

    return asyncio.run(main())


@program
def aget_state_history_newest_first(api):
    async def main():
        async with api.AsyncSqliteSaver.from_conn_string(path_of(api)) as saver:
            app = chain(api, ["a", "b"], checkpointer=saver)
            await app.ainvoke({"log": ["in"]}, CONFIG)
            await app.ainvoke({"log": ["again"]}, CONFIG)
            return [snapshot(state) async for state in app.aget_state_history(CONFIG)]

    return asyncio.run(main())


@program
def astream_continues_the_thread(api):
    async def main():
        async with api.AsyncSqliteSaver.from_conn_string(path_of(api)) as saver:
            app = chain(api, ["a", "b"], checkpointer=saver)
            first = [c async for c in app.astream({"log": ["1"]}, CONFIG, stream_mode="values")]
            second = [c async for c in app.astream({"log": ["2"]}, CONFIG, stream_mode="updates")]
            return first, second, (await app.aget_state(CONFIG)).values

    return asyncio.run(main())


@program
def aupdate_state_as_a_node_then_resume(api):
    async def main():
        async with api.AsyncSqliteSaver.from_conn_string(path_of(api)) as saver:
            app = chain(api, ["a", "b", "c"], checkpointer=saver, interrupt_before=["c"])
            first = await app.ainvoke({"log": ["in"]}, CONFIG)
            await app.aupdate_state(CONFIG, {"log": ["edited"]}, as_node="b")
            edited = snapshot(await app.aget_state(CONFIG))
            return first, edited, await app.ainvoke(None, CONFIG)

    return asyncio.run(main())


@program
def interrupt_and_resume_with_a_command(api):
    class Ask(TypedDict):
        answer: str
        log: Annotated[list, operator.add]

    def ask(state):
        return {"answer": api.interrupt({"question": "name?"}), "log": ["asked"]}

    async def main():
        async with api.AsyncSqliteSaver.from_conn_string(path_of(api)) as saver:
            builder = api.StateGraph(Ask)
            builder.add_node("ask", ask)
            builder.add_edge(api.START, "ask")
            app = builder.compile(checkpointer=saver)
            paused = await app.ainvoke({"log": []}, CONFIG)
            waiting = [i.value for i in (await app.aget_state(CONFIG)).interrupts]
            done = await app.ainvoke(api.Command(resume="Ada"), CONFIG)
            return paused, waiting, done

    return asyncio.run(main())


@program
def async_nodes_on_the_async_saver(api):
    async def slow(state):
        await asyncio.sleep(0.001)
        return {"log": ["slow"]}

    async def main():
        async with api.AsyncSqliteSaver.from_conn_string(path_of(api)) as saver:
            builder = api.StateGraph(Log)
            builder.add_node("slow", slow)
            builder.add_node("fast", lambda s: {"log": ["fast"]})
            builder.add_edge(api.START, "slow")
            builder.add_edge("slow", "fast")
            app = builder.compile(checkpointer=saver)
            configs = [{"configurable": {"thread_id": f"t{i}"}} for i in range(3)]
            outs = await asyncio.gather(*(app.ainvoke({"log": [i]}, c) for i, c in
                                          enumerate(configs)))  # fmt: skip
            return outs, [(await app.aget_state(c)).values for c in configs]

    return asyncio.run(main())


# ---------------------------------------------------------------------------------------------
# The saver's own methods


@program
def aget_tuple_and_alist(api):
    async def main():
        async with api.AsyncSqliteSaver.from_conn_string(path_of(api)) as saver:
            app = chain(api, ["a", "b"], checkpointer=saver)
            await app.ainvoke({"log": ["in"]}, CONFIG)
            latest = await saver.aget_tuple(CONFIG)
            every = [t async for t in saver.alist(CONFIG)]
            two = [t.metadata["step"] async for t in saver.alist(CONFIG, limit=2)]
            older = [t.metadata["step"] async for t in saver.alist(CONFIG, before=every[1].config)]
            inputs = [
                t.metadata["step"] async for t in saver.alist(CONFIG, filter={"source": "input"})
            ]
            at = await saver.aget_tuple(every[2].config)
            return (
                latest.metadata,
                latest.checkpoint["channel_values"],
                latest.parent_config == every[1].config,
                [t.metadata["step"] for t in every],
                two,
                older,
                inputs,
                at.checkpoint["channel_values"]["log"],  # (LangGraph adds its branch channels)
                await saver.aget_tuple({"configurable": {"thread_id": "none"}}),
            )

    return asyncio.run(main())


@program
def alist_of_every_thread(api):
    async def main():
        async with api.AsyncSqliteSaver.from_conn_string(path_of(api)) as saver:
            app = chain(api, ["a"], checkpointer=saver)
            for thread in ("x", "y"):
                await app.ainvoke({"log": [thread]}, {"configurable": {"thread_id": thread}})
            found = [t async for t in saver.alist(None)]
            return sorted((t.config["configurable"]["thread_id"], t.metadata["step"])
                          for t in found)  # fmt: skip

    return asyncio.run(main())


@program
def adelete_thread_leaves_the_others(api):
    async def main():
        async with api.AsyncSqliteSaver.from_conn_string(path_of(api)) as saver:
            app = chain(api, ["a"], checkpointer=saver)
            other = {"configurable": {"thread_id": "keep"}}
            await app.ainvoke({"log": ["t"]}, CONFIG)
            await app.ainvoke({"log": ["keep"]}, other)
            await saver.adelete_thread("t")
            return (
                await saver.aget_tuple(CONFIG),
                (await app.aget_state(CONFIG)).values,
                (await app.aget_state(other)).values,
                await app.ainvoke({"log": ["fresh"]}, CONFIG),
            )

    return asyncio.run(main())


@program
def sync_methods_on_the_loop_thread_are_refused(api):
    def kind(call):
        try:
            call()
        except Exception as error:
            return type(error).__name__
        return "ok"

    async def main():
        async with api.AsyncSqliteSaver.from_conn_string(path_of(api)) as saver:
            app = chain(api, ["a"], checkpointer=saver)
            await app.ainvoke({"log": ["in"]}, CONFIG)
            return (
                kind(lambda: list(saver.list(CONFIG))),
                kind(lambda: saver.get_tuple(CONFIG)),
                kind(lambda: saver.delete_thread("t")),
                (await app.aget_state(CONFIG)).values,  # (nothing was deleted)
            )

    return asyncio.run(main())


@program
def sync_methods_from_another_thread(api):
    async def main():
        async with api.AsyncSqliteSaver.from_conn_string(path_of(api)) as saver:
            app = chain(api, ["a", "b"], checkpointer=saver)
            await app.ainvoke({"log": ["in"]}, CONFIG)
            steps = await asyncio.to_thread(
                lambda: [t.metadata["step"] for t in saver.list(CONFIG)]
            )
            latest = await asyncio.to_thread(saver.get_tuple, CONFIG)
            state = await asyncio.to_thread(app.get_state, CONFIG)
            await asyncio.to_thread(saver.delete_thread, "t")
            return (
                steps,
                latest.checkpoint["channel_values"],
                state.values,
                (await saver.aget_tuple(CONFIG)),
            )

    return asyncio.run(main())


# ---------------------------------------------------------------------------------------------
# The file


@program
def the_file_reopens_with_the_sync_saver(api):
    path = path_of(api)

    async def write():
        async with api.AsyncSqliteSaver.from_conn_string(path) as saver:
            app = chain(api, ["a", "b"], checkpointer=saver)
            await app.ainvoke({"log": ["in"]}, CONFIG)

    asyncio.run(write())
    with api.SqliteSaver.from_conn_string(path) as saver:
        app = chain(api, ["a", "b"], checkpointer=saver)
        history = [snapshot(s) for s in app.get_state_history(CONFIG)]
        return history, app.invoke({"log": ["sync"]}, CONFIG)


@program
def the_file_reopens_with_the_async_saver(api):
    path = path_of(api)

    async def run(graph_input):
        async with api.AsyncSqliteSaver.from_conn_string(path) as saver:
            app = chain(api, ["a", "b", "c"], checkpointer=saver, interrupt_before=["c"])
            out = await app.ainvoke(graph_input, CONFIG)
            return out, snapshot(await app.aget_state(CONFIG))

    return asyncio.run(run({"log": ["in"]})), asyncio.run(run(None))


@program
def a_database_in_memory(api):
    async def main():
        async with api.AsyncSqliteSaver.from_conn_string(":memory:") as saver:
            app = chain(api, ["a"], checkpointer=saver)
            await app.ainvoke({"log": ["1"]}, CONFIG)
            await app.ainvoke({"log": ["2"]}, CONFIG)
            return (await app.aget_state(CONFIG)).values, len(
                [s async for s in app.aget_state_history(CONFIG)]
            )

    return asyncio.run(main())


# ---------------------------------------------------------------------------------------------
# Subgraphs and batches on the async saver


@program
def a_subgraph_keeps_its_checkpoints_in_the_async_saver(api):
    def ask(state):
        return {"log": [api.interrupt("ok?")]}

    async def main():
        async with api.AsyncSqliteSaver.from_conn_string(path_of(api)) as saver:
            inner = api.StateGraph(Log)
            inner.add_node("i1", lambda s: {"log": ["i1"]})
            inner.add_node("ask", ask)
            inner.add_edge(api.START, "i1")
            inner.add_edge("i1", "ask")
            outer = api.StateGraph(Log)
            outer.add_node("sub", inner.compile())
            outer.add_edge(api.START, "sub")
            app = outer.compile(checkpointer=saver)
            await app.ainvoke({"log": []}, CONFIG)
            state = await app.aget_state(CONFIG, subgraphs=True)
            (task,) = state.tasks
            inside = (task.state.values, task.state.next)
            done = await app.ainvoke(api.Command(resume="yes"), CONFIG)
            return [i.value for i in task.interrupts], inside, done

    return asyncio.run(main())


@program
def abatch_on_several_threads(api):
    async def main():
        async with api.AsyncSqliteSaver.from_conn_string(path_of(api)) as saver:
            app = chain(api, ["a", "b"], checkpointer=saver)
            configs = [{"configurable": {"thread_id": f"b{i}"}} for i in range(3)]
            outs = await app.abatch([{"log": [i]} for i in range(3)], configs)
            steps = [[t.metadata["step"] async for t in saver.alist(c)] for c in configs]
            return outs, steps

    return asyncio.run(main())


@program
def astream_with_subgraphs_on_the_async_saver(api):
    async def main():
        async with api.AsyncSqliteSaver.from_conn_string(path_of(api)) as saver:
            outer = api.StateGraph(Log)
            outer.add_node("sub", chain(api, ["i1", "i2"]))
            outer.add_edge(api.START, "sub")
            app = outer.compile(checkpointer=saver)
            chunks = [c async for c in app.astream({"log": []}, CONFIG, subgraphs=True)]
            return [(tuple(p.split(":")[0] for p in ns), chunk) for ns, chunk in chunks]

    return asyncio.run(main())
