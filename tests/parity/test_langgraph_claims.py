"""Differential programs for claims the README makes of LangGraph's behaviour (issue 28):
`Command(resume=, goto=)`, `invoke`'s breakpoints, `updates` chunks as nodes returned them,
the default recursion limit and `RemainingSteps`, `get_state_history`'s paging keywords.

Each program takes an `api` namespace (LangGraph's names, or nbgraph's) and returns what a
user of it observes; the test runs it on real LangGraph and on nbgraph and compares.
"""

# No `from __future__ import annotations`: states are defined inside functions with `api.*`
# names in their annotations, which both engines read at run time.

import asyncio
import itertools
import operator
import warnings
from typing import Annotated, Any, TypedDict

import pytest

from tests.support.harness import Ids, canonical_stream, outcome, plain, same

pytestmark = pytest.mark.langgraph


class Log(TypedDict):
    log: Annotated[list, operator.add]


def config(thread: str = "t") -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


# ---------------------------------------------------------------------------------------------
# Command(resume=..., goto=...): the answer goes to the paused task wherever `goto`'s node sorts


def resume_goto_program(api, asker: str, other: str, beside: bool):
    """`asker` asks; `Command(resume=, goto=other)` answers it and adds `other` to its step
    (with `beside`, a node that finished in the paused step too)."""

    def ask(state):
        return {"log": [f"{asker}:{api.interrupt('go?')}"]}

    graph = api.StateGraph(Log)
    graph.add_node(asker, ask)
    graph.add_node(other, lambda state: {"log": [other]})
    graph.add_edge(api.START, asker)
    if beside:
        graph.add_node("m", lambda state: {"log": ["m"]})
        graph.add_edge(api.START, "m")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (`other` is reached by the goto only)
        app = graph.compile(checkpointer=api.saver())
    first = app.invoke({"log": []}, config())
    second = app.invoke(api.Command(resume="yes", goto=other), config())
    state = app.get_state(config())
    return [plain(first), plain(second), state.values, state.next]


@pytest.mark.parametrize("beside", [False, True], ids=["alone", "beside"])
@pytest.mark.parametrize("other", ["a", "n", "zzz"])
def test_resume_with_goto_answers_the_paused_task(other, beside) -> None:
    same(resume_goto_program, "zask", other, beside, shape=Ids().deep)


def asking_subgraph(api, *questions: str):
    """A subgraph `s1 -> s2 -> ...` whose nodes after `s1` each ask one of `questions`."""
    sub = api.StateGraph(Log)
    names = ["s1", *(f"s{i}" for i in range(2, len(questions) + 2))]
    sub.add_node("s1", lambda state: {"log": ["s1"]})
    for name, question in zip(names[1:], questions, strict=True):
        sub.add_node(name, lambda s, n=name, q=question: {"log": [f"{n}:{api.interrupt(q)}"]})
    sub.add_edge(api.START, "s1")
    for a, b in itertools.pairwise(names):
        sub.add_edge(a, b)
    return sub.compile()


def paused_beside(api, node: str, run: Any, other: str):
    """A checkpointed graph of `node` (running `run`, from START) and `other` (reached
    only by a goto), run once: paused at `node`'s question."""
    graph = api.StateGraph(Log)
    graph.add_node(node, run)
    graph.add_node(other, lambda state: {"log": [other]})
    graph.add_edge(api.START, node)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (`other` is reached by no edge)
        app = graph.compile(checkpointer=api.saver())
    app.invoke({"log": []}, config())
    return app


def resume_goto_subgraph_program(api, other: str):
    """A subgraph node asks; `Command(resume=, goto=other)` answers it."""
    app = paused_beside(api, "zsub", asking_subgraph(api, "go?"), other)
    out = app.invoke(api.Command(resume="yes", goto=other), config())
    return [out["log"], "__interrupt__" in out]


@pytest.mark.parametrize("other", ["a", "zz"])
def test_resume_with_goto_answers_a_paused_subgraph(other) -> None:
    same(resume_goto_subgraph_program, other)


def subgraph_asking_twice_program(api, other: str):
    """A subgraph node asks twice (two nodes); the first answer comes with a `goto` to a
    node that sorts before it, so the task's place in the step moves: the subgraph resumes
    where it paused, pauses again (its state shown through its parent), and finishes."""
    app = paused_beside(api, "zsub", asking_subgraph(api, "go?", "again?"), other)
    seen = [plain(app.invoke(api.Command(resume="yes", goto=other), config()))]
    state = app.get_state(config(), subgraphs=True)
    inner = [task.state.values if task.state else None for task in state.tasks]
    seen += [state.next, inner, [i.value for t in state.tasks for i in t.interrupts]]
    seen.append(plain(app.invoke(api.Command(resume="sure"), config())))
    return seen


@pytest.mark.parametrize("other", ["a", "zz"])
def test_a_subgraph_moved_by_a_goto_pauses_again_and_finishes(other) -> None:
    same(subgraph_asking_twice_program, other, shape=Ids().deep)


def node_asking_twice_program(api, other: str):
    """A node asks twice; the first answer comes with a `goto` to a node sorting before it
    (its place in the step moves), the second finishes it."""

    def zask(state):
        return {"log": [f"{api.interrupt('go?')}+{api.interrupt('again?')}"]}

    app = paused_beside(api, "zask", zask, other)
    seen = [plain(app.invoke(api.Command(resume="yes", goto=other), config()))]
    state = app.get_state(config())
    seen += [state.next, [i.value for t in state.tasks for i in t.interrupts]]
    seen.append(plain(app.invoke(api.Command(resume="sure"), config())))
    return seen


@pytest.mark.parametrize("other", ["a", "zz"])
def test_a_node_moved_by_a_goto_asks_again_and_finishes(other) -> None:
    same(node_asking_twice_program, other, shape=Ids().deep)


# ---------------------------------------------------------------------------------------------
# invoke/stream(..., interrupt_before=, interrupt_after=)


def runtime_breakpoints_program(api, kwargs: dict, saver: bool):
    """a -> b -> c, with `invoke`'s breakpoints (and the compiled graph's before `c` when there
    is a saver: `invoke`'s replace them); resumed by `stream(None)` with the same ones."""
    graph = api.StateGraph(Log)
    for name in "abc":
        graph.add_node(name, lambda state, name=name: {"log": [name]})
    graph.add_edge(api.START, "a")
    graph.add_edge("a", "b")
    graph.add_edge("b", "c")
    app = graph.compile(
        checkpointer=api.saver() if saver else None, interrupt_before=["c"] if saver else ()
    )
    seen = [plain(app.invoke({"log": []}, config(), **kwargs))]
    if saver:
        seen.append(app.get_state(config()).next)
        seen.append(plain(list(app.stream(None, config(), **kwargs))))
        seen.append(app.get_state(config()).next)
    return seen


BREAKPOINTS = [
    {"interrupt_before": ["b"]},
    {"interrupt_after": ["a"]},
    {"interrupt_before": "*"},
    {"interrupt_after": "*"},
    {"interrupt_before": ["c"], "interrupt_after": ["a"]},
    {"interrupt_before": []},
]


@pytest.mark.parametrize("saver", [True, False], ids=["saver", "no saver"])
@pytest.mark.parametrize("kwargs", BREAKPOINTS, ids=str)
def test_invoke_breakpoints_pause_the_run(kwargs, saver) -> None:
    same(runtime_breakpoints_program, kwargs, saver)


def async_breakpoints_program(api):
    graph = api.StateGraph(Log)
    for name in "ab":
        graph.add_node(name, lambda state, name=name: {"log": [name]})
    graph.add_edge(api.START, "a")
    graph.add_edge("a", "b")
    app = graph.compile(checkpointer=api.saver())

    async def run():
        out = await app.ainvoke({"log": []}, config(), interrupt_after=["a"])
        chunks = [c async for c in app.astream({"log": []}, config("u"), interrupt_before=["b"])]
        return [plain(out), app.get_state(config()).next, plain(chunks)]

    return asyncio.run(run())


def test_async_breakpoints_pause_the_run() -> None:
    same(async_breakpoints_program, raises=True)


# ---------------------------------------------------------------------------------------------
# The default recursion limit and RemainingSteps


def remaining_steps_program(api, run_config):
    """What `RemainingSteps` shows a loop's nodes, and where the default limit stops it."""

    class State(TypedDict):
        n: int
        left: api.RemainingSteps

    seen = []

    def tick(state):
        seen.append(state["left"])
        return {"n": state["n"] + 1}

    graph = api.StateGraph(State)
    graph.add_node("tick", tick)
    graph.add_edge(api.START, "tick")
    graph.add_conditional_edges("tick", lambda s: "tick" if s["n"] < 3 else api.END)
    app = graph.compile()
    app.invoke({"n": 0}, run_config)
    return seen


@pytest.mark.parametrize("run_config", [None, {"recursion_limit": None}, {"recursion_limit": 7}])
def test_remaining_steps_count_from_langgraphs_default(run_config) -> None:
    same(remaining_steps_program, run_config)


def recursion_limit_program(api):
    """An endless loop under the default limit: the step it stops at."""
    graph = api.StateGraph(Log)
    graph.add_node("loop", lambda state: {"log": [1]})
    graph.add_edge(api.START, "loop")
    graph.add_edge("loop", "loop")
    steps = 0
    try:
        for _ in graph.compile().stream({"log": []}, stream_mode="updates"):
            steps += 1
    except api.GraphRecursionError:
        return ("stopped after", steps)
    return ("ran", steps)


def test_default_recursion_limit_is_langgraphs() -> None:
    same(recursion_limit_program)


# ---------------------------------------------------------------------------------------------
# get_state_history / aget_state_history: filter=, before=, limit=


def history_program(api, page: dict, fork: bool):
    """A thread of a few runs (with `fork`, an `update_state` on a past checkpoint too), its
    history paged with `page` (`before` as an index into the whole history)."""
    graph = api.StateGraph(Log)
    graph.add_node("a", lambda state: {"log": ["a"]})
    graph.add_node("b", lambda state: {"log": ["b"]})
    graph.add_edge(api.START, "a")
    graph.add_edge("a", "b")
    app = graph.compile(checkpointer=api.saver())
    app.invoke({"log": []}, config())
    app.invoke({"log": ["again"]}, config())
    every = list(app.get_state_history(config()))
    if fork:
        app.update_state(every[3].config, {"log": ["fork"]}, as_node="a")
        every = list(app.get_state_history(config()))
    kwargs = dict(page)
    if "before" in kwargs:
        kwargs["before"] = every[kwargs["before"]].config
    ids = Ids()

    def shown(snapshots):
        return [
            (s.values, s.next, ids(s.config["configurable"]["checkpoint_id"]), s.metadata)
            for s in snapshots
        ]

    async def collect():
        return [s async for s in app.aget_state_history(config(), **kwargs)]

    return [
        shown(app.get_state_history(config(), **kwargs)),
        shown(asyncio.run(collect())),
    ]


PAGES = [
    {"limit": 2},
    {"limit": 0},
    {"limit": 100},
    {"before": 1},
    {"before": 4, "limit": 2},
    {"before": -1},
    {"filter": {"source": "loop"}},
    {"filter": {"source": "input"}},
    {"filter": {"step": 1}},
    {"filter": {"source": "loop"}, "limit": 3, "before": 2},
    {"filter": {"source": "nowhere"}},
]


@pytest.mark.parametrize("fork", [False, True], ids=["line", "fork"])
@pytest.mark.parametrize("page", PAGES, ids=str)
def test_state_history_pages_as_langgraphs(page, fork) -> None:
    same(history_program, page, fork)


def paging_repro_program(api):
    """/work/shared/repros2/11's calls: each keyword accepted, the counts LangGraph gives."""
    graph = api.StateGraph(Log)
    graph.add_node("a", lambda state: {"log": ["a"]})
    graph.add_node("b", lambda state: {"log": ["b"]})
    graph.add_edge(api.START, "a")
    graph.add_edge("a", "b")
    app = graph.compile(checkpointer=api.saver())
    app.invoke({"log": []}, config())
    every = list(app.get_state_history(config()))

    async def collect():
        return [s async for s in app.aget_state_history(config(), limit=1)]

    return [
        len(list(app.get_state_history(config(), limit=2))),
        len(list(app.get_state_history(config(), before=every[1].config))),
        len(list(app.get_state_history(config(), filter={"source": "loop"}))),
        len(asyncio.run(collect())),
    ]


def test_state_history_takes_langgraphs_keywords() -> None:
    assert same(paging_repro_program)[1] == [2, 2, 3, 1]


# ---------------------------------------------------------------------------------------------
# stream_mode="updates" / "tasks": a task's writes as its node returned them


def returned_writes_program(api, returned, modes, run_async: bool):
    """A node returns `returned` (messages in forms a reducer prepares), beside a node that
    writes a plain field; the chunks of `modes`, ids by structure."""

    class State(TypedDict):
        messages: Annotated[list, api.add_messages]
        n: int

    graph = api.StateGraph(State)
    graph.add_node("say", lambda state: returned)
    graph.add_node("count", lambda state: {"n": len(state["messages"])})
    graph.add_edge(api.START, "say")
    graph.add_edge(api.START, "count")
    app = graph.compile()
    given = {"messages": [("user", "q")], "n": 0}
    if run_async:

        async def collect():
            return [c async for c in app.astream(given, stream_mode=modes)]

        chunks = asyncio.run(collect())
    else:
        chunks = list(app.stream(given, stream_mode=modes))
    return sorted(Ids().deep(repr(chunk)) for chunk in chunks)


RETURNED = [
    {"messages": [{"role": "assistant", "content": "hi"}]},
    {"messages": {"role": "assistant", "content": "hi"}},
    {"messages": [("ai", "x"), ("user", "y")]},
    {"messages": "plain text"},
    {"messages": [{"role": "assistant", "content": "hi", "id": "m1"}]},
]


@pytest.mark.parametrize("run_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("modes", ["updates", ["updates", "values"], "tasks"], ids=str)
@pytest.mark.parametrize("returned", RETURNED, ids=str)
def test_streamed_writes_are_what_the_node_returned(returned, modes, run_async) -> None:
    same(returned_writes_program, returned, modes, run_async)


def command_update_program(api):
    """A node's `Command(update=...)` streamed: its update as the node gave it."""
    graph = api.StateGraph(api.MessagesState)
    graph.add_node(
        "say",
        lambda state: api.Command(update={"messages": [("ai", "hi")]}, goto=api.END),
    )
    graph.add_edge(api.START, "say")
    chunks = list(graph.compile().stream({"messages": [("user", "q")]}, stream_mode="updates"))
    return Ids().deep(repr(chunks))


def test_streamed_command_update_is_what_the_node_returned() -> None:
    same(command_update_program)


def message_objects_program(api, many: bool):
    """A node returns message objects without ids (LangGraph's `add_messages` gives them ids
    in place, and its chunk shows them) beside a tuple (a new message: shown as returned)."""
    from langchain_core.messages import AIMessage

    def say(state):
        if many:
            return {"messages": [AIMessage("one"), ("ai", "two"), AIMessage("three", id="m3")]}
        return {"messages": AIMessage("solo")}

    graph = api.StateGraph(api.MessagesState)
    graph.add_node("say", say)
    graph.add_edge(api.START, "say")
    app = graph.compile()
    chunks = list(app.stream({"messages": [("user", "q")]}, stream_mode=["updates", "values"]))
    return Ids().deep(repr(chunks))


@pytest.mark.parametrize("many", [False, True], ids=["one", "many"])
def test_streamed_message_objects_get_their_ids(many) -> None:
    same(message_objects_program, many)


# ---------------------------------------------------------------------------------------------
# interrupt() in a graph without a checkpointer


def interrupt_without_saver_program(api, how: str):
    """A node asks (beside one that does not), with no checkpointer anywhere: the run pauses
    with the question and nothing to resume; `Command(resume=)` is refused."""
    sub = api.StateGraph(Log)
    sub.add_node("s", lambda state: {"log": [api.interrupt("sub?")]})
    sub.add_edge(api.START, "s")
    graph = api.StateGraph(Log)
    graph.add_node("a", lambda state: {"log": [api.interrupt("q?")]})
    graph.add_node("b", lambda state: {"log": ["b"]})
    graph.add_node("sub", sub.compile())
    graph.add_edge(api.START, "a").add_edge(api.START, "b").add_edge("b", "sub")
    app = graph.compile()
    if how == "invoke":
        out = app.invoke({"log": []})
        return [plain(out), outcome(lambda: app.invoke(api.Command(resume="x")))]
    if how == "ainvoke":
        return plain(asyncio.run(app.ainvoke({"log": []})))
    return canonical_stream(list(app.stream({"log": []}, stream_mode=["updates", "values"])),
                            ["updates", "values"])  # fmt: skip


@pytest.mark.parametrize("how", ["invoke", "ainvoke", "stream"])
def test_interrupt_without_a_checkpointer_pauses_as_langgraph_does(how) -> None:
    same(interrupt_without_saver_program, how, shape=Ids().deep)
