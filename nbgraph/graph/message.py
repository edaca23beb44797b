"""LangGraph's `langgraph.graph.message`: the `messages` reducer and the state built on it.

`add_messages` (merge by id, `RemoveMessage` deletes, `REMOVE_ALL_MESSAGES` clears),
`MessagesState` (a state of one `messages` field), `MessageGraph` (LangGraph's older
builder whose whole state is that list) and `push_message` (a node sends a message to the
`messages` stream, and writes it to its state, before it returns).
"""

from typing import Any

from nbgraph.engine.core.runtime import current_task_env
from nbgraph.engine.core.tasks import absorb_update
from nbgraph.messages import REMOVE_ALL_MESSAGES, MessagesState, add_messages
from nbgraph.notebook.graph import MessageGraph

__all__ = ["REMOVE_ALL_MESSAGES", "MessageGraph", "MessagesState", "add_messages", "push_message"]


def push_message(message: Any, *, state_key: str | None = "messages") -> Any:
    """Send `message` to `stream_mode="messages"` from inside a node, and (unless
    `state_key` is None) write it to that field of the node's state, as if the node had
    returned it; returns the message as a langchain message. Needs langchain_core.

    Raises:
        ValueError: the message has no id ("Message ID is required", LangGraph's words).
        RuntimeError: called outside a node of a running graph.
    """
    from langchain_core.messages import convert_to_messages
    from langchain_core.runnables.config import var_child_runnable_config

    from nbgraph.engine.streaming.chat_stream import ChatStream

    env = current_task_env()
    if env is None:
        raise RuntimeError("push_message() is called inside a node of a running graph.")
    message = convert_to_messages([message])[0]
    if message.id is None:
        raise ValueError("Message ID is required")
    config = var_child_runnable_config.get() or {}
    callbacks = config.get("callbacks")
    handlers = getattr(callbacks, "handlers", callbacks) or []
    for handler in handlers:
        if isinstance(handler, ChatStream):
            handler.push(message, dict(config.get("metadata") or {}))
    if state_key:
        absorb_update(env.run.spec, None, env.task, {state_key: message})
    return message
