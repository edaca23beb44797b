"""Renaming `langgraph` to `nbgraph` in a program's imports is the whole port.

Every public module of the installed LangGraph (a module is private when a part of its path
starts with `_`) has an `nbgraph` twin at the same path with the same public names: the
module's `__all__`, or else the names it defines itself. The modules and names are read from
the installed `langgraph` when the tests run, so a LangGraph upgrade that adds one fails
here until nbgraph has it or `EXCEPTIONS` says why not. `EXCEPTIONS` is the table of
docs/langgraph.md's section "Rename `langgraph` to `nbgraph`" (`test_the_docs_list_...`).
"""

from __future__ import annotations

import importlib
import os
import sys
import typing
import warnings
from pathlib import Path

import pytest

langgraph = pytest.importorskip("langgraph")

pytestmark = pytest.mark.langgraph

DOCS = Path(__file__).resolve().parents[1] / "docs" / "langgraph.md"

_NO_CHANNELS = "nbgraph has no channels: a state field is read with its reducer (nbgraph.schema)"
_PREGEL = (
    "LangGraph's Pregel engine and its internals; nbgraph's engine is its own (nbgraph.engine)"
)
_STREAM_V2 = 'LangGraph 1.2\'s beta streaming protocol (`stream(version="v2")` transformers)'
_SERVER = "LangGraph Server's (users, run control, remote graphs); nbgraph runs in-process"
_TIMEOUTS = (
    "node timeouts and run draining: nbgraph has no `TimeoutPolicy` (nor `Send(..., timeout=)`)"
)

EXCEPTIONS: dict[str, str] = {
    # whole modules: "langgraph.X" -> why nbgraph has no "nbgraph.X"
    "langgraph.callbacks": (
        "graph lifecycle callback handlers (LangGraph 1.2); nbgraph records every run instead "
        "(`app.last_run`)"
    ),
    "langgraph.channels": _NO_CHANNELS,
    "langgraph.pregel": _PREGEL,
    "langgraph.stream": _STREAM_V2,
    "langgraph.utils": "LangGraph's internal helpers (`RunnableCallable`, config patching)",
    "langgraph.managed.base": (
        "how LangGraph's engine fills managed fields; nbgraph.schema reads "
        "`RemainingSteps`/`IsLastStep`"
    ),
    "langgraph.prebuilt.tool_validator": (
        "`ValidationNode`, deprecated in LangGraph 1.0 (use a model's structured output)"
    ),
    "langgraph.cache.redis": "a node cache in a Redis server: nbgraph's are in memory or in SQLite",
    "langgraph.checkpoint.base.id": "LangGraph's uuid6 checkpoint ids; nbgraph's ids are its own",
    "langgraph.checkpoint.serde.encrypted": (
        "`EncryptedSerializer`: nbgraph's savers write through their own codec (`serde=` takes "
        "nbgraph's `JsonPlusSerializer` only)"
    ),
    "langgraph.checkpoint.serde.event_hooks": "events of LangGraph's msgpack codec",
    "langgraph.checkpoint.serde.types": "protocols of LangGraph's channels",
    "langgraph.checkpoint.sqlite.utils": (
        "the SQL of LangGraph's SQLite tables; nbgraph's SQLite file has its own "
        "(nbgraph.checkpoint.sqlite_file)"
    ),
    "langgraph.store.base.batch": (
        "LangGraph's batching base of async stores; nbgraph's stores have no batch of ops"
    ),
    "langgraph.store.base.embed": (
        "LangGraph's embedding adapters; nbgraph's store takes the embedder in `index={'embed': "
        "...}` (nbgraph.store.vectors)"
    ),
    "langgraph.store.sqlite.base": (
        "the SQL of LangGraph's SQLite store; nbgraph's `SqliteStore` is in nbgraph.store.sqlite"
    ),
    "langgraph.version": "nbgraph's version is its own (`importlib.metadata.version('nbgraph')`)",
    # names: "langgraph.X:Name" -> why nbgraph.X has no Name
    "langgraph.checkpoint.base:DeltaChannelHistory": _NO_CHANNELS,
    "langgraph.checkpoint.base:EmptyChannelError": _NO_CHANNELS
    + " (nbgraph.errors has the class, for `except` clauses)",
    "langgraph.checkpoint.base:copy_checkpoint": (
        "LangGraph's channel-versioned checkpoint dicts; nbgraph's savers keep records "
        "(nbgraph.checkpoint.base.CheckpointRecord)"
    ),
    "langgraph.checkpoint.base:create_checkpoint": (
        "LangGraph's channel-versioned checkpoint dicts; nbgraph's savers keep records"
    ),
    "langgraph.checkpoint.base:empty_checkpoint": (
        "LangGraph's channel-versioned checkpoint dicts; nbgraph's savers keep records"
    ),
    "langgraph.checkpoint.base:get_checkpoint_metadata": (
        "LangGraph's metadata upgrade of old checkpoints"
    ),
    "langgraph.checkpoint.base:get_serializable_checkpoint_metadata": (
        "LangGraph's metadata upgrade of old checkpoints"
    ),
    "langgraph.checkpoint.base:writes_sort_key": (
        "the order of LangGraph's pending writes in its savers"
    ),
    "langgraph.checkpoint.memory:PersistentDict": (
        "LangGraph's on-disk dict of its in-memory saver; nbgraph's file saver is `SqliteSaver`"
    ),
    "langgraph.checkpoint.serde.base:CipherProtocol": (
        "encrypted serialization (see langgraph.checkpoint.serde.encrypted)"
    ),
    "langgraph.checkpoint.serde.base:SerializerCompat": (
        "LangGraph's adapter of untyped serializers; `serde=` takes nbgraph's `JsonPlusSerializer`"
    ),
    "langgraph.checkpoint.serde.base:maybe_add_typed_methods": (
        "LangGraph's adapter of untyped serializers"
    ),
    "langgraph.errors:GraphDrained": _TIMEOUTS,
    "langgraph.errors:NodeCancelledError": (
        "a node's own `asyncio.CancelledError` goes through nbgraph unchanged (LangGraph 1.2 "
        "wraps it)"
    ),
    "langgraph.errors:NodeError": (
        "node error handlers (`add_node(..., error_handler=...)`, LangGraph 1.2): nbgraph has none"
    ),
    "langgraph.errors:NodeTimeoutError": _TIMEOUTS,
    "langgraph.managed.is_last_step:RemainingStepsManager": (
        "how LangGraph's engine fills `RemainingSteps`"
    ),
    "langgraph.prebuilt:ToolCallTransformer": _STREAM_V2,
    "langgraph.prebuilt:ValidationNode": (
        "deprecated in LangGraph 1.0 (see langgraph.prebuilt.tool_validator)"
    ),
    "langgraph.prebuilt.tool_node:ToolCallWithContext": (
        "LangGraph's distributed tool calls (`Send` to a tool node)"
    ),
    "langgraph.prebuilt.tool_node:msg_content_output": (
        "LangGraph's helper that formats a tool's output; `ToolNode` does it"
    ),
    "langgraph.runtime:BaseUser": _SERVER,
    "langgraph.runtime:RunControl": _SERVER,
    "langgraph.runtime:ServerInfo": _SERVER,
    "langgraph.store.base:Embeddings": (
        "langchain's `Embeddings` class, re-exported; import it from langchain_core.embeddings"
    ),
    "langgraph.store.base:ensure_embeddings": (
        "LangGraph's embedding adapters (see langgraph.store.base.embed)"
    ),
    "langgraph.store.base:get_text_at_path": (
        "LangGraph's field-path reader; nbgraph's is nbgraph.store.paths.texts_at"
    ),
    "langgraph.store.base:tokenize_path": (
        "LangGraph's field-path reader; nbgraph's is nbgraph.store.paths.path_tokens"
    ),
    "langgraph.store.base:validate_op_namespace": (
        "LangGraph's check of a put op's namespace; nbgraph's is nbgraph.store.base.check_namespace"
    ),
    **{
        f"langgraph.types:{name}": _STREAM_V2 + ": its typed chunks"
        for name in (
            "CheckpointStreamPart",
            "CustomStreamPart",
            "DebugStreamPart",
            "MessagesStreamPart",
            "StreamPart",
            "TasksStreamPart",
            "UpdatesStreamPart",
            "ValuesStreamPart",
        )
    },
    **{
        f"langgraph.types:{name}": "the payloads of LangGraph's `debug` stream and engine tasks"
        for name in (
            "CheckpointPayload",
            "CheckpointTask",
            "DebugPayload",
            "PregelExecutableTask",
            "TaskPayload",
            "TaskResultPayload",
        )
    },
    "langgraph.types:TimeoutPolicy": _TIMEOUTS,
    "langgraph.types:TracePolicy": "LangSmith tracing policies of LangGraph 1.2",
    "langgraph.types:ensure_valid_checkpointer": (
        "LangGraph's check of a checkpointer; nbgraph's `compile()` checks its own"
    ),
    "langgraph.types:omit_payload": "LangGraph 1.2's payload trimming of traces",
}
"""Why a LangGraph module or name has no nbgraph twin, each with its reason."""


def _module_paths(name: str, paths: typing.Iterable[str]) -> set[str]:
    """Every module under a package's directories. `pkgutil.walk_packages` does not go into
    namespace packages (`langgraph`, `langgraph.checkpoint` and `langgraph.store` are spread
    over several distributions and have no `__init__.py`), so the directories are walked."""
    found = set()
    for base in paths:
        for root, dirs, files in os.walk(base):
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            rel = os.path.relpath(root, base)
            prefix = name if rel == "." else f"{name}.{rel.replace(os.sep, '.')}"
            found.add(prefix)
            found.update(f"{prefix}.{f[:-3]}" for f in files if f.endswith(".py"))
    return {m.removesuffix(".__init__") for m in found}


def _excepted(module: str) -> bool:
    parts = module.split(".")
    return any(".".join(parts[:i]) in EXCEPTIONS for i in range(2, len(parts) + 1))


def langgraph_modules() -> list[str]:
    """LangGraph's public modules, as installed (no part of the path starting with `_`)."""
    every = _module_paths("langgraph", langgraph.__path__)
    return sorted(m for m in every if not any(p.startswith("_") for p in m.split(".")))


def public_names(module: typing.Any) -> set[str]:
    """A module's `__all__`; without one, the public names it defines itself (not what it
    imports, nor its type variables)."""
    if hasattr(module, "__all__"):
        return set(module.__all__)
    return {
        name
        for name, value in vars(module).items()
        if not name.startswith("_")
        and not isinstance(value, type(sys) | typing.TypeVar)
        and getattr(value, "__module__", None) == module.__name__
    }


def _imported(name: str) -> typing.Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return importlib.import_module(name)


def _twin(module: str) -> str:
    return "nbgraph" + module.removeprefix("langgraph")


MIRRORED = [m for m in langgraph_modules() if not _excepted(m)]


@pytest.mark.parametrize("module", MIRRORED)
def test_each_langgraph_module_has_its_nbgraph_twin_with_its_names(module):
    theirs = _imported(module)
    ours = importlib.import_module(_twin(module))
    missing = sorted(
        name
        for name in public_names(theirs)
        if not hasattr(ours, name) and f"{module}:{name}" not in EXCEPTIONS
    )
    assert missing == [], f"{_twin(module)} lacks {module}'s names {missing}"


def test_each_exception_is_still_one():
    """An excepted module LangGraph still has and nbgraph lacks; an excepted name the same:
    the list shrinks when nbgraph gains one."""
    modules = set(langgraph_modules())
    stale = []
    for key in EXCEPTIONS:
        module, _, name = key.partition(":")
        if module not in modules:
            stale.append(f"{key}: LangGraph has no module {module}")
            continue
        if not name:
            try:
                importlib.import_module(_twin(module))
                stale.append(f"{key}: nbgraph has {_twin(module)} now")
            except ImportError:
                pass
        elif name not in public_names(_imported(module)):
            stale.append(f"{key}: not a public name of {module}")
        elif hasattr(importlib.import_module(_twin(module)), name):
            stale.append(f"{key}: {_twin(module)} has it now")
    assert stale == []


def test_the_docs_list_every_exception_with_its_reason():
    section = (
        DOCS.read_text().split("## Rename `langgraph` to `nbgraph`", 1)[1].split("\n## ", 1)[0]
    )
    unlisted = [key for key in EXCEPTIONS if f"`{key}`" not in section]
    assert unlisted == [], "docs/langgraph.md's exceptions table lacks these"


DOCS_IMPORTS = [
    ("langgraph.graph", "StateGraph"),
    ("langgraph.graph", "START"),
    ("langgraph.graph", "END"),
    ("langgraph.graph", "MessagesState"),
    ("langgraph.graph", "add_messages"),
    ("langgraph.graph.message", "add_messages"),
    ("langgraph.graph.message", "MessagesState"),
    ("langgraph.graph.message", "REMOVE_ALL_MESSAGES"),
    ("langgraph.types", "Command"),
    ("langgraph.types", "interrupt"),
    ("langgraph.types", "Send"),
    ("langgraph.types", "RetryPolicy"),
    ("langgraph.types", "CachePolicy"),
    ("langgraph.types", "Overwrite"),
    ("langgraph.types", "Interrupt"),
    ("langgraph.constants", "START"),
    ("langgraph.constants", "END"),
    ("langgraph.checkpoint.memory", "InMemorySaver"),
    ("langgraph.checkpoint.memory", "MemorySaver"),
    ("langgraph.checkpoint.sqlite", "SqliteSaver"),
    ("langgraph.checkpoint.sqlite.aio", "AsyncSqliteSaver"),
    ("langgraph.checkpoint.base", "BaseCheckpointSaver"),
    ("langgraph.checkpoint.serde.jsonplus", "JsonPlusSerializer"),
    ("langgraph.store.memory", "InMemoryStore"),
    ("langgraph.store.base", "BaseStore"),
    ("langgraph.store.sqlite", "SqliteStore"),
    ("langgraph.config", "get_config"),
    ("langgraph.config", "get_stream_writer"),
    ("langgraph.config", "get_store"),
    ("langgraph.runtime", "Runtime"),
    ("langgraph.func", "entrypoint"),
    ("langgraph.func", "task"),
    ("langgraph.prebuilt", "create_react_agent"),
    ("langgraph.prebuilt", "ToolNode"),
    ("langgraph.prebuilt", "tools_condition"),
    ("langgraph.prebuilt", "InjectedState"),
    ("langgraph.prebuilt", "InjectedStore"),
    ("langgraph.prebuilt", "ToolRuntime"),
    ("langgraph.prebuilt.interrupt", "HumanInterrupt"),
    ("langgraph.prebuilt.interrupt", "HumanInterruptConfig"),
    ("langgraph.managed", "RemainingSteps"),
    ("langgraph.managed", "IsLastStep"),
    ("langgraph.managed.is_last_step", "RemainingSteps"),
    ("langgraph.cache.memory", "InMemoryCache"),
    ("langgraph.errors", "GraphRecursionError"),
    ("langgraph.errors", "InvalidUpdateError"),
    ("langgraph.errors", "NodeInterrupt"),
]
"""The imports LangGraph's docs programs make most (the programs of its how-to guides and
tutorials: graph API, persistence, human-in-the-loop, streaming, memory, agents)."""


def test_the_47_most_common_docs_imports_resolve_at_their_langgraph_paths():
    assert len(DOCS_IMPORTS) == 47
    unresolved = []
    for module, name in DOCS_IMPORTS:
        assert hasattr(_imported(module), name), f"LangGraph itself has no {module}.{name}"
        try:
            getattr(importlib.import_module(_twin(module)), name)
        except (ImportError, AttributeError) as error:
            unresolved.append(f"from {_twin(module)} import {name}: {error}")
    assert unresolved == []


def test_the_store_configs_docs_import_beyond_all():
    """`langgraph.store.base` lists neither `IndexConfig` nor `TTLConfig` in `__all__`, but
    its docs annotate stores with them."""
    from nbgraph.store.base import IndexConfig, SearchItem, TTLConfig

    theirs = _imported("langgraph.store.base")
    for ours in (IndexConfig, TTLConfig):
        assert set(ours.__annotations__) <= set(getattr(theirs, ours.__name__).__annotations__)
    assert SearchItem.__name__ in vars(theirs)


def test_a_renamed_program_runs():
    """The docs' first program, its imports renamed, runs on nbgraph as on LangGraph."""
    source = """
from typing import Annotated
from typing_extensions import TypedDict
from langgraph.graph import StateGraph, START, END
from langgraph.graph.message import add_messages
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command, interrupt

class State(TypedDict):
    messages: Annotated[list, add_messages]

def ask(state: State):
    return {"messages": [("ai", interrupt("name?"))]}

builder = StateGraph(State)
builder.add_node("ask", ask)
builder.add_edge(START, "ask")
builder.add_edge("ask", END)
graph = builder.compile(checkpointer=InMemorySaver())
config = {"configurable": {"thread_id": "1"}}
first = graph.invoke({"messages": [("user", "hi")]}, config)
last = graph.invoke(Command(resume="Ada"), config)
result = (first["__interrupt__"][0].value, [m.content for m in last["messages"]])
"""
    outcomes = []
    for library in ("langgraph", "nbgraph"):
        scope: dict[str, typing.Any] = {}
        exec(
            compile(source.replace("langgraph", library), library, "exec", dont_inherit=True), scope
        )
        outcomes.append(scope["result"])
    assert outcomes[0] == outcomes[1] == ("name?", ["hi", "Ada"])
