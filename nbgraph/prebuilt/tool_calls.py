"""One tool call run as LangGraph's `ToolNode` runs it, with LangGraph's texts.

The tool is invoked with the call and what the tool node injects, its response checked
(`tool_commands`), a failure turned into an error `ToolMessage` (or raised) as
`handle_tool_errors` says; and `wrap_tool_call` / `awrap_tool_call` around it."""

from __future__ import annotations

import dataclasses
import inspect
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pydantic
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, ToolException

from nbgraph.engine.core.interrupts import GraphInterrupt
from nbgraph.engine.core.tasks import ParentCommand
from nbgraph.prebuilt.injection import ToolInjections, ToolRuntime
from nbgraph.prebuilt.tool_commands import checked_response

__all__ = [
    "ToolCall",
    "ToolCallRequest",
    "ToolInvocationError",
    "as_tool",
    "default_handle_tool_errors",
]

_INVALID_TOOL_NAME = "Error: {requested_tool} is not a valid tool, try one of [{available_tools}]."
_TOOL_CALL_ERROR = "Error: {error}\n Please fix your mistakes."
_TOOL_INVOCATION_ERROR = (
    "Error invoking tool '{tool_name}' with kwargs {tool_kwargs} with error:\n"
    " {error}\n"
    " Please fix the error and try again."
)
_UNIONS = (typing.Union, types.UnionType)


class ToolInvocationError(ToolException):
    """A tool was called with arguments its schema refuses (LangGraph's error of that name).

    Attributes:
        message: the text the model is shown: the tool, its arguments, what was wrong.
    """

    def __init__(
        self,
        tool_name: str,
        source: pydantic.ValidationError,
        tool_kwargs: dict,
        injected: set[str] | frozenset[str] = frozenset(),
    ):
        lines = [
            ".".join(str(part) for part in error.get("loc", ())) + ": " + error["msg"]
            for error in source.errors()
            if error.get("loc") and error["loc"][0] not in injected
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


@dataclass
class ToolCallRequest:
    """One tool call as `wrap_tool_call` sees it (LangGraph's class of that name).

    Attributes:
        tool_call: the call (`name`, `args`, `id`).
        tool: the tool it names, or None when the tool node has none of that name.
        state: the state the tool is handed; runtime: its `ToolRuntime`.
    """

    tool_call: dict[str, Any]
    tool: BaseTool | None
    state: Any
    runtime: ToolRuntime

    def override(self, **overrides: Any) -> ToolCallRequest:
        """A new request with some of `tool_call`, `tool`, `state` replaced (a new state is
        the runtime's too)."""
        request = dataclasses.replace(self, **overrides)
        if "state" in overrides and isinstance(request.runtime, ToolRuntime):
            runtime = dataclasses.replace(request.runtime, state=request.state)
            request = dataclasses.replace(request, runtime=runtime)
        return request


@dataclass
class ToolCall:
    """One tool call as the tool node runs it.

    Attributes:
        request: the call, its tool, state and runtime.
        prepared: `prepared(tool)` -> the tool as called (`lifted`) and what it is handed.
        config: the config the tool is invoked with.
        handle: `handle_tool_errors`; `kind`: the tool node's input ("dict", "list" or
            "tool_calls"); `messages_key`: the state field of the messages.
        names: every tool's name (for the unknown-tool message).
        wrap, awrap: `wrap_tool_call` / `awrap_tool_call`, or None.
    """

    request: ToolCallRequest
    prepared: Callable[[BaseTool], tuple[BaseTool, ToolInjections | None]]
    config: dict[str, Any]
    handle: Any
    kind: str
    messages_key: str
    names: tuple[str, ...]
    wrap: Any = None
    awrap: Any = None

    def run(self) -> Any:
        """The call's `ToolMessage`, `Command` or list of them, through `wrap_tool_call`.

        Raises:
            KeyError, ValueError: what the tool asks for cannot be injected.
            Exception: an error `handle_tool_errors` does not turn into a message.
        """
        if self.wrap is None:
            return self.execute(self.request)
        try:
            return self.wrap(self.request, self.execute)
        except Exception as error:
            return self._wrapper_failed(error)

    async def arun(self) -> Any:
        """`run` in an async run: the tool's async form (a sync tool runs on a thread),
        through `awrap_tool_call` (or `wrap_tool_call`, with the sync `execute`)."""
        if self.wrap is None and self.awrap is None:
            return await self.aexecute(self.request)
        try:
            if self.awrap is not None:
                return await self.awrap(self.request, self.aexecute)
            return self.wrap(self.request, self.execute)
        except Exception as error:
            return self._wrapper_failed(error)

    def execute(self, request: ToolCallRequest) -> Any:
        """Run `request`'s call once (a wrapper may call this again)."""
        if request.tool is None:
            return self._unknown(request.tool_call)
        tool, payload = self._payload(request)
        try:
            response = tool.invoke(payload, self.config)
            return checked_response(response, request.tool_call, self.kind, self.messages_key)
        except Exception as error:
            return self._failed(request, error)

    async def aexecute(self, request: ToolCallRequest) -> Any:
        """`execute`, awaiting the tool's async form."""
        if request.tool is None:
            return self._unknown(request.tool_call)
        tool, payload = self._payload(request)
        try:
            response = await tool.ainvoke(payload, self.config)
            return checked_response(response, request.tool_call, self.kind, self.messages_key)
        except Exception as error:
            return self._failed(request, error)

    def _unknown(self, call: dict[str, Any]) -> ToolMessage:
        name = call["name"]
        names = ", ".join(self.names)
        content = _INVALID_TOOL_NAME.format(requested_tool=name, available_tools=names)
        return ToolMessage(content, name=name, tool_call_id=call["id"], status="error")

    def _payload(self, request: ToolCallRequest) -> tuple[BaseTool, dict[str, Any]]:
        """The tool as called, and the tool call with the injected arguments filled."""
        call = request.tool_call
        tool, injections = self.prepared(request.tool)  # type: ignore[arg-type]
        args = call.get("args") or {}
        if injections is not None:
            args = injections.fill(args, request.runtime, self.messages_key)
        return tool, {"name": call["name"], "args": args, "id": call["id"], "type": "tool_call"}

    def _failed(self, request: ToolCallRequest, error: Exception) -> ToolMessage:
        """A failed call's error message, or the error raised (see `handle_tool_errors`)."""
        if isinstance(error, (GraphInterrupt, ParentCommand)):
            raise error
        call = request.tool_call
        if isinstance(error, pydantic.ValidationError):
            _, injections = self.prepared(request.tool)  # type: ignore[arg-type]
            hidden = injections.names if injections is not None else frozenset()
            invalid = ToolInvocationError(call["name"], error, call.get("args") or {}, hidden)
            invalid.__cause__ = error
            error = invalid
        handle = self.handle
        if not handle or not isinstance(error, _handled_types(handle)):
            raise error
        content = _error_text(error, handle)
        return ToolMessage(content, name=call["name"], tool_call_id=call["id"], status="error")

    def _wrapper_failed(self, error: Exception) -> ToolMessage:
        """A wrapper's error: a message when `handle_tool_errors` is set (whatever the
        error's type, as LangGraph), else raised; a question for a person always raised."""
        if isinstance(error, (GraphInterrupt, ParentCommand)) or not self.handle:
            raise error
        call = self.request.tool_call
        content = _error_text(error, self.handle)
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
