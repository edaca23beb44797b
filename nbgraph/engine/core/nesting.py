"""A run inside another run's node: what it takes from the node that started it, worked out
once when it starts.

A graph invoked inside a running node (a subgraph added as the node, or a graph the node's
function runs) is a nested run. Whether a run is nested, and what it inherits, is asked
once, when the run starts (`caller_now`, in `CompiledGraph`'s start and `RunLoop`'s
`__init__`), and kept on the run as its `caller`: the calling task (its run, its id), the
interrupt scope its questions go to without a checkpointer of its own, and its namespace
(LangGraph's `checkpoint_ns`, made the first time something asks). A plain run's `caller`
is None, and every nested feature asks that one attribute.
"""

from __future__ import annotations

from typing import Any

from nbgraph.engine.core.interrupts import Scope, current_scope
from nbgraph.engine.core.runtime import current_task_env

__all__ = ["NS_SEP", "Caller", "caller_now", "checkpoint_ns", "namespace_of"]

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
        namespace: the nested run's namespace (`namespace_of`), once asked for.
    """

    __slots__ = ("env", "namespace", "relay", "scope")

    def __init__(self, env: Any, scope: Scope | None, relay: Any = None) -> None:
        self.env, self.scope, self.relay = env, scope, relay
        self.namespace: tuple[str, ...] | None = None

    @property
    def run(self) -> Any:
        """The calling run (a `RunLoop`)."""
        return self.env.run

    @property
    def task(self) -> Any:
        """The calling task."""
        return self.env.task


def caller_now() -> Caller | None:
    """The node running in this context, as the caller of a run starting now (None outside
    a node: a plain run)."""
    env = current_task_env()
    if env is None:
        return None
    return Caller(env, current_scope(), env.relay())  # (a streamed run's, the writer's)


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
        env = caller.env
        namespace = caller.namespace = (*namespace_of(env.run), f"{env.task.node}:{env.task_id}")
    return namespace


def checkpoint_ns(run: Any, node: str, task_id: str) -> str:
    """A task's checkpoint namespace string: its run's namespace and `node:task_id`,
    joined with `|` (`"outer:<id>|inner:<id>"`)."""
    own = f"{node}:{task_id}"
    namespace = namespace_of(run)
    return NS_SEP.join((*namespace, own)) if namespace else own
