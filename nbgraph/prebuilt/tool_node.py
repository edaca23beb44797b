"""`ToolNode` and `tools_condition`, as `langgraph.prebuilt` has them.

A `ToolNode` is a node: handed the state (or a list of messages), it finds the latest AI
message, runs each of its tool calls (in parallel: on threads, or gathered on the event loop
in an async run) and returns the `ToolMessage`s in call order, as `{"messages": [...]}` —
writes of the tool node's task, so the record shows each answer with its caller. A tool may
ask for the state, the store, the call's id or a `ToolRuntime` (`nbgraph.prebuilt.injection`),
and may return a `Command`: then the node returns LangGraph's list of outputs (the Commands,
and `{"messages": [...]}` for the plain answers), which the engine applies like any node's.
The AI message may be langchain's or nbgraph's own `Message`: its tool calls are read through
`.tool_calls`.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Literal

from nbgraph.engine.core.node_context.runtime import current_task_env
from nbgraph.isolation import StateView
from nbgraph.prebuilt.injection import (
    InjectedState,
    InjectedStore,
    ToolInjections,
    ToolRuntime,
    no_runtime,
)
from nbgraph.prebuilt.tool_calls import (
    ToolCall,
    ToolCallRequest,
    ToolInvocationError,
    as_tool,
    default_handle_tool_errors,
)
from nbgraph.prebuilt.tool_commands import lifted
from nbgraph.primitives import Command, Send

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig

__all__ = [  # (with the names LangGraph's `langgraph.prebuilt.tool_node` gives too)
    "InjectedState",
    "InjectedStore",
    "ToolCallRequest",
    "ToolInvocationError",
    "ToolNode",
    "ToolRuntime",
    "tools_condition",
]

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
        wrap_tool_call: `wrap(request, execute)` runs each call in its place: handed the
            `ToolCallRequest` (call, tool, state, runtime) and `execute(request)` (which it
            may call again, with `request.override(...)`), it returns the answer.
        awrap_tool_call: its async form, for an async run (else `wrap_tool_call` is used).

    Returns (when called): `{messages_key: [ToolMessage, ...]}` for a dict or model state,
    a list of `ToolMessage`s for a list of messages. When a tool returns a `Command`, a list
    of the Commands and `{messages_key: [ToolMessage]}` for each plain answer, in call order
    (`Command.PARENT` gotos of `Send`s merged into one Command, last).

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
        wrap_tool_call: Any = None,
        awrap_tool_call: Any = None,
    ) -> None:
        self.name = name
        self.wrap_tool_call, self.awrap_tool_call = wrap_tool_call, awrap_tool_call
        self.tags = tags
        self.handle_tool_errors = handle_tool_errors
        self.messages_key = messages_key
        if callable(tools) or isinstance(tools, (str, bytes)) or not hasattr(tools, "__iter__"):
            raise TypeError(
                f"ToolNode takes a list of tools, got {_short(tools)}: ToolNode([{_short(tools)}])."
            )
        self._tools_by_name: dict[str, Any] = {}
        self._runs: dict[str, Any] = {}  # (the tools as called: `lifted`)
        self._injections: dict[str, ToolInjections] = {}
        for tool in tools:
            made = as_tool(tool)
            self._tools_by_name[made.name] = made
            self._runs[made.name] = lifted(made)
            injections = ToolInjections.of(made)
            if injections.any:
                self._injections[made.name] = injections

    @property
    def tools_by_name(self) -> dict[str, Any]:
        """The tools, by the name a tool call uses."""
        return dict(self._tools_by_name)

    def __repr__(self) -> str:
        return f"ToolNode({list(self._tools_by_name)!r}, name={self.name!r})"

    def __call__(
        self, input: Any, config: RunnableConfig | None = None, runtime: Any = None
    ) -> Any:
        """Run the tool calls of the latest AI message in `input`; see the class docstring.

        Raises:
            ValueError: `input` holds no messages, or no AI message; a tool's `Command`
                does not answer its call; a tool wants a store the graph has not.
            KeyError: a tool wants a state field the state has not.
            Exception: a tool's error that `handle_tool_errors` does not turn into a message.
        """
        jobs, kind = self._jobs(input, config, runtime)
        workers = (config or {}).get("max_concurrency") or None
        if len(jobs) <= 1:
            outputs = [job.run() for job in jobs]
        else:
            contexts = [contextvars.copy_context() for _ in jobs]
            with ThreadPoolExecutor(max_workers=workers) as pool:
                outputs = list(pool.map(lambda j, c: c.run(j.run), jobs, contexts))
        return self._combine(outputs, kind)

    invoke = __call__

    async def acall(
        self, input: Any, config: RunnableConfig | None = None, runtime: Any = None
    ) -> Any:
        """`__call__` in an async run (the engine's choice there): the calls are gathered on
        the event loop, each through its tool's async form."""
        jobs, kind = self._jobs(input, config, runtime)
        outputs = await asyncio.gather(*(job.arun() for job in jobs))
        return self._combine(list(outputs), kind)

    ainvoke = acall

    def _jobs(self, input: Any, config: Any, runtime: Any) -> tuple[list[ToolCall], str]:
        """A `ToolCall` per call of the latest AI message, and the kind of input."""
        calls, kind = self._tool_calls(input)
        node_config = dict(config or {})
        tool_config = {k: v for k, v in node_config.items() if k in _CONFIG_KEYS}
        runtime = runtime if runtime is not None else _running_runtime()
        wrapped = self.wrap_tool_call is not None or self.awrap_tool_call is not None
        injected = wrapped or any(call["name"] in self._injections for call in calls)
        state = _state_of(input, kind) if injected else input  # (a copy only when asked for)
        tools = list(self._tools_by_name.values())
        names = tuple(self._tools_by_name)
        jobs = []
        for call in calls:
            tool_runtime = ToolRuntime(
                state=state,
                context=runtime.context,
                config=node_config,
                stream_writer=runtime.stream_writer,
                tool_call_id=call["id"],
                store=runtime.store,
                tools=tools,
                execution_info=runtime.execution_info,
                server_info=runtime.server_info,
            )
            request = ToolCallRequest(
                call, self._tools_by_name.get(call["name"]), state, tool_runtime
            )
            jobs.append(
                ToolCall(
                    request=request,
                    prepared=self._prepared,
                    config=tool_config,
                    handle=self.handle_tool_errors,
                    kind=kind,
                    messages_key=self.messages_key,
                    names=names,
                    wrap=self.wrap_tool_call,
                    awrap=self.awrap_tool_call,
                )
            )
        return jobs, kind

    def _prepared(self, tool: Any) -> tuple[Any, ToolInjections | None]:
        """A tool as called (`lifted`) and what it is handed: worked out once for this
        node's tools, on each call for another (a wrapper's `request.override(tool=...)`)."""
        if self._tools_by_name.get(tool.name) is tool:
            return self._runs[tool.name], self._injections.get(tool.name)
        injections = ToolInjections.of(tool)
        return lifted(tool), injections if injections.any else None

    def _tool_calls(self, input: Any) -> tuple[list[dict[str, Any]], str]:
        """The calls to run, and whether the input was a list of messages, a state or a
        list of tool calls."""
        if isinstance(input, list) and input:
            last = input[-1]
            if isinstance(last, dict) and last.get("type") == "tool_call":
                return [dict(call) for call in input], "tool_calls"
            messages, kind = input, "list"
        elif isinstance(input, dict) and input.get("__type") == "tool_call_with_context":
            return [dict(input["tool_call"])], "tool_calls"
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
        """LangGraph's output: the messages alone when no tool returned a Command; else each
        Command and each plain answer (as an update) in order, and the PARENT Commands that
        only send (`goto=[Send, ...]`) merged into one, last."""
        flat: list[Any] = []
        for output in outputs:
            flat.extend(output if isinstance(output, list) else [output])
        if not any(isinstance(o, Command) for o in flat):
            return flat if kind == "list" else {self.messages_key: flat}
        combined: list[Any] = []
        sends: list[Send] = []
        for output in flat:
            if not isinstance(output, Command):
                combined.append([output] if kind == "list" else {self.messages_key: [output]})
            elif output.graph == Command.PARENT and _only_sends(output.goto):
                sends.extend(output.goto)
            else:
                combined.append(output)
        if sends:
            combined.append(Command(graph=Command.PARENT, goto=sends))
        return combined


def _only_sends(goto: Any) -> bool:
    return isinstance(goto, list) and all(isinstance(g, Send) for g in goto)


def _running_runtime() -> Any:
    """The runtime of the node running now (a tool node called inside another node), or
    an empty one outside a run."""
    env = current_task_env()
    return env.runtime() if env is not None else no_runtime()


def _state_of(input: Any, kind: str) -> Any:
    """The state a tool's `InjectedState` / `ToolRuntime.state` sees: the input, or for a
    list of tool calls (a `Send`), the graph's state now."""
    if isinstance(input, dict) and input.get("__type") == "tool_call_with_context":
        return input["state"]
    if kind != "tool_calls":
        return input.resolved() if isinstance(input, StateView) else input
    env = current_task_env()
    if env is None:
        return {}
    return dict(env.run.read(env.task))


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


def _short(value: Any) -> str:
    shown = repr(value)
    return shown if len(shown) <= 80 else shown[:77] + "..."
