"""A run inside another run's node: what it takes from the node that started it, worked out
once when it starts.

A graph invoked inside a running node (a subgraph added as the node, or a graph the node's
function runs) is a nested run. Whether a run is nested, and what it inherits, is asked
once, when the run starts (`caller_now`, in `CompiledGraph`'s start and `RunLoop`'s
`__init__`), and kept on the run as its `caller`: the calling task (its run, its id), the
interrupt scope its questions go to without a checkpointer of its own, and its namespace
(LangGraph's `checkpoint_ns`, made the first time something asks). A plain run's `caller`
is None, and every nested feature asks that one attribute.

A node call can start several graph runs; each knows its place among them (`Caller.order`):
the first's namespace ends with `"<node>:<task id>"`, the k-th after it adds `"k"`
(`"<node>:<task id>|k"`), as LangGraph numbers them, so two graphs one node runs never share
a namespace (their streams, and the checkpoints of `checkpointer=True` ones, stay apart).
"""

from __future__ import annotations

from typing import Any

from nbgraph.engine.core.node_context.interrupts import Scope, current_scope
from nbgraph.engine.core.node_context.runtime import current_task_env

__all__ = [
    "NS_SEP",
    "Caller",
    "caller_now",
    "checkpoint_ns",
    "namespace_of",
    "nested_ns",
    "outermost_task_ns",
]

NS_SEP = "|"
"""What joins the parts of a namespace: `"outer:<task id>|inner:<task id>"`."""


class Caller:
    """The node a nested run was started in.

    Attributes:
        env: the calling task's environment (`.run`, `.task`, `.task_id`).
        scope: the interrupt scope of the calling node's call, if it has one: where
            `interrupt()` inside a run without a checkpointer of its own asks.
        relay: the calling run's stream relay, when its caller streams it
            (`engine.streaming.namespaces`); None otherwise.
        order: how many graph runs the calling node call had started before this one.
        per_node: the run keeps one thread per node (`compile(checkpointer=True)`): its
            namespace names the nodes without their task ids, as LangGraph's does.
        namespace: the nested run's namespace (`namespace_of`), once asked for.
    """

    __slots__ = ("env", "namespace", "order", "per_node", "relay", "scope")

    def __init__(
        self,
        env: Any,
        scope: Scope | None,
        relay: Any = None,
        order: int = 0,
        per_node: bool = False,
    ) -> None:
        self.env, self.scope, self.relay = env, scope, relay
        self.order, self.per_node = order, per_node
        self.namespace: tuple[str, ...] | None = None

    @property
    def run(self) -> Any:
        """The calling run (a `RunLoop`)."""
        return self.env.run

    @property
    def task(self) -> Any:
        """The calling task."""
        return self.env.task


def caller_now(per_node: bool = False, starts: bool = False) -> Caller | None:
    """The node running in this context, as the caller of a run starting now (None outside
    a node: a plain run). `starts`: a graph run starts now, and takes its place among those
    the node call started (`Caller.order`); `per_node`: see `Caller`."""
    env = current_task_env()
    if env is None:
        return None
    runs = env.task.subruns if starts else ()  # (each run it started is kept there,
    # `engine.nested.subruns`; a retried task's earlier attempts' too, as LangGraph counts)
    order = len(runs) if runs else 0  # (the first: none before it, nothing to count)
    return Caller(env, current_scope(), env.relay(), order, per_node)  # (relay: the writer's)


def namespace_of(run: Any) -> tuple[str, ...]:
    """A run's namespace: `()` for a run started outside a node; for one started inside a
    node, the calling run's namespace and `"<node>:<task id>"`. Worked out the first time
    it is asked for (`invoke` never asks unless a node reads its config's `checkpoint_ns`
    or the caller streams)."""
    caller = getattr(run, "caller", None)  # (a stand-in run, as `Run.remerge` calls with)
    if caller is None:
        return ()
    namespace = caller.namespace
    if namespace is None:
        namespace = caller.namespace = nested_ns(namespace_of(caller.env.run), caller)
    return namespace


def outermost_task_ns(run: Any) -> str | None:
    """`"<node>:<task id>"` of the task of a plain run that a nested `run` runs inside, at
    any depth (None: `run` is not nested). LangGraph puts it in a nested run's metadata
    (`checkpoint_ns`), with its task id even where the namespace drops it."""
    caller = getattr(run, "caller", None)
    if caller is None:
        return None
    while getattr(caller.run, "caller", None) is not None:
        caller = caller.run.caller
    return f"{caller.env.task.node}:{caller.env.task_id}"


def nested_ns(
    outer: tuple[str, ...], caller: Caller, task_id: str | None = None
) -> tuple[str, ...]:
    """The namespace of the run `caller` starts, inside one whose namespace is `outer`:
    `outer`, `"<node>:<task id>"` and, for the node call's k-th run after its first, `"k"`;
    for a run that keeps a thread per node (`per_node`), every part without its task id.

    `task_id`: the calling task's id as it is to be shown (default: LangGraph's form, a
    uuid; a saver's keys use the engine's own, which a resumed run finds again)."""
    env = caller.env
    parts = (*outer, f"{env.task.node}:{env.task_id if task_id is None else task_id}")
    if caller.order:
        parts = (*parts, str(caller.order))
    if caller.per_node:
        parts = tuple(part.partition(":")[0] for part in parts)
    return parts


def checkpoint_ns(run: Any, node: str, task_id: str) -> str:
    """A task's checkpoint namespace string: its run's namespace and `node:task_id`,
    joined with `|` (`"outer:<id>|inner:<id>"`)."""
    own = f"{node}:{task_id}"
    namespace = namespace_of(run)
    return NS_SEP.join((*namespace, own)) if namespace else own
