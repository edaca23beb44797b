"""What a tool may be handed besides the model's arguments, as `langgraph.prebuilt` has it.

`InjectedState` (the whole state, or one field), `InjectedStore`, `ToolRuntime`, and langchain's
own `InjectedToolCallId`.

Each is a langchain "injected argument", so langchain leaves it out of the schema the model
sees (`tool.tool_call_schema`); `ToolNode` fills it. What a tool asks for is read once per
tool (`ToolInjections.of`), and filled per call (`ToolInjections.fill`).
"""

from __future__ import annotations

import types
import typing
from dataclasses import dataclass, field
from typing import Any, Generic, Union, get_args, get_origin

from langchain_core.tools import BaseTool, InjectedToolArg, InjectedToolCallId
from langchain_core.tools.base import (
    _DirectlyInjectedToolArg,
    _is_injected_arg_type,
    get_all_basemodel_annotations,
)
from typing_extensions import TypeVar

from nbgraph.engine.core.runtime import no_op_writer

__all__ = [
    "InjectedState",
    "InjectedStore",
    "InjectedToolCallId",
    "ToolInjections",
    "ToolRuntime",
]

ContextT = TypeVar("ContextT", default=None)  # (defaults: `ToolRuntime[Context]` is enough)
StateT = TypeVar("StateT", default=dict)


class InjectedState(InjectedToolArg):
    """Marks a tool parameter that receives the graph's state (hidden from the model).

    `Annotated[dict, InjectedState]` receives the whole state, `Annotated[str,
    InjectedState("field")]` one field of it.

    Args:
        field: the state field to hand the tool; None: the whole state.

    >>> InjectedState("notes").field
    'notes'
    """

    def __init__(self, field: str | None = None) -> None:
        self.field = field


class InjectedStore(InjectedToolArg):
    """Marks a tool parameter that receives the graph's store (`compile(store=...)`),
    hidden from the model: `store: Annotated[BaseStore, InjectedStore()]`."""


@dataclass
class ToolRuntime(_DirectlyInjectedToolArg, Generic[ContextT, StateT]):
    """What a tool parameter annotated `ToolRuntime` receives (hidden from the model).

    Attributes:
        state: the graph's state as the tool node was handed it.
        context: the run's context (`invoke(..., context=...)`).
        config: the tool node's config.
        stream_writer: writes a chunk to `stream_mode="custom"`.
        tool_call_id: the id of the call being answered.
        store: the graph's store, or None.
        tools: the tool node's tools.
        execution_info: where the tool node runs (its task, thread).
        server_info: LangGraph Server's; always None here.
    """

    state: StateT
    context: ContextT
    config: Any
    stream_writer: Any
    tool_call_id: str | None
    store: Any
    tools: list[Any] = field(default_factory=list)
    execution_info: Any = None
    server_info: Any = None

    def emit_output_delta(self, delta: Any) -> None:
        """LangGraph's `tools` stream channel; nbgraph has none, so this does nothing."""


def no_runtime() -> Any:
    """The runtime a tool node called outside a graph gets: no context, store or writer."""
    return _Bare()


@dataclass
class _Bare:
    context: Any = None
    store: Any = None
    stream_writer: Any = no_op_writer
    execution_info: Any = None
    server_info: Any = None


class MissingStateField(KeyError):
    """A tool asked for a state field (`InjectedState("field")`) the state does not have."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


@dataclass(frozen=True)
class ToolInjections:
    """What one tool is handed besides the model's arguments.

    Attributes:
        tool: the tool's name.
        state: parameter -> the state field it receives (None: the whole state).
        store: the parameter receiving the store, or None.
        runtime: the parameter receiving the `ToolRuntime`, or None.
        hidden: every injected parameter (a value the model sent for one is dropped).
        optional: the `InjectedState("field")` parameters with a default (left to it when
            the state lacks the field).
    """

    tool: str
    state: dict[str, str | None]
    store: str | None
    runtime: str | None
    hidden: frozenset[str]
    optional: frozenset[str]

    @classmethod
    def of(cls, tool: BaseTool) -> ToolInjections:
        """Read a tool's injected parameters from its input schema and its function."""
        schema = tool.get_input_schema()
        annotations = _function_hints(tool)
        annotations.update(get_all_basemodel_annotations(schema))
        state: dict[str, str | None] = {}
        store = runtime = None
        hidden, optional = set(), set()
        fields = getattr(schema, "model_fields", {})
        for name, hint in annotations.items():
            if _is_injected_arg_type(hint):
                hidden.add(name)
            if name == "runtime" or _marker(hint, ToolRuntime, name, tool) is not None:
                runtime = name
            marker = _marker(hint, InjectedState, name, tool)
            if marker is not None:
                state[name] = marker.field if isinstance(marker, InjectedState) else None
                if state[name] and name in fields and not fields[name].is_required():
                    optional.add(name)
            if _marker(hint, InjectedStore, name, tool) is not None:
                store = name
        return cls(tool.name, state, store, runtime, frozenset(hidden), frozenset(optional))

    @property
    def any(self) -> bool:
        return bool(self.state or self.store or self.runtime)

    @property
    def names(self) -> frozenset[str]:
        """Every parameter the tool node fills (left out of a bad-arguments message)."""
        filled = {self.store, self.runtime} - {None}
        return self.hidden | frozenset(self.state) | frozenset(filled)  # type: ignore[arg-type]

    def fill(self, args: dict[str, Any], runtime: ToolRuntime, messages_key: str) -> dict:
        """The call's arguments: the model's (less any injected name) and the injected ones.

        Raises:
            ValueError: the state is a list of messages and the tool wants other fields;
                the tool wants the store and the graph has none.
            KeyError: the state lacks a field the tool wants (and it has no default).
        """
        given = {k: v for k, v in args.items() if k not in self.hidden}
        if self.state:
            given.update(self._state_args(runtime.state, messages_key))
        if self.store:
            if runtime.store is None:
                raise ValueError(
                    "Cannot inject store into tools with InjectedStore annotations - please "
                    f"compile your graph with a store (tool {self.tool!r}, parameter "
                    f"{self.store!r})."
                )
            given[self.store] = runtime.store
        if self.runtime:
            given[self.runtime] = runtime
        return given

    def _state_args(self, state: Any, messages_key: str) -> dict[str, Any]:
        wanted = list(self.state.values())
        if isinstance(state, list):
            if wanted[0] is None or wanted == [messages_key]:
                state = {messages_key: state}
            else:
                named = ", ".join(f for f in wanted if f)
                raise ValueError(
                    f"Invalid input to ToolNode. Tool {self.tool} requires graph state dict "
                    f"as input. State should contain fields {named}."
                )
        found: dict[str, Any] = {}
        for parameter, name in self.state.items():
            if not name:
                found[parameter] = state
            elif isinstance(state, dict) and name in state:
                found[parameter] = state[name]
            elif not isinstance(state, dict) and hasattr(state, name):
                found[parameter] = getattr(state, name)
            elif parameter not in self.optional:
                has = sorted(state) if isinstance(state, dict) else type(state).__name__
                text = (
                    f"{name!r}: tool {self.tool!r} asks for state field {name!r} "
                    f"(parameter {parameter!r}, InjectedState({name!r})); the state has {has}."
                )
                raise MissingStateField(text) if isinstance(state, dict) else AttributeError(text)
        return found


def _function_hints(tool: BaseTool) -> dict[str, Any]:
    fn = getattr(tool, "func", None) or getattr(tool, "coroutine", None)
    if fn is None:
        return {}
    try:
        return typing.get_type_hints(fn, include_extras=True)
    except Exception:
        return {}


def _is_marker(hint: Any, kind: type) -> bool:
    """Whether `hint` is `kind`, an instance of it, or holds one (Annotated, Optional)."""
    if isinstance(hint, kind) or (isinstance(hint, type) and issubclass(hint, kind)):
        return True
    origin = get_origin(hint)
    if origin in (Union, types.UnionType, typing.Annotated):
        return any(_is_marker(arg, kind) for arg in get_args(hint))
    return isinstance(origin, type) and issubclass(origin, kind)


def _marker(hint: Any, kind: type, name: str, tool: BaseTool) -> Any:
    """The `kind` marker of a parameter: the instance given (`InjectedState("x")`), True
    for the bare class, None when it has none.

    Raises:
        ValueError: the parameter is marked `kind` more than once.
    """
    found = [arg for arg in get_args(hint) if _is_marker(arg, kind)]
    if len(found) > 1:
        raise ValueError(
            f"A tool argument should not be annotated with {kind.__name__} more than once "
            f"(tool {tool.name!r}, parameter {name!r}). Found: {found}"
        )
    if found:
        return found[0]
    return True if _is_marker(hint, kind) else None
