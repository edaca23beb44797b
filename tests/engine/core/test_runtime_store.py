"""Runtime context and the store in nbgraph's own terms: what the record keeps (`run.context`,
`run.store_ops`), run files, the views, and the store's errors. The behaviour shared with
LangGraph is checked against it in tests/parity/test_langgraph_context.py."""

import asyncio
import dataclasses
import json
import threading
from typing import TypedDict

import pytest

from nbgraph import START, Run, Runtime, StateGraph, get_config, get_runtime
from nbgraph.record.files.serialize import RunFileError
from nbgraph.store import InvalidNamespaceError
from nbgraph.store.memory import InMemoryStore

EVIL = "<img src=x onerror=alert(1)>"


@dataclasses.dataclass
class Ctx:
    user: str = "anon"


class S(TypedDict):
    n: int


def remembering(state: S, runtime: Runtime[Ctx], *, store):
    namespace = ("memories", runtime.context.user)
    store.put(namespace, "last", {"n": state["n"]})
    store.get(namespace, "last")
    store.search(("memories",), filter={"n": state["n"]})
    store.delete(namespace, "gone")
    store.list_namespaces(prefix=("memories",))
    return {"n": state["n"] + 1}


def memory_app(store=None):
    graph = StateGraph(S, context_schema=Ctx).add_node("remember", remembering)
    return graph.add_edge(START, "remember").compile(store=store or InMemoryStore())


def test_the_record_keeps_the_context_and_every_store_call():
    run = memory_app().run({"n": 1}, context={"user": "ada"})
    assert run.context == Ctx(user="ada")
    ops = run.store_ops
    assert list(ops.columns) == ["step", "node", "op", "namespace", "key", "value"]
    assert ops.op.tolist() == ["put", "get", "search", "delete", "list_namespaces"]
    assert ops.iloc[0].to_dict() == {
        "step": 1, "node": "remember", "op": "put",
        "namespace": ("memories", "ada"), "key": "last", "value": {"n": 1},
    }  # fmt: skip
    assert ops.value.tolist()[1:] == [{"n": 1}, [("last", {"n": 1})], None, [("memories", "ada")]]


def test_a_run_without_context_or_store():
    app = StateGraph(S).add_node("a", lambda s: {"n": 2}).add_edge(START, "a").compile()
    run = app.run({"n": 1})
    assert run.context is None and run.store_ops.empty
    seen = []
    graph = StateGraph(S).add_node("a", lambda s, runtime: seen.append(runtime.store))
    graph.add_edge(START, "a").compile().invoke({"n": 1})
    assert seen == [None]


def test_the_record_keeps_a_copy_of_what_was_written():
    def node(state, *, store):
        value = {"items": [1]}
        store.put(("x",), "k", value)
        value["items"].append(2)  # changed after the call: the record keeps what was put
        return None

    app = StateGraph(S).add_node("a", node).add_edge(START, "a").compile(store=InMemoryStore())
    assert app.run({"n": 1}).store_ops.value.tolist() == [{"items": [1]}]


def test_run_files_keep_the_context_and_store_calls(tmp_path):
    run = memory_app().run({"n": 1}, context=Ctx(user="bob"))
    back = Run.from_json(run.to_json(), models=[Ctx])
    assert back.context == Ctx(user="bob")
    assert back.store_ops.equals(run.store_ops)
    path = run.save(tmp_path / "run.json")
    loaded = Run.load(path, models=[Ctx])
    assert loaded.context == run.context and loaded.store_ops.equals(run.store_ops)


def test_an_older_run_file_without_them_loads_and_a_damaged_one_is_refused():
    document = json.loads(memory_app().run({"n": 1}, context={"user": "c"}).to_json())
    older = {**document, "run": {k: v for k, v in document["run"].items()
                                 if k not in ("context", "store_ops")}}  # fmt: skip
    run = Run.from_json(json.dumps(older))
    assert run.context is None and run.store_ops.empty
    document["run"]["store_ops"][0][3] = "memories"  # a namespace must be a list of labels
    with pytest.raises(RunFileError, match=r"store_ops.*should be a list"):
        Run.from_json(json.dumps(document))


def test_views_show_the_context_and_store_calls_escaped():
    pytest.importorskip("ipywidgets")
    from nbgraph.views.drawings.display import run_html

    run = memory_app().run({"n": 1}, context={"user": EVIL.replace(".", "")})
    html = run_html(run)
    assert "context: Ctx(user=" in html and "store calls: 5" in html
    assert "<img" not in html and "&lt;img" in html
    inspector = run.inspect()
    inspector.go(1)
    assert "store calls" in inspector.effects.value and "<img" not in inspector.effects.value
    assert "context: Ctx" in inspector.step_label.value
    assert "<img" not in inspector.step_label.value


def test_get_config_names_its_own_task_when_nodes_run_in_parallel():
    seen, barrier = {}, threading.Barrier(2, timeout=5)

    def node(state):
        barrier.wait()  # both run at once, on the thread pool
        config = get_config()
        seen[config["metadata"]["langgraph_node"]] = get_runtime().context
        return None

    graph = StateGraph(S).add_node("a", node).add_node("b", node)
    graph.add_edge(START, "a").add_edge(START, "b").compile().invoke({"n": 0}, context="ctx")
    assert seen == {"a": "ctx", "b": "ctx"}


def test_async_store_calls_are_recorded():
    async def node(state, runtime: Runtime):
        await runtime.store.aput(("a",), "k", {"v": 1})
        item = await runtime.store.aget(("a",), "k")
        await runtime.store.asearch(("a",))
        await runtime.store.adelete(("a",), "k")
        return {"n": item.value["v"]}

    store = InMemoryStore()
    app = StateGraph(S).add_node("a", node).add_edge(START, "a").compile(store=store)
    assert asyncio.run(app.ainvoke({"n": 0})) == {"n": 1}
    assert app.last_run.store_ops.op.tolist() == ["put", "get", "search", "delete"]
    assert store.get(("a",), "k") is None


def test_a_node_sees_the_store_as_the_compiled_one():
    store, seen = InMemoryStore(), []

    def node(state, runtime: Runtime):
        seen.extend([isinstance(runtime.store, InMemoryStore), repr(runtime.store)])

    StateGraph(S).add_node("a", node).add_edge(START, "a").compile(store=store).invoke({"n": 0})
    assert seen == [True, repr(store)]


def test_store_errors_name_what_is_wrong():
    store = InMemoryStore()
    with pytest.raises(InvalidNamespaceError, match="periods"):
        store.put(("a.b",), "k", {"v": 1})
    with pytest.raises(InvalidNamespaceError, match="tuple of string labels"):
        store.put("memories", "k", {"v": 1})
    with pytest.raises(TypeError, match="must be a dict, got str"):
        store.put(("a",), "k", "text")
    with pytest.raises(ValueError, match="no 'embed'"):  # (LangGraph's: a ValueError too)
        InMemoryStore(index={"dims": 3})
    with pytest.raises(ValueError, match="default_ttl"):
        InMemoryStore(ttl={"default_ttl": "soon"})
    with pytest.raises(ValueError, match="a TTL is a number of minutes"):
        store.put(("a",), "k", {"v": 1}, ttl=-1)
    store.put(("a",), "k", {"v": 1})
    store.put(("a",), "k", None)  # LangGraph's way to delete
    assert store.get(("a",), "k") is None and store.list_namespaces() == [("a",)]


def test_a_bad_context_names_the_schema():
    with pytest.raises(TypeError) as caught:
        memory_app().invoke({"n": 0}, context={"nobody": 1})
    assert "making the run's context Ctx" in str(caught.value.__notes__)


def test_remerge_calls_a_router_with_its_runtime_and_config_again():
    from typing import Annotated

    class Log(TypedDict):
        log: Annotated[list, "append"]

    seen = []

    def enough(state, runtime: Runtime, config):
        seen.append((runtime.context, config["metadata"]["langgraph_node"]))
        return "c" if len(state["log"]) >= runtime.context["at"] else "__end__"

    graph = StateGraph(Log).add_node("a", lambda s: {"log": ["a"]})
    graph.add_node("b", lambda s: {"log": ["b"]}).add_node("c", lambda s: {"log": ["c"]})
    graph.add_edge(START, "a").add_edge("a", "b").add_conditional_edges("b", enough)
    run = graph.compile().run({"log": ["in"]}, context={"at": 2})
    new = run.remerge({"log": "overwrite"})
    assert new.routing_changes.to_dict("records") == [
        {"step": 2, "node": "b", "recorded": ["c"], "would_route": ["__end__"]}
    ]
    assert seen[0] == seen[-1] == ({"at": 2}, "b")


def test_a_parameter_nothing_fills_is_named_with_what_is_filled():
    def node(state, cfg):
        return None

    app = StateGraph(S).add_node("a", node).add_edge(START, "a").compile()
    with pytest.raises(TypeError, match="cfg") as caught:
        app.invoke({"n": 0})
    notes = "\n".join(caught.value.__notes__)
    assert "nothing fills parameter 'cfg' of 'node'" in notes
    assert "while running node 'a' at step 1" in notes
