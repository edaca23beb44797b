"""The store's index and TTLs: bad input named, and what nbgraph adds (the behaviour
LangGraph has is compared with it in tests/parity/test_langgraph_store_index.py)."""

import time

import pytest

from nbgraph.store import InMemoryStore
from nbgraph.store.paths import path_tokens, texts_at
from nbgraph.store.vectors import cosine_scores


def embed(texts):
    return [[1.0, float(len(text))] for text in texts]


@pytest.mark.parametrize(
    ("index", "named"),
    [
        ("text", "takes a dict"),
        ({"dims": 2}, "no 'embed'"),
        ({"embed": embed, "field": ["text"]}, "unknown keys \\['field'\\]"),
        ({"embed": embed, "fields": "text"}, "list of paths"),
        ({"embed": 42}, "function from a list of texts"),
    ],
)
def test_a_bad_index_config_is_named(index, named):
    with pytest.raises(ValueError, match=named):
        InMemoryStore(index=index)


def test_an_embedder_that_returns_too_few_vectors_stores_nothing():
    store = InMemoryStore(index={"embed": lambda texts: [[1.0]], "fields": ["a", "b"]})
    with pytest.raises(ValueError, match="returned 1 vectors for 2 texts"):
        store.put(("n",), "k", {"a": "x", "b": "y"})
    assert store.get(("n",), "k") is None


def test_a_bad_index_of_a_put_is_named():
    store = InMemoryStore(index={"embed": embed})
    with pytest.raises(ValueError, match="takes False, None or a list"):
        store.put(("n",), "k", {"a": "x"}, index="a")


def test_the_same_text_at_two_paths_is_embedded_once_for_both():
    calls = []

    def counting(texts):
        calls.append(list(texts))
        return embed(texts)

    store = InMemoryStore(index={"embed": counting, "fields": ["a", "b"]})
    store.put(("n",), "k", {"a": "same", "b": "same"})
    (found,) = store.search(("n",), query="same")
    assert calls == [["same"], ["same"]] and found.score == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("ttl", "named"),
    [
        ([1], "takes a dict"),
        ({"default": 1}, "the keys are"),
        ({"refresh_on_read": 1}, "refresh_on_read a bool"),
        ({"default_ttl": 0}, "number of minutes > 0"),
        ({"default_ttl": True}, "the keys are"),
    ],
)
def test_a_bad_ttl_config_is_named(ttl, named):
    with pytest.raises(ValueError, match=named):
        InMemoryStore(ttl=ttl)


def test_a_put_again_keeps_an_item_from_the_sweep():
    store = InMemoryStore(ttl={"default_ttl": 0.001})  # (60 ms)
    store.put(("t",), "k", {"v": 1})
    time.sleep(0.1)
    store.put(("t",), "k", {"v": 2})  # its time starts again
    assert store.sweep_ttl() == 0 and store.get(("t",), "k").value == {"v": 2}
    store.put(("t",), "k", {"v": 3}, ttl=None)  # no TTL any more
    time.sleep(0.1)
    assert store.sweep_ttl() == 0


def test_the_sweeper_deletes_expired_items_on_its_own():
    store = InMemoryStore(ttl={"default_ttl": 0.0005, "sweep_interval_minutes": 0.001})
    store.put(("t",), "k", {"v": 1})
    future = store.start_ttl_sweeper()
    deadline = time.monotonic() + 10
    while store.get(("t",), "k") is not None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert store.get(("t",), "k") is None
    assert store.stop_ttl_sweeper(timeout=5) and future.done()


def test_paths_and_scores():
    assert path_tokens("a[0].{b,c}") == ["a", "[0]", "{b,c}"]
    assert texts_at({"a": [{"b": "x", "c": None}]}, "a[0].{b,c}") == ["x"]
    assert texts_at({"a": {"b": 1.5}}, "a.*") == ["1.5"]
    assert cosine_scores([0.0, 0.0], [[1.0, 0.0]]) == [0.0]
