"""Differential tests of the live streams: `get_stream_writer()` with `stream_mode="custom"`,
and `stream_mode="messages"` from langchain chat models called in nodes. Each program runs
on real LangGraph and on nbgraph; the chunks (ids compared by structure) must be the same.
Then nbgraph's own: custom chunks in the record, the inspector, `subgraphs=True` without subgraphs.
"""

# No `from __future__ import annotations`: state classes are defined inside functions.

import asyncio
import operator
import re
import threading
import time
from typing import Annotated, TypedDict

import pytest

pytest.importorskip("langchain_core")

from langchain_core.language_models.fake_chat_models import (
    FakeListChatModel,
    GenericFakeChatModel,
)
from langchain_core.messages import AIMessage, BaseMessage

from tests.support.harness import Ids, both

pytestmark = pytest.mark.langgraph

WAIT = 10.0  # seconds a node waits for its sibling before giving up (never, when it works)


def message_chunks(chunks: list) -> list:
    """`(message, metadata)` pairs in a comparable form: class, content, id and
    checkpoint namespaces by structure, every metadata key and value."""
    ids = Ids()
    shown = []
    for message, metadata in chunks:
        assert isinstance(message, BaseMessage)
        meta = {key: ids.text(value) for key, value in metadata.items()}
        meta.pop("lc_versions", None)  # (the langchain_core version: the same package)
        shown.append((type(message).__name__, message.content, ids.text(message.id), meta))
    return shown


def by_node(shown: list) -> dict[str, list]:
    """Each node's chunks in order (parallel nodes' chunks interleave as threads run)."""
    nodes: dict[str, list] = {}
    for item in shown:
        meta = item[-1] if isinstance(item, tuple) and isinstance(item[-1], dict) else {}
        nodes.setdefault(meta.get("langgraph_node", ""), []).append(item[:2])
    return nodes


# --- custom ------------------------------------------------------------------------------


def one_writer_program(api, stream_mode):
    class State(TypedDict):
        foo: str

    def node(state):
        writer = api.get_stream_writer()
        writer({"custom_key": "inside node"})
        writer("second")
        return {"foo": state["foo"] + "!"}

    graph = api.StateGraph(State).add_node("node", node).add_edge(api.START, "node").compile()
    return list(graph.stream({"foo": "bar"}, stream_mode=stream_mode)), graph.invoke({"foo": "x"})


@pytest.mark.parametrize(
    "stream_mode",
    ["custom", ["custom"], ["custom", "updates"], ["updates", "custom"], ["values", "custom"],
     ["values", "updates", "custom"], "updates", "values"],
)  # fmt: skip
def test_custom_chunks_alone_and_with_other_modes(stream_mode):
    lg, nb = both(one_writer_program, stream_mode)
    assert nb == lg


def parallel_program(api, stream_mode):
    """Two nodes in one step, writing in a fixed interleaving (they wait for each other)."""

    class State(TypedDict):
        log: Annotated[list, operator.add]

    first, second = threading.Event(), threading.Event()

    def n1(state):
        writer = api.get_stream_writer()
        writer("n1-a")
        first.set()
        assert second.wait(WAIT)
        writer("n1-b")
        return {"log": ["n1"]}

    def n2(state, writer: api.StreamWriter):
        assert first.wait(WAIT)
        writer("n2-a")
        second.set()
        time.sleep(0.3)  # n1 ends meanwhile: its update comes before this chunk
        writer({"n2": 2})
        return {"log": ["n2"]}

    def n3(state):
        api.get_stream_writer()("n3")
        return None

    graph = (
        api.StateGraph(State)
        .add_node("n1", n1).add_node("n2", n2).add_node("n3", n3)
        .add_edge(api.START, "n1").add_edge(api.START, "n2")
        .add_edge(["n1", "n2"], "n3")
        .compile()
    )  # fmt: skip
    return list(graph.stream({"log": []}, stream_mode=stream_mode))


@pytest.mark.parametrize("stream_mode", ["custom", ["custom", "updates"], ["values", "custom"]])
def test_parallel_nodes_interleave_their_chunks_as_written(stream_mode):
    lg, nb = both(parallel_program, stream_mode)
    assert nb == lg
    if stream_mode == ["custom", "updates"]:
        assert nb[:4] == [
            ("custom", "n1-a"), ("custom", "n2-a"), ("custom", "n1-b"),
            ("updates", {"n1": {"log": ["n1"]}}),
        ]  # fmt: skip


def async_program(api, stream_mode):
    class State(TypedDict):
        log: Annotated[list, operator.add]

    async def run() -> list:
        first, second = asyncio.Event(), asyncio.Event()

        async def n1(state):
            writer = api.get_stream_writer()
            writer("n1-a")
            first.set()
            await asyncio.wait_for(second.wait(), WAIT)
            writer("n1-b")
            return {"log": ["n1"]}

        async def n2(state, writer: api.StreamWriter):
            await asyncio.wait_for(first.wait(), WAIT)
            writer("n2-a")
            second.set()
            await asyncio.sleep(0.2)
            writer("n2-b")
            return {"log": ["n2"]}

        def n3(state):  # a sync node under astream: it runs in a thread
            api.get_stream_writer()("n3 from a thread")
            return {"log": ["n3"]}

        graph = (
            api.StateGraph(State)
            .add_node("n1", n1).add_node("n2", n2).add_node("n3", n3)
            .add_edge(api.START, "n1").add_edge(api.START, "n2").add_edge("n1", "n3")
            .compile()
        )  # fmt: skip
        return [chunk async for chunk in graph.astream({"log": []}, stream_mode=stream_mode)]

    return asyncio.run(run())


@pytest.mark.parametrize("stream_mode", ["custom", ["custom", "updates"], ["updates", "custom"]])
def test_async_nodes_and_threads_stream_custom_chunks_as_langgraph(stream_mode):
    lg, nb = both(async_program, stream_mode)
    assert nb == lg


def outside_program(api):
    return api.get_stream_writer()


def test_the_writer_outside_a_node_is_an_error_on_both():
    assert both(outside_program, raises=True) == (
        ("raised", "RuntimeError"),
        ("raised", "RuntimeError"),
    )


def send_program(api):
    class State(TypedDict):
        items: list
        done: Annotated[list, operator.add]

    def fan(state):
        return [api.Send("work", {"items": [item], "done": []}) for item in state["items"]]

    def work(state):
        api.get_stream_writer()({"working on": state["items"][0]})
        return api.Command(update={"done": state["items"]})

    graph = (
        api.StateGraph(State)
        .add_node("start", lambda s: {})
        .add_node("work", work)
        .add_edge(api.START, "start")
        .add_conditional_edges("start", fan)
        .compile()
    )
    chunks = list(graph.stream({"items": [1], "done": []}, stream_mode=["custom", "updates"]))
    return chunks


def test_sends_and_commands_stream_custom_chunks():
    lg, nb = both(send_program)
    assert nb == lg


# --- messages ----------------------------------------------------------------------------


def chat_program(api, stream_mode, how):
    """p19's shape: two parallel nodes calling chat models; `how` they call them."""

    class State(TypedDict):
        topic: str
        joke: str
        poem: str

    joke_model = GenericFakeChatModel(messages=iter([AIMessage("Why did the cat sit")]))
    poem_model = FakeListChatModel(responses=["Soft paws"])

    def ask(model, prompt):
        if how == "stream":
            text = "".join(chunk.content for chunk in model.stream(prompt))
            return text
        return model.invoke(prompt).content

    def write_joke(state):
        return {"joke": ask(joke_model, f"a joke about {state['topic']}")}

    def write_poem(state):
        return {"poem": ask(poem_model, [{"role": "user", "content": "a poem"}])}

    graph = (
        api.StateGraph(State)
        .add_node(write_joke).add_node(write_poem)
        .add_edge(api.START, "write_joke").add_edge(api.START, "write_poem")
        .compile()
    )  # fmt: skip
    chunks = list(graph.stream({"topic": "cats"}, stream_mode=stream_mode))
    if stream_mode == "messages":
        return by_node(message_chunks(chunks))
    pairs = [c for m, c in chunks if m == "messages"]
    others = sorted(repr((m, c)) for m, c in chunks if m != "messages")  # (parallel: any order)
    return by_node(message_chunks(pairs)), others


@pytest.mark.parametrize("how", ["invoke", "stream"])
@pytest.mark.parametrize(
    "stream_mode", ["messages", ["messages", "updates"], ["values", "messages"]]
)
def test_chat_model_tokens_with_langgraphs_metadata(stream_mode, how):
    lg, nb = both(chat_program, stream_mode, how)
    assert nb == lg
    tokens = (nb if stream_mode == "messages" else nb[0])["write_poem"]
    assert len(tokens) > 3  # token by token, even from invoke


def async_chat_program(api, how):
    class State(TypedDict):
        topic: str
        answer: str

    model = GenericFakeChatModel(messages=iter([AIMessage("one two three")]))

    async def answer(state):
        if how == "astream":
            text = "".join([chunk.content async for chunk in model.astream("q")])
        else:
            text = (await model.ainvoke("q")).content
        return {"answer": text}

    def sync_answer(state):  # a sync node under astream (in a thread)
        return {"answer": FakeListChatModel(responses=["ok"]).invoke("q").content}

    graph = (
        api.StateGraph(State)
        .add_node("answer", answer).add_node("sync_answer", sync_answer)
        .add_edge(api.START, "answer").add_edge("answer", "sync_answer")
        .compile()
    )  # fmt: skip

    async def run():
        return [c async for c in graph.astream({"topic": "t"}, stream_mode="messages")]

    return message_chunks(asyncio.run(run()))


@pytest.mark.parametrize("how", ["ainvoke", "astream"])
def test_async_chat_models_stream_their_tokens(how):
    lg, nb = both(async_chat_program, how)
    assert nb == lg


def written_messages_program(api, config):
    """Messages a node returns (not from a model) are streamed once, new ones only."""

    class State(TypedDict):
        messages: Annotated[list, lambda old, new: old + (new if isinstance(new, list) else [new])]
        note: str

    def plain(state):
        return {"messages": [AIMessage("written")], "note": "n"}

    def repeats(state):  # a message already in its input: not streamed again
        return {"messages": [state["messages"][0], ("ai", "a tuple is not a message")]}

    def commands(state):
        return api.Command(update={"messages": [AIMessage("from a command", id="c1")]})

    def single(state):
        return {"messages": AIMessage("single, not in a list")}

    def fan(state):
        return [api.Send("single", {"messages": [], "note": "sent"})]

    graph = (
        api.StateGraph(State)
        .add_node("plain", plain).add_node("repeats", repeats)
        .add_node("commands", commands).add_node("single", single)
        .add_edge(api.START, "plain").add_edge("plain", "repeats")
        .add_edge("repeats", "commands").add_conditional_edges("commands", fan)
        .compile(checkpointer=api.InMemorySaver() if config and "configurable" in config else None)
    )  # fmt: skip
    chunks = list(graph.stream({"messages": [], "note": ""}, config, stream_mode="messages"))
    return message_chunks(chunks)


@pytest.mark.parametrize(
    "config",
    [
        None,
        {"tags": ["mine"], "metadata": {"user": "u1"}},
        {"configurable": {"thread_id": "7"}},
        {"configurable": {"thread_id": "8", "user_id": "u2"}, "tags": ["t"]},
    ],
)
def test_messages_nodes_return_are_streamed_as_langgraph(config):
    lg, nb = both(written_messages_program, config)
    assert nb == lg
    assert [m[1] for m in nb] == ["written", "from a command", "single, not in a list"]


def join_program(api):
    class State(TypedDict):
        answer: Annotated[list, operator.add]

    model = FakeListChatModel(responses=["hi"])
    graph = (
        api.StateGraph(State)
        .add_node("a", lambda s: {"answer": ["a"]})
        .add_node("b", lambda s: {"answer": ["b"]})
        .add_node("c", lambda s: {"answer": [model.invoke("q").content]})
        .add_edge(api.START, "a").add_edge(api.START, "b").add_edge(["a", "b"], "c")
        .compile()
    )  # fmt: skip
    return message_chunks(list(graph.stream({"answer": []}, stream_mode="messages")))


def test_a_waiting_edges_trigger_is_named_as_langgraph_names_it():
    lg, nb = both(join_program)
    assert nb == lg
    assert nb[0][-1]["langgraph_triggers"] == ("branch:to:c", "join:a+b:c")


# --- nbgraph's own: refusing subgraphs=True, the record, the inspector -------------------------


def simple_app():
    from nbgraph import START, StateGraph, get_stream_writer

    class State(TypedDict):
        foo: str

    def node(state):
        get_stream_writer()({"step": "<b>one</b>"})
        get_stream_writer()("two")
        return {"foo": "done"}

    return StateGraph(State).add_node("node", node).add_edge(START, "node").compile()


@pytest.mark.parametrize("method", ["stream", "astream"])
def test_subgraphs_true_without_subgraphs_streams_the_root_namespace(method):
    # (subgraphs themselves: tests/parity/test_langgraph_subgraph_streams.py)
    app = simple_app()
    if method == "stream":
        chunks = list(app.stream({"foo": ""}, subgraphs=True))
    else:

        async def run():
            return [c async for c in app.astream({"foo": ""}, subgraphs=True)]

        chunks = asyncio.run(run())
    assert chunks == [((), {"node": {"foo": "done"}})]
    assert list(app.stream({"foo": ""}, subgraphs=False)) == [{"node": {"foo": "done"}}]
    assert app.invoke({"foo": ""}, subgraphs=True) == {"foo": "done"}  # (LangGraph ignores it)


def test_custom_chunks_are_kept_in_the_record_streamed_or_not(tmp_path):
    from nbgraph import Run

    app = simple_app()
    run = app.run({"foo": ""})
    table = run.custom
    assert list(table.columns) == ["step", "node", "task_id", "index", "chunk"]
    task = {"step": 1, "node": "node", "task_id": "1:0:node"}
    assert table.to_dict("records") == [
        {**task, "index": 0, "chunk": {"step": "<b>one</b>"}},
        {**task, "index": 1, "chunk": "two"},
    ]
    list(app.stream({"foo": ""}, stream_mode="custom"))
    assert list(app.last_run.custom["chunk"]) == [{"step": "<b>one</b>"}, "two"]
    loaded = Run.load(run.save(tmp_path / "run.json"))
    assert loaded.custom.to_dict("records") == table.to_dict("records")


def test_the_inspector_shows_a_steps_custom_chunks_escaped():
    inspector = simple_app().run({"foo": ""}).inspect()
    panel = inspector.effects.value
    assert "custom chunks" in panel and "two" in panel
    assert "&lt;b&gt;one&lt;/b&gt;" in panel and "<b>one</b>" not in panel


def test_a_failed_node_keeps_what_it_wrote_before_failing():
    from nbgraph import START, StateGraph, get_stream_writer

    def node(state):
        get_stream_writer()("before the failure")
        raise ValueError("boom")

    app = StateGraph(dict).add_node("node", node).add_edge(START, "node").compile()
    with pytest.raises(ValueError):
        list(app.stream({}, stream_mode="custom"))
    assert list(app.last_run.custom["chunk"]) == ["before the failure"]


def explicit_config_program(api, call_config):
    """A chat model called with its own config, in a graph with a checkpointer and a
    config of its own: the metadata and tags of both are merged as LangGraph merges them."""

    class State(TypedDict):
        answers: Annotated[list, operator.add]

    model = FakeListChatModel(responses=["ok"])

    def node(state):
        return {"answers": [model.invoke("q", config=call_config).content]}

    graph = (
        api.StateGraph(State)
        .add_node("node", node)
        .add_edge(api.START, "node")
        .compile(checkpointer=api.InMemorySaver())
    )
    config = {
        "configurable": {"thread_id": "t", "user_id": 3, "name": "s", "__hidden": 1},
        "metadata": {"mk": "mv"},
        "tags": ["outer"],
    }
    return message_chunks(list(graph.stream({"answers": []}, config, stream_mode="messages")))


@pytest.mark.parametrize(
    "call_config", [None, {"tags": ["inner"], "metadata": {"k": 1}}, {"tags": ["nostream"]}]
)
def test_a_chat_models_own_config_merges_with_the_nodes(call_config):
    lg, nb = both(explicit_config_program, call_config)
    assert nb == lg


def interrupt_program(api):
    """A node writes, then asks a person: the chunk is streamed; resumed, the node runs
    again from its first line and writes again."""
    interrupt = api.interrupt

    class State(TypedDict):
        answer: str

    def ask(state):
        api.get_stream_writer()("before the question")
        answer = interrupt("your name?")
        api.get_stream_writer()(f"got {answer}")
        return {"answer": answer}

    def route(state):
        api.get_stream_writer()("routing")  # (a router runs inside its node's task)
        return api.END

    graph = (
        api.StateGraph(State)
        .add_node("ask", ask)
        .add_edge(api.START, "ask")
        .add_conditional_edges("ask", route)
        .compile(checkpointer=api.InMemorySaver())
    )
    config = {"configurable": {"thread_id": "1"}}
    first = list(graph.stream({"answer": ""}, config, stream_mode=["custom", "updates"]))
    second = list(
        graph.stream(api.Command(resume="Ada"), config, stream_mode=["custom", "updates"])
    )
    return [(mode, chunk) for mode, chunk in first if mode == "custom"], second


def test_a_paused_node_streams_what_it_wrote_and_writes_again_when_resumed():
    lg, nb = both(interrupt_program)
    assert nb == lg
    assert lg[0] == [("custom", "before the question")]


def sequence_program(api, stream_mode):
    """Every live mode with the others, one node at a time: the whole sequence compared."""

    class State(TypedDict):
        answers: Annotated[list, operator.add]

    model = GenericFakeChatModel(messages=iter([AIMessage("two words")]))
    tools = GenericFakeChatModel(
        messages=iter([AIMessage("call", tool_calls=[{"name": "f", "args": {"a": 1}, "id": "c1"}])])
    )

    def a(state, config, writer: api.StreamWriter):
        writer("start")
        reply = model.invoke("q")
        writer({"end": reply.content})
        return {"answers": [reply.content]}

    def b(state):
        call = tools.invoke("q")
        return {"answers": [AIMessage("returned"), call.content, len(call.tool_calls)]}

    graph = (
        api.StateGraph(State)
        .add_node("a", a)
        .add_node("b", b)
        .add_edge(api.START, "a")
        .add_edge("a", "b")
        .compile()
    )
    shown, ids = [], Ids()
    for mode, chunk in graph.stream({"answers": []}, stream_mode=stream_mode):
        if mode == "messages":
            message, meta = chunk
            meta = {k: ids.text(v) for k, v in meta.items() if k != "lc_versions"}
            calls = getattr(message, "tool_call_chunks", None) or message.tool_calls
            chunk = (type(message).__name__, message.content, ids.text(message.id), calls, meta)
        elif mode in ("updates", "values"):
            chunk = repr(chunk)  # (messages in the state: compared by their repr, ids masked)
            chunk = ids.text(re.sub(r"id='(run--)?", "id='", chunk))
        shown.append((mode, chunk))
    return shown


@pytest.mark.parametrize(
    "stream_mode",
    [["updates", "messages", "custom"], ["custom", "messages"], ["values", "custom", "messages"]],
)
def test_live_modes_interleave_with_the_others_as_langgraph(stream_mode):
    lg, nb = both(sequence_program, stream_mode)
    assert nb == lg


def test_langchain_core_is_imported_only_for_the_messages_mode():
    import subprocess
    import sys
    from pathlib import Path

    program = """
import sys
from typing import TypedDict
from nbgraph import START, StateGraph, get_stream_writer, InvalidArgumentError

class State(TypedDict):
    foo: str

def node(state):
    get_stream_writer()("chunk")
    return {"foo": "done"}

app = StateGraph(State).add_node("node", node).add_edge(START, "node").compile()
assert list(app.stream({"foo": ""}, stream_mode=["custom", "updates", "values"]))
assert "langchain_core" not in sys.modules, "custom mode imported langchain_core"
sys.modules["langchain_core"] = None  # as if it were not installed
try:
    list(app.stream({"foo": ""}, stream_mode="messages"))
except InvalidArgumentError as error:
    assert "langchain_core" in str(error) and "nbgraph[langchain]" in str(error), error
    print("refused")
"""
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", program],
        capture_output=True,
        text=True,
        cwd=root,
        env={"PYTHONPATH": str(root), "PATH": ""},
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "refused"


def test_branch_lineages_stream_and_record_custom_chunks_too():
    from nbgraph import START, StateGraph, get_stream_writer

    class State(TypedDict):
        log: Annotated[list, operator.add]

    def node(name):
        def write(state):
            get_stream_writer()(name)
            return {"log": [name]}

        return write

    app = (
        StateGraph(State)
        .add_node("a", node("a")).add_node("b", node("b")).add_node("c", node("c"))
        .add_edge(START, "a").add_edge(START, "b").add_edge(["a", "b"], "c")
        .compile(semantics="branches")
    )  # fmt: skip
    chunks = list(app.stream({"log": []}, stream_mode=["custom", "updates"]))
    assert [c for m, c in chunks if m == "custom"] == ["a", "b", "c"]
    assert chunks.index(("custom", "c")) > chunks.index(("updates", {"b": {"log": ["b"]}}))
    assert list(app.last_run.custom["node"]) == ["a", "b", "c"]
