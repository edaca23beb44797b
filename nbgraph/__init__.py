"""nbgraph: build a state graph in a notebook, run it, and see what every reducer did."""

from nbgraph.checkpoint import InMemorySaver, MemorySaver, SqliteSaver
from nbgraph.engine.interrupts import interrupt
from nbgraph.engine.tasks import RouteError
from nbgraph.errors import (
    EmptyInputError,
    GraphBuildError,
    GraphRecursionError,
    InvalidArgumentError,
    InvalidUpdateError,
    NbgraphError,
)
from nbgraph.messages import (
    REMOVE_ALL_MESSAGES,
    Message,
    MessagesState,
    RemoveMessage,
    add_messages,
)
from nbgraph.notebook import Run, StateGraph
from nbgraph.reducers import first_write_wins, last_write_wins, register_reducer
from nbgraph.schema import generate_state_schema
from nbgraph.types import (
    END,
    MISSING,
    START,
    Command,
    Ephemeral,
    EphemeralValue,
    Interrupt,
    Mutation,
    Overwrite,
    RemainingSteps,
    Send,
    StateSnapshot,
    Transient,
)
from nbgraph.views.inspector import inspect

__all__ = [
    "END",
    "MISSING",
    "REMOVE_ALL_MESSAGES",
    "START",
    "Command",
    "EmptyInputError",
    "Ephemeral",
    "EphemeralValue",
    "GraphBuildError",
    "GraphRecursionError",
    "InMemorySaver",
    "Interrupt",
    "InvalidArgumentError",
    "InvalidUpdateError",
    "MemorySaver",
    "Message",
    "MessagesState",
    "Mutation",
    "NbgraphError",
    "Overwrite",
    "RemainingSteps",
    "RemoveMessage",
    "RouteError",
    "Run",
    "Send",
    "SqliteSaver",
    "StateGraph",
    "StateSnapshot",
    "Transient",
    "add_messages",
    "first_write_wins",
    "generate_state_schema",
    "inspect",
    "interrupt",
    "last_write_wins",
    "register_reducer",
]
