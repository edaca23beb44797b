"""Differential tests of `stream(..., subgraphs=True)`: the chunks of graphs run inside nodes
(a compiled graph added as a node, or invoked by a node's function) streamed as
`(namespace, chunk)` / `(namespace, mode, chunk)` with LangGraph's namespaces, in every
stream mode, sync and async. Each program runs on real LangGraph and on nbgraph; the chunks
must be the same, task ids compared by structure (the n-th distinct id seen on one side is
the n-th on the other: same positions equal, different positions different).
"""

# No `from __future__ import annotations`: state classes are defined inside functions.

import asyncio
import operator
import sys
import time
from typing import Annotated, Any, TypedDict

import pytest

pytest.importorskip("langchain_core")

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage

from tests.support.harness import Ids, api_for, both

pytestmark = pytest.mark.langgraph

_DROPPED = ("lc_versions",)  # (the langchain_core version: the same package on both)


class Shown:
    """Chunks in a comparable form: ids (task ids in namespaces, message and interrupt ids)
    by structure (`Ids`), messages as `(class, content, id)`, interrupts as their value."""

    def __init__(self) -> None:
        self.ids = Ids()

    def __call__(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.ids.text(value)
        if isinstance(value, BaseMessage):
            return (type(value).__name__, self(value.content), self(value.id or ""))
        if type(value).__name__ == "Interrupt":
            return ("Interrupt", self(value.value))
        if isinstance(value, dict):
            return {self(k): self(v) for k, v in value.items() if k not in _DROPPED}
        if isinstance(value, (list, tuple)):
            return type(value)(self(v) for v in value)
        return value


def shown(chunks: list) -> list:
    return Shown()(list(chunks))


# --- graphs ------------------------------------------------------------------------------------


def shared_keys_graph(api, checkpointer=None):
    """p18's graphs: a subgraph added as node `node_2`, sharing `foo` with its parent; each
    node of both graphs writes a custom chunk."""

    class SubState(TypedDict):
        foo: str
        bar: str

    def sub_1(state):
        api.get_stream_writer()({"in": "sub_1"})
        return {"bar": "bar"}

    def sub_2(state):
        return {"foo": state["foo"] + state["bar"]}

    sub = (
        api.StateGraph(SubState).add_node(sub_1).add_node(sub_2)
        .add_edge(api.START, "sub_1").add_edge("sub_1", "sub_2").compile()
    )  # fmt: skip

    class State(TypedDict):
        foo: str

    def node_1(state):
        api.get_stream_writer()({"in": "node_1"})
        return {"foo": "hi! " + state["foo"]}

    return (
        api.StateGraph(State).add_node("node_1", node_1).add_node("node_2", sub)
        .add_edge(api.START, "node_1").add_edge("node_1", "node_2")
        .compile(checkpointer=checkpointer)
    )  # fmt: skip


def three_levels_graph(api, in_function: bool):
    """parent -> child -> grandchild, added as nodes or invoked by the node's function."""

    class Grand(TypedDict):
        g: str

    def grandchild_1(state):
        api.get_stream_writer()("deep")
        return {"g": state["g"] + ", how are you"}

    grand = api.StateGraph(Grand).add_node(grandchild_1).add_edge(api.START, "grandchild_1")
    grand = grand.compile()

    class Child(TypedDict):
        g: str

    def child_1(state):
        return {"g": grand.invoke({"g": state["g"]})["g"] + " today?"}

    child = api.StateGraph(Child)
    child = child.add_node("child_1", child_1) if in_function else child.add_node("mid", grand)
    child = child.add_edge(api.START, "child_1" if in_function else "mid").compile()

    class Parent(TypedDict):
        g: str

    def call_child(state):
        return {"g": child.invoke({"g": state["g"]})["g"]}

    parent = api.StateGraph(Parent).add_node("parent_1", lambda s: {"g": "hi " + s["g"]})
    parent = parent.add_node("child", call_child if in_function else child)
    parent = parent.add_node("parent_2", lambda s: {"g": s["g"] + " bye!"})
    parent = parent.add_edge(api.START, "parent_1").add_edge("parent_1", "child")
    return parent.add_edge("child", "parent_2").compile()


# --- the programs ------------------------------------------------------------------------------

MODES = [
    "updates", "values", "custom", ["updates", "custom"], ["values", "updates", "custom"],
    ["custom", "values"],
]  # fmt: skip


def shared_keys_program(api, stream_mode, subgraphs):
    graph = shared_keys_graph(api)
    return shown(graph.stream({"foo": "foo"}, stream_mode=stream_mode, subgraphs=subgraphs))


@pytest.mark.parametrize("subgraphs", [True, False])
@pytest.mark.parametrize("stream_mode", MODES)
def test_a_subgraph_added_as_a_node_streams_under_its_namespace(stream_mode, subgraphs):
    lg, nb = both(shared_keys_program, stream_mode, subgraphs)
    assert nb == lg
    if subgraphs:  # (the subgraph's chunks are there, each with its parent task's namespace)
        spaces = {chunk[0] for chunk in nb}
        assert spaces == {(), ("node_2:<id 0>",)}


def three_levels_program(api, in_function, stream_mode):
    graph = three_levels_graph(api, in_function)
    return shown(graph.stream({"g": "Bob"}, stream_mode=stream_mode, subgraphs=True))


@pytest.mark.parametrize("stream_mode", ["updates", ["values", "custom", "updates"]])
@pytest.mark.parametrize("in_function", [False, True])
def test_graphs_three_deep_stream_with_nested_namespaces(in_function, stream_mode):
    lg, nb = both(three_levels_program, in_function, stream_mode)
    assert nb == lg
    deepest = max((chunk[0] for chunk in nb), key=len)
    assert len(deepest) == 2 and deepest[0].startswith("child:")


def async_program(api, stream_mode, async_nodes):
    class SubState(TypedDict):
        items: Annotated[list, operator.add]

    async def async_step(state):
        api.get_stream_writer()("async")
        await asyncio.sleep(0)
        return {"items": ["a"]}

    def sync_step(state):
        api.get_stream_writer()("sync")
        return {"items": ["s"]}

    sub = api.StateGraph(SubState).add_node("step", async_step if async_nodes else sync_step)
    sub = sub.add_edge(api.START, "step").compile()

    class State(TypedDict):
        items: Annotated[list, operator.add]

    graph = api.StateGraph(State).add_node("first", lambda s: {"items": ["p"]})
    graph = graph.add_node("sub", sub).add_edge(api.START, "first").add_edge("first", "sub")
    graph = graph.compile()

    async def run():
        stream = graph.astream({"items": []}, stream_mode=stream_mode, subgraphs=True)
        return [chunk async for chunk in stream]

    return shown(asyncio.run(run()))


@pytest.mark.parametrize("async_nodes", [True, False])
@pytest.mark.parametrize("stream_mode", ["updates", ["updates", "values", "custom"]])
def test_astream_streams_subgraphs_too(stream_mode, async_nodes):
    lg, nb = both(async_program, stream_mode, async_nodes)
    assert nb == lg


def parallel_program(api, stream_mode):
    """Two subgraphs in one step (threads): each namespace's chunks in order."""

    class SubState(TypedDict):
        items: Annotated[list, operator.add]

    def make(name):
        def one(state):
            time.sleep(0.01)
            api.get_stream_writer()(name)
            return {"items": [name + "1"]}

        def two(state):
            return {"items": [name + "2"]}

        sub = api.StateGraph(SubState).add_node("one", one).add_node("two", two)
        return sub.add_edge(api.START, "one").add_edge("one", "two").compile()

    graph = api.StateGraph(SubState).add_node("left", make("L")).add_node("right", make("R"))
    graph = graph.add_edge(api.START, "left").add_edge(api.START, "right").compile()
    chunks = list(graph.stream({"items": []}, stream_mode=stream_mode, subgraphs=True))
    spaces: dict[str, list] = {}
    for ns, *rest in chunks:  # each namespace's chunks (named by node: ids by structure)
        spaces.setdefault(ns[0].split(":")[0] if ns else "", []).append(Shown()(rest))
    spaces[""] = sorted(spaces.get("", []), key=repr)  # (the two tasks end in any order)
    return spaces


@pytest.mark.parametrize("stream_mode", ["values", ["updates", "custom"]])
def test_parallel_subgraphs_stream_each_under_its_own_namespace(stream_mode):
    lg, nb = both(parallel_program, stream_mode)
    assert nb == lg


def interrupt_program(api, stream_mode):
    """An `interrupt()` inside a subgraph (checkpointed parent): what the stream shows."""

    class State(TypedDict):
        foo: str

    def ask(state):
        return {"foo": state["foo"] + api.interrupt("why?")}

    sub = api.StateGraph(State).add_node("before", lambda s: {"foo": s["foo"] + "1"})
    sub = sub.add_node("ask", ask).add_edge(api.START, "before").add_edge("before", "ask")
    graph = api.StateGraph(State).add_node("first", lambda s: {"foo": "hi " + s["foo"]})
    graph = graph.add_node("sub", sub.compile()).add_edge(api.START, "first")
    graph = graph.add_edge("first", "sub").compile(checkpointer=api.InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    chunks = graph.stream({"foo": "x"}, config, stream_mode=stream_mode, subgraphs=True)
    return shown(chunks), graph.get_state(config).next


@pytest.mark.parametrize("stream_mode", ["updates", "values", ["updates", "values"]])
def test_an_interrupt_inside_a_subgraph_streams_as_on_langgraph(stream_mode):
    lg, nb = both(interrupt_program, stream_mode)
    assert nb == lg


def tasks_program(api, stream_mode, in_function):
    """`tasks` (with other modes): each task's start and result; the ids match the
    namespaces of the subgraphs the tasks ran."""
    graph = three_levels_graph(api, in_function)
    config = {"metadata": {"who": "me"}, "tags": ["mine"]}
    return shown(graph.stream({"g": "Bob"}, config, stream_mode=stream_mode, subgraphs=True))


@pytest.mark.parametrize("in_function", [False, True])
@pytest.mark.parametrize("stream_mode", ["tasks", ["tasks", "updates", "values", "custom"]])
def test_tasks_mode_ids_are_the_namespaces_of_the_subgraphs_they_ran(stream_mode, in_function):
    lg, nb = both(tasks_program, stream_mode, in_function)
    assert nb == lg
    chunks = [c if len(c) == 3 else (c[0], "tasks", c[1]) for c in nb]
    child = next(c[2]["id"] for c in chunks if c[1] == "tasks" and c[2]["name"] == "child")
    assert {c[0][0] for c in chunks if c[0]} == {f"child:{child}"}


def tasks_writes_program(api):
    """A task writing a field twice, a Send's task, an interrupt: `tasks` shows each."""

    class State(TypedDict):
        items: Annotated[list, operator.add]

    def fan(state):
        return [api.Send("worker", {"items": ["sent"]})]

    def twice(state):
        return [api.Command(update={"items": ["a"]}), api.Command(update={"items": ["b"]})]

    def ask(state):
        return {"items": [api.interrupt("ok?")]}

    graph = api.StateGraph(State).add_node("twice", twice).add_node("worker", lambda s: s)
    graph = graph.add_node("ask", ask).add_edge(api.START, "twice")
    graph = graph.add_conditional_edges("twice", fan).add_edge("worker", "ask")
    graph = graph.compile(checkpointer=api.InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    return shown(graph.stream({"items": []}, config, stream_mode=["tasks", "updates"]))


def test_tasks_mode_shows_writes_sends_and_interrupts_as_langgraph():
    lg, nb = both(tasks_writes_program)
    assert nb == lg


def resume_program(api):
    """The stream of `Command(resume=...)` after an `interrupt()` inside a subgraph."""

    class State(TypedDict):
        foo: str

    def ask(state):
        return {"foo": state["foo"] + api.interrupt("why?")}

    sub = api.StateGraph(State).add_node("before", lambda s: {"foo": s["foo"] + "1"})
    sub = sub.add_node("ask", ask).add_edge(api.START, "before").add_edge("before", "ask")
    graph = api.StateGraph(State).add_node("first", lambda s: {"foo": "hi " + s["foo"]})
    graph = graph.add_node("sub", sub.compile()).add_edge(api.START, "first")
    graph = graph.add_edge("first", "sub").compile(checkpointer=api.InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    list(graph.stream({"foo": "x"}, config))
    resume = api.Command(resume="A")
    return shown(graph.stream(resume, config, stream_mode=["updates", "values"], subgraphs=True))


def test_resuming_inside_a_subgraph_streams_as_on_langgraph():
    """The resumed subgraph continues at the node that asked: `before` neither runs nor
    streams again, as on LangGraph."""
    lg, nb = both(resume_program)
    assert nb == lg


def failing_program(api):
    """A node of a subgraph raises: the chunks before the error, the error's task result."""

    class State(TypedDict):
        foo: str

    def boom(state):
        raise ValueError("no")

    sub = api.StateGraph(State).add_node("ok", lambda s: {"foo": "1"}).add_node("boom", boom)
    sub = sub.add_edge(api.START, "ok").add_edge("ok", "boom").compile()
    graph = api.StateGraph(State).add_node("sub", sub).add_edge(api.START, "sub").compile()
    chunks = []
    with pytest.raises(ValueError, match="no"):
        for chunk in graph.stream({"foo": "x"}, stream_mode=["updates", "tasks"], subgraphs=True):
            chunks.append(chunk)
    for _ns, mode, chunk in chunks:  # (the exception: by its class)
        if mode == "tasks" and chunk.get("error") is not None:
            chunk["error"] = type(chunk["error"]).__name__
    return shown(chunks)


def parent_command_program(api):
    """`Command(graph=Command.PARENT, ...)` from inside a subgraph, streamed."""

    class State(TypedDict):
        log: Annotated[list, operator.add]

    def jump(state):
        return api.Command(graph=api.Command.PARENT, goto="after", update={"log": ["jumped"]})

    sub = api.StateGraph(State).add_node("jump", jump).add_edge(api.START, "jump").compile()
    graph = api.StateGraph(State).add_node("sub", sub)
    graph = graph.add_node("after", lambda s: {"log": ["after"]}).add_edge(api.START, "sub")
    return shown(graph.compile().stream({"log": []}, stream_mode=["updates", "values"],
                                        subgraphs=True))  # fmt: skip


def send_program(api):
    """A `Send` to a subgraph node: the subgraph streams under the Send task's namespace."""

    class State(TypedDict):
        log: Annotated[list, operator.add]

    sub = api.StateGraph(State).add_node("inner", lambda s: {"log": ["in"]})
    sub = sub.add_edge(api.START, "inner").compile()
    graph = api.StateGraph(State).add_node("sub", sub).add_node("fan", lambda s: {})
    graph = graph.add_edge(api.START, "fan")
    graph = graph.add_conditional_edges("fan", lambda s: [api.Send("sub", {"log": ["a"]})])
    chunks = graph.compile().stream({"log": []}, stream_mode=["updates", "values", "tasks"],
                                    subgraphs=True)  # fmt: skip
    return shown(chunks)


def async_in_function_program(api):
    """`await sub.ainvoke(...)` inside an async node, beside the subgraph as a node."""

    class State(TypedDict):
        log: Annotated[list, operator.add]

    async def inner(state):
        api.get_stream_writer()("written")
        return {"log": ["in"]}

    sub = api.StateGraph(State).add_node("inner", inner).add_edge(api.START, "inner").compile()

    async def call(state):
        return {"log": (await sub.ainvoke({"log": []}))["log"]}

    graph = api.StateGraph(State).add_node("call", call).add_node("node", sub)
    graph = graph.add_edge(api.START, "call").add_edge(api.START, "node").compile()

    async def run():
        stream = graph.astream({"log": []}, stream_mode=["updates", "custom"], subgraphs=True)
        return [chunk async for chunk in stream]

    return sorted(map(repr, shown(asyncio.run(run()))))  # (two tasks at once: any order)


@pytest.mark.parametrize(
    "program",
    [failing_program, parent_command_program, send_program, async_in_function_program],
)
def test_errors_parent_commands_sends_and_async_calls_stream_as_on_langgraph(program):
    lg, nb = both(program)
    assert nb == lg


def inner_stream_program(api, stream_mode, inner_mode):
    """A node that itself streams a graph (`sub.stream(...)`), under `subgraphs=True`: its
    own chunks go to the node, and to the caller in the caller's modes."""

    class State(TypedDict):
        g: str

    def inner(state):
        api.get_stream_writer()("from inner")
        return {"g": state["g"] + "!"}

    sub = api.StateGraph(State).add_node("inner", inner).add_edge(api.START, "inner").compile()
    seen = []

    def call(state):
        seen.append(shown(sub.stream(state, stream_mode=inner_mode)))
        return {"g": state["g"] + "?"}

    graph = api.StateGraph(State).add_node("call", call).add_edge(api.START, "call").compile()
    return shown(graph.stream({"g": "a"}, stream_mode=stream_mode, subgraphs=True)), seen


@pytest.mark.parametrize("inner_mode", ["values", ["custom", "updates"], "custom"])
@pytest.mark.parametrize("stream_mode", ["updates", ["values", "custom"], ["custom", "tasks"]])
# (LangGraph: a custom chunk goes to the inner stream if it asks for them, else to the outer)
def test_a_graph_a_node_streams_itself_streams_to_the_caller_too(stream_mode, inner_mode):
    lg, nb = both(inner_stream_program, stream_mode, inner_mode)
    assert nb == lg


# --- messages ----------------------------------------------------------------------------------


def messages_program(api, subgraphs, stream_mode):
    """A fake chat model inside a subgraph node and inside a graph a node's function
    invokes; the parent's own node returns a message."""
    from langgraph.graph import MessagesState  # (a TypedDict: the same class serves both)

    def model_node(state):
        model = GenericFakeChatModel(messages=iter([AIMessage("hi there")]))
        return {"messages": [model.invoke(state["messages"])]}

    sub = api.StateGraph(MessagesState).add_node("model", model_node)
    sub = sub.add_edge(api.START, "model").compile()

    def call_sub(state):
        return {"messages": sub.invoke({"messages": state["messages"]})["messages"][-1:]}

    graph = api.StateGraph(MessagesState)
    graph = graph.add_node("own", lambda s: {"messages": [AIMessage("parent", id="own-1")]})
    graph = graph.add_node("sub", sub).add_node("caller", call_sub)
    graph = graph.add_edge(api.START, "own").add_edge("own", "sub").add_edge("sub", "caller")
    graph = graph.compile()
    chunks = graph.stream({"messages": [("user", "yo")]}, stream_mode=stream_mode,
                          subgraphs=subgraphs)  # fmt: skip
    return shown(chunks)


def inner_stream_messages_program(api, stream_mode, inner_mode):
    """A node streams a graph whose node calls a chat model; the caller streams messages."""
    from langgraph.graph import MessagesState

    def model_node(state):
        model = GenericFakeChatModel(messages=iter([AIMessage("hi there")]))
        return {"messages": [model.invoke(state["messages"])]}

    sub = api.StateGraph(MessagesState).add_node("model", model_node)
    sub = sub.add_edge(api.START, "model").compile()
    seen = []

    def call(state):
        seen.append(shown(sub.stream({"messages": state["messages"]}, stream_mode=inner_mode)))
        return {"messages": [AIMessage("done", id="done")]}

    graph = api.StateGraph(MessagesState).add_node("call", call)
    graph = graph.add_edge(api.START, "call").compile()
    chunks = graph.stream({"messages": [("user", "yo")]}, stream_mode=stream_mode,
                          subgraphs=True)  # fmt: skip
    return shown(chunks), seen


@pytest.mark.parametrize("inner_mode", ["values", "messages", ["messages", "updates"]])
@pytest.mark.parametrize("stream_mode", ["messages", ["messages", "updates"]])
def test_tokens_of_a_graph_a_node_streams_reach_both_streams(stream_mode, inner_mode):
    lg, nb = both(inner_stream_messages_program, stream_mode, inner_mode)
    assert nb == lg


@pytest.mark.parametrize("stream_mode", ["messages", ["messages", "updates"]])
@pytest.mark.parametrize("subgraphs", [True, False])
def test_chat_model_tokens_inside_subgraphs_as_on_langgraph(subgraphs, stream_mode):
    lg, nb = both(messages_program, subgraphs, stream_mode)
    assert nb == lg


def deep_messages_program(api):
    """A chat model two graphs deep; the node's config metadata as LangGraph gives it."""
    from langgraph.graph import MessagesState

    def model_node(state, config):
        model = GenericFakeChatModel(messages=iter([AIMessage("hi there")]))
        metadata = config["metadata"]
        seen = AIMessage(f"{sorted(metadata)} {metadata.get('checkpoint_ns')}", id="seen")
        return {"messages": [model.invoke(state["messages"]), seen]}

    inner = api.StateGraph(MessagesState).add_node("model", model_node)
    inner = inner.add_edge(api.START, "model").compile()
    mid = api.StateGraph(MessagesState).add_node("mid", inner).add_edge(api.START, "mid")
    outer = api.StateGraph(MessagesState).add_node("out", mid.compile())
    outer = outer.add_edge(api.START, "out").compile()
    stream_mode = ["messages", "updates"]
    chunks = outer.stream({"messages": [("user", "yo")]}, stream_mode=stream_mode,
                          subgraphs=True)  # fmt: skip
    return shown(chunks)


def test_chat_model_tokens_two_graphs_deep_as_on_langgraph():
    lg, nb = both(deep_messages_program)
    assert nb == lg
    assert nb[0][0] == ("out:<id 0>", "mid:<id 1>")


# --- nbgraph's own -----------------------------------------------------------------------------


def test_invoke_is_unchanged_by_a_streamed_run_elsewhere():
    graph = shared_keys_graph(api_for("nbgraph"))
    streamed = list(graph.stream({"foo": "foo"}, subgraphs=True))
    assert graph.invoke({"foo": "foo"}) == {"foo": "hi! foobar"}
    assert streamed[-1] == ((), {"node_2": {"foo": "hi! foobar"}})


def test_a_subgraph_chunks_namespace_is_its_parent_tasks_checkpoint_ns():
    import nbgraph

    seen = []

    class State(TypedDict):
        foo: str

    def inner(state, config):
        seen.append(config["configurable"]["checkpoint_ns"])
        return {"foo": state["foo"] + "!"}

    def outer(state, config):
        seen.append(config["configurable"]["checkpoint_ns"])
        return sub.invoke(state)

    sub = nbgraph.StateGraph(State).add_node("inner", inner)
    sub = sub.add_edge(nbgraph.START, "inner").compile()
    graph = nbgraph.StateGraph(State).add_node("outer", outer)
    graph = graph.add_edge(nbgraph.START, "outer").compile()
    chunks = list(graph.stream({"foo": "x"}, subgraphs=True))
    assert chunks[0][0] == (seen[0],)  # the parent task's namespace
    assert seen[1].startswith(seen[0] + "|inner:")  # the inner task's: the whole path


def test_closing_a_subgraph_stream_early_ends_the_run():
    graph = shared_keys_graph(api_for("nbgraph"))
    stream = graph.stream({"foo": "foo"}, subgraphs=True)
    first = next(stream)
    stream.close()
    assert first == ((), {"node_1": {"foo": "hi! foo"}})
    assert graph.last_log.status == "failed"


def test_debug_events_of_a_subgraph_come_under_its_namespace():
    from nbgraph.engine.drive import StepFinished, TaskFinished, TaskStarted

    graph = shared_keys_graph(api_for("nbgraph"))
    chunks = list(graph.stream({"foo": "foo"}, stream_mode=["debug", "tasks"], subgraphs=True))
    inner = [(type(c).__name__, c.node if hasattr(c, "node") else c.step)
             for ns, mode, c in chunks if ns and mode == "debug"]  # fmt: skip
    assert inner == [
        ("TaskStarted", "sub_1"), ("TaskFinished", "sub_1"), ("StepFinished", 1),
        ("TaskStarted", "sub_2"), ("TaskFinished", "sub_2"), ("StepFinished", 2),
    ]  # fmt: skip
    started = {c["name"]: c["id"] for ns, mode, c in chunks if mode == "tasks" and "input" in c}
    assert {ns for ns, _, _ in chunks} == {(), (f"node_2:{started['node_2']}",)}
    outer = [type(c) for ns, mode, c in chunks if not ns and mode == "debug"]
    assert outer.count(TaskStarted) == outer.count(TaskFinished) == 2
    assert StepFinished in outer
    plain_debug = list(graph.stream({"foo": "foo"}, stream_mode="debug"))
    assert [type(c) for c in plain_debug] == outer  # (subgraphs=False: the parent's only)


def test_the_checkpoints_mode_without_a_checkpointer_streams_no_checkpoints():
    graph = shared_keys_graph(api_for("nbgraph"))  # (tests/parity/test_langgraph_runnable_surface)
    chunks = list(graph.stream({"foo": "foo"}, stream_mode=["updates", "checkpoints"]))
    assert chunks and {mode for mode, _ in chunks} == {"updates"}


def test_the_subgraph_streams_benchmark_runs_at_a_tiny_size(monkeypatch, capsys):
    from pathlib import Path

    benchmarks = Path(__file__).resolve().parents[2] / "benchmarks"
    monkeypatch.syspath_prepend(str(benchmarks))
    monkeypatch.delitem(sys.modules, "compare", raising=False)
    import subgraph_streams

    results = subgraph_streams.main(["--calls", "5", "--repeat", "1"])
    assert set(results["stream updates, subgraphs=True"]) == {"nbgraph", "LangGraph"}
    assert "µs/call" in capsys.readouterr().out
