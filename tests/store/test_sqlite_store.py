"""`SqliteStore`'s semantic index: ranked as `InMemoryStore` ranks (the same `VectorIndex`),
with each item's vectors kept in the file, so a store opened again ranks without embedding
again. (LangGraph's `SqliteStore` ranks with the sqlite-vec extension, which is not installed
here: the differential programs of tests/parity/test_langgraph_sqlite_store.py leave the
index out.)"""

import time

from nbgraph.store.memory import InMemoryStore
from nbgraph.store.sqlite import SqliteStore

WORDS = ("cat", "dog", "fish")


def embed(calls):
    def vectors(texts):
        calls.append(list(texts))
        return [[float(t.count(w)) for w in WORDS] + [len(t) / 100] for t in texts]

    return vectors


def ranked(items):
    return [(i.key, None if i.score is None else round(i.score, 9)) for i in items]


def fill(store):
    store.put(("pets",), "c", {"text": "a cat and a cat"})
    store.put(("pets",), "d", {"text": "one dog"})
    store.put(("pets",), "f", {"text": "fish, dog and cat"})
    store.put(("pets",), "skip", {"text": "cat"}, index=False)


def test_a_query_ranks_as_in_memory_and_a_reopened_file_needs_no_embedding(tmp_path):
    path = str(tmp_path / "store.db")
    memory_calls, file_calls = [], []
    memory = InMemoryStore(index={"embed": embed(memory_calls), "dims": 4, "fields": ["text"]})
    fill(memory)
    expected = ranked(memory.search(("pets",), query="cat"))
    config = {"embed": embed(file_calls), "dims": 4, "fields": ["text"]}
    with SqliteStore.from_conn_string(path, index=config) as store:
        fill(store)
        assert ranked(store.search(("pets",), query="cat")) == expected
    file_calls.clear()
    with SqliteStore.from_conn_string(path, index=config) as again:
        assert ranked(again.search(("pets",), query="dog", limit=2)) == ranked(
            memory.search(("pets",), query="dog", limit=2)
        )
        assert file_calls == [["dog"]]  # (the query only: the items' vectors are in the file)


def test_a_deleted_or_expired_item_takes_its_vectors_with_it(tmp_path):
    calls = []
    config = {"embed": embed(calls), "dims": 4, "fields": ["text"]}
    with SqliteStore.from_conn_string(str(tmp_path / "s.db"), index=config) as store:
        fill(store)
        store.put(("pets",), "brief", {"text": "cat"}, ttl=0.0001)
        store.delete(("pets",), "c")
        time.sleep(0.05)
        assert store.sweep_ttl() == 1
        left = store.conn.execute("SELECT DISTINCT key FROM nbgraph_store_vectors").fetchall()
        assert sorted(k for (k,) in left) == ["d", "f"]


def test_wrong_arguments_name_the_store_and_what_it_takes():
    import pytest

    from nbgraph.errors import InvalidArgumentError

    cases = [
        ({"ttl": {"bad": 1}}, r"SqliteStore\(ttl=\{'bad': 1\}\): the keys are"),
        ({"index": {"dims": 2}}, r"SqliteStore\(index=...\): no 'embed'"),
        ({"deserializer": len}, r"SqliteStore\(deserializer=.*expected deserializer=None"),
    ]
    for options, message in cases:
        with pytest.raises(InvalidArgumentError, match=message):
            SqliteStore(":memory:", **options)
    with pytest.raises(InvalidArgumentError, match=r"an sqlite3\.Connection, a file path"):
        SqliteStore(5)
