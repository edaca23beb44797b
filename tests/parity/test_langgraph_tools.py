"""Differential tests: tools, Runnables as nodes, Runnable habits and `get_graph`, each program
run on real LangGraph and on nbgraph with the same code, the outcomes compared.

Messages are compared by what they say (type, content, tool calls, tool_call_id, name,
status): the class of a message in state is another part's concern. Ids that a library made
(uuids) are compared by structure: which positions are equal.
"""

import asyncio
import operator
import threading
import time
from typing import Annotated, Any, Literal, TypedDict

import pytest

pytestmark = pytest.mark.langgraph
pytest.importorskip("langchain_core")
pytest.importorskip("langgraph")

from langchain_core.messages import AIMessage  # noqa: E402
from langchain_core.runnables import RunnableLambda  # noqa: E402
from langchain_core.tools import tool  # noqa: E402

from tests.support.harness import Ids, api_for, both, differs, raised  # noqa: E402
from tests.support.records import CONFIG, NO_RUN, PAIRING  # noqa: E402

_TYPES = {"assistant": "ai", "user": "human"}


def message(m: Any) -> dict:
    """A message of either kind by what it says."""
    kind = getattr(m, "type", None) or _TYPES.get(m.role, m.role)
    calls = [(c["name"], c["args"], c["id"]) for c in getattr(m, "tool_calls", None) or []]
    return {
        "type": kind,
        "content": m.content,
        "tool_calls": calls,
        "tool_call_id": getattr(m, "tool_call_id", None),
        "name": getattr(m, "name", None),
        "id": m.id,
    }


def raw(m: Any) -> tuple:
    """A ToolNode's output message, every field a ToolMessage has."""
    return (type(m).__name__, m.content, m.name, m.tool_call_id, m.status, m.id)


def masked(messages: list) -> list:
    """Messages by what they say; made-up ids by structure (`Ids`)."""
    out, ids = [], Ids()
    for m in messages:
        shown = message(m)
        shown["id"] = ids.text(shown["id"])
        out.append(shown)
    return out


# ---------------------------------------------------------------------------------------------
# tools


@tool
def search(query: str) -> str:
    """Search the web."""
    return f"results for {query}"


def add(a: int, b: int = 2) -> int:
    """Add two numbers."""
    return a + b


@tool
def explode(x: int) -> str:
    """Always fails."""
    raise ValueError(f"bad x {x}")


@tool
def facts(topic: str) -> dict:
    """Facts as a dict."""
    return {"topic": topic, "n": [1, 2]}


def scripted(*replies: AIMessage):
    """A model node that answers each turn with the next scripted AI message."""
    queue = list(replies)

    def model(state):
        return {"messages": [queue.pop(0)]}

    return model


def calls(*triples) -> list[dict]:
    return [{"name": n, "args": a, "id": i} for n, a, i in triples]


def agent(lg, tools, replies, *, captured=None, **tool_node_options):
    """The agent loop: model -> tools_condition -> tools -> model; the tool node's raw
    output kept in `captured`."""

    class State(TypedDict):
        messages: Annotated[list, lg.add_messages]

    tool_node = lg.ToolNode(tools, **tool_node_options)

    def tools_step(state, config):
        out = tool_node.invoke(state, config)
        if captured is not None:
            captured.append([raw(m) for m in out["messages"]])
        return out

    return (
        lg.StateGraph(State)
        .add_node("model", scripted(*replies))
        .add_node("tools", tools_step)
        .add_edge(lg.START, "model")
        .add_conditional_edges("model", lg.tools_condition)
        .add_edge("tools", "model")
        .compile()
    )


def test_an_agent_loop_runs_each_tool_call_and_answers_in_call_order():
    def program(lg):
        captured: list = []
        replies = [
            AIMessage(
                "",
                id="ai-1",
                tool_calls=calls(
                    ("search", {"query": "x"}, "c1"),
                    ("add", {"a": 1, "b": 5}, "c2"),
                    ("facts", {"topic": "t"}, "c3"),
                ),
            ),
            AIMessage("", id="ai-2", tool_calls=calls(("add", {"a": 2}, "c4"))),
            AIMessage("done", id="ai-3"),
        ]
        app = agent(lg, [search, add, facts], replies, captured=captured)
        result = app.invoke({"messages": [("user", "go")]})
        return masked(result["messages"]), captured

    langgraph, nbgraph = both(program, raises=True, message="first line")
    assert nbgraph == langgraph
    assert [m[1] for m in langgraph[1][1][0]] == [
        "results for x",
        "6",
        '{"topic": "t", "n": [1, 2]}',
    ]


def test_the_tool_node_as_a_node_named_tools_with_tools_condition():
    def program(lg):
        class State(TypedDict):
            messages: Annotated[list, lg.add_messages]

        def make():
            reply = AIMessage("", id="ai-1", tool_calls=calls(("search", {"query": "q"}, "c1")))
            return (
                lg.StateGraph(State)
                .add_node("model", scripted(reply, AIMessage("ok", id="ai-2")))
                .add_node(lg.ToolNode([search]))
                .add_edge(lg.START, "model")
                .add_conditional_edges("model", lg.tools_condition)
                .add_edge("tools", "model")
                .compile()
            )

        chunks = [sorted(c) for c in make().stream({"messages": [("user", "hi")]})]
        return chunks, masked(make().invoke({"messages": [("user", "hi")]})["messages"][-3:])

    langgraph, nbgraph = both(program, raises=True, message="first line")
    assert nbgraph == langgraph
    assert langgraph[1][0] == [["model"], ["tools"], ["model"]]


@pytest.mark.parametrize(
    "tool_calls",
    [
        [("add", {"a": "zz"}, "c1")],  # arguments the schema refuses: a message the model reads
        [("nope", {}, "c1"), ("add", {"a": 1}, "c2")],  # an unknown tool
        [("add", {}, "c1")],  # a missing argument
        [("explode", {"x": 1}, "c1")],  # a tool that raises: the run fails, as in LangGraph
    ],
)
def test_tool_errors_by_default(tool_calls):
    def program(lg):
        captured: list = []
        replies = [AIMessage("", id="ai", tool_calls=calls(*tool_calls)), AIMessage("end")]
        app = agent(lg, [add, explode], replies, captured=captured)
        app.invoke({"messages": [("user", "go")]})
        return captured

    langgraph, nbgraph = both(program, raises=True, message="first line")
    assert nbgraph == langgraph


def _typed_handler(e: ValueError) -> str:
    return f"handled {type(e).__name__}"


@pytest.mark.parametrize(
    "handle",
    [
        True,
        False,
        "Tool failed, try again.",
        _typed_handler,
        ValueError,
        (KeyError,),
        lambda e: "any: " + str(e),
    ],
    ids=["true", "false", "text", "typed-callable", "class", "tuple-other", "lambda"],
)
def test_handle_tool_errors(handle):
    def program(lg):
        captured: list = []
        replies = [
            AIMessage(
                "",
                id="ai",
                tool_calls=calls(("explode", {"x": 3}, "c1"), ("add", {"a": "no"}, "c2")),
            ),
            AIMessage("end"),
        ]
        app = agent(lg, [add, explode], replies, captured=captured, handle_tool_errors=handle)
        app.invoke({"messages": [("user", "go")]})
        return captured

    langgraph, nbgraph = both(program, raises=True, message="first line")
    assert nbgraph == langgraph


def test_tool_calls_run_in_parallel_and_answer_in_call_order():
    def program(lg):
        together = threading.Barrier(3, timeout=10)  # passed only if all three run at once

        def slow(seconds: float) -> str:
            """Wait for the others, then sleep: the first call finishes last."""
            together.wait()
            time.sleep(seconds)
            return f"slept {seconds}"

        captured: list = []
        many = [("slow", {"seconds": s}, f"c{i}") for i, s in enumerate([0.2, 0.1, 0.0])]
        replies = [AIMessage("", id="ai", tool_calls=calls(*many)), AIMessage("end")]
        agent(lg, [slow], replies, captured=captured).invoke({"messages": [("user", "go")]})
        return captured

    langgraph, nbgraph = both(program, raises=True, message="first line")
    assert nbgraph == langgraph
    assert [m[3] for m in nbgraph[1][0]] == ["c0", "c1", "c2"]


@differs(NO_RUN.at())
@pytest.mark.parametrize(
    "state",
    [
        {"messages": [AIMessage("", tool_calls=calls(("a", {}, "1")))]},
        {"messages": [AIMessage("no calls")]},
        [AIMessage("", tool_calls=calls(("a", {}, "1")))],
        {"messages": []},
        {"other": 1},
    ],
)
def test_tools_condition(state):
    outcomes = both(lambda lg: lg.tools_condition(state), raises=True, message="first line")
    assert outcomes[0] == outcomes[1]


def test_a_tool_node_on_a_list_of_messages_and_a_custom_messages_key():
    def program(lg):
        class State(TypedDict):
            chat: Annotated[list, lg.add_messages]

        node = lg.ToolNode([add], messages_key="chat", name="calc")

        def step(state, config):
            return {"chat": node.invoke(state, config)["chat"]}

        app = lg.StateGraph(State).add_node("step", step).add_edge(lg.START, "step").compile()
        first = AIMessage("", id="ai", tool_calls=calls(("add", {"a": 4}, "c1")))
        out = app.invoke({"chat": [first]})
        return node.name, masked(out["chat"])

    langgraph, nbgraph = both(program, raises=True, message="first line")
    assert nbgraph == langgraph


# ---------------------------------------------------------------------------------------------
# a langchain Runnable as a node


def test_runnables_as_nodes_are_named_and_run_as_langgraph_does():
    def program(lg):
        class State(TypedDict):
            count: Annotated[int, operator.add]
            who: str

        def bump(state):
            return {"count": 1}

        def who(state, config):
            return {"who": config["configurable"].get("thread_id", "-")}

        chain = RunnableLambda(lambda s: {"count": 10}) | RunnableLambda(lambda d: d)
        app = (
            lg.StateGraph(State)
            .add_node(RunnableLambda(bump))
            .add_node("who", RunnableLambda(who))
            .add_node(chain)
            .add_edge(lg.START, "bump")
            .add_edge("bump", "who")
            .add_edge("who", chain.get_name())
            .compile()
        )
        config = {"configurable": {"thread_id": "t7"}}
        return list(app.stream({"count": 0}, config)), app.invoke({"count": 1}, config)

    langgraph, nbgraph = both(program, raises=True, message="first line")
    assert nbgraph == langgraph
    assert [next(iter(c)) for c in langgraph[1][0]] == ["bump", "who", "RunnableSequence"]


def test_an_async_runnable_node_is_awaited():
    def program(lg):
        class State(TypedDict):
            count: Annotated[int, operator.add]

        async def later(state):
            await asyncio.sleep(0)
            return {"count": 2}

        app = (
            lg.StateGraph(State)
            .add_node(RunnableLambda(later))
            .add_edge(lg.START, "later")
            .compile()
        )
        return asyncio.run(app.ainvoke({"count": 1})), list(app.get_graph().nodes)

    langgraph, nbgraph = both(program, raises=True, message="first line")
    assert nbgraph == langgraph


# ---------------------------------------------------------------------------------------------
# Runnable habits


class Counted(TypedDict):
    count: Annotated[int, operator.add]
    who: str


def counting(lg, **compile_options):
    def node(state, config):
        if state["count"] < 0:
            raise ValueError("negative count")
        tags = config.get("tags")
        meta = (config.get("metadata") or {}).get("k")
        return {"count": 1, "who": f"{config['configurable'].get('thread_id')}|{tags}|{meta}"}

    return (
        lg.StateGraph(Counted)
        .add_node("node", node)
        .add_edge(lg.START, "node")
        .compile(**compile_options)
    )


@differs(
    params={
        "call0": NO_RUN.at(),
        "call1": PAIRING.at("1 calls recorded"),
        "call2": PAIRING.at("1 calls recorded"),
        "call3": NO_RUN.at(),
        "call4": PAIRING.at("1 calls recorded"),
        "call5": PAIRING.at("1 calls recorded"),
        "call6": PAIRING.at("run:effects", "run:final", "run:steps"),
        "call7": PAIRING.at("run:effects", "run:final", "run:status", "run:steps", "run:tree"),
    }
)
@pytest.mark.parametrize(
    "call",
    [
        lambda g: g.batch([]),
        lambda g: g.batch([{"count": 1}, {"count": -1}, {"count": 3}], return_exceptions=True),
        lambda g: g.batch([{"count": 1}, {"count": -1}]),
        lambda g: g.batch([{"count": 1}, {"count": 2}], [{}]),
        lambda g: g.batch([{"count": 1}, {"count": 2}], {"configurable": {"thread_id": "x"}}),
        lambda g: g.batch(
            [{"count": 0}, {"count": 5}],
            [{"configurable": {"thread_id": "a"}}, {"configurable": {"thread_id": "b"}}],
        ),
        lambda g: asyncio.run(g.abatch([{"count": 1}, {"count": -1}], return_exceptions=True)),
        lambda g: asyncio.run(g.abatch([{"count": 1}, {"count": 2}], max_concurrency=1)),
        lambda g: asyncio.run(g.abatch([{"count": 4}], [{"configurable": {"thread_id": "z"}}])),
    ],
)
def test_batch_and_abatch(call):
    def program(lg):
        out = call(counting(lg))
        return [raised(o, message="full") if isinstance(o, Exception) else o for o in out]

    langgraph, nbgraph = both(program, raises=True, message="first line")
    assert nbgraph == langgraph


@differs(CONFIG.at("run:effects", "run:final", "run:steps"))
def test_with_config_merges_under_each_call():
    def program(lg):
        bound = counting(lg).with_config(
            {"tags": ["a"], "configurable": {"thread_id": "wc"}}, metadata={"k": 1}
        )
        twice = bound.with_config(run_name="named")
        return [
            bound.invoke({"count": 0}),
            bound.invoke({"count": 0}, {"tags": ["b"], "configurable": {"other": 1}}),
            bound.invoke({"count": 0}, {"configurable": {"thread_id": "over"}}),
            list(bound.stream({"count": 0})),
            bound.batch([{"count": 1}]),
            asyncio.run(bound.ainvoke({"count": 2})),
            twice.invoke({"count": 3}),
        ]

    langgraph, nbgraph = both(program, raises=True, message="first line")
    assert nbgraph == langgraph


def test_async_thread_methods():
    def program(lg):
        app = counting(lg, checkpointer=lg.InMemorySaver())
        config = {"configurable": {"thread_id": "t"}}
        app.invoke({"count": 1}, config)

        async def main():
            state = await app.aget_state(config)
            new = await app.aupdate_state(config, {"count": 10}, as_node="node")
            history = [s.values async for s in app.aget_state_history(config)]
            return state.values, state.next, sorted(new["configurable"]), history

        return asyncio.run(main())

    langgraph, nbgraph = both(program, raises=True, message="first line")
    assert nbgraph == langgraph


@differs(PAIRING.at("3 calls recorded"))
def test_a_graph_in_a_chain():
    def program(lg):
        app = counting(lg)
        after = app | RunnableLambda(lambda s: s["count"] * 10)
        return [
            after.invoke({"count": 2}, {"configurable": {"thread_id": "c"}}),
            asyncio.run(after.ainvoke({"count": 1})),
            after.batch([{"count": 1}, {"count": 2}]),
        ]

    langgraph, nbgraph = both(program, raises=True, message="first line")
    assert nbgraph == langgraph


# ---------------------------------------------------------------------------------------------
# get_graph


class Log(TypedDict):
    log: Annotated[list, operator.add]


def step(name: str):
    def node(state):
        return {"log": [name]}

    node.__name__ = name
    return node


def go_b(state) -> Literal["b", "c"]:
    return "b"


def anywhere(state):
    return "b"


def build_sequence(lg):
    g = lg.StateGraph(Log)
    for n in "abc":
        g.add_node(n, step(n))
    return g.add_edge(lg.START, "a").add_edge("a", "b").add_edge("b", "c").add_edge("c", lg.END)


def build_path_map(lg):
    g = lg.StateGraph(Log)
    for n in "abcd":
        g.add_node(n, step(n))
    g.add_edge(lg.START, "a")
    g.add_conditional_edges("a", anywhere, {"b": "b", "other way": "c", "stop": lg.END})
    return g.add_edge(["b", "c"], "d").add_edge("d", lg.END)


def build_literal_router(lg):
    g = lg.StateGraph(Log)
    for n in "abc":
        g.add_node(n, step(n))
    g.add_edge(lg.START, "a").add_conditional_edges("a", go_b)
    return g.add_edge("b", lg.END).add_edge("c", lg.END)


def build_router_without_targets(lg):
    g = lg.StateGraph(Log)
    for n in "abc":
        g.add_node(n, step(n))
    return g.add_edge(lg.START, "a").add_conditional_edges("a", anywhere).add_edge("b", "c")


def build_fan_out(lg):
    g = lg.StateGraph(Log)
    for n in ["fan", "left", "right", "join", "A"]:
        g.add_node(n, step(n))
    g.add_edge(lg.START, "fan").add_edge("fan", "left").add_edge("fan", "right")
    g.add_edge("fan", "A").add_edge("left", "join").add_edge("right", "join")
    return g.add_edge("fan", lg.END)  # (beside other edges: LangGraph does not draw it)


def build_waiting_and_loop(lg):
    g = lg.StateGraph(Log)
    for n in ["plan", "x", "y", "merge"]:
        g.add_node(n, step(n))
    g.add_edge(lg.START, "plan").add_edge("plan", "x").add_edge("plan", "y")
    g.add_edge(["x", "y"], "merge")
    return g.add_conditional_edges("merge", anywhere, {"again": "plan", "done": lg.END})


def build_odd_names_defer_and_interrupts(lg):
    g = lg.StateGraph(Log)
    g.add_node("first step!", step("s1")).add_node("*bold*", step("s2"))
    g.add_node("late", step("late"), defer=True)
    g.add_edge(lg.START, "first step!").add_edge("first step!", "*bold*")
    return g.add_edge("*bold*", "late").add_edge("late", lg.END)


def build_tools(lg):
    class State(TypedDict):
        messages: Annotated[list, lg.add_messages]

    g = lg.StateGraph(State).add_node("model", scripted()).add_node(lg.ToolNode([search, add]))
    g.add_edge(lg.START, "model").add_conditional_edges("model", lg.tools_condition)
    return g.add_edge("tools", "model")


BUILDS = [
    build_sequence,
    build_path_map,
    build_literal_router,
    build_router_without_targets,
    build_fan_out,
    build_waiting_and_loop,
    build_odd_names_defer_and_interrupts,
    build_tools,
]


def drawing(lg, build, **compile_options):
    """Everything `get_graph()` shows: nodes, edges, first/last, the Mermaid text."""
    g = build(lg).compile(**compile_options).get_graph()
    first, last = g.first_node(), g.last_node()
    return {
        "nodes": [(k, n.id, n.name, n.metadata) for k, n in g.nodes.items()],
        "edges": [(e.source, e.target, e.data, e.conditional) for e in g.edges],
        "first": first and first.id,
        "last": last and last.id,
        "mermaid": g.draw_mermaid(),
        "plain": g.draw_mermaid(with_styles=False),
        "wrapped": g.draw_mermaid(wrap_label_n_words=1),
    }


@differs(NO_RUN.at())
@pytest.mark.parametrize("build", BUILDS, ids=[b.__name__[6:] for b in BUILDS])
def test_get_graph_and_draw_mermaid_as_langgraph(build):
    langgraph, nbgraph = both(lambda lg: drawing(lg, build), raises=True, message="first line")
    assert nbgraph[1]["edges"] == langgraph[1]["edges"]
    assert nbgraph[1]["nodes"] == langgraph[1]["nodes"]
    assert nbgraph == langgraph


@differs(NO_RUN.at())
def test_get_graph_marks_interrupts():
    def program(lg):
        return drawing(
            lg,
            build_sequence,
            checkpointer=lg.InMemorySaver(),
            interrupt_before=["b", "c"],
            interrupt_after=["c"],
        )

    langgraph, nbgraph = both(program, raises=True, message="first line")
    assert nbgraph == langgraph


@differs(NO_RUN.at())
def test_draw_mermaid_options():
    def program(lg):
        g = build_path_map(lg).compile().get_graph()
        return g.draw_mermaid(
            frontmatter_config={"config": {"theme": "neutral", "look": "handDrawn"}},
            node_colors=None,
        )

    langgraph, nbgraph = both(program, raises=True, message="first line")
    assert nbgraph == langgraph


@differs(NO_RUN.at())
def test_draw_mermaid_png_is_drawn_offline(tmp_path, monkeypatch):
    import socket

    def no_network(*args, **kwargs):
        raise AssertionError("draw_mermaid_png touched the network")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    graph = build_path_map(api_for("nbgraph")).compile().get_graph()
    target = tmp_path / "graph.png"
    png = graph.draw_mermaid_png(output_file_path=str(target))
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    assert target.read_bytes() == png
    bundle = graph._repr_mimebundle_()
    assert bundle["image/png"] == png and "text/plain" in bundle
    assert set(graph._repr_mimebundle_(include={"text/plain"})) == {"text/plain"}
