"""LangGraph's functional API on nbgraph's engine: `@entrypoint` and `@task`.

An entrypoint is a graph of one node (its function) over `EntrypointState`
(`nbgraph.engine.core.calls`), compiled as any `StateGraph` is: `invoke`, `stream`, their
async forms, `get_state`, `run()` and `last_run` are the compiled graph's own. A `@task`
called inside it runs as a task of the same step on the one task path, and returns a future.

>>> from nbgraph.func import entrypoint, task
>>> @task
... def double(x):
...     return 2 * x
>>> @entrypoint()
... def doubled(numbers):
...     return [f.result() for f in [double(n) for n in numbers]]
>>> doubled.invoke([1, 2, 3])
[2, 4, 6]
>>> [t.node for t in doubled.last_run.log.steps[-1].tasks]
['doubled', 'double', 'double', 'double']
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from nbgraph.engine.core.calls import CallFuture, EntrypointState, call_task
from nbgraph.engine.core.node_context.injection import injections
from nbgraph.errors import GraphBuildError, wrong_argument
from nbgraph.notebook.graph import StateGraph
from nbgraph.policies import policy_problems
from nbgraph.primitives import END, START

__all__ = ["entrypoint", "task"]

V = TypeVar("V")
S = TypeVar("S")


class _TaskFunction:
    """A function decorated with `@task`: called inside a running entrypoint (or node), it
    starts a task call and returns its `CallFuture`."""

    def __init__(self, fn: Callable[..., Any], name: str, retry: Any, cache: Any) -> None:
        self.func, self.name, self.retry_policy, self.cache_policy = fn, name, retry, cache
        functools.update_wrapper(self, fn)

    def __repr__(self) -> str:
        return f"<task {self.name!r}>"

    def __call__(self, *args: Any, **kwargs: Any) -> CallFuture:
        policies = (self.retry_policy, self.cache_policy)
        return call_task(self.name, self.func, args, kwargs, policies)


def task(
    __func: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    retry_policy: Any = None,
    cache_policy: Any = None,
) -> Any:
    """Make a function a task: each call inside an entrypoint runs as a task of the run
    (recorded, retried as `retry_policy` says, served from the entrypoint's cache as
    `cache_policy` says) and returns a future (`.result()`, or `await` it).

    Args:
        name: the task's name (default: the function's).
        retry_policy: a `RetryPolicy` (or a list of them).
        cache_policy: a `CachePolicy`; its `key_func` takes the call's arguments.
    """

    def decorate(fn: Callable[..., Any]) -> _TaskFunction:
        if not callable(fn):
            raise wrong_argument("task(function)", "a function to make a task", fn)
        named = name or getattr(fn, "__name__", repr(fn))
        problems = policy_problems(f"Task {named!r}", retry_policy, cache_policy)
        if problems:
            raise GraphBuildError(problems)
        return _TaskFunction(fn, named, retry_policy, cache_policy)

    return decorate(__func) if __func is not None else decorate


@dataclasses.dataclass
class _Final(Generic[V, S]):
    """`entrypoint.final(value=..., save=...)`: return `value`, save `save` (what the next
    run on the thread gets as `previous`)."""

    value: V
    save: S


class entrypoint:
    """Make a function of one input an entrypoint: a compiled app (`invoke`, `stream`,
    `get_state`, `run()`, ...) whose one node is the function.

    The function may also ask, by name, for `previous` (what the last run on the thread
    saved), `config`, `runtime`, `store` and `writer`, as LangGraph's does.

    Args:
        checkpointer: a saver, to keep threads (and `previous`, pauses and resumes).
        store: a store the function and its tasks reach as `store` / `runtime.store`.
        cache: where tasks with a `cache_policy` keep their results (`InMemoryCache()`).
        context_schema: the type of `invoke(..., context=...)`.
        retry_policy, cache_policy: the entrypoint function's own policies.
    """

    final = _Final

    def __init__(
        self,
        checkpointer: Any = None,
        store: Any = None,
        cache: Any = None,
        context_schema: Any = None,
        cache_policy: Any = None,
        retry_policy: Any = None,
        **legacy: Any,
    ) -> None:
        if "config_schema" in legacy and context_schema is None:
            context_schema = legacy.pop("config_schema")
        if legacy:
            raise TypeError(f"entrypoint() got unexpected arguments {sorted(legacy)}")
        self.checkpointer, self.store, self.cache = checkpointer, store, cache
        self.context_schema = context_schema
        self.retry_policy, self.cache_policy = retry_policy, cache_policy

    def __call__(self, fn: Callable[..., Any]) -> Any:
        """The compiled app of `fn` (a `CompiledStateGraph` of one node, named as `fn`)."""
        name = fn.__name__
        graph = StateGraph(EntrypointState, context_schema=self.context_schema)
        graph.add_node(
            name,
            _node_of(fn),
            retry_policy=self.retry_policy,
            cache_policy=self.cache_policy,
        )
        graph.add_edge(START, name).add_edge(name, END)
        return graph.compile(checkpointer=self.checkpointer, store=self.store, cache=self.cache)


def _node_of(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The entrypoint's node: `fn` called with the run's input and what it asks for; its
    return (or `entrypoint.final`) written as the state's `output` and `previous`."""
    wanted = injections(fn)

    def arguments(state: Any, config: Any, runtime: Any) -> dict[str, Any]:
        previous = state.get("previous")
        given = {
            "previous": previous,
            "config": config,
            "runtime": dataclasses.replace(runtime, previous=previous),
            "store": runtime.store,
            "writer": runtime.stream_writer,
        }
        return {name: given[what.rstrip("?")] for name, what in wanted}

    if inspect.iscoroutinefunction(fn):

        async def anode(state, config, runtime):  # type: ignore[no-untyped-def]
            return _written(await fn(state.get("input"), **arguments(state, config, runtime)))

        return _named(anode, fn)

    def node(state, config, runtime):  # type: ignore[no-untyped-def]
        return _written(fn(state.get("input"), **arguments(state, config, runtime)))

    return _named(node, fn)


def _named(node: Callable[..., Any], fn: Callable[..., Any]) -> Callable[..., Any]:
    """`node` named as `fn` (not wrapping it: its own signature is what the engine reads)."""
    node.__name__, node.__qualname__ = fn.__name__, fn.__qualname__
    node.__module__, node.__doc__ = fn.__module__, fn.__doc__
    return node


def _written(result: Any) -> dict[str, Any]:
    if isinstance(result, _Final):
        return {"output": result.value, "previous": result.save}
    return {"output": result, "previous": result}
