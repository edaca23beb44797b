"""Differential programs for public behaviour that LangGraph's test suite checks beyond the nine
files `../shared/lgsuite` runs (`libs/langgraph/tests` of langchain-ai/langgraph: the goto,
conditional-END, interrupt-state, completed-subgraph, state-schema, stream, history, retry,
cache, context and functional-API tests). Each program is written here in the project's own
words, takes an `api` namespace (LangGraph's names or nbgraph's) and returns what a user of it
observes; the test runs it on real LangGraph and on nbgraph and compares.
"""

# No `from __future__ import annotations`: states are defined inside functions with `api.*`
# names in their annotations, which both engines read at run time.

import asyncio
import dataclasses
import importlib
import operator
import time
from collections import Counter
from typing import Annotated, Any, TypedDict

import pydantic
import pytest

from tests.support.harness import Ids, Programs, both, outcome, plain, same, stable_repr

pytestmark = pytest.mark.langgraph

PROGRAMS = Programs()
program = PROGRAMS.add


@pytest.mark.parametrize("prog", PROGRAMS, ids=lambda p: p.__name__)
def test_same_as_langgraph(prog) -> None:
    same(prog, raises=True, message="first line", shape=plain)


class Notes(TypedDict, total=False):
    notes: Annotated[list, operator.add]
    n: int


def thread(name: str = "t") -> dict[str, Any]:
    return {"configurable": {"thread_id": name}}


def by_value(snapshot: Any, value: Any) -> str:
    return next(i.id for i in snapshot.interrupts if i.value == value)


def summary(snapshot: Any) -> dict:
    """What a snapshot says, without ids: values, next, and each task's questions and result."""
    tasks = sorted(
        (t.name, sorted(map(str, (i.value for i in t.interrupts))), stable_repr(plain(t.result)))
        for t in snapshot.tasks
    )
    return {
        "values": plain(snapshot.values),
        "next": tuple(sorted(snapshot.next)),
        "asked": sorted(str(i.value) for i in snapshot.interrupts),
        "tasks": tasks,
    }


# --- Command(goto=...) as input, and conditional edges to END -------------------------------


def goto_as_input_on_a_fresh_graph(api):
    builder = api.StateGraph(Notes)
    builder.add_node("usual", lambda s: {"notes": ["usual"]})
    builder.add_node("other", lambda s: {"notes": ["other"]})
    builder.add_edge(api.START, "usual")
    app = builder.compile()
    return outcome(lambda: list(app.stream(api.Command(goto="other"), stream_mode="updates")))


def test_goto_as_input_on_a_fresh_graph_is_refused_for_now() -> None:
    """A gap (docs/langgraph.md): LangGraph 1.2 runs `other` and START's `usual` both (its
    newer test suite expects `other` alone); nbgraph refuses a Command on a thread with no
    state yet."""
    langgraph, nbgraph = both(goto_as_input_on_a_fresh_graph, shape=plain)
    assert langgraph == ("ok", [{"other": {"notes": ["other"]}}, {"usual": {"notes": ["usual"]}}])
    assert nbgraph[:2] == ("raised", "InvalidUpdateError")


@program
def router_ends_though_its_path_map_has_no_end(api):
    builder = api.StateGraph(Notes)
    builder.add_node("check", lambda s: {})
    builder.add_node("count", lambda s: {"n": s.get("n", 0) + 1})
    builder.add_edge(api.START, "check")
    route = lambda s: api.END if s.get("n", 0) >= 3 else "go"  # noqa: E731
    builder.add_conditional_edges("check", route, {"go": "count"})
    builder.add_edge("count", "check")
    return outcome(builder.compile().invoke, {"n": 0})


@program
def router_path_map_as_a_list_with_end(api):
    builder = api.StateGraph(Notes)
    builder.add_node("a", lambda s: {"notes": ["a"]})
    builder.add_node("b", lambda s: {"notes": ["b"]})
    builder.add_conditional_edges(api.START, lambda s: ["a", "b"], ["a", "b", api.END])
    app = builder.compile()
    return app.invoke({"notes": []}), sorted(app.get_graph().nodes)


# --- Questions in parallel tasks: state while some are answered ------------------------------


def two_askers(api, calls: Counter, questions: int = 1, returns: Any = "notes"):
    def a(state):
        calls["a"] += 1
        answers = [api.interrupt(f"A{i + 1}") for i in range(questions)]
        return {"notes": [f"a:{x}" for x in answers]} if returns == "notes" else returns

    def b(state):
        calls["b"] += 1
        return {"notes": [f"b:{api.interrupt('B')}"]}

    builder = api.StateGraph(Notes)
    builder.add_node("a", a)
    builder.add_node("b", b)
    builder.add_edge(api.START, "a")
    builder.add_edge(api.START, "b")
    return builder.compile(checkpointer=api.InMemorySaver())


@program
def answering_one_of_two_parallel_questions(api):
    calls: Counter = Counter()
    app, config = two_askers(api, calls), thread()
    app.invoke({"notes": []}, config)
    first = app.get_state(config)
    app.invoke(api.Command(resume={by_value(first, "A1"): "yes"}), config)
    middle = app.get_state(config)
    record = app.get_state(middle.config)
    result = app.invoke(api.Command(resume={by_value(middle, "B"): "ok"}), config)
    end = app.get_state(config)
    asked = [sorted(i.value for i in s.interrupts) for s in app.get_state_history(config)]
    return [summary(s) for s in (first, middle, record, end)], result, dict(calls), asked


@program
def second_question_of_a_task_beside_a_paused_one(api):
    calls: Counter = Counter()
    app, config = two_askers(api, calls, questions=2), thread()
    app.invoke({"notes": []}, config)
    app.invoke(api.Command(resume={by_value(app.get_state(config), "A1"): "one"}), config)
    middle = app.get_state(config)
    ambiguous = outcome(app.invoke, api.Command(resume="which?"), config)
    answers = {by_value(middle, "A2"): "two", by_value(middle, "B"): "ok"}
    result = app.invoke(api.Command(resume=answers), config)
    return summary(middle), ambiguous[:2], sorted(result["notes"]), dict(calls)


@pytest.mark.parametrize("returns", [None, {}, {"n": 0}, {"notes": []}])
def test_a_finished_task_with_a_falsy_result_is_not_run_again(returns) -> None:
    def prog(api):
        calls: Counter = Counter()
        app, config = two_askers(api, calls, returns=returns), thread()
        app.invoke({"notes": []}, config)
        app.invoke(api.Command(resume={by_value(app.get_state(config), "A1"): "y"}), config)
        middle = app.get_state(config)
        app.invoke(api.Command(resume={by_value(middle, "B"): "ok"}), config)
        return summary(middle), summary(app.get_state(config)), dict(calls)

    same(prog, raises=True, shape=plain)


@program
def sent_subgraphs_each_asking(api):
    class Child(TypedDict):
        topic: str
        said: Annotated[list, operator.add]

    class Parent(TypedDict):
        said: Annotated[list, operator.add]

    child = api.StateGraph(Child)
    child.add_node("ask", lambda s: {"said": [api.interrupt(s["topic"])]})
    child.add_edge(api.START, "ask")
    builder = api.StateGraph(Parent)
    builder.add_node("child", child.compile())
    builder.add_conditional_edges(
        api.START, lambda s: [api.Send("child", {"topic": t, "said": []}) for t in "pq"], ["child"]
    )
    app, config = builder.compile(checkpointer=api.InMemorySaver()), thread()
    app.invoke({"said": []}, config)
    app.invoke(api.Command(resume={by_value(app.get_state(config), "p"): "x"}), config)
    middle = app.get_state(config)
    result = app.invoke(api.Command(resume={by_value(middle, "q"): "y"}), config)
    return summary(middle), sorted(result["said"])


@program
def tasks_asking_in_an_entrypoint(api):
    calls: Counter = Counter()

    @api.task
    def quiet():
        calls["quiet"] += 1
        api.interrupt("Q")

    @api.task
    def loud():
        calls["loud"] += 1
        return api.interrupt("L")

    @api.entrypoint(checkpointer=api.InMemorySaver())
    def flow(_):
        q, l_ = quiet(), loud()
        return [q.result(), l_.result()]

    config = thread()
    flow.invoke(1, config)
    flow.invoke(api.Command(resume={by_value(flow.get_state(config), "Q"): "x"}), config)
    asked = sorted(i.value for i in flow.get_state(config).interrupts)
    result = flow.invoke(api.Command(resume={by_value(flow.get_state(config), "L"): "y"}), config)
    return asked, result, dict(calls)


# --- A finished stateful subgraph's state -----------------------------------------------------


@pytest.mark.parametrize("nested", [False, True])
def test_finished_subgraph_state_seen_from_the_parent(nested) -> None:
    def prog(api):
        leaf = api.StateGraph(api.MessagesState)
        leaf.add_node("leaf", lambda s: {"messages": [("ai", "reply")]})
        leaf.add_edge(api.START, "leaf")
        inner = leaf.compile(checkpointer=True)
        if nested:
            middle = api.StateGraph(api.MessagesState)
            middle.add_node("middle", inner)
            middle.add_edge(api.START, "middle")
            inner = middle.compile(checkpointer=True)
        builder = api.StateGraph(api.MessagesState)
        builder.add_node("agent", inner)
        builder.add_edge(api.START, "agent")
        app, config = builder.compile(checkpointer=api.InMemorySaver()), thread()
        for text in ("hi", "again"):
            app.invoke({"messages": [("user", text)]}, config)

        def tree(snapshot):
            return [
                (t.name, t.state and len(t.state.values["messages"]), t.state and tree(t.state))
                for t in snapshot.tasks
            ]

        shallow = app.get_state(config)
        return tree(app.get_state(config, subgraphs=True)), shallow.tasks, shallow.next

    same(prog, raises=True, shape=plain)


# --- State schemas ------------------------------------------------------------------------------


@program
def input_and_output_schemas(api):
    class In(TypedDict):
        question: str

    class Out(TypedDict):
        answer: str

    class Whole(In, Out):
        scratch: str

    builder = api.StateGraph(Whole, input_schema=In, output_schema=Out)
    builder.add_node("think", lambda s: {"scratch": s["question"] * 2})
    builder.add_node("say", lambda s: {"answer": s["scratch"].upper()})
    builder.add_edge(api.START, "think")
    builder.add_edge("think", "say")
    app = builder.compile()
    streamed = list(app.stream({"question": "ab"}, stream_mode="values"))
    return app.invoke({"question": "ab", "scratch": "ignored"}), streamed


@program
def private_channel_between_nodes(api):
    class Outer(TypedDict, total=False):
        text: str

    class Secret(TypedDict):
        secret: str

    def hide(state: Outer) -> Secret:
        return {"secret": state["text"][::-1]}

    def reveal(state: Secret) -> Outer:
        return {"text": "revealed " + state["secret"]}

    builder = api.StateGraph(Outer)
    builder.add_node("hide", hide)
    builder.add_node("reveal", reveal)
    builder.add_edge(api.START, "hide")
    builder.add_edge("hide", "reveal")
    app = builder.compile(checkpointer=api.InMemorySaver())
    result = app.invoke({"text": "abc"}, thread())
    return result, app.get_state(thread()).values


@program
def pydantic_state_with_defaults_and_reducer(api):
    class Model(pydantic.BaseModel):
        name: str = "anon"
        tags: Annotated[list[str], operator.add] = pydantic.Field(default_factory=list)
        hits: int = 0

    builder = api.StateGraph(Model)
    builder.add_node("tag", lambda s: {"tags": [s.name], "hits": s.hits + 1})
    builder.add_edge(api.START, "tag")
    app = builder.compile()
    return app.invoke({}), app.invoke({"name": "bo", "tags": ["x"]})


@program
def pydantic_state_rejects_a_bad_input(api):
    class Model(pydantic.BaseModel):
        count: int

    builder = api.StateGraph(Model)
    builder.add_node("inc", lambda s: {"count": s.count + 1})
    builder.add_edge(api.START, "inc")
    ended = outcome(builder.compile().invoke, {"count": "many"})
    return ended[:2]


@program
def dataclass_state_with_defaults(api):
    @dataclasses.dataclass
    class Box:
        label: str = "box"
        items: Annotated[list, operator.add] = dataclasses.field(default_factory=list)

    builder = api.StateGraph(Box)
    builder.add_node("fill", lambda s: {"items": [s.label]})
    builder.add_edge(api.START, "fill")
    return builder.compile().invoke({"items": [0]})


@program
def overwrite_bypasses_the_reducer(api):
    builder = api.StateGraph(Notes)
    builder.add_node("reset", lambda s: {"notes": api.Overwrite(["fresh"])})
    builder.add_edge(api.START, "reset")
    return builder.compile().invoke({"notes": ["old", "older"]})


# --- Send and Command ----------------------------------------------------------------------------


@program
def command_with_update_and_sends(api):
    def split(state):
        sends = [api.Send("work", {"n": i}) for i in range(3)]
        return api.Command(update={"notes": ["split"]}, goto=sends)

    builder = api.StateGraph(Notes)
    builder.add_node("split", split)
    builder.add_node("work", lambda s: {"notes": [f"w{s['n']}"]})
    builder.add_edge(api.START, "split")
    app = builder.compile()
    return sorted(app.invoke({"notes": []})["notes"]), len(list(app.stream({"notes": []})))


@program
def command_to_the_parent_graph(api):
    child = api.StateGraph(Notes)
    child.add_node(
        "hop", lambda s: api.Command(graph=api.Command.PARENT, goto="after", update={"n": 7})
    )
    child.add_edge(api.START, "hop")
    builder = api.StateGraph(Notes)
    builder.add_node("child", child.compile())
    builder.add_node("after", lambda s: {"notes": [f"after {s['n']}"]})
    builder.add_edge(api.START, "child")
    return builder.compile().invoke({"notes": [], "n": 0})


@program
def command_goto_list_and_resume_in_one(api):
    def ask(state):
        return {"notes": [api.interrupt("name?")]}

    builder = api.StateGraph(Notes)
    builder.add_node("ask", ask)
    builder.add_node("x", lambda s: {"notes": ["x"]})
    builder.add_node("y", lambda s: {"notes": ["y"]})
    builder.add_edge(api.START, "ask")
    app, config = builder.compile(checkpointer=api.InMemorySaver()), thread()
    app.invoke({"notes": []}, config)
    result = app.invoke(api.Command(resume="zed", update={"n": 1}), config)
    again = app.invoke(api.Command(goto=["x", "y"]), config)
    return result, sorted(again["notes"])


# --- Interrupts and streams -------------------------------------------------------------------


@program
def several_questions_in_one_node_streamed(api):
    def form(state):
        first = api.interrupt({"field": "first"})
        last = api.interrupt({"field": "last"})
        return {"notes": [f"{first} {last}"]}

    builder = api.StateGraph(Notes)
    builder.add_node("form", form)
    builder.add_edge(api.START, "form")
    app, config = builder.compile(checkpointer=api.InMemorySaver()), thread()
    seen = [list(app.stream({"notes": []}, config, stream_mode="updates"))]
    for answer in ("Ada", "Lovelace"):
        seen.append(list(app.stream(api.Command(resume=answer), config, stream_mode="updates")))
    return seen, app.get_state(config).values


@program
def values_updates_and_custom_at_once(api):
    def talk(state):
        writer = api.get_stream_writer()
        writer({"progress": 1})
        writer("done")
        return {"notes": ["talked"]}

    builder = api.StateGraph(Notes)
    builder.add_node("talk", talk)
    builder.add_edge(api.START, "talk")
    app = builder.compile()
    return list(app.stream({"notes": []}, stream_mode=["values", "updates", "custom"]))


@program
def subgraph_chunks_with_namespaces(api):
    child = api.StateGraph(Notes)
    child.add_node("inner", lambda s: {"notes": ["inner"]})
    child.add_edge(api.START, "inner")
    builder = api.StateGraph(Notes)
    builder.add_node("outer", child.compile())
    builder.add_edge(api.START, "outer")
    app = builder.compile()
    ids = Ids()
    chunks = app.stream({"notes": []}, stream_mode=["updates", "values"], subgraphs=True)
    return [(tuple(ids.ns(p) for p in ns), mode, chunk) for ns, mode, chunk in chunks]


@program
def subgraph_question_streamed_resumes_under_its_task_id(api):
    child = api.StateGraph(Notes)
    child.add_node("ask", lambda s: {"notes": [api.interrupt("ok?")]})
    child.add_edge(api.START, "ask")
    builder = api.StateGraph(Notes)
    builder.add_node("outer", child.compile())
    builder.add_edge(api.START, "outer")
    app, config = builder.compile(checkpointer=api.InMemorySaver()), thread()
    ids = Ids()

    def run(value):
        chunks = app.stream(value, config, stream_mode="updates", subgraphs=True)
        return [(tuple(ids.ns(p) for p in ns), plain(chunk)) for ns, chunk in chunks]

    return run({"notes": []}), run(api.Command(resume="fine")), app.get_state(config).values


# --- History and update_state -----------------------------------------------------------------


@program
def history_filter_limit_and_before(api):
    app = api.StateGraph(Notes)
    for name in ("a", "b", "c"):
        app.add_node(name, lambda s, name=name: {"notes": [name]})
    app.add_edge(api.START, "a")
    app.add_edge("a", "b")
    app.add_edge("b", "c")
    app, config = app.compile(checkpointer=api.InMemorySaver()), thread()
    app.invoke({"notes": []}, config)
    history = list(app.get_state_history(config))
    loop = [s.metadata["step"] for s in app.get_state_history(config, filter={"source": "loop"})]
    limited = [s.values for s in app.get_state_history(config, limit=2)]
    before = [s.metadata["step"] for s in app.get_state_history(config, before=history[1].config)]
    return [s.metadata["source"] for s in history], loop, limited, before


@program
def update_state_as_a_node_and_with_the_reducer(api):
    builder = api.StateGraph(Notes)
    builder.add_node("a", lambda s: {"notes": ["a"]})
    builder.add_node("b", lambda s: {"notes": ["b"]})
    builder.add_edge(api.START, "a")
    builder.add_edge("a", "b")
    app, config = builder.compile(checkpointer=api.InMemorySaver(), interrupt_after=["a"]), thread()
    app.invoke({"notes": []}, config)
    app.update_state(config, {"notes": ["hand"]})
    first = app.get_state(config)
    app.update_state(config, {"notes": ["as b"]}, as_node="b")
    second = app.get_state(config)
    return (first.values, first.next), (second.values, second.next), second.metadata["source"]


@program
def update_state_as_an_unknown_node(api):
    app = api.StateGraph(Notes)
    app.add_node("a", lambda s: {"notes": ["a"]})
    app.add_edge(api.START, "a")
    app, config = app.compile(checkpointer=api.InMemorySaver()), thread()
    app.invoke({"notes": []}, config)
    return outcome(app.update_state, config, {"notes": ["x"]}, as_node="nobody")[:2]


@pytest.mark.parametrize("durability", ["sync", "async", "exit"])
def test_durability_and_the_history_kept(durability) -> None:
    def prog(api):
        builder = api.StateGraph(Notes)
        for name in ("a", "b"):
            builder.add_node(name, lambda s, name=name: {"notes": [name]})
        builder.add_edge(api.START, "a")
        builder.add_edge("a", "b")
        app, config = builder.compile(checkpointer=api.InMemorySaver()), thread()
        result = app.invoke({"notes": []}, config, durability=durability)
        steps = [s.metadata["step"] for s in app.get_state_history(config)]
        return result, steps, app.get_state(config).values

    same(prog, raises=True, shape=plain)


# --- Retries, caches, context ---------------------------------------------------------------------


@program
def retry_policy_with_retry_on(api):
    tries: Counter = Counter()

    def flaky(state):
        tries["flaky"] += 1
        if tries["flaky"] < 3:
            raise KeyError("not yet")
        return {"notes": ["ok"]}

    def hopeless(state):
        tries["hopeless"] += 1
        raise ValueError("never")

    policy = api.RetryPolicy(initial_interval=0.0, jitter=False, retry_on=KeyError)
    first = api.StateGraph(Notes)
    first.add_node("flaky", flaky, retry_policy=policy)
    first.add_edge(api.START, "flaky")
    second = api.StateGraph(Notes)
    second.add_node("hopeless", hopeless, retry_policy=policy)
    second.add_edge(api.START, "hopeless")
    ok = first.compile().invoke({"notes": []})
    failed = outcome(second.compile().invoke, {"notes": []})[:2]
    return ok, failed, dict(tries)


@program
def node_cache_hits_on_the_same_input(api):
    calls: Counter = Counter()

    def slow(state):
        calls["slow"] += 1
        return {"n": state["n"] * 10}

    builder = api.StateGraph(Notes)
    builder.add_node("slow", slow, cache_policy=api.CachePolicy())
    builder.add_edge(api.START, "slow")
    app = builder.compile(cache=api.InMemoryCache())
    results = [app.invoke({"n": n}) for n in (1, 1, 2)]
    updates = list(app.stream({"n": 2}, stream_mode="updates"))
    return results, updates, dict(calls)


@program
def context_schema_reaches_nodes_through_the_runtime(api):
    @dataclasses.dataclass
    class Ctx:
        user: str
        polite: bool = True

    def greet(state, runtime: api.Runtime[Ctx]):
        hello = "Dear" if runtime.context.polite else "Hey"
        return {"notes": [f"{hello} {runtime.context.user}"]}

    builder = api.StateGraph(Notes, context_schema=Ctx)
    builder.add_node("greet", greet)
    builder.add_edge(api.START, "greet")
    app = builder.compile()
    return app.invoke({"notes": []}, context=Ctx(user="Ann", polite=False))


@program
def remaining_steps_counts_down(api):
    class Budget(TypedDict, total=False):
        notes: Annotated[list, operator.add]
        remaining_steps: api.RemainingSteps

    builder = api.StateGraph(Budget)
    builder.add_node("loop", lambda s: {"notes": [s["remaining_steps"]]})
    builder.add_edge(api.START, "loop")
    builder.add_conditional_edges(
        "loop", lambda s: api.END if s["remaining_steps"] <= 2 else "loop"
    )
    return builder.compile().invoke({"notes": []}, {"recursion_limit": 6})


# --- The functional API --------------------------------------------------------------------------


@program
def entrypoint_final_and_previous(api):
    @api.entrypoint(checkpointer=api.InMemorySaver())
    def tally(number: int, *, previous: Any = None):
        total = (previous or 0) + number
        return api.entrypoint.final(value=f"total {total}", save=total)

    config = thread()
    said = [tally.invoke(n, config) for n in (1, 2, 3)]
    return said, tally.get_state(config).values


@program
def task_retry_policy(api):
    tries: Counter = Counter()

    @api.task(retry_policy=api.RetryPolicy(initial_interval=0.0, jitter=False))
    def wobbly(x):
        tries["wobbly"] += 1
        if tries["wobbly"] < 2:
            raise ConnectionError("wobble")
        return x * 2

    @api.entrypoint()
    def flow(x):
        return wobbly(x).result() + 1

    return flow.invoke(5), dict(tries)


@program
def entrypoint_streams_each_tasks_update_when_it_ends(api):
    @api.task
    def double(x):
        api.get_stream_writer()(f"doubling {x}")
        return x * 2

    @api.entrypoint()
    def flow(x):
        return [double(i).result() for i in range(x)]

    return list(flow.stream(2, stream_mode=["updates", "custom"]))


@program
def async_entrypoint_streams_each_tasks_update_when_it_ends(api):
    @api.task
    async def triple(x):
        api.get_stream_writer()(f"tripling {x}")
        return x * 3

    @api.entrypoint()
    async def flow(x):
        return [await triple(i) for i in range(x)]

    async def run():
        return [c async for c in flow.astream(2, stream_mode=["custom", "updates"])]

    return asyncio.run(run())


# --- Errors, batch, with_config -------------------------------------------------------------------


@program
def two_parallel_writes_to_a_plain_key(api):
    builder = api.StateGraph(Notes)
    builder.add_node("a", lambda s: {"n": 1})
    builder.add_node("b", lambda s: {"n": 2})
    builder.add_edge(api.START, "a")
    builder.add_edge(api.START, "b")
    return outcome(builder.compile().invoke, {"notes": []})[:2]


@program
def node_returning_a_non_dict(api):
    builder = api.StateGraph(Notes)
    builder.add_node("odd", lambda s: ["not", "a", "dict"])
    builder.add_edge(api.START, "odd")
    return outcome(builder.compile().invoke, {"notes": []})[:2]


@program
def recursion_limit_reached(api):
    builder = api.StateGraph(Notes)
    builder.add_node("spin", lambda s: {"notes": ["x"]})
    builder.add_edge(api.START, "spin")
    builder.add_edge("spin", "spin")
    app = builder.compile()
    said = outcome(app.invoke, {"notes": []}, {"recursion_limit": 4}, message="first line")
    return said[:2], said[2].startswith("Recursion limit of 4 reached without hitting a stop")


@program
def batch_with_configs_and_exceptions(api):
    def halve(state):
        if state["n"] % 2:
            raise ValueError(f"odd {state['n']}")
        return {"n": state["n"] // 2}

    builder = api.StateGraph(Notes)
    builder.add_node("halve", halve)
    builder.add_edge(api.START, "halve")
    app = builder.compile()
    ok = app.batch([{"n": 2}, {"n": 8}])
    mixed = app.batch([{"n": 4}, {"n": 3}], return_exceptions=True)
    return ok, [r if isinstance(r, dict) else type(r).__name__ for r in mixed]


@program
def with_config_sets_the_recursion_limit(api):
    builder = api.StateGraph(Notes)
    builder.add_node("spin", lambda s: {"notes": ["x"]})
    builder.add_edge(api.START, "spin")
    builder.add_conditional_edges("spin", lambda s: "spin" if len(s["notes"]) < 5 else api.END)
    app = builder.compile()
    tight = outcome(app.with_config(recursion_limit=3).invoke, {"notes": []})[:2]
    roomy = app.with_config({"recursion_limit": 10}).invoke({"notes": []})
    return tight, roomy


@program
def none_input_on_a_fresh_thread(api):
    app = api.StateGraph(Notes)
    app.add_node("a", lambda s: {"notes": ["a"]})
    app.add_edge(api.START, "a")
    app = app.compile(checkpointer=api.InMemorySaver())
    return outcome(app.invoke, None, thread())[:2]


# --- More of the same suite's public surface ----------------------------------------------------


@program
def breakpoints_given_to_invoke(api):
    builder = api.StateGraph(Notes)
    for name in ("a", "b", "c"):
        builder.add_node(name, lambda s, name=name: {"notes": [name]})
    builder.add_edge(api.START, "a")
    builder.add_edge("a", "b")
    builder.add_edge("b", "c")
    app, config = builder.compile(checkpointer=api.InMemorySaver()), thread()
    first = app.invoke({"notes": []}, config, interrupt_before=["b"])
    second = app.invoke(None, config, interrupt_after=["b"])
    third = app.invoke(None, config)
    return first, second, third, app.get_state(config).next


@program
def add_sequence_and_a_waiting_join(api):
    builder = api.StateGraph(Notes)
    builder.add_sequence(
        [("one", lambda s: {"notes": ["one"]}), ("two", lambda s: {"notes": ["two"]})]
    )
    builder.add_node("side", lambda s: {"notes": ["side"]})
    builder.add_node("join", lambda s: {"notes": ["join"]})
    builder.add_edge(api.START, "one")
    builder.add_edge(api.START, "side")
    builder.add_edge(["two", "side"], "join")
    return builder.compile().invoke({"notes": []})


@program
def deferred_node_waits_for_the_fan_out(api):
    builder = api.StateGraph(Notes)
    builder.add_node("fan", lambda s: {})
    builder.add_node("slow", lambda s: {"notes": ["slow"]})
    builder.add_node("quick", lambda s: {"notes": ["quick"]})
    builder.add_node("after_slow", lambda s: {"notes": ["after_slow"]})
    builder.add_node("last", lambda s: {"notes": [f"last saw {len(s['notes'])}"]}, defer=True)
    builder.add_edge(api.START, "fan")
    builder.add_edge("fan", "slow")
    builder.add_edge("fan", "quick")
    builder.add_edge("slow", "after_slow")
    builder.add_edge("quick", "last")
    builder.add_edge("after_slow", "last")
    return builder.compile().invoke({"notes": []})


@program
def router_mixing_a_node_name_and_sends(api):
    builder = api.StateGraph(Notes)
    builder.add_node("pick", lambda s: {})
    builder.add_node("each", lambda s: {"notes": [f"each {s['n']}"]})
    builder.add_node("once", lambda s: {"notes": ["once"]})
    builder.add_edge(api.START, "pick")
    builder.add_conditional_edges(
        "pick", lambda s: ["once", *(api.Send("each", {"n": i}) for i in (1, 2))]
    )
    return sorted(builder.compile().invoke({"notes": []})["notes"])


@program
def remove_messages_and_remove_all(api):
    from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage

    def trim(state):
        return {"messages": [RemoveMessage(id="h1")]}

    def wipe(state):
        return {"messages": [RemoveMessage(id=api.REMOVE_ALL_MESSAGES), AIMessage("fresh", id="f")]}

    def graph(*names):
        builder = api.StateGraph(api.MessagesState)
        builder.add_sequence([(name, {"trim": trim, "wipe": wipe}[name]) for name in names])
        builder.add_edge(api.START, names[0])
        return builder.compile()

    given = [HumanMessage("hi", id="h1"), AIMessage("yo", id="a1")]
    trimmed = [m.id for m in graph("trim").invoke({"messages": given})["messages"]]
    wiped = graph("trim", "wipe").invoke({"messages": given})["messages"]
    return trimmed, [(m.id, m.content) for m in wiped]


@program
def node_reads_its_config(api):
    def node(state, config):
        return {"notes": [config["configurable"]["who"], api.get_config()["configurable"]["who"]]}

    builder = api.StateGraph(Notes)
    builder.add_node("node", node)
    builder.add_edge(api.START, "node")
    app = builder.compile()
    plain_call = app.invoke({"notes": []}, {"configurable": {"who": "x"}})
    bound = app.with_config(configurable={"who": "y"}).invoke({"notes": []})
    return plain_call, bound


@program
def node_returning_an_unknown_key(api):
    builder = api.StateGraph(Notes)
    builder.add_node("odd", lambda s: {"nope": 1})
    builder.add_edge(api.START, "odd")
    return outcome(builder.compile().invoke, {"notes": []})[:2]


@program
def retries_run_out(api):
    tries: Counter = Counter()

    def always(state):
        tries["n"] += 1
        raise ConnectionError("down")

    policy = api.RetryPolicy(max_attempts=3, initial_interval=0.0, jitter=False)
    builder = api.StateGraph(Notes)
    builder.add_node("always", always, retry_policy=policy)
    builder.add_edge(api.START, "always")
    return outcome(builder.compile().invoke, {"notes": []})[:2], dict(tries)


@program
def same_thread_invoked_twice_keeps_adding(api):
    app = api.StateGraph(Notes)
    app.add_node("a", lambda s: {"notes": ["a"], "n": len(s["notes"])})
    app.add_edge(api.START, "a")
    app, config = app.compile(checkpointer=api.InMemorySaver()), thread()
    app.invoke({"notes": ["x"]}, config)
    second = app.invoke({"notes": ["y"]}, config)
    return second, [s.metadata["source"] for s in app.get_state_history(config)]


@program
def entrypoint_asks_and_resumes_with_an_update(api):
    @api.entrypoint(checkpointer=api.InMemorySaver())
    def flow(topic: str):
        draft = f"about {topic}"
        verdict = api.interrupt({"draft": draft})
        return f"{draft}: {verdict}"

    config = thread()
    streamed = list(flow.stream("cats", config, stream_mode="updates"))
    waiting = flow.get_state(config)
    done = flow.invoke(api.Command(resume="approved"), config)
    return streamed, waiting.next, [i.value for i in waiting.interrupts], done


@program
def get_state_of_a_thread_paused_in_a_subgraph(api):
    child = api.StateGraph(Notes)
    child.add_node("prep", lambda s: {"notes": ["prep"]})
    child.add_node("ask", lambda s: {"notes": [api.interrupt("go?")]})
    child.add_edge(api.START, "prep")
    child.add_edge("prep", "ask")
    builder = api.StateGraph(Notes)
    builder.add_node("sub", child.compile())
    builder.add_edge(api.START, "sub")
    app, config = builder.compile(checkpointer=api.InMemorySaver()), thread()
    app.invoke({"notes": []}, config)
    outer = app.get_state(config, subgraphs=True)
    inner = outer.tasks[0].state
    return (
        summary(outer)["next"],
        [i.value for i in outer.interrupts],
        (inner.values, inner.next, [t.name for t in inner.tasks]),
        app.invoke(api.Command(resume="yes"), config),
    )


@program
def bulk_update_state_in_supersteps(api):
    app = api.StateGraph(Notes)
    app.add_node("a", lambda s: {"notes": ["a"]})
    app.add_node("b", lambda s: {"notes": ["b"]})
    app.add_edge(api.START, "a")
    app.add_edge("a", "b")
    app, config = app.compile(checkpointer=api.InMemorySaver()), thread()
    app.bulk_update_state(
        config,
        [
            [api.StateUpdate({"notes": ["start"]}, api.START)],
            [api.StateUpdate({"notes": ["as a"]}, "a")],
        ],
    )
    state = app.get_state(config)
    return state.values, state.next, app.invoke(None, config)


@program
def error_classes_and_codes(api):
    errors = importlib.import_module(f"{api.lib}.errors")

    def deep():
        raise errors.GraphRecursionError("deep")

    caught = outcome(deep)
    return (
        sorted(code.value for code in errors.ErrorCode),
        [
            issubclass(errors.GraphRecursionError, RecursionError),
            issubclass(errors.GraphInterrupt, errors.GraphBubbleUp),
            issubclass(errors.ParentCommand, errors.GraphBubbleUp),
            issubclass(errors.InvalidUpdateError, Exception),
        ],
        caught,
        "went wrong"
        in errors.create_error_message(
            message="went wrong", error_code=errors.ErrorCode.GRAPH_RECURSION_LIMIT
        ),
    )


@program
def get_subgraphs_by_namespace_and_recursively(api):
    def identity(state):
        return {}

    bottom = api.StateGraph(Notes)
    bottom.add_node("leaf", identity)
    bottom.add_edge(api.START, "leaf")
    middle = api.StateGraph(Notes)
    middle.add_node("inner", bottom.compile())
    middle.add_edge(api.START, "inner")
    middle = middle.compile()
    top = api.StateGraph(Notes)
    top.add_node("part", middle)
    top.add_node("part_2", middle)
    top.add_edge(api.START, "part")
    top.add_edge("part", "part_2")
    app = top.compile()

    def names(**kwargs):
        return sorted(name for name, _ in app.get_subgraphs(**kwargs))

    return (
        names(),
        names(recurse=True),
        names(namespace="part_2"),
        names(namespace="part_2|inner", recurse=True),
        names(namespace="part|inner", recurse=True),
    )


@program
def clear_cache_of_no_nodes_of_one_and_of_all(api):
    calls: list = []

    def bump(state):
        calls.append(state["value"])
        return {"value": state["value"] + 1}

    builder = api.StateGraph(dict)
    builder.add_node(
        "bump", bump, cache_policy=api.CachePolicy(key_func=lambda s: str(s["value"] % 2))
    )
    builder.add_edge(api.START, "bump")
    app = builder.compile(cache=api.InMemoryCache())
    seen = [app.invoke({"value": 1}), app.invoke({"value": 3})]
    app.clear_cache([])
    seen.append(app.invoke({"value": 1}))
    app.clear_cache(["bump"])
    seen.append(app.invoke({"value": 5}))
    app.clear_cache()
    seen.append(app.invoke({"value": 7}))
    return seen, calls


@program
def cache_key_func_returning_an_int(api):
    builder = api.StateGraph(dict)
    builder.add_node("n", lambda s: s, cache_policy=api.CachePolicy(key_func=lambda s: 1))
    builder.add_edge(api.START, "n")
    return outcome(builder.compile(cache=api.InMemoryCache()).invoke, {"v": 1})[:2]


def test_retries_under_a_checkpointer_wait_and_leave_nothing_pending(monkeypatch) -> None:
    waits: list[float] = []
    monkeypatch.setattr(time, "sleep", waits.append)

    def prog(api):
        tries: Counter = Counter()

        def shaky(state):
            tries["n"] += 1
            if tries["n"] < 4:
                raise ConnectionError("blip")
            return {"notes": ["steady"]}

        policy = api.RetryPolicy(
            max_attempts=5, initial_interval=0.01, backoff_factor=2.0, jitter=False,
            retry_on=ConnectionError,
        )  # fmt: skip
        builder = api.StateGraph(Notes)
        builder.add_node("shaky", shaky, retry_policy=policy)
        builder.add_edge(api.START, "shaky")
        app, config = builder.compile(checkpointer=api.InMemorySaver()), thread()
        result = app.invoke({"notes": []}, config)
        state = app.get_state(config)
        history = list(app.get_state_history(config))
        return {"result": result, "tries": dict(tries), "next": state.next, "history": len(history)}

    langgraph, _ = same(prog, sleeps=waits, shape=plain)
    assert langgraph["sleeps"] == [0.01, 0.02, 0.04]
