"""Differential tests: node signatures, runtime context and the store, on LangGraph and nbgraph.

Each program takes an `api` namespace (LangGraph's names or nbgraph's), runs, and returns what
it observed; the two outcomes must be equal. Ids LangGraph makes from uuids are compared by
structure (`Ids`: `"<node>:<id n>"`), never by value.
"""

# No `from __future__ import annotations`: the parameter annotations below (RunnableConfig,
# BaseStore, Runtime[...]) are read by both engines as objects, as a user's program has them.

import asyncio
import dataclasses
import warnings
from typing import Annotated, TypedDict

import pydantic
import pytest
from langchain_core.runnables import RunnableConfig

from tests.support.harness import Ids, both, differs, outcome
from tests.support.records import CONFIG, NO_RUN, PAIRING, SERDE

pytestmark = pytest.mark.langgraph


class Count(TypedDict):
    n: int


def shown_config(config: dict, ids: Ids) -> dict:
    """What a node's config holds, its namespaces' task ids masked (`ids`: by structure)."""
    meta = dict(config["metadata"])
    ns = meta.pop("langgraph_checkpoint_ns")
    configurable = {k: v for k, v in config["configurable"].items() if not k.startswith("__")}
    configurable.pop("checkpoint_map", None)
    inner = configurable.pop("checkpoint_ns")
    return {
        "keys": sorted(config),
        "rest": {
            k: v for k, v in config.items() if k not in ("metadata", "configurable", "callbacks")
        },
        "metadata": meta,
        "ns": (ids.ns(ns), ids.ns(inner)),
        "configurable": configurable,
    }


# --- the config a node and a router see -------------------------------------------------------


@pytest.mark.parametrize(
    "config",
    [
        None,
        {"configurable": {"user_id": "u1", "n": 3}},
        {"tags": ["t"], "metadata": {"who": "me"}, "recursion_limit": 9, "max_concurrency": 2},
        {"run_name": "named", "configurable": {"d": {"x": 1}}},
    ],
)
def test_a_node_and_its_router_see_langgraphs_config(config):
    def program(api):
        seen, ids = [], Ids()

        def node(state, config):
            seen.append(("node", shown_config(config, ids)))
            return {"n": state["n"] + 1}

        def typed(state: Count, config: RunnableConfig):
            seen.append(("typed", shown_config(config, ids), shown_config(api.get_config(), ids)))
            return None

        def route(state, config):
            seen.append(("route", shown_config(config, ids)))
            return "typed"

        graph = api.StateGraph(Count)
        graph.add_node("a", node)
        graph.add_node("typed", typed)
        graph.add_edge(api.START, "a")
        graph.add_conditional_edges("a", route, ["typed"])
        return graph.compile().invoke({"n": 0}, config), seen

    lg, nb = both(program)
    assert nb == lg


def test_config_with_a_thread_and_a_keyword_only_config():
    def program(api):
        seen, ids = [], Ids()

        def node(state, *, config: RunnableConfig | None = None):
            seen.append(shown_config(config, ids))
            return {"n": 1}

        graph = api.StateGraph(Count)
        graph.add_node("a", node)
        graph.add_edge(api.START, "a")
        app = graph.compile(checkpointer=api.InMemorySaver())
        app.invoke({"n": 0}, {"configurable": {"thread_id": "t1", "user_id": "u"}})
        return seen

    lg, nb = both(program)
    assert nb == lg


def test_send_tasks_and_joins_name_their_triggers_as_langgraph():
    class Items(TypedDict):
        items: Annotated[list, lambda a, b: a + b]

    def program(api):
        seen = []

        def meta(config, *extra):
            m = config["metadata"]
            return (m["langgraph_node"], m["langgraph_step"], m["langgraph_triggers"], *extra)

        def fan(state):
            return [api.Send("work", {"items": [i]}) for i in range(2)]

        def work(state, config):
            seen.append(meta(config, config["metadata"]["langgraph_path"][0]))
            return {"items": state["items"]}

        def step(name):
            def node(state, config):
                seen.append(meta(config))
                return {"items": [name]}

            return node

        graph = api.StateGraph(Items)
        for name in ("a", "b", "c"):
            graph.add_node(name, step(name))
        graph.add_node("work", work)
        graph.add_edge(api.START, "a")
        graph.add_edge(api.START, "b")
        graph.add_edge(["a", "b"], "c")
        graph.add_conditional_edges("c", fan, ["work"])
        out = graph.compile().invoke({"items": []})
        return sorted(out["items"], key=str), sorted(seen, key=str)

    lg, nb = both(program)
    assert nb == lg


@differs(SERDE.at("run:effects", "run:final", "run:steps"))
def test_a_sends_path_counts_among_the_steps_sends_when_an_edge_task_runs_beside_it():
    class Seen(TypedDict):
        seen: Annotated[list, lambda a, b: a + b]

    def program(api):
        def node(name):
            def run(state, config):
                m = config["metadata"]
                return {"seen": [(name, m["langgraph_path"], tuple(m["langgraph_triggers"]))]}

            return run

        graph = api.StateGraph(Seen)
        for name in ("a", "b", "j"):
            graph.add_node(name, node(name))
        graph.add_edge(api.START, "a")  # an edge task and two Sends in one step
        graph.add_conditional_edges(
            api.START, lambda s: [api.Send("b", {"seen": []}), api.Send("b", {"seen": []})]
        )
        graph.add_edge(["a", "b"], "j")
        return sorted(graph.compile().invoke({"seen": []})["seen"], key=str)

    lg, nb = both(program)
    assert nb == lg
    assert ("b", ("__pregel_push", 0, False), ("__pregel_push",)) in nb


def test_a_config_annotated_otherwise_is_not_passed_and_warned_about():
    def program(api):
        def node(state, config: dict):
            return {"n": 1}

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            graph = api.StateGraph(Count)
            graph.add_node("a", node)
            graph.add_edge(api.START, "a")
            result = outcome(lambda: graph.compile().invoke({"n": 0}))
        said = any("'config' parameter should be typed" in str(w.message) for w in caught)
        return result, said

    lg, nb = both(program)
    assert nb == lg
    assert nb == (("raised", "TypeError"), True)


@differs(NO_RUN.at())
def test_get_config_and_get_runtime_outside_a_run_raise():
    def program(api):
        return outcome(api.get_config), outcome(api.get_runtime)

    lg, nb = both(program)
    assert nb == lg == (("raised", "RuntimeError"), ("raised", "RuntimeError"))


# --- runtime context ----------------------------------------------------------------------------


class DictContext(TypedDict):
    my_runtime_value: str


@dataclasses.dataclass
class DataContext:
    provider: str = "anthropic"
    user: str = "anon"


class ModelContext(pydantic.BaseModel):
    provider: str = "anthropic"


def test_runtime_context_of_each_kind_reaches_nodes_and_routers():
    def program(api):
        seen = []

        def node(state, runtime: api.Runtime[DictContext]):
            seen.append(("node", runtime.context, runtime.store))
            return {"n": 1}

        def data_node(state, runtime: api.Runtime[DataContext]):
            ctx = runtime.context
            shown = ctx and (getattr(ctx, "provider", None), getattr(ctx, "user", None))
            seen.append(("data", type(ctx).__name__, shown))
            seen.append(("get_runtime", api.get_runtime().context == ctx))
            return None

        def route(state, runtime):
            seen.append(("route", type(runtime.context).__name__))
            return "data"

        results = []
        for schema, context in [
            (DictContext, {"my_runtime_value": "a"}),
            (DataContext, {"provider": "openai"}),
            (DataContext, DataContext(user="ada")),
            (DataContext, None),
            (ModelContext, {"provider": "x"}),
            (None, {"anything": 1}),
        ]:
            graph = api.StateGraph(Count, context_schema=schema)
            graph.add_node("a", node)
            graph.add_node("data", data_node)
            graph.add_edge(api.START, "a")
            graph.add_conditional_edges("a", route, ["data"])
            app = graph.compile()
            results.append(app.invoke({"n": 0}, context=context))
            results.append(list(app.stream({"n": 0}, context=context, stream_mode="updates")))
        return results, [(k, v if k != "node" else type(v).__name__, *r) for k, v, *r in seen]

    lg, nb = both(program)
    assert nb == lg


def test_context_in_the_async_forms():
    def program(api):
        seen = []

        async def node(state, runtime: api.Runtime[DataContext]):
            await asyncio.sleep(0)
            seen.append(("async", runtime.context.user, api.get_runtime().context.user))
            return {"n": state["n"] + 1}

        def sync_node(state, runtime: api.Runtime[DataContext]):
            seen.append(("sync", runtime.context.user))
            return {"n": state["n"] + 1}

        async def route(state, runtime: api.Runtime[DataContext]):
            await asyncio.sleep(0)
            config = api.get_config()
            seen.append(("route", runtime.context.user, config["metadata"]["langgraph_node"]))
            return "b"

        graph = api.StateGraph(Count, context_schema=DataContext)
        graph.add_node("a", node)
        graph.add_node("b", sync_node)
        graph.add_edge(api.START, "a")
        graph.add_conditional_edges("a", route, ["b"])
        app = graph.compile()

        async def go():
            first = await app.ainvoke({"n": 0}, context={"user": "ada"})
            chunks = [c async for c in app.astream({"n": 0}, context=DataContext(user="bob"))]
            return first, chunks

        return asyncio.run(go()), seen

    lg, nb = both(program)
    assert nb == lg


@differs(PAIRING.at("2 calls recorded"))
def test_bad_context_fails_as_in_langgraph():
    def program(api):
        graph = api.StateGraph(Count, context_schema=DataContext)
        graph.add_node("a", lambda state: {"n": 1})
        graph.add_edge(api.START, "a")
        app = graph.compile()
        return (
            outcome(lambda: app.invoke({"n": 0}, context={"nope": 1})),
            outcome(lambda: app.invoke({"n": 0}, context="text")),
        )

    lg, nb = both(program)
    assert nb == lg


def test_context_is_not_kept_across_a_resume():
    def program(api):
        seen = []

        def ask(state, runtime: api.Runtime[DataContext]):
            seen.append(runtime.context and runtime.context.user)
            api.interrupt("ok?")
            return {"n": 1}

        graph = api.StateGraph(Count, context_schema=DataContext)
        graph.add_node("ask", ask)
        graph.add_edge(api.START, "ask")
        app = graph.compile(checkpointer=api.InMemorySaver())
        config = {"configurable": {"thread_id": "t"}}
        app.invoke({"n": 0}, config, context={"user": "ada"})
        out = app.invoke(api.Command(resume="yes"), config)
        return out, seen

    lg, nb = both(program)
    assert nb == lg


# --- signatures ---------------------------------------------------------------------------------


def test_which_parameters_each_engine_fills():
    def program(api):
        seen = []

        def runtime_plain(state, runtime):
            seen.append(("runtime", runtime.context))

        def store_kw(state, *, store: api.BaseStore):
            seen.append(("store", store is None))

        def store_plain(state, store):
            seen.append(("store_plain", store is None))

        def writer(state, writer):
            writer({"custom": 1})  # nothing listens: a no-op
            seen.append(("writer", callable(writer)))

        def optional_store(state, store: api.BaseStore | None = None):
            seen.append(("optional", store))

        results = []
        for fn in (runtime_plain, store_kw, store_plain, writer, optional_store):
            graph = api.StateGraph(Count, context_schema=dict)
            graph.add_node("a", fn)
            graph.add_edge(api.START, "a")
            results.append(outcome(graph.compile().invoke, {"n": 0}, context={"k": 1}))
        for bad in (lambda state, other: None, lambda state, *, cfg: None):
            graph = api.StateGraph(Count)
            graph.add_node("a", bad)
            graph.add_edge(api.START, "a")
            results.append(outcome(graph.compile().invoke, {"n": 0}))
        return results, seen

    lg, nb = both(program)
    assert nb == lg


# --- the store ----------------------------------------------------------------------------------


class Chat(TypedDict):
    said: Annotated[list, lambda a, b: a + b]


def test_long_term_memory_across_threads_as_p40():
    def program(api):
        prompts = []

        def call_model(state: Chat, config: RunnableConfig, *, store: api.BaseStore):
            namespace = ("memories", config["configurable"]["user_id"])
            memories = store.search(namespace, query=state["said"][-1])
            prompts.append([d.value["data"] for d in memories])
            if "remember" in state["said"][-1].lower():
                store.put(namespace, f"m{len(prompts)}", {"data": "User name is Bob"})
            return {"said": [f"reply {len(prompts)}"]}

        graph = api.StateGraph(Chat)
        graph.add_node(call_model)
        graph.add_edge(api.START, "call_model")
        store = api.InMemoryStore()
        app = graph.compile(checkpointer=api.InMemorySaver(), store=store)
        out = []
        for thread, text in (("1", "Hi! Remember: my name is Bob"), ("2", "what is my name?")):
            config = {"configurable": {"thread_id": thread, "user_id": "1"}}
            out.append(list(app.stream({"said": [text]}, config, stream_mode="values")))
        item = store.get(("memories", "1"), "m1")
        return out, prompts, item.value, item.key, item.namespace, sorted(item.dict())

    lg, nb = both(program)
    assert nb == lg


def test_runtime_store_and_get_store_are_the_compiled_store():
    def program(api):
        seen = []

        def node(state, runtime: api.Runtime):
            store = runtime.store
            seen.append(isinstance(store, api.InMemoryStore))
            store.put(("users",), "u", {"name": "Alice"})
            seen.append(api.get_store().get(("users",), "u").value)
            return {"n": 1}

        graph = api.StateGraph(Count)
        graph.add_node("a", node)
        graph.add_edge(api.START, "a")
        store = api.InMemoryStore()
        graph.compile(store=store).invoke({"n": 0})
        return seen, store.get(("users",), "u").value

    lg, nb = both(program)
    assert nb == lg


@differs(NO_RUN.at())
def test_store_api_put_get_search_delete_and_namespaces():
    def program(api):
        store = api.InMemoryStore()
        store.put(("docs", "a"), "1", {"kind": "x", "n": 1, "tags": ["p"], "sub": {"k": 1}})
        store.put(("docs", "a"), "2", {"kind": "y", "n": 5})
        store.put(("docs", "b"), "3", {"kind": "x", "n": 9})
        store.put(("other",), "4", {"kind": "x"})
        store.put(("docs", "a"), "2", {"kind": "y", "n": 6})  # replaced
        found = lambda items: [(i.namespace, i.key, i.value, i.score) for i in items]  # noqa: E731
        results = [
            found(store.search(("docs",))),
            found(store.search(("docs",), filter={"kind": "x"})),
            found(store.search(("docs",), filter={"n": {"$gt": 4}})),
            found(store.search(("docs",), filter={"sub": {"k": 1}, "tags": ["p"]})),
            found(store.search(("docs",), limit=1, offset=1)),
            found(store.search((), query="anything")),
            store.list_namespaces(),
            store.list_namespaces(prefix=("docs",)),
            store.list_namespaces(suffix=("a",)),
            store.list_namespaces(prefix=("docs", "*")),
            store.list_namespaces(max_depth=1),
            store.get(("docs", "a"), "missing"),
            type(store.get(("docs", "a"), "1").created_at).__name__,
        ]
        store.delete(("docs", "a"), "1")
        store.delete(("docs", "a"), "nothing")
        results.append(found(store.search(("docs", "a"))))
        for bad in ((), ("a.b",), ("langgraph", "x"), ("",), (1,)):
            results.append(outcome(store.put, bad, "k", {"v": 1}))
        results.append(asyncio.run(store.aget(("docs", "b"), "3")).value)
        return results

    lg, nb = both(program)
    assert nb == lg
    import nbgraph
    from nbgraph.store.memory import InMemoryStore

    assert nbgraph.InMemoryStore is InMemoryStore  # (a program may import it from either)


def test_what_a_runtime_holds():
    def program(api):
        seen = []

        def node(state, runtime: api.Runtime):
            info = runtime.execution_info
            seen.append(
                (
                    runtime.context,
                    runtime.previous,
                    runtime.drain_requested,
                    runtime.heartbeat(),
                    info.thread_id,
                    info.node_attempt,
                    info.checkpoint_ns.split(":")[0],
                    info.checkpoint_ns.endswith(info.task_id),
                )
            )
            return {"n": 1}

        graph = api.StateGraph(Count)
        graph.add_node("a", node)
        graph.add_edge(api.START, "a")
        graph.compile().invoke({"n": 0}, context={"k": 1})
        app = graph.compile(checkpointer=api.InMemorySaver())
        app.invoke({"n": 0}, {"configurable": {"thread_id": "t9"}})
        return seen

    lg, nb = both(program)
    assert nb == lg


@differs(
    CONFIG.at(
        "run/1:0:outer:effects",
        "run/1:0:outer:final",
        "run/1:0:outer:steps",
        "run:effects",
        "run:final",
        "run:steps",
    )
)
def test_a_graph_invoked_inside_a_node_inherits_context_store_and_configurable():
    def program(api):
        def inner(state, runtime: api.Runtime):
            config = api.get_config()
            found = runtime.store.get(("k",), "v") if runtime.store else None
            return {
                "n": (
                    runtime.context,
                    found and found.value,
                    config["configurable"].get("user"),
                    config["metadata"]["langgraph_node"],
                    config.get("recursion_limit"),
                )
            }

        sub = api.StateGraph(Count)
        sub.add_node("inner", inner)
        sub.add_edge(api.START, "inner")
        sub = sub.compile()

        def outer(state):
            plain = sub.invoke({"n": 0})["n"]
            own = sub.invoke({"n": 0}, {"configurable": {"user": "v"}}, context={"c": 2})["n"]
            return {"n": [plain, own]}

        graph = api.StateGraph(Count)
        graph.add_node("outer", outer)
        graph.add_edge(api.START, "outer")
        store = api.InMemoryStore()
        store.put(("k",), "v", {"x": 1})
        app = graph.compile(store=store)
        config = {"configurable": {"user": "u"}, "recursion_limit": 50}
        return app.invoke({"n": 0}, config, context={"c": 1}), outcome(sub.invoke, {"n": 0})

    lg, nb = both(program)
    assert nb == lg


@differs(NO_RUN.at())
def test_the_store_keeps_langgraphs_small_habits():
    def program(api):
        store = api.InMemoryStore()
        store.get(("read",), "k")  # a namespace read is listed from then on
        store.put(("y",), "k", {"a": 1})
        store.delete(("y",), "k")  # and stays listed once empty
        store.search(("z",))  # a search does not list one
        listed = store.list_namespaces()
        store.put(("y",), 5, {"a": 1})  # keys become strings
        item = store.search(("y",))[0]
        shown = repr(item).split(", created_at")[0]
        return listed, item.key, store.get(("y",), 5).key, shown, sorted(item.dict())

    lg, nb = both(program)
    assert nb == lg
