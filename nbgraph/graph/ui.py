"""LangGraph's `langgraph.graph.ui`: UI messages a node sends for a front end to render
(LangGraph's generative UI), kept in a state field merged by `ui_message_reducer`.

`push_ui_message(name, props)` inside a node sends `{"type": "ui", "id", "name", "props",
"metadata"}` to `stream_mode="custom"` and writes it to the state's `ui` field, as if the
node had returned it; `delete_ui_message(id)` sends and writes a `{"type": "remove-ui"}`.

>>> ui_message_reducer([{"type": "ui", "id": "1", "name": "card", "props": {"a": 1}}],
...                    [{"type": "remove-ui", "id": "1"}])
[]
"""

from __future__ import annotations

import uuid
from typing import Any, Literal, TypedDict

from nbgraph.engine.core.runtime import current_task_env
from nbgraph.engine.core.tasks import absorb_update
from nbgraph.engine.node_api import get_config, get_stream_writer

__all__ = [
    "AnyUIMessage",
    "RemoveUIMessage",
    "UIMessage",
    "delete_ui_message",
    "push_ui_message",
    "ui_message_reducer",
]


class UIMessage(TypedDict):
    """A UI component to render: its `name`, its `props`, an `id` and `metadata`."""

    type: Literal["ui"]
    id: str
    name: str
    props: dict[str, Any]
    metadata: dict[str, Any]


class RemoveUIMessage(TypedDict):
    """The UI component of this `id` is to be removed."""

    type: Literal["remove-ui"]
    id: str


AnyUIMessage = UIMessage | RemoveUIMessage


def push_ui_message(
    name: str,
    props: dict[str, Any],
    *,
    id: str | None = None,
    metadata: dict[str, Any] | None = None,
    message: Any = None,
    state_key: str | None = "ui",
    merge: bool = False,
) -> UIMessage:
    """Send a UI message from inside a node and (unless `state_key` is None) write it to
    that field; `merge=True` asks the reducer to merge its props into the message of the
    same id; `message` ties it to a chat message (its id goes in the metadata)."""
    config = get_config()
    message_id = message.get("id") if isinstance(message, dict) else getattr(message, "id", None)
    event: UIMessage = {
        "type": "ui",
        "id": id or str(uuid.uuid4()),
        "name": name,
        "props": props,
        "metadata": {
            "merge": merge,
            "run_id": config.get("run_id"),
            "tags": config.get("tags"),
            "name": config.get("run_name"),
            **(metadata or {}),
            **({"message_id": message_id} if message_id else {}),
        },
    }
    _send(event, state_key)
    return event


def delete_ui_message(id: str, *, state_key: str = "ui") -> RemoveUIMessage:
    """Send, and write to `state_key`, the removal of the UI message `id`."""
    event: RemoveUIMessage = {"type": "remove-ui", "id": id}
    _send(event, state_key)
    return event


def _send(event: Any, state_key: str | None) -> None:
    get_stream_writer()(event)
    env = current_task_env()
    if state_key and env is not None:
        absorb_update(env.run.spec, None, env.task, {state_key: event})


def ui_message_reducer(left: Any, right: Any) -> list[AnyUIMessage]:
    """Merge UI messages: one of an id already there replaces it (its props merged into the
    old ones when its metadata says `merge`), a `remove-ui` removes it, others are added.

    Raises:
        ValueError: a `remove-ui` names an id that is not there (LangGraph's message).
    """
    merged = list(left) if isinstance(left, list) else [left]
    where = {m.get("id"): i for i, m in enumerate(merged)}
    removed: set[Any] = set()
    for item in right if isinstance(right, list) else [right]:
        key = item.get("id")
        index = where.get(key)
        if index is None:
            if item.get("type") == "remove-ui":
                raise ValueError(
                    f"Attempting to delete an UI message with an ID that doesn't exist ('{key}')"
                )
            where[key] = len(merged)
            merged.append(item)
        elif item.get("type") == "remove-ui":
            removed.add(key)
        else:
            removed.discard(key)
            if item.get("metadata", {}).get("merge", False):
                item = {**item, "props": {**merged[index]["props"], **item["props"]}}
            merged[index] = item
    return [m for m in merged if m.get("id") not in removed]
