"""LangChain callbacks on a run (`config["callbacks"]`), as LangGraph fires them: a chain run
for the graph and one per task.

The graph's own chain run has `on_chain_start` with the input and `on_chain_end` with the final
state. Each task's chain run is named after its node, a child of the graph's (tag
`graph:step:<n>`, LangGraph's task metadata), with its input, its output streamed
(`on_chain_stream`) and ended (`on_chain_end`) or failed (`on_chain_error`). Inside the node,
langchain's config (the context variable langchain_core keeps it in) holds the task run's child
callbacks (tag `seq:step:1`), so the chat models, tools and custom events a node calls are
children of its run.

`astream_events` (langchain_core's event stream handler, `engine.streaming.events`) and any
tracer passed in `config["callbacks"]` hear the same runs. The tasks still run on the one
path (`TaskRunner.execute`): this only opens and closes the runs around it
(`StreamScope.execute`). This module imports langchain_core, so it is imported only for a
run whose config has callbacks.
"""

from __future__ import annotations

import threading
from contextvars import ContextVar
from typing import Any

from langchain_core.callbacks import CallbackManager
from langchain_core.runnables.config import var_child_runnable_config

from nbgraph.blueprint.subgraphs import subgraph_of
from nbgraph.engine.core.injection import task_metadata, task_uuid
from nbgraph.engine.core.interrupts import GraphInterrupt
from nbgraph.engine.core.nesting import checkpoint_ns
from nbgraph.engine.core.tasks import Task
from nbgraph.primitives import START

try:
    from langchain_core.tracers._streaming import _StreamingCallbackHandler as _Streaming
except ImportError:  # pragma: no cover (older langchain_core)
    _Streaming = ()  # type: ignore[assignment,misc]

__all__ = ["ChainRuns", "NodeRun"]


_STREAMED: ContextVar[bool] = ContextVar("nbgraph_streamed_node", default=False)
"""Whether the node running here has its output streamed (`ChainRuns.streamed`)."""


class NodeRun:
    """One task's chain run while its node runs: the context variables' tokens, and the
    node's input (a retry's new run starts with it)."""

    __slots__ = ("state", "streamed_token", "token")

    def __init__(self, token: Any, streamed_token: Any, state: Any) -> None:
        self.token, self.streamed_token, self.state = token, streamed_token, state


class ChainRuns:
    """The chain runs of one graph run: the graph's, and its tasks' (see the module doc).

    Attributes:
        graph: the graph run's manager (None until `started`).
        outputs: what each running task's node returned, until the task ends.
        streamed: whether a node's output is streamed (`on_chain_stream`) before its run
            ends. As LangGraph: in a run on the event loop (`astream`, `ainvoke`), and in a
            subgraph node's run inside a streamed node; not in a sync run.
    """

    def __init__(self, run: Any, name: str) -> None:
        self.run = run
        self.name = name
        self.graph: Any = None
        self.outputs: dict[Task, Any] = {}
        self.nodes: dict[Task, Any] = {}  # (each running task's run manager)
        self.streamed = False
        self.chat: Any = None  # (the messages stream's handler, added to each node's run)
        self.entered: dict[Task, NodeRun] = {}  # (each running task's, for its retries)
        self.start: Any = None  # (START's hidden run, while its routers run)
        self._lock = threading.Lock()

    def started(self, graph_input: Any, on_event_loop: bool) -> None:
        """The graph's run starts, with `graph_input` (`on_event_loop`: driven by `adrive`)."""
        caller = self.run.caller
        self.streamed = on_event_loop or (
            caller is not None
            and _STREAMED.get()
            and subgraph_of(caller.run.spec, caller.task.node) is not None
        )
        config = self.run.config
        metadata = dict(config.get("metadata") or {})
        thread_id = (config.get("configurable") or {}).get("thread_id")
        if thread_id is not None:  # (LangGraph's graph run names its thread)
            metadata.setdefault("thread_id", thread_id)
        if self.run.caller is not None:  # (a graph run inside a node: the node's namespace)
            inside = (var_child_runnable_config.get() or {}).get("configurable") or {}
            if inside.get("checkpoint_ns"):
                metadata.setdefault("checkpoint_ns", inside["checkpoint_ns"])
        manager = CallbackManager.configure(
            inheritable_callbacks=config.get("callbacks"),
            inheritable_tags=config.get("tags"),
            inheritable_metadata={**metadata, "ls_integration": "langgraph"},
        )
        name = config.get("run_name") or self.name
        self.graph = manager.on_chain_start(
            None, graph_input, name=name, run_id=config.get("run_id")
        )

    def ended(self, output: Any, error: BaseException | None) -> None:
        """The graph's run ends, with its final state or its error."""
        if self.graph is None:
            return
        self._close_start()
        if error is not None:
            self.graph.on_chain_error(error)
        else:
            self.graph.on_chain_end(output)

    def enter(self, task: Task, state: Any, chat: Any = None) -> tuple[NodeRun, dict]:
        """The task's run starts (`state`: its node's input); the rest of the task runs in a
        langchain config whose callbacks are the run's children (`chat`: the messages
        stream's handler, added to them). Returns the run and the task's metadata."""
        self._close_start()
        self.chat = chat
        config, metadata = self._node_config(task, state)
        token = var_child_runnable_config.set(config)  # type: ignore[arg-type]
        entered = NodeRun(token, _STREAMED.set(self.streamed), state)
        with self._lock:
            self.entered[task] = entered
        return entered, metadata

    def _node_config(self, task: Task, state: Any) -> tuple[dict[str, Any], dict]:
        """The task's run, started, and the langchain config its node runs in."""
        run = self.run
        node, metadata, namespace = self._open(task, state)
        callbacks = _child(node, "seq:step:1")
        if self.chat is not None:
            callbacks.add_handler(self.chat, inherit=True)
        configurable = {**(run.config.get("configurable") or {}), "checkpoint_ns": namespace}
        config = {
            "callbacks": callbacks,
            "metadata": metadata,
            "tags": list(run.config.get("tags") or ()),
            "configurable": configurable,
            "recursion_limit": run.config.get("recursion_limit", 25),
        }
        return config, metadata

    def retrying(self, task: Task, error: BaseException) -> None:
        """The task's node raised and is tried again (`RunLoop.observer`): its run fails,
        and the next attempt runs in a new one, as LangGraph's retries do."""
        with self._lock:
            node = self.nodes.pop(task, None)
            entered = self.entered.get(task)
        if node is None or entered is None:
            return
        node.on_chain_error(error)
        config, _ = self._node_config(task, entered.state)
        var_child_runnable_config.set(config)  # type: ignore[arg-type]  # (reset at `leave`)

    def _open(self, task: Task, state: Any, *tags: str) -> tuple[Any, dict, str]:
        """The task's run, started: its manager, its metadata and its namespace."""
        run = self.run
        namespace = checkpoint_ns(run, task.node, task_uuid(run, task))
        metadata = {"ls_integration": "langgraph", **task_metadata(run, task, namespace)}
        manager = _child(self.graph, f"graph:step:{task.step}", *tags)
        manager.add_metadata(metadata)
        node = manager.on_chain_start(None, _shown(state), name=task.node)
        with self._lock:
            self.nodes[task] = node
        return node, metadata, namespace

    def _close_start(self) -> None:
        """START's hidden run ends (its routers have run), its output the input state."""
        start, self.start = self.start, None
        if start is not None:
            node, values = start
            with self._lock:
                self.nodes = {t: n for t, n in self.nodes.items() if n is not node}
            self._ended(node, values)

    def returned(self, task: Task, output: Any) -> None:
        """What the task's node returned (`RunLoop.tap`), for its run's end."""
        with self._lock:
            self.outputs[task] = output

    def routed(self, task: Task, branch: Any, state: Any, result: Any) -> None:
        """A router after `task` returned `result` (`RunLoop.observer`): its run, a child
        of the task's (tag `seq:step:<3 + its index>`, as LangGraph numbers it)."""
        with self._lock:
            node = self.nodes.get(task)
        first = 3
        if node is None and task.node == START and self.graph is not None:
            node = self._open(task, state, "langsmith:hidden")[0]  # (LangGraph's `__start__`)
            self.start, first = (node, _shown(state)), 2
        elif node is None:  # (a router run outside a task's run: update_state)
            return
        elif task.node == START:
            first = 2
        index = first + self.run.spec.branches.get(task.node, ()).index(branch)
        router = _child(node, f"seq:step:{index}").on_chain_start(
            None, _shown(state), name=branch.name
        )
        router.on_chain_end(result)

    def leave(self, node: NodeRun, task: Task) -> None:
        """The task's run ends: its output streamed and ended, or its error."""
        _STREAMED.reset(node.streamed_token)
        var_child_runnable_config.reset(node.token)
        with self._lock:
            output = self.outputs.pop(task, None)
            manager = self.nodes.pop(task, None)
            self.entered.pop(task, None)
        if manager is None:
            return
        if task.error is not None:
            manager.on_chain_error(task.error)
        elif task.interrupts:  # (paused: LangGraph's node run fails with the interrupt)
            manager.on_chain_error(GraphInterrupt(*task.interrupts))
        else:
            self._ended(manager, output)

    def _ended(self, manager: Any, output: Any) -> None:
        """A run ends with `output` (streamed first, in a streamed run)."""
        if self.streamed:
            for handler in manager.handlers:
                if isinstance(handler, _Streaming):
                    for _ in handler.tap_output_iter(manager.run_id, iter([output])):
                        pass
        manager.on_chain_end(output)


def _child(parent: Any, tag: str, *passed: str) -> CallbackManager:
    """A child of run `parent`'s, tagged `tag` first, then `passed` (which its children
    inherit), then the tags it inherits (LangGraph's order; langchain's `get_child` puts the
    inherited ones first)."""
    manager = CallbackManager(handlers=[], parent_run_id=parent.run_id)
    manager.set_handlers(parent.inheritable_handlers)
    manager.add_tags([tag], inherit=False)
    manager.add_tags(list(passed))
    manager.add_tags(parent.inheritable_tags)
    manager.add_metadata(parent.inheritable_metadata)
    return manager


def _shown(state: Any) -> Any:
    """A node's input as its run shows it: a state view as a plain dict."""
    return dict(state) if isinstance(state, dict) else state
