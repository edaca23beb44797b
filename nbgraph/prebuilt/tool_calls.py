"""One tool call run as LangGraph's `ToolNode` runs it: the tool invoked with the call and
what the tool node injects, its result made a `ToolMessage` or checked as a `Command`, and a
failure turned into an error `ToolMessage` (or raised) as `handle_tool_errors` says, with
LangGraph's texts.
"""

from __future__ import annotations

import copy
import functools
import inspect
import json
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pydantic
from langchain_core.messages import RemoveMessage, ToolMessage, convert_to_messages
from langchain_core.messages.tool import ToolOutputMixin
from langchain_core.tools import BaseTool, StructuredTool, ToolException

from nbgraph.engine.core.interrupts import GraphInterrupt
from nbgraph.engine.core.tasks import ParentCommand
from nbgraph.messages.merge import REMOVE_ALL_MESSAGES
from nbgraph.prebuilt.injection import ToolInjections, ToolRuntime
from nbgraph.types import Command

__all__ = [
    "ToolCall",
    "ToolInvocationError",
    "as_tool",
    "default_handle_tool_errors",
    "lifted",
]

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


class _Lifted(ToolOutputMixin):
    """An nbgraph `Command` a tool returned, carried through langchain's tool call as it is
    (langchain passes a `ToolOutputMixin` on, and would make anything else a message's text)."""

    __slots__ = ("command",)

    def __init__(self, command: Command) -> None:
        self.command = command


def _lift(value: Any) -> Any:
    if isinstance(value, Command):
        return _Lifted(value)
    if (
        isinstance(value, list)
        and any(isinstance(v, Command) for v in value)
        and all(isinstance(v, (Command, ToolOutputMixin)) for v in value)
    ):
        return [_lift(v) for v in value]
    return value


def _unlift(value: Any) -> Any:
    if isinstance(value, _Lifted):
        return value.command
    if isinstance(value, list) and any(isinstance(v, _Lifted) for v in value):
        return [_unlift(v) for v in value]
    return value


def lifted(tool: BaseTool) -> BaseTool:
    """The tool the tool node calls: a copy whose nbgraph `Command`s reach the tool node as
    they are (the function of a function tool wrapped; any other tool's `_run`/`_arun`)."""
    if isinstance(tool, StructuredTool):
        update = {"func": _lifted(tool.func), "coroutine": _lifted(tool.coroutine)}
        return tool.model_copy(update={k: v for k, v in update.items() if v is not None})
    copy = tool.model_copy()
    object.__setattr__(copy, "_run", _lifted(tool._run))  # (shadows the class's methods)
    object.__setattr__(copy, "_arun", _lifted(tool._arun))
    return copy


def _lifted(fn: Callable[..., Any] | None) -> Callable[..., Any] | None:
    """`fn` with a returned `Command` lifted (`_lift`); its signature and hints as `fn`'s,
    which langchain reads (`functools.wraps`)."""
    if fn is None:
        return None
    if inspect.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def lifted_coroutine(*args: Any, **kwargs: Any) -> Any:
            return _lift(await fn(*args, **kwargs))

        return lifted_coroutine

    @functools.wraps(fn)
    def lifted_function(*args: Any, **kwargs: Any) -> Any:
        return _lift(fn(*args, **kwargs))

    return lifted_function


@dataclass
class ToolCall:
    """One tool call as the tool node runs it.

    Attributes:
        call: langchain's `ToolCall` dict (`name`, `args`, `id`).
        tool: the tool to run (None: no tool has that name); `injections` what it is handed.
        runtime: the call's `ToolRuntime`; `config` the config the tool is invoked with.
        handle: `handle_tool_errors`; `kind`: the tool node's input ("dict", "list" or
            "tool_calls"); `messages_key`: the state field of the messages.
        names: every tool's name (for the unknown-tool message).
    """

    call: dict[str, Any]
    tool: BaseTool | None
    injections: ToolInjections | None
    runtime: ToolRuntime
    config: dict[str, Any]
    handle: Any
    kind: str
    messages_key: str
    names: tuple[str, ...]

    def run(self) -> Any:
        """The call's `ToolMessage`, `Command` or list of them (see `arun`)."""
        if self.tool is None:
            return self._unknown()
        payload = self._payload()
        try:
            return self._result(self.tool.invoke(payload, self.config))
        except Exception as error:
            return self._failed(error)

    async def arun(self) -> Any:
        """`run`, awaiting the tool's async form (a sync tool runs on a thread).

        Raises:
            KeyError, ValueError: what the tool asks for cannot be injected.
            Exception: an error `handle_tool_errors` does not turn into a message.
        """
        if self.tool is None:
            return self._unknown()
        payload = self._payload()
        try:
            return self._result(await self.tool.ainvoke(payload, self.config))
        except Exception as error:
            return self._failed(error)

    def _unknown(self) -> ToolMessage:
        name = self.call["name"]
        content = _INVALID_TOOL_NAME.format(
            requested_tool=name, available_tools=", ".join(self.names)
        )
        return ToolMessage(content, name=name, tool_call_id=self.call["id"], status="error")

    def _payload(self) -> dict[str, Any]:
        call = self.call
        args = call.get("args") or {}
        if self.injections is not None:
            args = self.injections.fill(args, self.runtime, self.messages_key)
        return {"name": call["name"], "args": args, "id": call["id"], "type": "tool_call"}

    def _result(self, response: Any) -> Any:
        """The tool's response checked: LangGraph's `_normalize_tool_response`."""
        response = _unlift(response)
        name = self.call["name"]
        if isinstance(response, Command):
            return self._checked(response, require_answer=True)
        if isinstance(response, ToolMessage):
            response.content = _content_of(response.content)
            return response
        if isinstance(response, list):
            if all(isinstance(r, (Command, ToolMessage)) for r in response):
                return self._checked_list(response)
            raise TypeError(
                f"Tool {name} returned a list with invalid element types: expected all "
                "Command or ToolMessage"
            )
        raise TypeError(f"Tool {name} returned unexpected type: {type(response)}")

    def _checked_list(self, response: list[Any]) -> list[Any]:
        """A list of Commands and ToolMessages: exactly one answers the call."""
        call_id, key = self.call["id"], self.messages_key
        answers = 0
        for item in response:
            if isinstance(item, ToolMessage):
                answers += item.tool_call_id == call_id
            elif isinstance(item.update, dict):
                answers += sum(
                    isinstance(m, ToolMessage) and m.tool_call_id == call_id
                    for m in item.update.get(key, [])
                )
        if answers != 1:
            raise ValueError(
                f"Tool {self.call['name']} returned a list with {answers} messages bound to "
                f"tool_call_id {call_id!r}; expected exactly one terminating ToolMessage."
            )
        checked = []
        for item in response:
            if isinstance(item, Command):
                checked.append(self._checked(item, require_answer=False))
            else:
                item.content = _content_of(item.content)
                checked.append(item)
        return checked

    def _checked(self, command: Command, *, require_answer: bool) -> Command:
        """A tool's `Command`, checked as LangGraph checks it: an update to this graph holds
        a `ToolMessage` answering the call (named after the tool)."""
        call, key = self.call, self.messages_key
        if isinstance(command.update, dict):
            if self.kind not in ("dict", "tool_calls"):
                raise ValueError(
                    "Tools can provide a dict in Command.update only when using dict with "
                    f"'{key}' key as ToolNode input, got: {command.update} for tool "
                    f"'{call['name']}'"
                )
            command = copy.deepcopy(command)
            messages = command.update.get(key, [])
        elif isinstance(command.update, list):
            if self.kind != "list":
                raise ValueError(
                    "Tools can provide a list of messages in Command.update only when using "
                    f"list of messages as ToolNode input, got: {command.update} for tool "
                    f"'{call['name']}'"
                )
            command = copy.deepcopy(command)
            messages = command.update
        else:
            return command
        messages = convert_to_messages(messages)
        if messages == [RemoveMessage(id=REMOVE_ALL_MESSAGES)]:
            return command
        answered = False
        for message in messages:
            if isinstance(message, ToolMessage) and message.tool_call_id == call["id"]:
                message.name, answered = call["name"], True
        if require_answer and command.graph is None and not answered:
            raise ValueError(_no_answer(call["name"], messages, self.kind, key))
        return command

    def _failed(self, error: Exception) -> ToolMessage:
        """A failed call's error message, or the error raised (see `handle_tool_errors`)."""
        if isinstance(error, (GraphInterrupt, ParentCommand)):
            raise error
        if isinstance(error, pydantic.ValidationError):
            hidden = set(self.injections.hidden) if self.injections else set()
            if self.injections is not None:
                hidden |= set(self.injections.state)
                hidden |= {self.injections.store, self.injections.runtime} - {None}
            invalid = ToolInvocationError(self.call["name"], error, self.call["args"], hidden)
            invalid.__cause__ = error
            error = invalid
        handle = self.handle
        if not handle or not isinstance(error, _handled_types(handle)):
            raise error
        content = _error_text(error, handle)
        name = self.call["name"]
        return ToolMessage(content, name=name, tool_call_id=self.call["id"], status="error")


def _no_answer(name: str, messages: list[Any], kind: str, key: str) -> str:
    answer = '[ToolMessage("Success", tool_call_id=tool_call_id), ...]'
    update = f'{{"{key}": {answer}}}' if kind == "dict" else answer
    example = f"`Command(update={update}, ...)`"
    return (
        f"Expected to have a matching ToolMessage in Command.update for tool '{name}', got: "
        f"{messages}. Every tool call (LLM requesting to call a tool) in the message history "
        f"MUST have a corresponding ToolMessage. You can fix it by modifying the tool to "
        f"return {example}."
    )


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
