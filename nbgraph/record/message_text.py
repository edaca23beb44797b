"""The one-line text of a langchain_core message in tables, drawings and the inspector.

langchain's own repr spells every field (`additional_kwargs={}, response_metadata={}, ...`)
and so says little in a 40-character cell. Here a message reads as its class, its content,
its tool calls (name, arguments, call id), the call it answers, and its id, e.g.
`AIMessage('', tool_calls=[add({'a': 1}) #call_1], id='1b4e28ba…')`. The text is not escaped:
callers escape it for HTML or DOT, as every other value's.
"""

from __future__ import annotations

from typing import Any

__all__ = ["is_langchain_message", "message_text"]

_CONTENT_CHARS = 60
_ID_CHARS = 12


def is_langchain_message(value: Any) -> bool:
    """Whether `value` is a langchain_core message (read without importing langchain)."""
    module = getattr(type(value), "__module__", "") or ""
    return module.startswith("langchain_core.messages") and hasattr(value, "content")


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _short_id(value: Any) -> str:
    text = str(value)
    return repr(text if len(text) <= _ID_CHARS else text[:8] + "…")


def _content(content: Any) -> str:
    if isinstance(content, str):
        return repr(_cut(content, _CONTENT_CHARS))
    if isinstance(content, list):
        return f"[{len(content)} part{'' if len(content) == 1 else 's'}]"
    return _cut(repr(content), _CONTENT_CHARS)


def _call(call: Any) -> str:
    if not isinstance(call, dict):
        return _cut(repr(call), _CONTENT_CHARS)
    text = f"{call.get('name')}({_cut(repr(call.get('args')), _CONTENT_CHARS)})"
    return f"{text} #{call['id']}" if call.get("id") else text


def message_text(message: Any) -> str:
    """`message` (a langchain_core message) as one readable line.

    >>> from langchain_core.messages import AIMessage, ToolMessage
    >>> call = {"name": "add", "args": {"a": 1}, "id": "call_1"}
    >>> message_text(AIMessage("", tool_calls=[call], id="a1"))
    "AIMessage('', tool_calls=[add({'a': 1}) #call_1], id='a1')"
    >>> message_text(ToolMessage("3", tool_call_id="call_1", name="add"))
    "ToolMessage('3', name='add', tool_call_id='call_1')"
    """
    try:
        parts = [_content(message.content)]
        name = getattr(message, "name", None)
        if name:
            parts.append(f"name={name!r}")
        role = getattr(message, "role", None)
        if isinstance(role, str) and getattr(message, "type", None) == "chat":
            parts.append(f"role={role!r}")
        calls = getattr(message, "tool_calls", None)
        if calls:
            parts.append(f"tool_calls=[{', '.join(_call(call) for call in calls)}]")
        answers = getattr(message, "tool_call_id", None)
        if answers:
            parts.append(f"tool_call_id={answers!r}")
        if getattr(message, "status", None) == "error":  # a tool's failure, as an answer
            parts.append("status='error'")
        if getattr(message, "id", None):
            parts.append(f"id={_short_id(message.id)}")
        return f"{type(message).__name__}({', '.join(parts)})"
    except Exception as error:  # a message half built, a content that cannot be shown
        return f"<{type(message).__name__}: cannot be shown ({type(error).__name__})>"
