"""Differential programs: the store's semantic index and its TTLs, as LangGraph's.

The index programs run on `langgraph.store.memory.InMemoryStore` and nbgraph's
`InMemoryStore`. LangGraph 1.2's `InMemoryStore` has no TTLs (it refuses `ttl=`); its store
with TTLs is `langgraph.store.sqlite.SqliteStore`, so the TTL programs run on that one
(`ttl_store`) against nbgraph's `InMemoryStore(ttl=...)`: the same `TTLConfig`, `put(ttl=)`,
`sweep_ttl()` and sweeper. Scores are rounded to 9 places (LangGraph sums with numpy).
"""

# No `from __future__ import annotations`: states are defined with `api.*` names in their
# annotations, which both engines read at run time.

import asyncio
import contextlib
import math
import time
from typing import TypedDict

import pytest

from tests.support.harness import Programs, python_sqlite_datetimes

pytestmark = pytest.mark.langgraph

PROGRAMS = Programs()
program = PROGRAMS.add
test_same_as_langgraph = PROGRAMS.test(raises=True)


WORDS = ("cat", "dog", "fish", "tree", "car")


def word_vector(text: str) -> list[float]:
    """A text's vector: how often each of `WORDS` occurs in it, and 0.1 for its length."""
    lowered = text.lower()
    return [float(lowered.count(word)) for word in WORDS] + [len(text) / 100]


def recording_embed(calls: list):
    """A user's embedding function that also keeps the lists of texts it was given."""

    def embed(texts):
        calls.append(list(texts))
        return [word_vector(t) for t in texts]

    return embed


def found(items) -> list:
    return [
        (tuple(i.namespace), i.key, None if i.score is None else round(i.score, 9)) for i in items
    ]


def index_store(api, calls: list, **index):
    return api.InMemoryStore(index={"embed": recording_embed(calls), "dims": 6, **index})


# ---------------------------------------------------------------------------------------------
# Semantic search


@program
def query_ranks_by_cosine_similarity(api):
    calls: list = []
    store = index_store(api, calls, fields=["text"])
    store.put(("docs",), "1", {"text": "a cat and a dog"})
    store.put(("docs",), "2", {"text": "a dog, a dog, a fish"})
    store.put(("docs",), "3", {"text": "trees and cars"})
    store.put(("docs", "sub"), "4", {"text": "cat cat cat"})
    return (
        found(store.search(("docs",), query="cat")),
        found(store.search(("docs",), query="dog fish", limit=2)),
        calls,
    )


@program
def the_whole_value_is_embedded_by_default(api):
    calls: list = []
    store = index_store(api, calls)
    store.put(("m",), "a", {"text": "cat", "tags": ["dog", "dog"], "n": 1})
    store.put(("m",), "b", {"zzz": "fish"})
    return found(store.search(("m",), query="dog")), calls


@program
def a_path_with_a_wildcard_embeds_each_text(api):
    calls: list = []
    store = index_store(api, calls, fields=["title", "sections[*].body"])
    store.put(("d",), "x", {"title": "car", "sections": [{"body": "cat"}, {"body": "fish"}]})
    store.put(("d",), "y", {"title": "dog", "sections": [{"body": "tree"}]})
    store.put(("d",), "z", {"title": "nothing here"})
    return (
        found(store.search(("d",), query="fish")),
        found(store.search(("d",), query="tree dog")),
        calls,
    )


@program
def index_false_and_index_fields_per_put(api):
    calls: list = []
    store = index_store(api, calls, fields=["text"])
    store.put(("n",), "plain", {"text": "cat"}, index=False)
    store.put(("n",), "other", {"text": "cat", "note": "fish fish"}, index=["note"])
    store.put(("n",), "text", {"text": "cat"})
    return (
        found(store.search(("n",), query="cat")),
        found(store.search(("n",), query="fish")),
        calls,
    )


@program
def unembedded_items_fill_after_the_ranked_ones(api):
    calls: list = []
    store = index_store(api, calls, fields=["text"])
    store.put(("u",), "none1", {"other": "cat"})
    store.put(("u",), "ranked", {"text": "dog"})
    store.put(("u",), "none2", {"other": "dog"})
    return (
        found(store.search(("u",), query="dog", limit=3)),
        found(store.search(("u",), query="dog", limit=2)),
        found(store.search(("u",), query="dog", offset=1)),
    )


@program
def filter_limit_and_offset_with_a_query(api):
    store = index_store(api, [], fields=["text"])
    for i, text in enumerate(["cat", "cat dog", "dog", "fish cat", "tree"]):
        store.put(("f",), f"k{i}", {"text": text, "kind": "even" if i % 2 == 0 else "odd"})
    return (
        found(store.search(("f",), query="cat", filter={"kind": "even"})),
        found(store.search(("f",), query="cat", limit=2, offset=1)),
        found(store.search(("f",), filter={"kind": "odd"})),
        found(store.search(("f",), query="cat", filter={"kind": "none"})),
    )


@program
def a_query_without_an_index_does_not_rank(api):
    store = api.InMemoryStore()
    store.put(("q",), "b", {"text": "dog"}, index=["text"])
    store.put(("q",), "a", {"text": "cat"})
    return found(store.search(("q",), query="cat"))


@program
def a_langchain_embeddings_object(api):
    from langchain_core.embeddings import Embeddings

    class Counting(Embeddings):
        def __init__(self):
            self.documents, self.queries = [], []

        def embed_documents(self, texts):
            self.documents.append(list(texts))
            return [word_vector(t) for t in texts]

        def embed_query(self, text):
            self.queries.append(text)
            return word_vector(text + " car")

    model = Counting()
    store = api.InMemoryStore(index={"embed": model, "dims": 6, "fields": ["text"]})
    store.put(("e",), "1", {"text": "car wash"})
    store.put(("e",), "2", {"text": "cat"})
    return found(store.search(("e",), query="cat")), model.documents, model.queries


@program
def an_async_embedding_function_with_aput_and_asearch(api):
    calls: list = []

    async def embed(texts):
        calls.append(list(texts))
        return [word_vector(t) for t in texts]

    async def main():
        store = api.InMemoryStore(index={"embed": embed, "dims": 6, "fields": ["text"]})
        await store.aput(("a",), "1", {"text": "dog dog"})
        await store.aput(("a",), "2", {"text": "fish"})
        ranked = found(await store.asearch(("a",), query="fish"))
        try:
            store.search(("a",), query="fish")
            sync = "ok"
        except Exception as error:
            sync = type(error).__name__
        return ranked, sync, calls

    return asyncio.run(main())


@program
def delete_and_a_later_put_without_index(api):
    calls: list = []
    store = index_store(api, calls, fields=["text"])
    store.put(("r",), "1", {"text": "cat"})
    store.put(("r",), "2", {"text": "dog"})
    store.put(("r",), "1", {"text": "fish"}, index=False)  # (its vectors stay)
    store.delete(("r",), "2")
    store.put(("r",), "2", {"text": "dog"}, index=False)  # (deleted: none left)
    return found(store.search(("r",), query="cat")), [i.value for i in store.search(("r",))]


@program
def semantic_search_from_a_node(api):
    class State(TypedDict):
        question: str
        answer: list

    def recall(state, runtime: api.Runtime):
        items = runtime.store.search(("facts",), query=state["question"], limit=1)
        return {"answer": [(item.key, round(item.score, 9)) for item in items]}

    store = index_store(api, [], fields=["fact"])
    store.put(("facts",), "pets", {"fact": "the cat sleeps on the dog"})
    store.put(("facts",), "garden", {"fact": "a tree fell on the car"})
    builder = api.StateGraph(State)
    builder.add_node("recall", recall)
    builder.add_edge(api.START, "recall")
    app = builder.compile(store=store)
    return app.invoke({"question": "where is the car?", "answer": []})


@program
def scores_are_floats_between_minus_one_and_one(api):
    store = api.InMemoryStore(index={"embed": lambda ts: [[1.0, -2.0, 0.5] for _ in ts],
                                     "dims": 3})  # fmt: skip
    store.put(("s",), "k", {"v": 1})
    (item,) = store.search(("s",), query="anything")
    return (
        type(item.score).__name__,
        math.isclose(item.score, 1.0),
        item.dict()["score"] == (item.score),
    )


# ---------------------------------------------------------------------------------------------
# TTLs: LangGraph's SqliteStore against nbgraph's InMemoryStore


@contextlib.contextmanager
def ttl_store(api, ttl=None):
    """A store with TTLs: LangGraph's `SqliteStore` (in memory), or nbgraph's `InMemoryStore`."""
    if api.lib == "langgraph":
        from langgraph.store.sqlite import SqliteStore

        with python_sqlite_datetimes(), SqliteStore.from_conn_string(":memory:", ttl=ttl) as store:
            store.setup()
            yield store
    else:
        yield api.InMemoryStore(ttl=ttl)


def keys(store, prefix) -> list:
    return sorted(item.key for item in store.search(prefix, refresh_ttl=False))


@program
def default_ttl_and_sweep(api):
    with ttl_store(api, {"default_ttl": 0.01}) as store:  # (0.6 s)
        store.put(("t",), "short", {"v": 1})
        store.put(("t",), "never", {"v": 2}, ttl=None)
        store.put(("t",), "long", {"v": 3}, ttl=10)
        before = store.sweep_ttl()
        time.sleep(2.2)  # (LangGraph's SQLite store compares times to the second)
        swept = store.sweep_ttl()
        return before, swept, keys(store, ("t",)), store.get(("t",), "short"), store.supports_ttl


@program
def a_ttl_per_put_without_a_config(api):
    with ttl_store(api) as store:
        store.put(("p",), "brief", {"v": 1}, ttl=0.01)
        store.put(("p",), "kept", {"v": 2})
        time.sleep(2.2)
        return store.sweep_ttl(), keys(store, ("p",)), store.ttl_config


@program
def refresh_on_read_keeps_an_item(api):
    with ttl_store(api, {"default_ttl": 0.05, "refresh_on_read": True}) as store:  # (3 s)
        for key in ("read", "unread", "read_no_refresh"):
            store.put(("r",), key, {"k": key})
        time.sleep(2)
        store.get(("r",), "read")
        store.get(("r",), "read_no_refresh", refresh_ttl=False)
        time.sleep(2)
        return store.sweep_ttl(), keys(store, ("r",))


@program
def the_ttl_sweeper(api):
    with ttl_store(api) as plain:
        done = plain.start_ttl_sweeper().done()
    with ttl_store(api, {"default_ttl": 1, "sweep_interval_minutes": 1}) as store:
        future = store.start_ttl_sweeper()
        running = future.done()
        stopped = store.stop_ttl_sweeper(timeout=5)
        return done, running, stopped, store.stop_ttl_sweeper()
