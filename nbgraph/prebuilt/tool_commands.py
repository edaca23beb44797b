"""What a tool returned, checked as LangGraph's `ToolNode` checks it: a `ToolMessage`, a
`Command`, or a list of them.

A `ToolMessage`'s content is made message content; a `Command` is checked (an update to this
graph answers the call with a `ToolMessage`); a list holds exactly one answer.

A function's nbgraph `Command` passes through langchain's tool call as it is only if langchain
sees a `ToolOutputMixin`, so the tool node calls a copy of each tool whose returned Commands
are wrapped in one (`lifted`), and unwraps them here.
"""

from __future__ import annotations

import copy
import functools
import inspect
import json
from collections.abc import Callable
from typing import Any

from langchain_core.messages import RemoveMessage, ToolMessage, convert_to_messages
from langchain_core.messages.tool import ToolOutputMixin
from langchain_core.tools import BaseTool, StructuredTool

from nbgraph.messages.merge import REMOVE_ALL_MESSAGES
from nbgraph.primitives import Command

__all__ = ["checked_response", "content_of", "lifted"]

_BLOCK_TYPES = ("text", "image_url", "image", "json", "search_result", "custom_tool_call_output")


def content_of(output: Any) -> Any:
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
    copied = tool.model_copy()
    object.__setattr__(copied, "_run", _lifted(tool._run))  # (shadows the class's methods)
    object.__setattr__(copied, "_arun", _lifted(tool._arun))
    return copied


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


def checked_response(response: Any, call: dict[str, Any], kind: str, key: str) -> Any:
    """A tool's response as the tool node returns it (LangGraph's checks and texts).

    Args:
        response: what the tool's `invoke` returned.
        call: the tool call; kind: the tool node's input ("dict", "list", "tool_calls");
        key: the state field of the messages.

    Raises:
        ValueError: a Command does not answer the call, or its update's form does not fit
            the tool node's input; a list answers the call other than once.
        TypeError: anything else.
    """
    response = _unlift(response)
    name = call["name"]
    if isinstance(response, Command):
        return _checked(response, call, kind, key, require_answer=True)
    if isinstance(response, ToolMessage):
        response.content = content_of(response.content)
        return response
    if isinstance(response, list):
        if all(isinstance(r, (Command, ToolMessage)) for r in response):
            return _checked_list(response, call, kind, key)
        raise TypeError(
            f"Tool {name} returned a list with invalid element types: expected all "
            "Command or ToolMessage"
        )
    raise TypeError(f"Tool {name} returned unexpected type: {type(response)}")


def _checked_list(response: list[Any], call: dict[str, Any], kind: str, key: str) -> list:
    """A list of Commands and ToolMessages: exactly one answers the call."""
    call_id = call["id"]
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
            f"Tool {call['name']} returned a list with {answers} messages bound to "
            f"tool_call_id {call_id!r}; expected exactly one terminating ToolMessage."
        )
    checked = []
    for item in response:
        if isinstance(item, Command):
            checked.append(_checked(item, call, kind, key, require_answer=False))
        else:
            item.content = content_of(item.content)
            checked.append(item)
    return checked


def _checked(
    command: Command, call: dict[str, Any], kind: str, key: str, *, require_answer: bool
) -> Command:
    """A tool's `Command`: an update to this graph holds a `ToolMessage` answering the call
    (named after the tool); a dict update needs a state input, a list one a list input."""
    if isinstance(command.update, dict):
        if kind not in ("dict", "tool_calls"):
            raise ValueError(
                "Tools can provide a dict in Command.update only when using dict with "
                f"'{key}' key as ToolNode input, got: {command.update} for tool "
                f"'{call['name']}'"
            )
        command = copy.deepcopy(command)
        messages = command.update.get(key, [])
    elif isinstance(command.update, list):
        if kind != "list":
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
        raise ValueError(_no_answer(call["name"], messages, kind, key))
    return command


def _no_answer(name: str, messages: list[Any], kind: str, key: str) -> str:
    answer = '[ToolMessage("Success", tool_call_id=tool_call_id), ...]'
    update = f'{{"{key}": {answer}}}' if kind == "dict" else answer
    return (
        f"Expected to have a matching ToolMessage in Command.update for tool '{name}', got: "
        f"{messages}. Every tool call (LLM requesting to call a tool) in the message history "
        f"MUST have a corresponding ToolMessage. You can fix it by modifying the tool to "
        f"return `Command(update={update}, ...)`."
    )
