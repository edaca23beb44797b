"""`push_message(message)` inside a node: the message streamed at once and written to the
state, as LangGraph's `langgraph.graph.message.push_message` does.

A node that builds its reply itself (not through a chat model the messages stream hears)
pushes it: it goes out on `stream_mode="messages"` with the node's metadata now, not when the
node returns, and is one of the node's writes (to `state_key`, `"messages"` by default; None:
streamed only). The message needs an id: a message the node also returns is then not streamed
twice. This module imports langchain_core (its messages), so `import nbgraph` loads it only
when `push_message` is first used.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import BaseMessage, convert_to_messages
from langchain_core.runnables.config import var_child_runnable_config

from nbgraph.engine.core.node_context.runtime import current_task_env
from nbgraph.engine.core.tasks import absorb_update
from nbgraph.engine.streaming.chat_stream import ChatStream
from nbgraph.engine.streaming.namespaces import graph_namespace

__all__ = ["push_message"]


def push_message(message: Any, *, state_key: str | None = "messages") -> BaseMessage:
    """Stream `message` on the `messages` stream of the running node now, and write it to
    the state's `state_key` field (None: stream it only). Returns it as a message (a
    `("user", "hi")` pair or a dict is made one, as `add_messages` does).

    Raises:
        RuntimeError: called outside a running node.
        ValueError: the message has no id.
    """
    env = current_task_env()
    if env is None:
        raise RuntimeError(
            "push_message() is called inside a running node (it streams the message from "
            "that node and writes it to its state); here no node is running."
        )
    message = convert_to_messages([message])[0]
    if message.id is None:
        raise ValueError(
            f"push_message(): Message ID is required; {type(message).__name__} "
            f"{str(message.content)[:40]!r} has none (give it id=...), so that the node's "
            "returning it too does not stream it twice."
        )
    config = var_child_runnable_config.get() or {}
    callbacks = config.get("callbacks")
    handlers = getattr(callbacks, "handlers", callbacks) or ()
    metadata = config.get("metadata") or {}
    for handler in handlers:
        if isinstance(handler, ChatStream):
            if handler.subgraphs or not graph_namespace(metadata)[handler.base :]:
                handler.send(message, dict(metadata))
            break
    if state_key:
        absorb_update(env.run.spec, None, env.task, {state_key: message})
    return message
