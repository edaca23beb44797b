"""The node API: what code running inside a node asks of its run. `get_config()` (the node's
config), `get_runtime()` (its `Runtime`: context, store, stream writer), `get_store()`,
`get_stream_writer()` (the writer of `stream_mode="custom"`) and `interrupt(value)` (pause for
a person's answer); outside a running node each raises `RuntimeError`, as LangGraph's do.

The engine's floor just above the core: the core keeps the mechanisms these read (the running
task's environment, `core.runtime`; its writer, `core.writer`; the interrupt scope,
`core.interrupts`), and nothing in the engine calls these functions. The public modules, in
LangGraph's spelling, import them from here: `nbgraph.config`, `nbgraph.runtime`,
`nbgraph.types`, `nbgraph`.
"""

from __future__ import annotations

from typing import Any

from nbgraph.engine.core.interrupts import Scope, current_scope
from nbgraph.engine.core.runtime import (
    ExecutionInfo,
    Runtime,
    current_task_env,
    running_task_env,
)
from nbgraph.engine.core.writer import StreamWriter, current_writer
from nbgraph.errors import GraphInterrupt, Interrupt

__all__ = [
    "ExecutionInfo",
    "Runtime",
    "StreamWriter",
    "get_config",
    "get_runtime",
    "get_store",
    "get_stream_writer",
    "interrupt",
]


def get_config() -> dict[str, Any]:
    """The config of the node running now (what a `config` parameter would receive).

    Raises:
        RuntimeError: called outside a running node.
    """
    return running_task_env("get_config").config()


def get_runtime(context_schema: Any = None) -> Runtime[Any]:
    """The `Runtime` of the node running now (`context_schema` only helps type checkers).

    Raises:
        RuntimeError: called outside a running node.
    """
    return running_task_env("get_runtime").runtime()


def get_store() -> Any:
    """The store of the node running now (None if the graph was compiled without one).

    Raises:
        RuntimeError: called outside a running node.
    """
    return get_runtime().store


def get_stream_writer() -> StreamWriter:
    """The writer of the node running now: `writer(chunk)` sends `chunk` to
    `stream(..., stream_mode="custom")` (as LangGraph's `get_stream_writer`).

    What a node writes is also kept in the run's record (`run.custom`), whether or not the
    caller streams `"custom"`; when it does not, writing sends nothing, as in LangGraph.

    Returns:
        A function of one argument, the chunk (any value).

    Raises:
        RuntimeError: called outside a node of a running graph.

    >>> get_stream_writer()  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    RuntimeError: get_stream_writer() was called outside a node ...
    """
    writer = current_writer()
    if writer is None:
        raise RuntimeError(
            "get_stream_writer() was called outside a node of a running graph; call it "
            "inside a node, where it returns the function that streams custom chunks."
        )
    return writer


def _interrupt_id(key: str, index: int) -> str:
    """A stable id for the `index`-th interrupt of a task (same on every re-run)."""
    import hashlib  # here: an interrupt is rare, and hashlib slows `import nbgraph`

    return hashlib.sha1(f"{key}|{index}".encode()).hexdigest()[:16]


def _unsaved_scope() -> Scope:
    """The scope of a question asked where no checkpointed run set one: the outermost
    calling task of the runs without a checkpointer the node is in (its run pauses, with
    nothing kept to resume, as LangGraph's does). Made only when asked: a run without a
    checkpointer sets no scope for its tasks."""
    env = current_task_env()
    if env is None:
        raise RuntimeError(
            "interrupt() pauses a run, so it only works inside a node of a running graph "
            "(with a checkpointer, compile(checkpointer=MemorySaver()), to resume it)."
        )
    run, task = env.run, env.task
    while run.caller is not None:
        run, task = run.caller.run, run.caller.task
    return Scope("", task)


def interrupt(value: Any, *, response_schema: Any = None) -> Any:
    """Pause the run here until a person answers; return their answer once resumed.

    Call it inside a node. The run stops and `invoke` returns the state with
    `"__interrupt__": [Interrupt(value, id)]`; in a graph compiled with a checkpointer,
    `invoke(Command(resume=answer), config)` runs the node again from its first line, and
    this call returns `answer` (without one, nothing is kept to resume).

    With `response_schema` (a type pydantic can read, or a JSON schema as a dict), the
    question carries its JSON schema (`Interrupt.response_schema`), and a type's answer is
    returned validated (a pydantic model made from a dict, say), as in LangGraph.

    Raises:
        RuntimeError: called outside a node of a running graph.
        pydantic.ValidationError: the answer does not fit `response_schema`'s type.
    """
    scope = current_scope()
    if scope is None:
        scope = _unsaved_scope()
    index = scope.asked
    scope.asked += 1
    adapter = _adapter(response_schema)
    if index < len(scope.answers):
        answer = scope.answers[index]
        return answer if adapter is None else _validated(adapter, answer)
    schema = adapter.json_schema() if adapter is not None else response_schema
    raise GraphInterrupt(Interrupt(value, _interrupt_id(scope.key, index), response_schema=schema))


def _adapter(response_schema: Any) -> Any:
    """A pydantic `TypeAdapter` of a type given as `response_schema` (None for none, or for
    a JSON schema given as a dict: that one is shown, not checked, as in LangGraph)."""
    if response_schema is None or isinstance(response_schema, dict):
        return None
    from pydantic import TypeAdapter  # (only for a question that asks for a shape)

    return TypeAdapter(response_schema)


def _validated(adapter: Any, answer: Any) -> Any:
    """`answer` read as the asked type; a `ValidationError` is marked as a wrong answer
    (`nbgraph.errors.is_invalid_resume`), so a tool node lets it through."""
    from pydantic import ValidationError

    try:
        return adapter.validate_python(answer)
    except ValidationError as error:
        error.invalid_resume = True  # type: ignore[attr-defined]
        raise
