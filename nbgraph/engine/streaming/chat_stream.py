"""`stream_mode="messages"`: `(message, metadata)` pairs from the langchain chat models a node
calls, and from the messages a node returns, as LangGraph streams them.

LangGraph does this with a callback handler: each node runs with a langchain config (in the
context variable langchain_core keeps it in), whose callbacks a chat model called inside the
node picks up; the handler hears each token (a chat model asked to `invoke` streams, since
the handler is a streaming one) and sends it with the node's metadata. nbgraph does the same
when the caller asks for `"messages"`. This module imports langchain_core, so the engine
imports it only then (`import nbgraph` never does).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import fields, is_dataclass
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler, CallbackManager
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk
from langchain_core.runnables.config import var_child_runnable_config

from nbgraph.engine.core.injection import task_metadata, task_uuid
from nbgraph.engine.core.nesting import checkpoint_ns
from nbgraph.engine.core.tasks import Task
from nbgraph.engine.streaming.namespaces import Nested, graph_namespace
from nbgraph.engine.streaming.streams import LiveSink
from nbgraph.engine.streaming.task_events import user_tags
from nbgraph.primitives import Command

__all__ = ["ChatStream", "enter_node", "leave_node"]

try:  # a streaming handler makes a chat model's `invoke` stream its tokens, as in LangGraph
    from langchain_core.tracers._streaming import _StreamingCallbackHandler as _Streaming
except ImportError:  # pragma: no cover (older langchain_core)
    _Streaming = object  # type: ignore[assignment,misc]

_NOSTREAM = "nostream"  # LangGraph's tag: a chat model called with it is not streamed


class ChatStream(BaseCallbackHandler, _Streaming):  # type: ignore[misc]
    """One run's handler: hears the chat models its nodes call, sends their tokens.

    `seen` holds the ids of messages already sent or already in a node's input: a message
    a node returns is sent only if it is new (a chat model's reply, streamed token by token,
    is not sent again when the node returns it).
    """

    run_inline = True  # called in the thread of the chat model, in order

    def __init__(self, sink: LiveSink) -> None:
        self.sink = sink
        self.metadata: dict[uuid.UUID, dict[str, Any]] = {}
        self.seen: set[Any] = set()
        self.subgraphs = True  # (False: what the nodes of runs inside nodes send is dropped)
        self.base = 0  # (the length of the streamed run's namespace)

    def _send(self, message: BaseMessage, metadata: dict[str, Any], dedupe: bool) -> None:
        if dedupe and message.id in self.seen:
            return
        if message.id is None:
            message.id = str(uuid.uuid4())
        self.seen.add(message.id)
        ns = graph_namespace(metadata)[self.base :]
        self.sink.put("messages", Nested(ns, (message, metadata)) if ns else (message, metadata))

    def send(self, message: BaseMessage, metadata: dict[str, Any]) -> None:
        """Send a message a node pushes (`push_message`), with the node's `metadata`; the
        node's returning it later does not send it again."""
        self._send(message, metadata, dedupe=False)

    def tap_output_iter(self, run_id: uuid.UUID, output: Any) -> Any:
        return output

    def tap_output_aiter(self, run_id: uuid.UUID, output: Any) -> Any:
        return output

    def on_chat_model_start(
        self, serialized: Any, messages: Any, *, run_id: uuid.UUID, tags: Any = None,
        metadata: dict[str, Any] | None = None, **kwargs: Any,
    ) -> None:  # fmt: skip
        if metadata and "langgraph_node" in metadata and not (tags and _NOSTREAM in tags):
            if not self.subgraphs and graph_namespace(metadata)[self.base :]:
                return  # (LangGraph: a subgraph's tokens only with subgraphs=True)
            shown = user_tags(tags)
            if shown:
                metadata["tags"] = shown
            self.metadata[run_id] = metadata

    def on_llm_new_token(
        self, token: str, *, chunk: Any = None, run_id: uuid.UUID, **kwargs: Any
    ) -> None:
        metadata = self.metadata.get(run_id)
        if metadata is not None and isinstance(chunk, ChatGenerationChunk):
            self._send(chunk.message, metadata, dedupe=False)

    def on_llm_end(self, response: Any, *, run_id: uuid.UUID, **kwargs: Any) -> None:
        metadata = self.metadata.pop(run_id, None)
        if metadata is not None and response.generations and response.generations[0]:
            generation = response.generations[0][0]
            if isinstance(generation, ChatGeneration):
                self._send(generation.message, metadata, dedupe=True)

    def on_llm_error(self, error: BaseException, *, run_id: uuid.UUID, **kwargs: Any) -> None:
        self.metadata.pop(run_id, None)

    # --- a node's own input and output (LangGraph: the node's chain start and end) ---------

    def node_started(self, state: Any) -> None:
        """The messages in a node's input are not sent again when it returns them."""
        for value in _values(state):
            if isinstance(value, BaseMessage):
                if value.id is not None:
                    self.seen.add(value.id)
            elif isinstance(value, Sequence) and not isinstance(value, str):
                for item in value:
                    if isinstance(item, BaseMessage) and item.id is not None:
                        self.seen.add(item.id)

    def node_returned(self, output: Any, metadata: dict[str, Any]) -> None:
        """Send the new messages a node returned (in a `Command`'s update too)."""
        if isinstance(output, Command):
            self._find(output.update, metadata)
        elif isinstance(output, Sequence) and any(isinstance(o, Command) for o in output):
            for item in output:
                self._find(item.update if isinstance(item, Command) else item, metadata)
        else:
            self._find(output, metadata)

    def _find(self, output: Any, metadata: dict[str, Any]) -> None:
        """The messages in what a node returned: a message, a list of them, or a state
        whose top-level values are messages or lists of them."""
        if isinstance(output, BaseMessage):
            self._send(output, metadata, dedupe=True)
        elif isinstance(output, Sequence):
            self._send_all(output, metadata)
        else:
            for value in _values(output):
                if isinstance(value, BaseMessage):
                    self._send(value, metadata, dedupe=True)
                elif isinstance(value, Sequence):
                    self._send_all(value, metadata)

    def _send_all(self, values: Sequence[Any], metadata: dict[str, Any]) -> None:
        for value in values:
            if isinstance(value, BaseMessage):
                self._send(value, metadata, dedupe=True)


def _values(state: Any) -> Sequence[Any]:
    """A state's top-level values: a dict's, a pydantic model's or a dataclass's."""
    if isinstance(state, dict):
        return list(dict.values(state))
    if hasattr(type(state), "model_fields") and not isinstance(state, type):
        return [getattr(state, name, None) for name in type(state).model_fields]
    if is_dataclass(state) and not isinstance(state, type):
        return [getattr(state, f.name) for f in fields(state)]
    return ()


def _node_metadata(run: Any, task: Task) -> tuple[dict[str, Any], str]:
    """The metadata LangGraph gives a node's run, and the task's checkpoint namespace."""
    namespace = checkpoint_ns(run, task.node, task_uuid(run, task))
    metadata = task_metadata(run, task, namespace)
    return {"ls_integration": "langgraph", **metadata}, namespace


def enter_node(handler: ChatStream, run: Any, task: Task) -> Any:
    """Run the rest of this task in a langchain config whose callbacks send the chat
    model's tokens; returns the token `leave_node` needs and the node's metadata."""
    config = run.config
    metadata, namespace = _node_metadata(run, task)
    tags = list(config.get("tags") or ())
    # a manager, as the node's own run has: what a call inside passes merges with its
    # metadata and tags instead of replacing them
    callbacks = CallbackManager.configure(
        inheritable_callbacks=config.get("callbacks"),
        inheritable_tags=tags,
        inheritable_metadata=metadata,
    )
    callbacks.add_handler(handler, inherit=True)
    configurable = {**(config.get("configurable") or {}), "checkpoint_ns": namespace}
    lc_config = {
        "callbacks": callbacks,
        "metadata": metadata,
        "tags": tags,
        "configurable": configurable,
        "recursion_limit": config.get("recursion_limit", 25),
    }
    return var_child_runnable_config.set(lc_config), metadata  # type: ignore[arg-type]


def leave_node(token: Any) -> None:
    var_child_runnable_config.reset(token)
