"""Differential tests: the rest of the Runnable surface of a compiled graph — `get_name`,
`builder`, `nodes`, the input and output schemas and their JSON schemas, `get_subgraphs`,
`bulk_update_state`, `get_graph(xray=...)`, `compile(checkpointer=x)`'s check,
`stream_events` and `astream_events` (version "v2") — each program run on real LangGraph
and on nbgraph with the same code, the outcomes compared.

Ids a library makes (run ids, task ids in namespaces, checkpoint ids) are compared by
structure (`Ids`).
"""

import asyncio
import dataclasses
import operator
from typing import Annotated, Any, NotRequired

import pytest
from pydantic import BaseModel
from typing_extensions import TypedDict

pytestmark = pytest.mark.langgraph
pytest.importorskip("langgraph")
pytest.importorskip("langchain_core")

from tests.support.harness import Ids, same  # noqa: E402


class State(TypedDict):
    x: int
    log: Annotated[list, operator.add]


class Slim(TypedDict):
    x: int
    note: NotRequired[str]


class In(TypedDict):
    x: int


class Out(TypedDict):
    log: list


class Model(BaseModel):
    x: int = 0
    name: str


@dataclasses.dataclass
class Data:
    x: int
    y: str = "a"
    tags: list = dataclasses.field(default_factory=list)


def step_a(state: State) -> dict:
    return {"x": state["x"] + 1, "log": ["a"]}


def step_b(state: State) -> dict:
    return {"log": ["b"]}


def two_steps(api: Any, name: str | None = None, **compile_options: Any) -> Any:
    builder = api.StateGraph(State)
    builder.add_node("a", step_a).add_node("b", step_b)
    builder.add_edge(api.START, "a").add_edge("a", "b")
    return builder, builder.compile(name=name, **compile_options)


def nested(api: Any, checkpointer: Any = None) -> Any:
    """`outer` runs `chat` (a graph running `inner`, a graph of a -> b), then `c`."""
    _, inner = two_steps(api)
    chat = api.StateGraph(State).add_node("inner", inner).add_edge(api.START, "inner").compile()
    builder = api.StateGraph(State).add_node("chat", chat).add_node("c", step_b)
    builder.add_edge(api.START, "chat").add_edge("chat", "c")
    return chat, inner, builder.compile(checkpointer=checkpointer)


# ---------------------------------------------------------------------------------------------
# names, builder, nodes


def test_get_name_default_named_and_suffixed():
    def program(api):
        _, plain = two_steps(api)
        _, named = two_steps(api, name="my_graph")
        return [
            plain.get_name(),
            plain.get_name("Input"),
            named.get_name(),
            named.get_name("output"),
            named.get_name(name="Other"),
        ]

    same(program)


def test_builder_is_the_state_graph_and_nodes_list_start_first():
    def program(api):
        builder, app = two_steps(api)
        outer = nested(api)[2]
        return [
            app.builder is builder,
            list(app.nodes),
            list(outer.nodes),
            outer.nodes["chat"].bound is outer.nodes["chat"].subgraphs[0],
            outer.nodes["c"].subgraphs,
            len(outer.nodes["chat"].subgraphs),
        ]

    same(program)


# ---------------------------------------------------------------------------------------------
# schemas


def schemas(app: Any) -> dict:
    """What a LangGraph app's schemas say (the model classes by their JSON schema)."""
    return {
        "input json": app.get_input_jsonschema(),
        "output json": app.get_output_jsonschema(),
        "input model": app.get_input_schema().model_json_schema(),
        "output model": app.get_output_schema().model_json_schema(),
    }


def test_schemas_of_a_typeddict_state():
    same(lambda api: schemas(two_steps(api)[1]))


def test_schemas_with_input_and_output_schemas():
    def program(api):
        builder = api.StateGraph(State, input_schema=In, output_schema=Out)
        return schemas(builder.add_node("a", step_a).add_edge(api.START, "a").compile())

    same(program)


def test_schemas_of_a_pydantic_state_are_its_own():
    def program(api):
        app = api.StateGraph(Model).add_node("a", lambda s: {}).add_edge(api.START, "a")
        app = app.compile()
        return [schemas(app), app.get_input_schema() is Model]

    same(program)


def test_schemas_of_a_dataclass_state_with_defaults():
    def program(api):
        builder = api.StateGraph(Data).add_node("a", lambda s: {}).add_edge(api.START, "a")
        return schemas(builder.compile(name="data_graph"))

    same(program)


def test_schemas_of_a_typeddict_with_not_required_keys():
    def program(api):
        builder = api.StateGraph(Slim).add_node("a", lambda s: {}).add_edge(api.START, "a")
        return schemas(builder.compile())

    same(program)


# ---------------------------------------------------------------------------------------------
# subgraphs and xray


def test_get_subgraphs_direct_recursive_and_by_namespace():
    def program(api):
        chat, inner, app = nested(api)

        def shown(pairs):
            return [(ns, {id(chat): "chat", id(inner): "inner"}[id(g)]) for ns, g in pairs]

        async def async_pairs():
            return [pair async for pair in app.aget_subgraphs(recurse=True)]

        return [
            shown(app.get_subgraphs()),
            shown(app.get_subgraphs(recurse=True)),
            shown(app.get_subgraphs(namespace="chat")),
            shown(app.get_subgraphs(namespace="chat|inner", recurse=True)),
            shown(app.get_subgraphs(namespace="chat|inner")),
            shown(app.get_subgraphs(namespace="c")),
            shown(asyncio.run(async_pairs())),
        ]

    same(program)


def drawn(graph: Any) -> dict:
    return {
        "nodes": [(key, node.id, node.name) for key, node in graph.nodes.items()],
        "edges": [(e.source, e.target, e.data, e.conditional) for e in graph.edges],
    }


def test_get_graph_xray_expands_subgraphs_level_by_level():
    def program(api):
        app = nested(api)[2]
        return [drawn(app.get_graph(xray=level)) for level in (False, True, 1, 2, 3)]

    same(program)


def test_get_graph_xray_with_a_router_into_and_out_of_a_subgraph():
    def program(api):
        _, inner = two_steps(api)

        def route(state) -> str:
            return "sub" if state["x"] else "c"

        builder = api.StateGraph(State).add_node("sub", inner).add_node("c", step_b)
        builder.add_node("d", step_b)
        builder.add_conditional_edges(api.START, route, {"sub": "sub", "c": "c"})
        builder.add_edge("sub", "d").add_edge("c", "d")
        app = builder.compile()
        return [drawn(app.get_graph()), drawn(app.get_graph(xray=True))]

    same(program)


# ---------------------------------------------------------------------------------------------
# compile(checkpointer=...)


@pytest.mark.parametrize("bad", [5, "memory", dict, object()])
def test_compile_refuses_a_checkpointer_that_is_not_a_saver(bad):
    def program(api):
        try:
            two_steps(api, checkpointer=bad)
        except Exception as error:
            return type(error).__name__, "Invalid checkpointer" in str(error)
        return "compiled"

    same(program)


def test_compile_takes_a_saver_true_false_and_none():
    def program(api):
        return [
            type(two_steps(api, checkpointer=c)[1]).__name__
            for c in (api.InMemorySaver(), None, False)
        ]

    assert same(program)[0] == ["CompiledStateGraph"] * 3


# ---------------------------------------------------------------------------------------------
# bulk_update_state


def test_bulk_update_state_writes_each_superstep_as_one_checkpoint():
    def program(api):
        app = two_steps(api, checkpointer=api.InMemorySaver())[1]
        config = {"configurable": {"thread_id": "t"}}
        app.invoke({"x": 1, "log": []}, config)
        new = app.bulk_update_state(
            config,
            [
                [api.StateUpdate({"log": ["u1"]}, "a"), api.StateUpdate({"log": ["u2"]}, "b")],
                [api.StateUpdate({"x": 9}, "a")],
            ],
        )
        history = [
            (s.values, s.next, s.metadata["source"], s.metadata["step"])
            for s in app.get_state_history(config)
        ][:3]
        after = app.invoke(None, config)
        return [sorted(new["configurable"]),
                history, after]  # fmt: skip

    same(program)


def test_bulk_update_state_refuses_empty_supersteps():
    def program(api):
        app = two_steps(api, checkpointer=api.InMemorySaver())[1]
        config = {"configurable": {"thread_id": "t"}}
        app.invoke({"x": 1, "log": []}, config)
        seen = []
        for supersteps in ([], [[]]):
            try:
                app.bulk_update_state(config, supersteps)
            except ValueError as error:
                seen.append(str(error))
        return seen

    same(program)


def test_abulk_update_state_then_aget_state():
    def program(api):
        app = two_steps(api, checkpointer=api.InMemorySaver())[1]
        config = {"configurable": {"thread_id": "t"}}

        async def main():
            await app.ainvoke({"x": 1, "log": []}, config)
            await app.abulk_update_state(config, [[api.StateUpdate({"log": ["late"]}, "a")]])
            snapshot = await app.aget_state(config)
            return snapshot.values, snapshot.next

        return asyncio.run(main())

    same(program)


# ---------------------------------------------------------------------------------------------
# stream_events (sync): not on LangGraph's v2 path either


def test_stream_events_v2_is_not_implemented_on_the_sync_path():
    def program(api):
        app = two_steps(api)[1]
        try:
            app.stream_events({"x": 1, "log": []}, version="v2")
        except NotImplementedError:
            return "NotImplementedError"
        return "streamed"

    same(program)


# ---------------------------------------------------------------------------------------------
# astream_events (version "v2")


def shown_data(value: Any) -> Any:
    """An event's data with messages by what they say (their ids are each library's)."""
    if hasattr(value, "content") and hasattr(value, "type"):
        return (type(value).__name__, value.content)
    if isinstance(value, dict):
        return {k: shown_data(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(shown_data(v) for v in value)
    return value


def events_of(app: Any, graph_input: Any, config: Any = None, **options: Any) -> list:
    """Every event of `astream_events(version="v2")`, ids by structure."""
    ids = Ids()

    async def collect():
        return [e async for e in app.astream_events(graph_input, config, version="v2", **options)]

    seen = []
    for event in asyncio.run(collect()):
        metadata = {k: v for k, v in event["metadata"].items() if k != "lc_versions"}
        seen.append(
            ids.deep(
                {
                    "event": event["event"],
                    "name": event["name"],
                    "run_id": event["run_id"],
                    "parent_ids": event["parent_ids"],
                    "tags": event["tags"],
                    "metadata": metadata,
                    "data": shown_data(event["data"]),
                }
            )
        )
    return seen


def test_astream_events_of_two_nodes():
    same(lambda api: events_of(two_steps(api)[1], {"x": 1, "log": []}))


def tools_and_models(api: Any, fake_model: Any) -> Any:
    """Node `a` dispatches a custom event and calls a tool; node `b` calls a chat model."""
    from langchain_core.callbacks import dispatch_custom_event
    from langchain_core.tools import tool

    @tool
    def add_one(v: int) -> int:
        """Add one."""
        return v + 1

    def a(state: State) -> dict:
        dispatch_custom_event("progress", {"done": 1})
        return {"x": add_one.invoke({"v": state["x"]}), "log": ["a"]}

    def b(state: State) -> dict:
        return {"log": [fake_model().invoke("hello").content]}

    builder = api.StateGraph(State).add_node("a", a).add_node("b", b)
    return builder.add_edge(api.START, "a").add_edge("a", "b")


def fake_model() -> Any:
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage

    return GenericFakeChatModel(messages=iter([AIMessage("hi there")]))


def test_astream_events_of_tools_custom_events_and_chat_models():
    same(lambda api: events_of(tools_and_models(api, fake_model).compile(), {"x": 1, "log": []}))


def test_astream_events_with_tags_metadata_run_name_and_a_thread():
    def program(api):
        app = two_steps(api, checkpointer=api.InMemorySaver())[1]
        config = {
            "configurable": {"thread_id": "t1", "user": "ann"},
            "tags": ["mine"],
            "metadata": {"team": "blue"},
            "run_name": "my_run",
        }
        return events_of(app, {"x": 1, "log": []}, config)

    same(program)


def test_astream_events_filtered_by_name_type_and_tag():
    def program(api):
        app = tools_and_models(api, fake_model).compile()
        return [
            events_of(app, {"x": 1, "log": []}, include_names=["b"]),
            events_of(app, {"x": 1, "log": []}, include_types=["chat_model"]),
            events_of(app, {"x": 1, "log": []}, exclude_tags=["seq:step:1"]),
        ]

    same(program)


def test_astream_events_of_async_nodes_calling_a_chat_model():
    def program(api):
        async def a(state: State) -> dict:
            reply = await fake_model().ainvoke("hello")
            return {"log": [reply.content]}

        async def b(state: State) -> dict:
            return {"x": state["x"] * 10}

        builder = api.StateGraph(State).add_node("a", a).add_node("b", b)
        app = builder.add_edge(api.START, "a").add_edge("a", "b").compile()
        return events_of(app, {"x": 2, "log": []})

    same(program)


def test_astream_events_of_a_router_and_a_loop():
    def program(api):
        def count(state: State) -> dict:
            return {"x": state["x"] + 1, "log": [state["x"]]}

        def again(state: State) -> str:
            return "count" if state["x"] < 3 else api.END

        builder = api.StateGraph(State).add_node("count", count)
        builder.add_edge(api.START, "count").add_conditional_edges("count", again)
        return events_of(builder.compile(), {"x": 0, "log": []})

    same(program)


def test_astream_events_of_a_node_that_fails():
    def program(api):
        def boom(state: State) -> dict:
            raise KeyError("no such thing")

        builder = api.StateGraph(State).add_node("a", step_a).add_node("boom", boom)
        app = builder.add_edge(api.START, "a").add_edge("a", "boom").compile()
        seen = []

        async def collect():
            async for event in app.astream_events({"x": 1, "log": []}, version="v2"):
                seen.append((event["event"], event["name"]))

        try:
            asyncio.run(collect())
        except KeyError as error:
            return seen, "KeyError", str(error)
        return seen, "finished"

    same(program)


def test_astream_events_of_a_node_taking_config_and_a_model_given_it():
    def program(api):
        def a(state: State, config) -> dict:
            reply = fake_model().invoke("hello", config)
            return {"log": [reply.content]}

        builder = api.StateGraph(State).add_node("a", a).add_edge(api.START, "a")
        return events_of(builder.compile(), {"x": 1, "log": []}, {"tags": ["outer"]})

    same(program)


def test_config_callbacks_hear_the_graph_and_node_runs_on_invoke():
    def program(api):
        from langchain_core.callbacks import BaseCallbackHandler

        heard = []

        class Heard(BaseCallbackHandler):
            def on_chain_start(self, serialized, inputs, *, run_id, parent_run_id=None, **kw):
                heard.append(("start", kw.get("name"), parent_run_id is None, kw.get("tags")))

            def on_chain_end(self, outputs, *, run_id, parent_run_id=None, **kw):
                heard.append(("end", outputs, parent_run_id is None))

        app = two_steps(api)[1]
        out = app.invoke({"x": 1, "log": []}, {"callbacks": [Heard()]})
        return out, heard

    same(program)


def test_astream_events_needs_version_v2():
    def program(api):
        app = two_steps(api)[1]

        async def first():
            async for event in app.astream_events({"x": 1, "log": []}, version="v2"):
                return event["event"], event["name"], event["data"]

        return asyncio.run(first())

    same(program)


def test_astream_events_of_a_subgraph_node():
    def program(api):
        _, inner = two_steps(api)
        builder = api.StateGraph(State).add_node("sub", inner).add_node("c", step_b)
        app = builder.add_edge(api.START, "sub").add_edge("sub", "c").compile()
        return events_of(app, {"x": 1, "log": []})

    same(program)


def test_astream_events_of_a_graph_invoked_inside_a_node():
    def program(api):
        _, inner = two_steps(api, name="helper")

        def call_inner(state: State) -> dict:
            return {"log": inner.invoke({"x": state["x"], "log": []})["log"]}

        builder = api.StateGraph(State).add_node("outer", call_inner)
        app = builder.add_edge(api.START, "outer").compile()
        return events_of(app, {"x": 5, "log": []})

    same(program)


def test_astream_events_of_parallel_sends():
    def program(api):
        def fan(state: State) -> list:
            return [api.Send("work", {"x": n, "log": []}) for n in range(3)]

        def work(arg: dict) -> dict:
            return {"log": [arg["x"] * 2]}

        builder = api.StateGraph(State).add_node("work", work)
        builder.add_conditional_edges(api.START, fan)
        events = events_of(builder.compile(), {"x": 0, "log": []})
        order = [(e["event"], e["name"]) for e in events]
        # parallel tasks end in any order: each task's events by what they say, as a multiset
        by_task = sorted(
            repr((e["event"], e["name"], e["tags"], e["data"], e["metadata"]["langgraph_path"]))
            for e in events
            if e["name"] == "work"
        )
        return order[0], order[-1], len(order), by_task

    same(program)


def test_astream_events_of_a_run_paused_by_interrupt_and_resumed():
    def program(api):
        def ask(state: State) -> dict:
            return {"log": [api.interrupt("name?")]}

        builder = api.StateGraph(State).add_node("ask", ask).add_edge(api.START, "ask")
        app = builder.compile(checkpointer=api.InMemorySaver())
        config = {"configurable": {"thread_id": "t"}}
        first = [(e["event"], e["name"]) for e in events_of(app, {"x": 1, "log": []}, config)]
        second = events_of(app, api.Command(resume="ann"), config)
        return first, [(e["event"], e["name"], e["tags"]) for e in second], second[-1]["data"]

    same(program)


# ---------------------------------------------------------------------------------------------
# stream_mode="checkpoints"


def masked(ids: Ids, value: Any, key: Any = None) -> Any:
    """A chunk with the ids each library makes (checkpoint ids, task ids, namespaces) by
    structure."""
    if key in ("checkpoint_id", "id") and isinstance(value, str):
        return ids(value)
    if key == "checkpoint_ns":
        return ids.ns(value)
    if key in ("checkpoint_map", "parents"):
        return {ids.ns(k): ids(v) for k, v in value.items()}
    if isinstance(value, dict):
        return {k: masked(ids, v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [masked(ids, v) for v in value]
    if isinstance(value, tuple):
        if value and all(isinstance(v, str) and ":" in v for v in value):  # a namespace
            return tuple(ids.ns(v) for v in value)
        return tuple(masked(ids, v) for v in value)
    return value


def streamed(app: Any, graph_input: Any, config: Any, **options: Any) -> list:
    """A stream's chunks, made-up ids by structure."""
    return masked(Ids(), list(app.stream(graph_input, config, **options)))


def test_checkpoints_stream_of_a_thread():
    def program(api):
        app = two_steps(api, checkpointer=api.InMemorySaver())[1]
        config = {"configurable": {"thread_id": "t"}}
        first = streamed(app, {"x": 1, "log": []}, config, stream_mode="checkpoints")
        again = streamed(app, {"x": 5, "log": ["z"]}, config, stream_mode="checkpoints")
        return first, again

    same(program)


def test_checkpoints_stream_beside_updates_and_values():
    def program(api):
        app = two_steps(api, checkpointer=api.InMemorySaver())[1]
        config = {"configurable": {"thread_id": "t"}}
        modes = ["updates", "checkpoints", "values"]
        return streamed(app, {"x": 1, "log": []}, config, stream_mode=modes)

    same(program)


def test_checkpoints_stream_without_a_checkpointer_is_empty():
    same(lambda api: list(two_steps(api)[1].stream({"x": 1, "log": []}, stream_mode="checkpoints")))


def test_checkpoints_stream_of_an_interrupt_and_its_resume():
    def program(api):
        def ask(state: State) -> dict:
            return {"log": [api.interrupt("name?")]}

        builder = api.StateGraph(State).add_node("a", step_a).add_node("ask", ask)
        builder.add_edge(api.START, "a").add_edge("a", "ask")
        app = builder.compile(checkpointer=api.InMemorySaver())
        config = {"configurable": {"thread_id": "t"}}
        paused = streamed(app, {"x": 1, "log": []}, config, stream_mode="checkpoints")
        resumed = streamed(app, api.Command(resume="ann"), config, stream_mode="checkpoints")
        return paused, resumed

    same(program)


def test_checkpoints_stream_of_a_run_that_fails_then_resumes():
    def program(api):
        calls = []

        def flaky(state: State) -> dict:
            calls.append(1)
            if len(calls) == 1:
                raise RuntimeError("down")
            return {"log": ["ok"]}

        builder = api.StateGraph(State).add_node("a", step_a).add_node("flaky", flaky)
        builder.add_edge(api.START, "a").add_edge("a", "flaky")
        app = builder.compile(checkpointer=api.InMemorySaver())
        config = {"configurable": {"thread_id": "t"}}
        seen = []
        try:
            for chunk in app.stream({"x": 1, "log": []}, config, stream_mode="checkpoints"):
                seen.append(chunk)
        except RuntimeError:
            seen.append("RuntimeError")
        resumed = list(app.stream(None, config, stream_mode="checkpoints"))
        return masked(Ids(), [seen, resumed])

    same(program)


def test_checkpoints_stream_async():
    def program(api):
        app = two_steps(api, checkpointer=api.InMemorySaver())[1]
        config = {"configurable": {"thread_id": "t"}}

        async def collect():
            return [
                c async for c in app.astream({"x": 1, "log": []}, config, stream_mode="checkpoints")
            ]

        return masked(Ids(), asyncio.run(collect()))

    same(program)


def test_astream_events_with_another_stream_mode():
    def program(api):
        app = two_steps(api)[1]
        events = events_of(app, {"x": 1, "log": []}, stream_mode="values")
        return [(e["event"], e["name"], e["data"]) for e in events if e["name"] == "LangGraph"]

    same(program)


def test_astream_events_of_a_retried_node_and_a_cached_one():
    def program(api):
        calls = []

        def flaky(state: State) -> dict:
            calls.append(1)
            if len(calls) < 2:
                raise ConnectionError("once")
            return {"log": ["ok"]}

        retry = api.RetryPolicy(initial_interval=0.01, jitter=False)
        builder = api.StateGraph(State).add_node("flaky", flaky, retry_policy=retry)
        retried = events_of(builder.add_edge(api.START, "flaky").compile(), {"x": 1, "log": []})
        builder = api.StateGraph(State).add_node("c", step_b, cache_policy=api.CachePolicy())
        app = builder.add_edge(api.START, "c").compile(cache=api.InMemoryCache())
        first, again = (events_of(app, {"x": 1, "log": []}) for _ in range(2))
        return retried, first, again

    same(program)


def test_get_graph_xray_of_a_subgraph_with_its_own_router_to_end():
    def program(api):
        def route(state) -> str:
            return "b" if state["x"] else api.END

        inner = api.StateGraph(State).add_node("a", step_a).add_node("b", step_b)
        inner.add_edge(api.START, "a").add_conditional_edges("a", route, ["b", api.END])
        inner.add_edge("b", api.END)
        builder = api.StateGraph(State).add_node("sub", inner.compile()).add_node("c", step_b)
        app = builder.add_edge(api.START, "sub").add_edge("sub", "c").compile()
        return drawn(app.get_graph(xray=True))

    same(program)


def test_get_graph_xray_of_a_subgraph_that_fans_out_from_start():
    def program(api):
        inner = api.StateGraph(State).add_node("a", step_a).add_node("b", step_b)
        inner.add_edge(api.START, "a").add_edge(api.START, "b")
        builder = api.StateGraph(State).add_node("sub", inner.compile()).add_node("c", step_b)
        app = builder.add_edge(api.START, "sub").add_edge("sub", "c").compile()
        return drawn(app.get_graph(xray=True)), drawn(app.get_graph(xray=1))

    same(program)


def test_astream_events_streaming_messages_of_a_graph_invoked_with_the_nodes_config():
    def program(api):
        def model_node(state: State) -> dict:
            return {"log": [fake_model().invoke("hello").content]}

        inner = api.StateGraph(State).add_node("model", model_node)
        inner = inner.add_edge(api.START, "model").compile(name="inner")

        def call_inner(state: State, config) -> dict:
            return {"log": inner.invoke({"x": 0, "log": []}, config)["log"]}

        builder = api.StateGraph(State).add_node("outer", call_inner)
        app = builder.add_edge(api.START, "outer").compile()
        return events_of(app, {"x": 1, "log": []}, stream_mode="messages")

    same(program)


def test_astream_events_of_a_tool_node_loop():
    def program(api):
        from langchain_core.messages import AIMessage
        from langchain_core.tools import tool

        @tool
        def double(v: int) -> int:
            """Double it."""
            return v * 2

        def agent(state) -> dict:
            if len(state["messages"]) > 1:
                return {"messages": [AIMessage("done", id="final")]}
            call = {"name": "double", "args": {"v": 21}, "id": "call-1"}
            return {"messages": [AIMessage("", tool_calls=[call], id="ask")]}

        builder = api.StateGraph(api.MessagesState).add_node("agent", agent)
        builder.add_node("tools", api.ToolNode([double]))
        builder.add_edge(api.START, "agent").add_edge("tools", "agent")
        builder.add_conditional_edges("agent", api.tools_condition)
        events = events_of(builder.compile(), {"messages": [("user", "hi")]})
        return [
            (e["event"], e["name"], e["tags"], e["parent_ids"])
            + ((e["data"].get("output"),) if e["event"] == "on_tool_end" else ())
            for e in events
        ]

    same(program)


def test_schemas_of_a_root_channel_state():
    def program(api):
        builder = api.StateGraph(Annotated[list, operator.add])
        app = builder.add_node("a", lambda s: ["a"]).add_edge(api.START, "a").compile()
        return schemas(app)

    same(program)


def test_schemas_with_managed_values_left_out():
    def program(api):
        class Steps(TypedDict):
            x: int
            remaining_steps: api.RemainingSteps

        builder = api.StateGraph(Steps).add_node("a", lambda s: {}).add_edge(api.START, "a")
        app = builder.compile()
        return app.get_output_jsonschema(), app.get_output_schema().model_json_schema()

    same(program)


def test_astream_events_of_a_pydantic_state_and_a_command():
    def program(api):
        def first(state: Model) -> Any:
            return api.Command(update={"x": state.x + 1}, goto="second")

        def second(state: Model) -> dict:
            return {"name": f"{state.name}!"}

        builder = api.StateGraph(Model).add_node("first", first, destinations=("second",))
        builder.add_node("second", second).add_edge(api.START, "first")
        events = events_of(builder.compile(), {"x": 1, "name": "n"})
        return [
            (e["event"], e["name"], e["tags"], repr(e["data"].get("input")))
            + (
                (e["data"].get("output"),)
                if e["name"] == "second" or e["name"] == "LangGraph"
                else ()
            )
            for e in events
        ]

    same(program)


def test_subgraphs_a_node_function_reads_and_one_compiled_without_checkpoints():
    def program(api):
        _, helper = two_steps(api, name="helper")
        quiet = two_steps(api, name="quiet", checkpointer=False)[1]
        run_helper = helper.invoke

        def calls_helper(state: State) -> dict:
            return {"log": helper.invoke({"x": state["x"], "log": []})["log"]}

        def calls_bound_method(state: State) -> dict:
            return {"log": run_helper({"x": 0, "log": []})["log"]}

        def calls_quiet(state: State) -> dict:
            return {"log": quiet.invoke({"x": 0, "log": []})["log"]}

        builder = (
            api.StateGraph(State).add_node("f", calls_helper).add_node("m", calls_bound_method)
        )
        builder.add_node("q", calls_quiet).add_node("plain", step_b).add_node("sub", quiet)
        builder.add_edge(api.START, "f").add_edge("f", "m").add_edge("m", "q")
        builder.add_edge("q", "plain").add_edge("plain", "sub")
        app = builder.compile()
        return [
            [(ns, graph.get_name()) for ns, graph in app.get_subgraphs()],
            {name: len(node.subgraphs) for name, node in app.nodes.items()},
            drawn(app.get_graph(xray=True)),
        ]

    same(program)


def test_config_callbacks_on_stream_ainvoke_and_with_config():
    def program(api):
        from langchain_core.callbacks import BaseCallbackHandler

        class Heard(BaseCallbackHandler):
            def __init__(self):
                self.heard = []

            def on_chain_start(self, serialized, inputs, *, run_id, parent_run_id=None, **kw):
                self.heard.append(("start", kw.get("name"), kw.get("tags"), kw.get("metadata")))

            def on_chain_end(self, outputs, *, run_id, parent_run_id=None, **kw):
                self.heard.append(("end", outputs))

            def on_chain_error(self, error, *, run_id, parent_run_id=None, **kw):
                self.heard.append(("error", type(error).__name__))

        app = two_steps(api)[1]
        seen = []
        for call in ("stream", "ainvoke", "with_config"):
            handler = Heard()
            config = {"callbacks": [handler], "tags": ["t"]}
            if call == "stream":
                list(app.stream({"x": 1, "log": []}, config))
            elif call == "ainvoke":
                asyncio.run(app.ainvoke({"x": 1, "log": []}, config))
            else:
                app.with_config(config).invoke({"x": 1, "log": []})
            seen.append(Ids().deep(handler.heard))
        return seen

    same(program)


def test_config_callbacks_hear_a_failing_node_and_graph():
    def program(api):
        from langchain_core.callbacks import BaseCallbackHandler

        heard = []

        class Heard(BaseCallbackHandler):
            def on_chain_start(self, serialized, inputs, *, run_id, parent_run_id=None, **kw):
                heard.append(("start", kw.get("name")))

            def on_chain_end(self, outputs, *, run_id, parent_run_id=None, **kw):
                heard.append(("end", outputs))

            def on_chain_error(self, error, *, run_id, parent_run_id=None, **kw):
                heard.append(("error", type(error).__name__, str(error)))

        def boom(state: State) -> dict:
            raise KeyError("gone")

        builder = api.StateGraph(State).add_node("a", step_a).add_node("boom", boom)
        app = builder.add_edge(api.START, "a").add_edge("a", "boom").compile()
        try:
            app.invoke({"x": 1, "log": []}, {"callbacks": [Heard()]})
        except KeyError:
            heard.append("the KeyError reached the caller")
        return heard

    same(program)


def test_context_jsonschema_and_aget_graph():
    def program(api):
        class Context(TypedDict):
            user: str

        @dataclasses.dataclass
        class Settings:
            depth: int = 2

        seen = []
        for context_schema in (None, Context, Settings, Model):
            builder = api.StateGraph(State, context_schema=context_schema)
            app = builder.add_node("a", step_a).add_edge(api.START, "a").compile()
            seen.append(app.get_context_jsonschema())
        app = nested(api)[2]
        seen.append(drawn(asyncio.run(app.aget_graph(xray=True))))
        return seen

    same(program)


# ---------------------------------------------------------------------------------------------
# the rest of a LangChain Runnable's methods


def log_shape(patches: list) -> list:
    """`astream_log` patches by their ops, run ids and times left out (each run's own)."""
    ids = Ids()
    out = []
    for patch in patches:
        for op in patch.ops:
            value = op.get("value")
            if isinstance(value, dict) and "id" in value:
                value = {k: value.get(k) for k in ("name", "type", "tags", "streamed_output")}
            elif op["path"].endswith("_time"):
                value = "<time>"
            out.append((op["op"], op["path"], ids.text(repr(value))))
    return out


def test_astream_log_of_two_nodes_and_its_filters():
    def program(api):
        _, app = two_steps(api)

        async def go():
            patches = [p async for p in app.astream_log({"x": 1, "log": []})]
            whole = None
            async for run_log in app.astream_log(
                {"x": 1, "log": []}, diff=False, include_names=["b"]
            ):
                whole = run_log
            state = whole.state
            return log_shape(patches), state["final_output"], sorted(state["logs"])

        return asyncio.run(go())

    same(program)


def test_batch_as_completed_and_its_async_form():
    def program(api):
        _, app = two_steps(api)
        inputs = [{"x": n, "log": []} for n in range(4)]

        def failing(state: State) -> dict:
            if state["x"] == 2:
                raise ValueError("two")
            return {"log": ["ok"]}

        builder = api.StateGraph(State).add_node("f", failing).add_edge(api.START, "f")
        fails = builder.compile()

        async def go():
            done = [pair async for pair in app.abatch_as_completed(inputs)]
            caught = [pair async for pair in fails.abatch_as_completed(
                inputs, return_exceptions=True)]  # fmt: skip
            return sorted(done, key=repr), sorted(map(repr, caught))

        sync = sorted(app.batch_as_completed(inputs, {"max_concurrency": 2}), key=repr)
        caught = sorted(map(repr, fails.batch_as_completed(inputs, return_exceptions=True)))
        try:
            list(fails.batch_as_completed(inputs))
        except ValueError as error:
            raised = str(error)
        return sync, caught, asyncio.run(go()), list(app.batch_as_completed([])), raised

    same(program)


def test_langchains_composition_methods_run_the_graph():
    def program(api):
        _, app = two_steps(api)
        heard = []
        listened = app.with_listeners(
            on_start=lambda run: heard.append(("start", run.name)),
            on_end=lambda run: heard.append(("end", run.name, run.outputs)),
        )
        given = {"x": 1, "log": []}
        out = [
            type(app.with_retry(stop_after_attempt=2)).__name__,
            app.with_retry(stop_after_attempt=2).invoke(given),
            app.pick("x").invoke(given),
            app.pick(["log"]).invoke(given),
            app.assign(y=lambda s: s["x"] * 10).invoke(given),
            listened.invoke(given),
            app.with_types(input_type=dict).invoke(given),
            app.with_fallbacks([app]).invoke(given),
            app.pipe(lambda s: s["x"]).invoke(given),
            app.map().invoke([given, {"x": 5, "log": []}]),
            app.bind(stream_mode="updates").invoke(given),
            list(app.transform(iter([given]))),
            asyncio.run(app.pick("x").ainvoke(given)),
        ]
        return out, heard

    same(program)


def test_node_views_show_a_nodes_metadata():
    def program(api):
        builder = api.StateGraph(State).add_node("a", step_a, metadata={"owner": "ada"})
        app = builder.add_node("b", step_b).add_edge(api.START, "a").add_edge("a", "b").compile()
        return {name: node.metadata for name, node in app.nodes.items()}

    same(program)
