"""A running task's `Runtime` (the run's context, store and stream writer) and environment.

The node API's `get_config()` / `get_runtime()` / `get_store()` read them
(`nbgraph.engine.node_api`).

A task's environment is set in a context variable for the length of its call (the engine's
`engine.injection` does it), so helpers deep inside a node find it as LangGraph's do.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

__all__ = [
    "ContextT",
    "ExecutionInfo",
    "Runtime",
    "addressed",
    "coerce_context",
    "current_task_env",
    "enter_task",
    "inherited",
    "leave_task",
    "no_op_writer",
    "running_task_env",
]

ContextT = TypeVar("ContextT")


def no_op_writer(_chunk: Any) -> None:
    """The stream writer of a run that streams no custom chunks."""


def _no_op_heartbeat() -> None:
    """The heartbeat of a node without an idle timeout."""


@dataclass(frozen=True, slots=True)
class ExecutionInfo:
    """Where a node runs: its task, thread and attempt (read-only).

    Attributes:
        checkpoint_ns: `"<node>:<task id>"`, as LangGraph names a task's namespace.
        task_id: the task's id.
        thread_id: the run's `configurable.thread_id`, or None without one.
        node_attempt: the attempt number, 1 first.
    """

    checkpoint_id: str | None
    checkpoint_ns: str
    task_id: str
    thread_id: str | None = None
    run_id: str | None = None
    node_attempt: int = 1
    node_first_attempt_time: float | None = None


@dataclass(frozen=True, slots=True)
class Runtime(Generic[ContextT]):
    """The run-scoped things a node may take as `runtime: Runtime[Ctx]` (mirrors LangGraph's).

    Attributes:
        context: what `invoke(..., context=...)` passed (a dict given for a dataclass or
            pydantic `context_schema` is turned into one), or None.
        store: the store given to `compile(store=...)`, or None.
        stream_writer: writes a chunk to `stream_mode="custom"` (a no-op if nothing listens).
        heartbeat: LangGraph's progress signal for idle timeouts; a no-op here.
        previous: LangGraph's functional-API value; always None here.
        execution_info: the task's `ExecutionInfo`.
        server_info, control: LangGraph Server's and run draining's; always None here.

    >>> Runtime(context={"user": "ada"}).context["user"]
    'ada'
    """

    context: ContextT = field(default=None)  # type: ignore[assignment]
    store: Any = None
    stream_writer: Callable[[Any], None] = no_op_writer
    heartbeat: Callable[[], None] = _no_op_heartbeat
    previous: Any = None
    execution_info: ExecutionInfo | None = None
    server_info: Any = None
    control: Any = None

    @property
    def drain_requested(self) -> bool:
        """LangGraph's cooperative draining; nbgraph never asks a run to drain."""
        return False

    @property
    def drain_reason(self) -> str | None:
        return None

    def override(self, **overrides: Any) -> Runtime[ContextT]:
        """A copy with some attributes replaced."""
        return dataclasses.replace(self, **overrides)

    def merge(self, other: Runtime[ContextT]) -> Runtime[ContextT]:
        """`other`'s attributes where it has them, this runtime's elsewhere."""
        return Runtime(
            context=other.context or self.context,
            store=other.store or self.store,
            stream_writer=(
                self.stream_writer if other.stream_writer is no_op_writer else other.stream_writer
            ),
            heartbeat=self.heartbeat if other.heartbeat is _no_op_heartbeat else other.heartbeat,
            previous=self.previous if other.previous is None else other.previous,
            execution_info=other.execution_info or self.execution_info,
            server_info=other.server_info or self.server_info,
            control=other.control or self.control,
        )


_TASK: ContextVar[Any] = ContextVar("nbgraph_task_env", default=None)
"""The running task's environment (an `engine.injection.TaskEnv`: `.config()`, `.runtime()`)."""


def running_task_env(what: str) -> Any:
    """The running task's environment; outside a node, LangGraph's error naming `what`."""
    env = _TASK.get()
    if env is None:
        raise RuntimeError(f"Called {what} outside of a runnable context")
    return env


current_task_env = _TASK.get
"""`current_task_env()`: the running task's environment (`.run`, `.task`), or None outside a
node (the context variable's own method: the engine asks at every commit)."""


enter_task = _TASK.set
"""`enter_task(env)`: make `env` the running task's; returns the token `leave_task` needs
(the context variable's own method: the engine calls it for every task)."""

leave_task = _TASK.reset
"""`leave_task(token)`: undo `enter_task`."""


def coerce_context(schema: Any, context: Any) -> Any:
    """The context a run's nodes see: a dict given for a dataclass or pydantic schema is
    made into one (as LangGraph does); anything else is kept as given.

    >>> from dataclasses import dataclass
    >>> @dataclass
    ... class Ctx:
    ...     user: str = "anon"
    >>> coerce_context(Ctx, {"user": "ada"})
    Ctx(user='ada')
    """
    if context is None or schema is None or not isinstance(context, dict):
        return context
    if dataclasses.is_dataclass(schema) or hasattr(schema, "model_fields"):
        try:
            return schema(**context)
        except TypeError as error:
            name = getattr(schema, "__name__", repr(schema))
            error.add_note(f"nbgraph: while making the run's context {name} from {context!r}")
            raise
    return context


_ADDRESS_KEYS = frozenset({"thread_id", "checkpoint_id", "checkpoint_ns", "checkpoint_map"})


def addressed(config: Any, env: Any) -> bool:
    """Whether the config of a graph run started inside a node (`env`, the node's task)
    names a thread or checkpoint of its own (a non-empty `thread_id`, `checkpoint_ns`,
    `checkpoint_id` or `checkpoint_map`; `inherited` never passes the node's on). A graph
    invoked so is a run of its own, as in LangGraph: it keeps its checkpoints in its own
    saver (none without one), and its chunks are not its caller's. The node's own config
    passed on (its `checkpoint_ns` with it) is not: LangGraph's carries the task's keys."""
    configurable, named = config.get("configurable") or {}, {}
    for key in _ADDRESS_KEYS:  # (a loop, no comprehension: a call inside a node asks)
        if key in configurable and configurable[key] not in (None, "", {}):
            named[key] = configurable[key]
    if not named or "checkpoint_ns" not in named:
        return bool(named)
    own = env.config().get("configurable") or {}
    return any(own.get(key) != value for key, value in named.items())


def inherited(
    config: Any, context: Any, store: Any, caller: Any = None
) -> tuple[Any, Any, Any, Any]:
    """What a graph invoked inside a running node takes from that node's run, as LangGraph
    does: its context and store (unless given), its `recursion_limit`, `metadata`, `tags`
    and `configurable` keys (the call's own win, its tags come after; a checkpoint's
    address is never inherited). A call that names a thread or checkpoint of its own
    (`addressed`) takes only the `recursion_limit`, `metadata` and `tags`, and is a run of
    its own: its caller comes back None.

    Returns `(config, context, store, caller)`; outside a node (`caller` None:
    `engine.core.nesting.caller_now`), all four unchanged.
    """
    if caller is None or (config is not None and not hasattr(config, "get")):
        return config, context, store, caller
    env = caller.env
    parent = env.run
    given = dict(config) if config else {}
    if given and addressed(given, env):  # a run of its own (LangGraph: the node's
        outer, parent_runtime, caller = {}, False, None  # configurable, where its context
        # and store are, is not passed on; asked here only: `run_config` adds no address)
    else:
        outer = {}
        for key, value in (parent.config.get("configurable") or {}).items():
            if key not in _ADDRESS_KEYS:  # (a loop, no comprehension: every graph run
                outer[key] = value  # inside a node comes here)
        parent_runtime = True
    if outer:
        given["configurable"] = {**outer, **(given.get("configurable") or {})}
    if "recursion_limit" in parent.config:
        given.setdefault("recursion_limit", parent.config["recursion_limit"])
    if parent.config.get("metadata"):  # (the parent's first, the call's own win)
        given["metadata"] = {**parent.config["metadata"], **(given.get("metadata") or {})}
    if parent.config.get("tags"):
        given["tags"] = [*parent.config["tags"], *(given.get("tags") or ())]
    if parent_runtime:
        context = getattr(parent, "context", None) if context is None else context
        store = getattr(parent, "store", None) if store is None else store
    return given, context, store, caller
