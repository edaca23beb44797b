"""nbgraph: build a state graph in a notebook, run it, and see what every reducer did."""

import importlib
from typing import TYPE_CHECKING, Any

from nbgraph.checkpoint import InMemorySaver, MemorySaver
from nbgraph.engine.core.tasks import RouteError
from nbgraph.errors import (
    EmptyInputError,
    GraphBuildError,
    GraphRecursionError,
    InvalidArgumentError,
    InvalidUpdateError,
    NbgraphError,
)
from nbgraph.messages import REMOVE_ALL_MESSAGES, add_messages
from nbgraph.notebook import Run, StateGraph
from nbgraph.policies import CachePolicy, RetryPolicy
from nbgraph.primitives import (
    END,
    MISSING,
    START,
    Command,
    Ephemeral,
    EphemeralValue,
    Interrupt,
    IsLastStep,
    Mutation,
    Overwrite,
    RemainingSteps,
    Send,
    StateSnapshot,
    Transient,
)
from nbgraph.reducers import first_write_wins, last_write_wins, register_reducer
from nbgraph.schema import generate_state_schema
from nbgraph.views.inspector import inspect

if TYPE_CHECKING:
    from nbgraph.checkpoint import SqliteSaver
    from nbgraph.engine.core.caching import InMemoryCache
    from nbgraph.engine.node_api import (
        Runtime,
        StreamWriter,
        get_config,
        get_runtime,
        get_store,
        get_stream_writer,
        interrupt,
    )
    from nbgraph.engine.streaming.push import push_message
    from nbgraph.func import entrypoint, task
    from nbgraph.messages import Message, MessagesState, RemoveMessage
    from nbgraph.notebook.langgraph_trace import atrace, trace
    from nbgraph.notebook.runs import Runs
    from nbgraph.record.langgraph.graph import LangGraphHistoryError, NotALangGraphError
    from nbgraph.record.langgraph.pauses import pauses_of
    from nbgraph.store import BaseStore, InMemoryStore

__all__ = [
    "END",
    "MISSING",
    "REMOVE_ALL_MESSAGES",
    "START",
    "BaseStore",
    "CachePolicy",
    "Command",
    "EmptyInputError",
    "Ephemeral",
    "EphemeralValue",
    "GraphBuildError",
    "GraphRecursionError",
    "InMemoryCache",
    "InMemorySaver",
    "InMemoryStore",
    "Interrupt",
    "InvalidArgumentError",
    "InvalidUpdateError",
    "IsLastStep",
    "LangGraphHistoryError",
    "MemorySaver",
    "Message",
    "MessagesState",
    "Mutation",
    "NbgraphError",
    "NotALangGraphError",
    "Overwrite",
    "RemainingSteps",
    "RemoveMessage",
    "RetryPolicy",
    "RouteError",
    "Run",
    "Runs",
    "Runtime",
    "Send",
    "SqliteSaver",
    "StateGraph",
    "StateSnapshot",
    "StreamWriter",
    "Transient",
    "add_messages",
    "atrace",
    "entrypoint",
    "first_write_wins",
    "generate_state_schema",
    "get_config",
    "get_runtime",
    "get_store",
    "get_stream_writer",
    "inspect",
    "interrupt",
    "last_write_wins",
    "pauses_of",
    "push_message",
    "register_reducer",
    "task",
    "trace",
]

_ON_FIRST_USE = {
    "Message": "nbgraph.messages",
    "MessagesState": "nbgraph.messages",
    "RemoveMessage": "nbgraph.messages",
    "SqliteSaver": "nbgraph.checkpoint",
    "Runs": "nbgraph.notebook.runs",
    "ToolNode": "nbgraph.prebuilt",
    "tools_condition": "nbgraph.prebuilt",
    "BaseStore": "nbgraph.store",
    "InMemoryStore": "nbgraph.store",
    "InMemoryCache": "nbgraph.engine.core.caching",
    "Runtime": "nbgraph.engine.node_api",
    "StreamWriter": "nbgraph.engine.node_api",
    "get_config": "nbgraph.engine.node_api",
    "get_runtime": "nbgraph.engine.node_api",
    "get_store": "nbgraph.engine.node_api",
    "get_stream_writer": "nbgraph.engine.node_api",
    "interrupt": "nbgraph.engine.node_api",
    "push_message": "nbgraph.engine.streaming.push",
    "trace": "nbgraph.notebook.langgraph_trace",
    "atrace": "nbgraph.notebook.langgraph_trace",
    "pauses_of": "nbgraph.record.langgraph.pauses",
    "NotALangGraphError": "nbgraph.record.langgraph.graph",
    "LangGraphHistoryError": "nbgraph.record.langgraph.graph",
    "entrypoint": "nbgraph.func",
    "task": "nbgraph.func",
}
"""Names imported when first used: the message model imports pydantic, the SQLite saver
`sqlite3`, the prebuilt tool node `langchain_core`; `import nbgraph` needs none of them.
The node cache and the node API (`get_config`, `get_runtime`, `get_store`,
`get_stream_writer`, `interrupt`: `nbgraph.engine.node_api`) load with the engine's run loop;
`trace`, `atrace`, `pauses_of` and the LangGraph import's errors with the import
(`Run.from_langgraph`); `entrypoint` and `task` (the functional API) with `nbgraph.func`.
(`ToolNode` and `tools_condition` are here as LangGraph programs import them from
`langgraph.prebuilt`; `nbgraph.prebuilt` is their home.)"""


def __getattr__(name: str) -> Any:
    if name in _ON_FIRST_USE:
        value = globals()[name] = getattr(importlib.import_module(_ON_FIRST_USE[name]), name)
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_ON_FIRST_USE})
