"""`ToolNode` and `tools_condition`, as `langgraph.prebuilt` has them.

A `ToolNode` is a node: handed the state (or a list of messages), it finds the latest AI
message, runs each of its tool calls (in parallel, on threads) and returns the
`ToolMessage`s in call order, as `{"messages": [...]}` — writes of the tool node's task, so
the record shows each answer with its caller. The AI message may be langchain's or
nbgraph's own `Message`: its tool calls are read through `.tool_calls`.
"""

from __future__ import annotations

import contextvars
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Literal

from nbgraph.prebuilt.tool_calls import as_tool, default_handle_tool_errors, run_call

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig

__all__ = ["ToolNode", "tools_condition"]

_CONFIG_KEYS = ("tags", "metadata", "callbacks", "run_name", "max_concurrency", "configurable")
"""The keys of nbgraph's config a langchain tool is handed (`recursion_limit` stays here)."""


class ToolNode:
    """A node that runs the tool calls of the latest AI message.

    Args:
        tools: langchain tools (`BaseTool`, `@tool` functions) or plain functions (made
            tools by `langchain_core.tools.tool`, as LangGraph does).
        name: the node's name when added with `add_node(tool_node)`; default "tools".
        tags: kept for LangGraph compatibility.
        handle_tool_errors: what a failing tool becomes. Default (LangGraph's): bad
            arguments become an error `ToolMessage` the model can act on, any other
            exception fails the run. `True`: every exception becomes an error message
            (`"Error: <repr>\\n Please fix your mistakes."`); a str: that text; a callable:
            its return value (for the exception types its first parameter is annotated
            with); an exception class or tuple: those become messages, others raise;
            `False`: every exception raises.
        messages_key: the state field holding the messages.

    Returns (when called): `{messages_key: [ToolMessage, ...]}` for a dict or model state,
    a list of `ToolMessage`s for a list of messages. A tool that returns a `Command`
    passes it on as the node's output.

    >>> from langchain_core.messages import AIMessage
    >>> def add(a: int, b: int) -> int:
    ...     '''Add two numbers.'''
    ...     return a + b
    >>> call = {"name": "add", "args": {"a": 1, "b": 2}, "id": "c1"}
    >>> ToolNode([add])({"messages": [AIMessage("", tool_calls=[call])]})["messages"][0].content
    '3'
    """

    def __init__(
        self,
        tools: Sequence[Any],
        *,
        name: str = "tools",
        tags: list[str] | None = None,
        handle_tool_errors: Any = default_handle_tool_errors,
        messages_key: str = "messages",
    ) -> None:
        self.name = name
        self.tags = tags
        self.handle_tool_errors = handle_tool_errors
        self.messages_key = messages_key
        if callable(tools) or isinstance(tools, (str, bytes)) or not hasattr(tools, "__iter__"):
            raise TypeError(
                f"ToolNode takes a list of tools, got {_short(tools)}: ToolNode([{_short(tools)}])."
            )
        self._tools_by_name = {}
        for tool in tools:
            made = as_tool(tool)
            self._tools_by_name[made.name] = made

    @property
    def tools_by_name(self) -> dict[str, Any]:
        """The tools, by the name a tool call uses."""
        return dict(self._tools_by_name)

    def __repr__(self) -> str:
        return f"ToolNode({list(self._tools_by_name)!r}, name={self.name!r})"

    def __call__(self, input: Any, config: RunnableConfig | None = None) -> Any:
        """Run the tool calls of the latest AI message in `input`; see the class docstring.

        Raises:
            ValueError: `input` holds no messages, or no AI message.
            Exception: a tool's error that `handle_tool_errors` does not turn into a message.
        """
        calls, kind = self._tool_calls(input)
        tool_config = {k: v for k, v in (config or {}).items() if k in _CONFIG_KEYS}
        workers = (config or {}).get("max_concurrency") or None

        def run(call: dict[str, Any]) -> Any:
            return run_call(call, self._tools_by_name, tool_config, self.handle_tool_errors)

        if len(calls) <= 1:
            outputs = [run(call) for call in calls]
        else:
            contexts = [contextvars.copy_context() for _ in calls]
            with ThreadPoolExecutor(max_workers=workers) as pool:
                outputs = list(pool.map(lambda c, x: x.run(run, c), calls, contexts))
        return self._combine(outputs, kind)

    invoke = __call__

    def _tool_calls(self, input: Any) -> tuple[list[dict[str, Any]], str]:
        """The calls to run, and whether the input was a list of messages or a state."""
        if isinstance(input, dict) and input.get("__type") == "tool_call_with_context":
            return [_call_dict(input["tool_call"])], "dict"  # (one call, Sent by an agent)
        if isinstance(input, list) and input:
            last = input[-1]
            if isinstance(last, dict) and last.get("type") == "tool_call":
                return [dict(call) for call in input], "tool_calls"
            messages, kind = input, "list"
        elif isinstance(input, dict) and input.get(self.messages_key):
            messages, kind = input[self.messages_key], "dict"
        elif getattr(input, self.messages_key, None):
            messages, kind = getattr(input, self.messages_key), "dict"
        else:
            raise ValueError(
                f"ToolNode {self.name!r}: no message found in input: expected a list of "
                f"messages or a state with {self.messages_key!r}, got {_short(input)}."
            )
        for message in reversed(messages):
            if _is_ai(message):
                return [_call_dict(call) for call in message.tool_calls], kind
        raise ValueError(
            f"ToolNode {self.name!r}: no AIMessage found in input "
            f"({len(messages)} messages in {self.messages_key!r})."
        )

    def _combine(self, outputs: list[Any], kind: str) -> Any:
        flat: list[Any] = []
        for output in outputs:
            flat.extend(output if isinstance(output, list) else [output])
        if not any(_is_command(o) for o in flat):
            return flat if kind == "list" else {self.messages_key: flat}
        return [
            o if _is_command(o) else ([o] if kind == "list" else {self.messages_key: [o]})
            for o in flat
        ]


def tools_condition(state: Any, messages_key: str = "messages") -> Literal["tools", "__end__"]:
    """Route to "tools" when the last message asks for tool calls, else to END.

    Args:
        state: a list of messages, or a state (dict or model) with `messages_key`.
        messages_key: the field holding the messages.

    Raises:
        ValueError: the state holds no messages.

    >>> from langchain_core.messages import AIMessage
    >>> tools_condition({"messages": [AIMessage("done")]})
    '__end__'
    """
    if isinstance(state, list):
        last = state[-1]
    elif (isinstance(state, dict) and (messages := state.get(messages_key, []))) or (
        messages := getattr(state, messages_key, [])
    ):
        last = messages[-1]
    else:
        raise ValueError(f"No messages found in input state to tool_edge: {state}")
    if hasattr(last, "tool_calls") and len(last.tool_calls) > 0:
        return "tools"
    return "__end__"


def _is_ai(message: Any) -> bool:
    """An AI message of either kind: langchain's (`type == "ai"`) or nbgraph's."""
    kind = getattr(message, "type", None) or getattr(message, "role", None)
    return kind in ("ai", "assistant", "AIMessageChunk")


def _call_dict(call: Any) -> dict[str, Any]:
    """A tool call as langchain's `ToolCall` dict (`name`, `args`, `id`)."""
    if isinstance(call, dict):
        return {"name": call.get("name"), "args": call.get("args") or {}, "id": call.get("id")}
    return {"name": call.name, "args": call.args, "id": call.id}


def _is_command(value: Any) -> bool:
    return type(value).__name__ == "Command"


def _short(value: Any) -> str:
    shown = repr(value)
    return shown if len(shown) <= 80 else shown[:77] + "..."
