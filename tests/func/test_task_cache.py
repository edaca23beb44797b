"""A `@task` call with a cache policy is cached as a node is, through `engine.core.caching`:
the same namespace shape (`__pregel_ns_writes`, its function's module and name, its name),
the same entry (writes and routes), kept when its task is done, served before it runs."""

import pytest

from nbgraph.engine.core.caching import InMemoryCache
from nbgraph.func import entrypoint, task
from nbgraph.policies import CachePolicy

calls: list[int] = []


@task(cache_policy=CachePolicy())
def double(n: int) -> int:
    calls.append(n)
    return 2 * n


def test_a_task_call_is_kept_and_served_by_the_node_cache_path():
    cache = InMemoryCache()

    @entrypoint(cache=cache)
    def main(n: int) -> int:
        return double(n).result() + double(n + 1).result()

    calls.clear()
    assert main.invoke(3) == 14
    assert main.invoke(3) == 14
    assert calls == [3, 4]  # the second run's calls came from the cache
    namespaces = list(cache._entries)
    assert namespaces == [("__pregel_ns_writes", f"{__name__}.double", "double")]
    (writes, routes), _ = next(iter(cache._entries[namespaces[0]].values()))
    assert routes == [] and writes[0][0] == "calls"


def test_a_task_calls_key_func_must_return_str_or_bytes():
    @task(cache_policy=CachePolicy(key_func=lambda n: n))
    def same(n: int) -> int:
        return n

    @entrypoint(cache=InMemoryCache())
    def main(n: int) -> int:
        return same(n).result()

    with pytest.raises(TypeError, match=r"key_func of task 'same' returned 1 \(int\)"):
        main.invoke(1)
