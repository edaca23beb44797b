"""Calling a node or router with what its signature asks for, as LangGraph does.

LangGraph passes, by keyword, a parameter named `config` (annotated `RunnableConfig`, or not
at all), `runtime` (any annotation), `store` (`BaseStore`, `Optional[BaseStore]`, or none),
`writer` (`StreamWriter`, or none) and `previous`. A `config` annotated with anything else
is not passed (LangGraph warns, and so does nbgraph). While the function runs, its config
and runtime are what `get_config()` / `get_runtime()` return.
"""

from __future__ import annotations

import collections.abc
import contextlib
import inspect
import typing
import uuid
import warnings
import weakref
from collections.abc import Callable
from typing import Any

from nbgraph.engine.core.config import DEFAULT_RECURSION_LIMIT
from nbgraph.engine.core.nesting import checkpoint_ns, outermost_task_ns
from nbgraph.engine.core.node_context.runtime import (
    ExecutionInfo,
    Runtime,
    enter_task,
    leave_task,
    no_op_writer,
)
from nbgraph.engine.core.node_context.store_record import RecordingStore
from nbgraph.engine.core.node_context.writer import TaskStream
from nbgraph.engine.core.tasks import ParentCommand

__all__ = [
    "TaskEnv",
    "awaited",
    "call",
    "call_with",
    "injections",
    "task_metadata",
    "task_triggers",
    "task_uuid",
]

_KINDS = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
_EMPTY = inspect.Parameter.empty
_CACHE: dict[int, tuple[Any, tuple[tuple[str, str], ...]]] = {}
"""By `id(fn)`: a weak reference to `fn` (checked on lookup) and what it asks for. An entry
goes when its function does; a plain dict lookup is the engine's hot path."""
_TASK_NS = uuid.UUID("6f1c2a53-5b1e-4a55-9d7e-2d1f0c3b9a10")


def _named(annotation: Any, *names: str) -> bool:
    """Whether `annotation` is one of the named types (by name, so either library's
    class, or the name as a string under `from __future__ import annotations`, fits)."""
    if isinstance(annotation, str):
        return annotation in names
    return getattr(annotation, "__name__", None) in names


def _optional_of(annotation: Any, name: str) -> bool:
    if isinstance(annotation, str):
        return annotation in (f"Optional[{name}]", f"{name} | None")
    args = typing.get_args(annotation)
    return type(None) in args and any(_named(a, name) for a in args if a is not type(None))


def _is_writer(annotation: Any) -> bool:
    if annotation is _EMPTY or _named(annotation, "StreamWriter"):
        return True
    return annotation in (typing.Callable[[Any], None], collections.abc.Callable[[Any], None])


def _injection(name: str, annotation: Any) -> str | None:
    """What parameter `name` receives (`"config"`, `"runtime"`, `"store"`, `"store?"`,
    `"writer"`, `"previous"`), or None if LangGraph would not fill it."""
    if name == "config":
        if annotation is _EMPTY or _named(annotation, "RunnableConfig"):
            return "config"
        if _optional_of(annotation, "RunnableConfig"):
            return "config"
        warnings.warn(
            f"The 'config' parameter should be typed as 'RunnableConfig' or "
            f"'RunnableConfig | None', not '{annotation}'. nbgraph does not pass it.",
            UserWarning,
            stacklevel=5,
        )
        return None
    if name == "store":
        if annotation is _EMPTY or _named(annotation, "BaseStore"):
            return "store"
        return "store" if _optional_of(annotation, "BaseStore") else None
    if name == "writer":
        return "writer" if _is_writer(annotation) else None
    if name in ("runtime", "previous"):
        return name
    return None


def injections(fn: Callable[..., Any]) -> tuple[tuple[str, str], ...]:
    """`(parameter, what)` for each parameter of `fn` the engine fills by keyword."""
    entry = _CACHE.get(id(fn))
    if entry is not None and entry[0]() is fn:
        return entry[1]
    try:
        parameters = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        parameters = []
    found = []
    for parameter in parameters[1:] if parameters else ():
        if parameter.kind in _KINDS:
            what = _injection(parameter.name, parameter.annotation)
            if what is not None:
                found.append((parameter.name, what))
    result = tuple(found)
    key = id(fn)
    with contextlib.suppress(TypeError):  # (a callable object without weak references)
        _CACHE[key] = (weakref.ref(fn, lambda _, key=key: _CACHE.pop(key, None)), result)
    return result


def task_uuid(run: Any, task: Any) -> str:
    """A task's id as LangGraph shows it (a uuid): in its config's `checkpoint_ns`, the
    namespace of the graphs it runs, and `stream_mode="tasks"`. As LangGraph's, it is made
    from the checkpoint its step runs from, so a resumed task shows the id it paused with."""
    thread = getattr(run, "thread", None)
    base = getattr(thread, "head", None) or id(run)  # (no saver: the run's own)
    return str(uuid.uuid5(_TASK_NS, f"{base}:{task.id}"))


OWN_WRITER: Any = object()
"""`TaskEnv(run, task, OWN_WRITER)`: the task writes to its own `TaskStream` into `run`'s
sink, made the first time something asks for it."""


class TaskEnv:
    """One task's config, runtime and stream writer, each built the first time something
    asks for it; the running task's is the one context variable a task sets (`enter_task`).

    `stream`: the task's writer (a `TaskStream`), `OWN_WRITER` (made when asked), or None
    (no writer: a router called outside a run, say)."""

    __slots__ = ("_config", "_runtime", "_stream", "run", "task")

    def __init__(self, run: Any, task: Any, stream: Any = None) -> None:
        self.run, self.task, self._stream = run, task, stream
        self._config: dict[str, Any] | None = None
        self._runtime: Runtime[Any] | None = None

    def writer(self) -> TaskStream | None:
        """The task's stream writer (what `get_stream_writer()` returns), or None."""
        stream = self._stream
        if stream is OWN_WRITER:
            run = self.run
            stream = self._stream = TaskStream(self.task, run.sink, run.relay)
        return stream

    def relay(self) -> Any:
        """The relay of the task's writer (a streamed run's, for the runs its node starts),
        without making the writer."""
        stream = self._stream
        if stream is OWN_WRITER:
            return self.run.relay
        return None if stream is None else stream.relay

    @property
    def task_id(self) -> str:
        return task_uuid(self.run, self.task)

    def config(self) -> dict[str, Any]:
        """The config the task's node sees, shaped as LangGraph's (see `_node_config`)."""
        if self._config is None:
            self._config = _node_config(self.run, self.task, self.task_id)
        return self._config

    def runtime(self) -> Runtime[Any]:
        """The task's `Runtime`: the run's context, store (recorded) and stream writer."""
        if self._runtime is None:
            run, task = self.run, self.task
            store = getattr(run, "store", None)
            if store is not None:
                store = RecordingStore(store, run.log.store_ops, task.step, task.node)
            writer = self.writer()  # (the task's: the run's StreamScope may have made it)
            configurable = run.config.get("configurable") or {}
            config = self.config()
            self._runtime = Runtime(
                context=getattr(run, "context", None),
                store=store,
                stream_writer=writer if writer is not None else no_op_writer,
                execution_info=ExecutionInfo(
                    checkpoint_id=configurable.get("checkpoint_id"),
                    checkpoint_ns=config["configurable"]["checkpoint_ns"],
                    task_id=self.task_id,
                    thread_id=configurable.get("thread_id"),
                    run_id=run.config.get("run_id"),
                ),
            )
        return self._runtime

    def value(self, what: str) -> Any:
        if what == "config":
            return self.config()
        if what == "runtime":
            return self.runtime()
        if what in ("store", "store?"):
            return self.runtime().store
        if what == "writer":
            return self.runtime().stream_writer
        return None  # previous: LangGraph's functional API only


def task_triggers(spec: Any, task: Any) -> tuple[str, ...]:
    """A task's triggers as LangGraph names them: `branch:to:<node>` and, per waiting edge
    into it whose sources fired, `join:<a>+<b>:<node>`; `__pregel_push` for a Send."""
    if task.kind in ("send", "call"):
        return ("__pregel_push",)
    joins = [
        f"join:{'+'.join(w.sources)}:{w.target}"
        for w in spec.waiting
        if w.target == task.node and set(task.triggers) & set(w.sources)
    ]
    return (f"branch:to:{task.node}", *joins)


def task_metadata(run: Any, task: Any, namespace: str) -> dict[str, Any]:
    """The metadata LangGraph gives a task's run: the run config's metadata (and thread id)
    with `langgraph_step`, `_node`, `_triggers`, `_path` (a Send's index counts among the
    step's Sends) and `_checkpoint_ns`. Both a node's config and the messages stream's
    callbacks use it."""
    config = run.config
    metadata = dict(config.get("metadata") or {})
    thread_id = (config.get("configurable") or {}).get("thread_id")
    if thread_id is not None:
        metadata.setdefault("thread_id", thread_id)
    outer = outermost_task_ns(run)
    if outer:  # (LangGraph: a subgraph's metadata names the outermost task it runs in)
        metadata.setdefault("checkpoint_ns", outer)
    if task.kind == "send":
        path: tuple[Any, ...] = ("__pregel_push", task.index - getattr(run, "pulls", 0), False)
    elif task.kind == "call":  # (LangGraph's: the caller's path, the call's place, True)
        caller = ("__pregel_pull", task.triggers[0])
        path = ("__pregel_push", caller, task.index - getattr(run, "step_size", 1), True)
    else:
        path = ("__pregel_pull", task.node)
    metadata.update(
        langgraph_step=task.step,
        langgraph_node=task.node,
        langgraph_triggers=task_triggers(run.spec, task),
        langgraph_path=path,
        langgraph_checkpoint_ns=namespace,
    )
    metadata.update(node_metadata(run.spec, task))
    return metadata


def node_metadata(spec: Any, task: Any) -> collections.abc.Mapping[str, Any]:
    """The `add_node(metadata=...)` of a task's node (none for a `@task` call's task)."""
    node = spec.nodes.get(task.node) if task.kind != "call" else None
    return (node.metadata if node is not None else None) or {}


def _node_config(run: Any, task: Any, task_id: str) -> dict[str, Any]:
    """The config a node sees: the run's, with LangGraph's task metadata
    (`langgraph_step`, `langgraph_node`, `langgraph_triggers`, `langgraph_path`,
    `langgraph_checkpoint_ns`) and the task's `checkpoint_ns` in `configurable`."""
    given = run.config
    config = {k: v for k, v in given.items() if k not in ("run_name", "run_id")}
    if config.get("recursion_limit") == DEFAULT_RECURSION_LIMIT:
        del config["recursion_limit"]
    if config.get("max_concurrency", 0) is None:
        del config["max_concurrency"]
    if not config.get("tags", True):
        del config["tags"]
    namespace = checkpoint_ns(run, task.node, task_id)
    configurable = dict(given.get("configurable") or {})
    metadata = task_metadata(run, task, namespace)
    configurable.setdefault("checkpoint_id", None)
    configurable["checkpoint_ns"] = namespace
    if getattr(run, "caller", None) is not None and "thread_id" not in configurable:
        outer = _outermost(run)  # (a subgraph's node sees the thread it runs under)
        if "thread_id" in (outer.config.get("configurable") or {}):
            configurable["thread_id"] = outer.config["configurable"]["thread_id"]
    config.update(configurable=configurable, metadata=metadata, callbacks=None)
    return config


def _outermost(run: Any) -> Any:
    """The run a nested `run` runs inside of, at the top (a run started outside a node)."""
    while getattr(run, "caller", None) is not None:
        run = run.caller.run
    return run


def call_with(env: TaskEnv, fn: Callable[..., Any], wanted: tuple, state: Any) -> Any:
    """`fn(state, **what it asks for)` — `wanted`, its `injections(fn)` — for the task whose
    `env` is the running one (`enter_task`): the one way the engine calls a node or router.
    A coroutine it returns is returned, not awaited (`awaited` does that)."""
    try:
        if not wanted:
            return fn(state)
        return fn(state, **{name: env.value(what) for name, what in wanted})
    except TypeError as error:
        _explain(error, fn)
        raise
    except ParentCommand as up:  # a graph run inside the node addressed it: its output
        return up.command


async def awaited(output: Any) -> Any:
    """What an async node or router returned, awaited (a `Command.PARENT` raised inside
    is its output, as `call_with` takes it from a sync one)."""
    try:
        return await output
    except ParentCommand as up:
        return up.command


def call(fn: Callable[..., Any], state: Any, run: Any, task: Any) -> Any:
    """`call_with` outside the engine's own task: `get_config()`/`get_runtime()` answer
    for `task` meanwhile (the record's what-if replays call routers with it)."""
    env = TaskEnv(run, task)
    tokens = enter_task(env)
    try:
        return call_with(env, fn, injections(fn), state)
    finally:
        leave_task(tokens)


def _explain(error: TypeError, fn: Callable[..., Any]) -> None:
    """If `fn` failed for want of a parameter the engine does not fill, say which fill."""
    try:
        parameters = list(inspect.signature(fn).parameters.values())[1:]
    except (TypeError, ValueError):
        return
    filled = dict(injections(fn))
    unfilled = [
        p.name
        for p in parameters
        if p.default is _EMPTY
        and p.kind in (*_KINDS, inspect.Parameter.POSITIONAL_ONLY)
        and p.name not in filled
        and f"'{p.name}'" in str(error)
    ]
    if unfilled:
        error.add_note(
            f"nbgraph: nothing fills parameter {', '.join(map(repr, unfilled))} of "
            f"{getattr(fn, '__name__', fn)!r}: besides the state, nbgraph (as LangGraph) "
            "fills only `config` (annotated RunnableConfig, or not at all), `runtime`, "
            "`store` (BaseStore) and `writer` (StreamWriter), by name."
        )
