"""Differential programs for what LangGraph's own public-API tests (`../shared/lgsuite`) showed
nbgraph doing otherwise: copying a checkpoint (`as_node="__copy__"`), a node that runs two
stateful subgraphs, a subgraph compiled with a saver of its own inside a checkpointed parent,
and a saver's listing of a thread with its subgraphs' checkpoints.

Each program takes an `api` namespace (LangGraph's names, or nbgraph's) and returns what a user
of it observes; the test runs it on real LangGraph and on nbgraph, with each kind of saver, and
compares.
"""

# No `from __future__ import annotations`: states are defined inside functions with `api.*`
# names in their annotations, which both engines read at run time.

import importlib
import operator
from typing import Annotated, Any, TypedDict

import pytest

from tests.support.harness import SAVER_KINDS, Ids, Programs, plain, same

pytestmark = pytest.mark.langgraph

PROGRAMS = Programs()
program = PROGRAMS.add


@pytest.mark.parametrize("saver", SAVER_KINDS)
@pytest.mark.parametrize("prog", PROGRAMS, ids=lambda p: p.__name__)
def test_same_as_langgraph(prog, saver, tmp_path) -> None:
    same(prog, saver=saver, folder=tmp_path, raises=True, shape=plain)


class Trail(TypedDict):
    trail: Annotated[list, operator.add]


def thread(name: str = "t") -> dict[str, Any]:
    return {"configurable": {"thread_id": name}}


def snapshot_view(snapshot: Any, ids: Ids) -> tuple:
    """What a user reads of a `StateSnapshot`: values, next, metadata, which checkpoint it
    follows (by label), its tasks' questions and its interrupts."""
    parent = (
        snapshot.parent_config["configurable"]["checkpoint_id"] if snapshot.parent_config else None
    )
    return (
        snapshot.values,
        snapshot.next,
        {k: snapshot.metadata.get(k) for k in ("source", "step")},
        ids(snapshot.config["configurable"]["checkpoint_id"]),
        None if parent is None else ids(parent),
        [(t.name, [i.value for i in t.interrupts]) for t in snapshot.tasks],
        [i.value for i in snapshot.interrupts],
    )


# ---------------------------------------------------------------------------------------------
# update_state(config, None, as_node="__copy__"): a sibling copy of a checkpoint


def asking_chain(api, saver):
    """`first -> ask (interrupt) -> last`, each appending to `trail`."""

    def ask(state):
        return {"trail": [f"answer:{api.interrupt('which?')}"]}

    return (
        api.StateGraph(Trail)
        .add_node("first", lambda s: {"trail": ["first"]})
        .add_node("ask", ask)
        .add_node("last", lambda s: {"trail": ["last"]})
        .add_edge(api.START, "first")
        .add_edge("first", "ask")
        .add_edge("ask", "last")
        .compile(checkpointer=saver)
    )


@program
def copying_a_checkpoint_asks_its_question_again(api):
    app, ids = asking_chain(api, api.saver()), Ids()
    app.invoke({"trail": []}, thread())
    app.invoke(api.Command(resume="one"), thread())
    history = list(app.get_state_history(thread()))
    for snapshot in reversed(history):  # (labels in the order the checkpoints were made)
        ids(snapshot.config["configurable"]["checkpoint_id"])
    paused = next(s for s in history if s.next == ("ask",))
    copy = app.update_state(paused.config, None, as_node="__copy__")
    seen = [sorted(copy["configurable"]), snapshot_view(app.get_state(copy), ids)]
    seen.append(app.invoke(None, copy))
    seen.append(app.invoke(api.Command(resume="two"), copy))
    seen.append([snapshot_view(s, ids) for s in app.get_state_history(thread())])
    return seen


@program
def a_copy_then_an_update_in_bulk(api):
    app, ids = asking_chain(api, api.saver()), Ids()
    app.invoke({"trail": []}, thread())
    paused = next(s for s in app.get_state_history(thread()) if s.next == ("ask",))
    ids(paused.config["configurable"]["checkpoint_id"])
    last = app.bulk_update_state(
        paused.config,
        [[api.StateUpdate(None, "__copy__")], [api.StateUpdate({"trail": ["edited"]}, "first")]],
    )
    return snapshot_view(app.get_state(last), ids), app.invoke(None, last)


@program
def copying_is_refused_with_other_updates_or_without_a_checkpoint(api):
    app = asking_chain(api, api.saver())
    errors = []
    try:
        app.update_state(thread("empty"), None, as_node="__copy__")
    except Exception as error:
        errors.append(type(error).__name__)
    app.invoke({"trail": []}, thread())
    try:
        app.bulk_update_state(
            thread(),
            [[api.StateUpdate(None, "__copy__"), api.StateUpdate({"trail": ["x"]}, "first")]],
        )
    except Exception as error:
        errors.append(type(error).__name__)
    return errors, app.get_state(thread()).values


# ---------------------------------------------------------------------------------------------
# A node that runs two graphs: each run has a namespace of its own (`node:<id>`, then
# `node:<id>|1`), so two `checkpointer=True` graphs keep apart histories


class Said(TypedDict):
    said: Annotated[list, operator.add]


class Outer(TypedDict):
    result: str


def ns_shape(ns: str) -> str:
    """A namespace with its task ids left out: `node:<id>|1|inner:<id>`."""
    return "|".join(p.partition(":")[0] + (":<id>" if ":" in p else "") for p in ns.split("|"))


def echo_graph(api, prefix: str, node: str, mode: Any) -> Any:
    inner = (
        api.StateGraph(Said)
        .add_node("echo", lambda s: {"said": [f"{prefix}:{s['said'][-1]}"]})
        .add_edge(api.START, "echo")
        .compile()
    )
    return (
        api.StateGraph(Said)
        .add_node(node, inner)
        .add_edge(api.START, node)
        .compile(checkpointer=mode)
    )


def one_node_two_graphs(api, mode: Any, saver: Any) -> tuple:
    fruit, veg = echo_graph(api, "F", "fruit", mode), echo_graph(api, "V", "veg", mode)
    seen = []

    def both(state):
        f = fruit.invoke({"said": [f"apple{len(seen)}"]})
        v = veg.invoke({"said": [f"leek{len(seen)}"]})
        seen.append((f["said"], v["said"]))
        return {"result": f["said"][-1]}

    app = api.StateGraph(Outer).add_node("both", both).add_edge(api.START, "both")
    return app.compile(checkpointer=saver), seen


@program
def two_stateful_graphs_in_one_node_keep_their_own_histories(api):
    saver = api.saver()
    app, seen = one_node_two_graphs(api, True, saver)
    outputs = [app.invoke({"result": ""}, thread()) for _ in range(2)]
    namespaces = sorted(
        {ns_shape(c.config["configurable"]["checkpoint_ns"]) for c in saver.list(None)}
    )
    return outputs, seen, namespaces


@program
def two_graphs_in_one_node_stream_under_their_own_namespaces(api):
    shown = []
    for mode, saver in ((None, api.saver()), (None, None), (True, api.saver())):
        app, _ = one_node_two_graphs(api, mode, saver)
        config = thread() if saver is not None else None
        chunks = app.stream({"result": ""}, config, stream_mode="updates", subgraphs=True)
        shown.append([(tuple(ns_shape(p) for p in ns), chunk) for ns, chunk in chunks])
    return shown


@program
def a_retried_node_counts_the_graphs_its_failed_attempts_ran(api):
    sub = (
        api.StateGraph(Count)
        .add_node("inc", lambda s: {"n": s["n"] + 1})
        .add_edge(api.START, "inc")
    )
    inner, attempts = sub.compile(), []

    def flaky(state):
        attempts.append(1)
        out = inner.invoke(state)
        if len(attempts) < 3:
            raise ValueError("not yet")
        return out

    retry = api.RetryPolicy(initial_interval=0.001, jitter=False, retry_on=ValueError)
    app = (
        api.StateGraph(Count)
        .add_node("flaky", flaky, retry_policy=retry)
        .add_edge(api.START, "flaky")
    )
    chunks = app.compile(checkpointer=api.saver()).stream({"n": 1}, thread(), subgraphs=True)
    return [(tuple(ns_shape(p) for p in ns), chunk) for ns, chunk in chunks]


@program
def a_stateful_graph_inside_a_subgraph_keeps_its_history_across_the_parents_runs(api):
    def ask(state):
        return {"trail": [api.interrupt("which?")]}

    inner = (
        api.StateGraph(Trail)
        .add_node("ask", ask)
        .add_edge(api.START, "ask")
        .compile(checkpointer=True)
    )
    middle = api.StateGraph(Trail).add_node("inner", inner).add_edge(api.START, "inner").compile()
    saver = api.saver()
    app = api.StateGraph(Trail).add_node("middle", middle).add_edge(api.START, "middle")
    app = app.compile(checkpointer=saver)

    def shape(snapshot):
        tasks = [
            (t.name, shape(t.state) if hasattr(t.state, "values") else None) for t in snapshot.tasks
        ]
        return snapshot.values, snapshot.next, tasks

    seen = []
    for turn in range(2):
        seen.append(app.invoke({"trail": [f"in{turn}"]}, thread()))
        seen.append(shape(app.get_state(thread(), subgraphs=True)))
        seen.append(app.invoke(api.Command(resume=f"answer{turn}"), thread()))
    seen.append(
        sorted({ns_shape(c.config["configurable"]["checkpoint_ns"]) for c in saver.list(None)})
    )
    return seen


@program
def a_node_in_graphs_its_caller_ran_twice_reads_their_namespaces(api):
    class Seen(TypedDict):
        seen: list

    def leaf(state, config):
        configurable, metadata = config["configurable"], config["metadata"]
        names = (configurable["checkpoint_ns"], metadata.get("checkpoint_ns"))
        return {
            "seen": [
                *names,
                metadata["langgraph_checkpoint_ns"],
                api.get_config()["configurable"]["checkpoint_ns"],
            ]
        }

    shown = []
    for mode in (True, None):
        sub = (
            api.StateGraph(Seen)
            .add_node("leaf", leaf)
            .add_edge(api.START, "leaf")
            .compile(checkpointer=mode)
        )

        def call(state, sub=sub):
            return {"seen": sub.invoke({"seen": []})["seen"] + sub.invoke({"seen": []})["seen"]}

        app = api.StateGraph(Seen).add_node("call", call).add_edge(api.START, "call")
        ids = Ids()
        seen = app.compile(checkpointer=api.saver()).invoke({"seen": []}, thread())["seen"]
        shown.append([ids.text(ns) for ns in seen])
    return shown


# ---------------------------------------------------------------------------------------------
# A graph compiled with a saver of its own, run inside a node: LangGraph leaves its saver aside
# and keeps its checkpoints in the parent's (none if the parent has none), as a subgraph's


class Count(TypedDict):
    n: int


def own_saver_program(api, as_node: bool, asks: bool, parent_saver: bool) -> tuple:
    def step(state):
        return {"n": state["n"] + (api.interrupt("how many?") if asks else 1)}

    own = api.saver()
    sub = (
        api.StateGraph(Count)
        .add_node("step", step)
        .add_edge(api.START, "step")
        .compile(checkpointer=own)
    )
    node = sub if as_node else (lambda state: sub.invoke(state))
    parent = api.saver() if parent_saver else None
    app = (
        api.StateGraph(Count)
        .add_node("sub", node)
        .add_edge(api.START, "sub")
        .compile(checkpointer=parent)
    )
    config = thread() if parent_saver else None
    seen = [app.invoke({"n": 1}, config)]
    if asks:
        seen.append(app.invoke(api.Command(resume=5), config))
    seen.append(app.invoke({"n": 10}, config))
    seen.append(len(list(own.list(None))))
    if parent is not None:
        listed = parent.list(None)
        seen.append(sorted({ns_shape(c.config["configurable"]["checkpoint_ns"]) for c in listed}))
        tasks = app.get_state(thread(), subgraphs=True).tasks
        seen.append(
            [
                (t.name, t.state.values if t.state else None, t.state.next if t.state else None)
                for t in tasks
            ]
        )
    return seen


@program
def a_graph_with_its_own_saver_as_a_node_uses_its_parents(api):
    return own_saver_program(api, as_node=True, asks=False, parent_saver=True)


@program
def a_graph_with_its_own_saver_run_by_a_node_pauses_and_resumes_in_its_parent(api):
    return [
        own_saver_program(api, as_node=as_node, asks=True, parent_saver=True)
        for as_node in (True, False)
    ]


@program
def a_graph_with_its_own_saver_in_a_parent_without_one_keeps_nothing(api):
    return own_saver_program(api, as_node=False, asks=False, parent_saver=False)


# ---------------------------------------------------------------------------------------------
# saver.list({"configurable": {"thread_id": ...}}): with no checkpoint_ns, every namespace's
# checkpoints (LangGraph's memory saver: thread by thread; its SQLite saver: newest first)


@program
def listing_a_thread_shows_its_subgraphs_checkpoints(api):
    saver = api.saver()
    sub = (
        api.StateGraph(Count)
        .add_node("inc", lambda s: {"n": s["n"] + 1})
        .add_edge(api.START, "inc")
    )
    app = (
        api.StateGraph(Count)
        .add_node("sub", sub.compile())
        .add_node("after", lambda s: {"n": s["n"] * 2})
        .add_edge(api.START, "sub")
        .add_edge("sub", "after")
        .compile(checkpointer=saver)
    )
    app.invoke({"n": 1}, thread())
    app.invoke({"n": 3}, thread("other"))
    seen = []
    for configurable in (
        {"thread_id": "t"},
        {"thread_id": "t", "checkpoint_ns": ""},
        {"thread_id": "t", "checkpoint_ns": None},
    ):
        listed = saver.list({"configurable": configurable})
        seen.append(
            [
                (ns_shape(c.config["configurable"]["checkpoint_ns"]), c.metadata["step"])
                for c in listed
            ]
        )
    seen.append(len(list(saver.list(thread(), limit=4))))
    seen.append(len(list(saver.list(thread(), filter={"source": "input"}))))
    latest = saver.get_tuple(thread())
    seen.append((latest.config["configurable"]["checkpoint_ns"], latest.metadata["step"]))
    return seen


# ---------------------------------------------------------------------------------------------
# Messages: push_message, add_messages(format=...), a pydantic state's input pairs, the error
# for removing an id that is not there; StateGraph.managed


def module(api, path: str) -> Any:
    """`langgraph.<path>` or `nbgraph.<path>` (the mirror's same path)."""
    return importlib.import_module(f"{api.lib}.{path}")


def message_rows(messages) -> list:
    return [(type(m).__name__, m.content, m.id) for m in messages]


@program
def a_node_pushes_messages_that_stream_at_once_and_join_the_state(api):
    from langchain_core.messages import AIMessage, AnyMessage, HumanMessage

    push_message = module(api, "graph.message").push_message

    class Chat(TypedDict):
        messages: Annotated[list[AnyMessage], api.add_messages]
        notes: Annotated[list[AnyMessage], api.add_messages]

    said = []

    def chat(state):
        try:
            push_message(AIMessage("no id"))
        except ValueError as error:
            said.append(("refused", "Message ID is required" in str(error)))
        first = push_message(AIMessage("one", id="m1"))
        push_message(HumanMessage("aside", id="m2"), state_key="notes")
        push_message(AIMessage("only streamed", id="m3"), state_key=None)
        return {"messages": [first, AIMessage("returned", id="m4")]}

    app = api.StateGraph(Chat).add_node("chat", chat).add_edge(api.START, "chat").compile()
    chunks = []
    for mode, chunk in app.stream({"messages": []}, stream_mode=["messages", "values"]):
        if mode == "messages":
            message, metadata = chunk
            chunks.append(("messages", message.content, message.id, metadata["langgraph_node"]))
        else:
            chunks.append(("values", {k: message_rows(v) for k, v in chunk.items()}))
    try:
        push_message(AIMessage("outside", id="m5"))
    except Exception as error:
        said.append(type(error).__name__)
    return chunks, said


@program
def add_messages_formats_for_openai_when_asked(api):
    from langchain_core.messages import AIMessage, AnyMessage, HumanMessage

    class Chat(TypedDict):
        messages: Annotated[list[AnyMessage], api.add_messages(format="langchain-openai")]

    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA"}}
    blocks = [{"type": "text", "text": "look:"}, image]
    app = (
        api.StateGraph(Chat)
        .add_node("n", lambda s: {"messages": [AIMessage("seen", id="a1")]})
        .add_edge(api.START, "n")
        .compile()
    )
    out = app.invoke({"messages": [HumanMessage(blocks, id="h1")]})
    ended = []
    calls = (
        lambda: api.add_messages(format="xml")([], []),  # (refused when it merges)
        lambda: api.add_messages([], None),
        lambda: api.add_messages(None, [HumanMessage("x", id="x")]),
        lambda: callable(api.add_messages()),
    )
    for call in calls:
        try:
            ended.append(call())
        except ValueError as error:
            ended.append(type(error).__name__)
    return [(type(m).__name__, m.content) for m in out["messages"]], ended


@program
def a_node_writing_none_to_its_messages_is_refused(api):
    from langchain_core.messages import AnyMessage, HumanMessage

    class Chat(TypedDict):
        messages: Annotated[list[AnyMessage], api.add_messages]

    seen = []
    for write in (None, [], HumanMessage("more", id="m")):
        app = api.StateGraph(Chat).add_node("n", lambda s, w=write: {"messages": w})
        app = app.add_edge(api.START, "n").compile()
        try:
            seen.append(
                [
                    m.content
                    for m in app.invoke({"messages": [HumanMessage("hi", id="h")]})["messages"]
                ]
            )
        except ValueError as error:
            seen.append(("refused", "Must specify non-null arguments" in str(error)))
    return seen


@program
def a_pydantic_state_takes_message_pairs_as_input(api):
    from langchain_core.messages import AnyMessage, HumanMessage
    from pydantic import BaseModel

    class Chat(BaseModel):
        messages: Annotated[list[AnyMessage], api.add_messages]
        turns: int = 0

    seen = []

    def reply(state):
        seen.append([type(m).__name__ for m in state.messages])
        return {"messages": [HumanMessage("ok")], "turns": state.turns + 1}

    app = api.StateGraph(Chat).add_node("reply", reply).add_edge(api.START, "reply").compile()
    out = app.invoke({"messages": [("user", "hi"), {"role": "assistant", "content": "yo"}, "x"]})
    return [(type(m).__name__, m.content) for m in out["messages"]], out["turns"], seen


@program
def removing_a_message_that_is_not_there_is_refused(api):
    from langchain_core.messages import HumanMessage, RemoveMessage

    try:
        api.add_messages([HumanMessage("hi", id="1")], RemoveMessage(id="2"))
    except ValueError as error:  # (LangGraph's class; nbgraph's InvalidUpdateError is one)
        return "Attempting to delete a message with an ID that doesn't exist" in str(error)
    return "not refused"


@program
def a_builder_names_its_managed_fields(api):
    class Steps(TypedDict):
        left: api.RemainingSteps
        n: int

    class Last(TypedDict):
        last: api.IsLastStep

    def node(state: Last):
        return {}

    builder = api.StateGraph(Steps).add_node("node", node)
    return sorted(builder.managed), "n" in builder.managed


@program
def a_graph_called_with_a_thread_of_its_own_inside_a_node_runs_on_its_own(api):
    seen = []
    for mode in (None, True, False, "saver"):
        own = api.saver() if mode == "saver" else mode
        child = api.StateGraph(Count).add_node("inc", lambda s: {"n": s["n"] + 1})
        child = child.add_edge(api.START, "inc").compile(checkpointer=own)

        def call(state, child=child):
            try:
                return {"n": child.invoke(state, {"configurable": {"thread_id": "mine"}})["n"]}
            except RuntimeError as error:  # (checkpointer=True on a run of its own)
                return {"n": -len(type(error).__name__)}

        parent_saver = api.saver()
        app = api.StateGraph(Count).add_node("call", call).add_edge(api.START, "call")
        app = app.compile(checkpointer=parent_saver)
        chunks = [(len(ns), c) for ns, c in app.stream({"n": 1}, thread(), subgraphs=True)]
        listed = sorted(
            {ns_shape(c.config["configurable"]["checkpoint_ns"]) for c in parent_saver.list(None)}
        )
        mine = [] if mode != "saver" else [c.metadata["step"] for c in own.list(thread("mine"))]
        seen.append((mode, chunks, listed, mine))
    return seen


@program
def a_graph_given_its_callers_config_stays_its_subgraph(api):
    sub = (
        api.StateGraph(Count)
        .add_node("inc", lambda s: {"n": s["n"] + 1})
        .add_edge(api.START, "inc")
    )
    inner, saver = sub.compile(), api.saver()

    def call(state, config):
        return {"n": inner.invoke(state, config)["n"]}

    app = (
        api.StateGraph(Count)
        .add_node("call", call)
        .add_edge(api.START, "call")
        .compile(checkpointer=saver)
    )
    chunks = [
        (tuple(ns_shape(p) for p in ns), c)
        for ns, c in app.stream({"n": 1}, thread(), subgraphs=True)
    ]
    return chunks, sorted(
        {ns_shape(c.config["configurable"]["checkpoint_ns"]) for c in saver.list(None)}
    )


@program
def a_graph_called_with_a_thread_of_its_own_takes_no_context_or_store_from_its_caller(api):
    from dataclasses import dataclass

    @dataclass
    class Who:
        name: str

    class Note(TypedDict):
        note: str

    def read(state, runtime: api.Runtime[Who]):
        flags = (
            runtime.context,
            runtime.store is not None,
            api.get_config()["configurable"].get("user"),
        )
        return {"note": repr(flags)}

    child = (
        api.StateGraph(Note, context_schema=Who)
        .add_node("read", read)
        .add_edge(api.START, "read")
        .compile()
    )

    def call(state):
        inherited = child.invoke(state)["note"]
        own = child.invoke(state, {"configurable": {"thread_id": "own"}})["note"]
        return {"note": f"{inherited} / {own}"}

    app = (
        api.StateGraph(Note, context_schema=Who).add_node("call", call).add_edge(api.START, "call")
    )
    app = app.compile(checkpointer=api.saver(), store=api.InMemoryStore())
    config = {"configurable": {"thread_id": "t", "user": "u1"}}
    return app.invoke({"note": ""}, config, context=Who("me"))


# ---------------------------------------------------------------------------------------------
# update_state on a thread with no checkpoint yet: the update is its first checkpoint


@program
def updating_a_thread_that_has_no_checkpoint_starts_it(api):
    seen, ids = [], Ids()
    for as_node in (None, "work", "__start__"):
        app = (
            api.StateGraph(Trail)
            .add_node("work", lambda s: {"trail": ["work"]})
            .add_edge(api.START, "work")
            .compile(checkpointer=api.saver())
        )
        config = thread(f"fresh-{as_node}")
        app.update_state(config, {"trail": ["given"]}, as_node=as_node)
        history = [snapshot_view(s, ids) for s in app.get_state_history(config)]
        seen.append((history, app.invoke(None, config), app.invoke({"trail": ["more"]}, config)))
    return seen


@program
def a_memory_saver_answers_the_async_reads(api):
    import asyncio

    saver = api.InMemorySaver()  # (LangGraph's SqliteSaver refuses them; nbgraph's answers)
    app = (
        api.StateGraph(Count)
        .add_node("inc", lambda s: {"n": s["n"] + 1})
        .add_edge(api.START, "inc")
    )
    app = app.compile(checkpointer=saver)
    app.invoke({"n": 1}, thread())

    async def read():
        latest = await saver.aget_tuple(thread())
        listed = [
            (c.metadata["step"], c.metadata["source"]) async for c in saver.alist(thread(), limit=2)
        ]
        await saver.adelete_thread("t")
        left = [c async for c in saver.alist(thread())]
        return latest.metadata["step"], latest.checkpoint["channel_values"]["n"], listed, left

    return asyncio.run(read())
