"""One tool call run as LangGraph's `ToolNode` runs it: the tool invoked with the call, its
result made a `ToolMessage`, and a failure turned into an error `ToolMessage` (or raised) as
`handle_tool_errors` says, with LangGraph's texts.
"""

from __future__ import annotations

import inspect
import json
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any

import pydantic
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, ToolException

__all__ = ["ToolInvocationError", "as_tool", "default_handle_tool_errors", "run_call"]

_INVALID_TOOL_NAME = "Error: {requested_tool} is not a valid tool, try one of [{available_tools}]."
_TOOL_CALL_ERROR = "Error: {error}\n Please fix your mistakes."
_TOOL_INVOCATION_ERROR = (
    "Error invoking tool '{tool_name}' with kwargs {tool_kwargs} with error:\n"
    " {error}\n"
    " Please fix the error and try again."
)
_UNIONS = (typing.Union, types.UnionType)
_BLOCK_TYPES = ("text", "image_url", "image", "json", "search_result", "custom_tool_call_output")


class ToolInvocationError(ToolException):
    """A tool was called with arguments its schema refuses (LangGraph's error of that name).

    Attributes:
        message: the text the model is shown: the tool, its arguments, what was wrong.
    """

    def __init__(self, tool_name: str, source: pydantic.ValidationError, tool_kwargs: dict):
        lines = [
            ".".join(str(part) for part in error.get("loc", ())) + ": " + error["msg"]
            for error in source.errors()
        ]
        self.message = _TOOL_INVOCATION_ERROR.format(
            tool_name=tool_name, tool_kwargs=tool_kwargs, error="\n".join(lines)
        )
        self.tool_name, self.tool_kwargs, self.source = tool_name, tool_kwargs, source
        super().__init__(self.message)


def default_handle_tool_errors(e: Exception) -> str:
    """LangGraph's default: bad arguments become a message the model can fix; any other
    error is raised (and fails the run, naming the tool node)."""
    if isinstance(e, ToolInvocationError):
        return e.message
    raise e


def _content_of(output: Any) -> Any:
    """A tool's result as `ToolMessage` content: a str or content blocks as they are,
    anything else as JSON (or `str()` when it is not JSON)."""
    if isinstance(output, str):
        return output
    if isinstance(output, list) and all(
        isinstance(x, dict) and x.get("type") in _BLOCK_TYPES for x in output
    ):
        return output
    try:
        return json.dumps(output, ensure_ascii=False)
    except Exception:
        return str(output)


def as_tool(tool: Any) -> BaseTool:
    """A langchain tool from a `BaseTool`, an `@tool` function or a plain function."""
    if isinstance(tool, BaseTool):
        return tool
    if not callable(tool):
        raise TypeError(
            f"ToolNode: expected a langchain tool or a function, got {tool!r} "
            f"(a {type(tool).__name__})."
        )
    from langchain_core.tools import tool as make_tool

    return make_tool(tool)


def run_call(
    call: Mapping[str, Any],
    tools: Mapping[str, BaseTool],
    config: dict[str, Any],
    handle: Any,
) -> Any:
    """Run one tool call; return its `ToolMessage` (or what the tool returned: a Command)."""
    tool = tools.get(call["name"])
    if tool is None:
        content = _INVALID_TOOL_NAME.format(
            requested_tool=call["name"], available_tools=", ".join(tools)
        )
        return ToolMessage(content, name=call["name"], tool_call_id=call["id"], status="error")
    try:
        try:
            response = tool.invoke({**call, "type": "tool_call"}, config)
        except pydantic.ValidationError as exc:
            raise ToolInvocationError(call["name"], exc, call["args"]) from exc
        if isinstance(response, ToolMessage):
            response.content = _content_of(response.content)
        return response
    except Exception as e:
        if not handle or not isinstance(e, _handled_types(handle)):
            raise
        content = _error_text(e, handle)
        return ToolMessage(content, name=call["name"], tool_call_id=call["id"], status="error")


def _handled_types(handle: Any) -> tuple[type[BaseException], ...]:
    """The exceptions `handle_tool_errors` turns into messages."""
    if isinstance(handle, type) and issubclass(handle, Exception):
        return (handle,)
    if isinstance(handle, tuple):
        return handle
    if callable(handle):
        return _annotated_types(handle)
    return (Exception,)


def _annotated_types(handler: Callable[..., Any]) -> tuple[type[BaseException], ...]:
    """The exception classes a handler's first parameter is annotated with (all if none)."""
    try:
        hints = typing.get_type_hints(handler)
        first = next(iter(inspect.signature(handler).parameters))
    except Exception:
        return (Exception,)
    hint = hints.get(first)
    options = typing.get_args(hint) if typing.get_origin(hint) in _UNIONS else (hint,)
    found = tuple(t for t in options if isinstance(t, type) and issubclass(t, BaseException))
    return found or (Exception,)


def _error_text(e: Exception, handle: bool | str | Callable[..., str] | Any) -> str:
    """The error message's content: LangGraph's template, the given text, or the handler's."""
    if isinstance(handle, (bool, tuple)) or (
        isinstance(handle, type) and issubclass(handle, Exception)
    ):
        return _TOOL_CALL_ERROR.format(error=repr(e))
    if isinstance(handle, str):
        return handle
    if callable(handle):
        return handle(e)
    raise ValueError(
        "handle_tool_errors must be a bool, a str, a callable, an exception class or a "
        f"tuple of them; got {handle!r}."
    )
