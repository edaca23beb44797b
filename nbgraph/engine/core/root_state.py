"""A state callers see as one bare value: a root-channel state
(`StateGraph(Annotated[list, operator.add])`), or an entrypoint's (`nbgraph.func`).

Inside, the engine keeps the root as one field, `"__root__"` (so the record shows it as
one); `invoke`, `stream` and `get_state` show its bare value, as LangGraph does. An
entrypoint's state (`engine.core.calls.EntrypointState`) keeps its input, output, saved
value and task calls' results as fields; callers see its `output` alone.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from nbgraph.engine.core.calls import EntrypointState
from nbgraph.schema import ROOT

__all__ = ["bare_field", "is_root", "root_chunks", "root_output", "root_value", "shown_keys"]

_INTERRUPT = "__interrupt__"
_OUTPUT = "output"  # the entrypoint's field callers see


def bare_field(spec: Any) -> str | None:
    """The field callers see bare: the root (`"__root__"`), an entrypoint's `"output"`, or
    None for any other graph."""
    if spec.state.kind == "root":
        return ROOT
    if spec.state.cls is EntrypointState:
        return _OUTPUT
    return None


def is_root(spec: Any) -> bool:
    """Whether callers see the graph's state as one bare value (see `bare_field`)."""
    return bare_field(spec) is not None


def shown_keys(spec: Any) -> frozenset[str]:
    """The fields `"values"` and `"updates"` chunks show: the unmanaged ones (an
    entrypoint's: its `output` alone)."""
    if spec.state.cls is EntrypointState:
        return frozenset({_OUTPUT})
    return frozenset(n for n, f in spec.fields.items() if not f.managed)


def root_value(values: Any, field: str = ROOT) -> Any:
    """The bare value of a state dict (`field`'s; None before any write); for the root,
    anything but `{"__root__": value}` (a state with an `__interrupt__` too) is left as
    it is."""
    if field != ROOT:
        return values.get(field) if type(values) is dict else values
    if type(values) is dict and values.keys() <= {ROOT}:
        return values.get(ROOT)
    return values


def root_output(output: dict[str, Any], field: str = ROOT) -> Any:
    """`invoke`'s result for a bare-valued graph: the bare value; while paused, LangGraph's
    `{"__interrupt__": [...]}` alone (it leaves the value out)."""
    if _INTERRUPT in output:
        return {_INTERRUPT: output[_INTERRUPT]}
    return output.get(field)


def _chunk(mode: str, chunk: Any) -> Any:
    if mode == "values":
        return root_output(chunk) if type(chunk) is dict else chunk
    if mode == "updates" and type(chunk) is dict:
        return {
            node: root_value(update) if type(update) is dict else update
            for node, update in chunk.items()
        }
    return chunk


def _entry_chunks(node: str) -> Callable[[str, Any], Any]:
    def shape(mode: str, chunk: Any) -> Any:
        if mode == "values":
            return root_output(chunk, _OUTPUT) if type(chunk) is dict else chunk
        if mode == "updates" and type(chunk) is dict and type(chunk.get(node)) is dict:
            return {**chunk, node: chunk[node].get(_OUTPUT)}
        if mode == "tasks" and type(chunk) is dict and chunk.get("name") == node:
            return _entry_task(chunk)
        return chunk

    return shape


def _entry_task(chunk: dict[str, Any]) -> dict[str, Any]:
    """The entrypoint's own `tasks` chunk as LangGraph's: its bare input, triggered by
    `__start__`; its result `{"__end__": what it returned}` (`{}` while paused)."""
    if "input" in chunk:
        given = chunk["input"]
        bare = given.get("input") if type(given) is dict else given
        return {**chunk, "input": bare, "triggers": ("__start__",)}
    result = chunk.get("result")
    if type(result) is dict and _OUTPUT in result:
        return {**chunk, "result": {"__end__": result[_OUTPUT]}}
    return chunk


def root_chunks(spec: Any) -> Callable[[str, Any], Any] | None:
    """For a bare-valued graph, what turns a `(mode, chunk)`'s chunk into LangGraph's
    (bare values, `{node: value}` updates); None for any other graph."""
    field = bare_field(spec)
    if field == ROOT:
        return _chunk
    if field is not None:
        return _entry_chunks(next(iter(spec.nodes)))
    return None
