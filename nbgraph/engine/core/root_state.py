"""A root-channel state (`StateGraph(Annotated[list, operator.add])`) as callers see it.

Inside, the engine keeps the root as one field, `"__root__"` (so the record shows it as
one); `invoke`, `stream` and `get_state` show its bare value, as LangGraph does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from nbgraph.schema import ROOT

__all__ = ["is_root", "root_chunks", "root_output", "root_value"]

_INTERRUPT = "__interrupt__"


def is_root(spec: Any) -> bool:
    """Whether the graph's state is one root channel."""
    return spec.state.kind == "root"


def root_value(values: Any) -> Any:
    """The bare root value of a state dict `{"__root__": value}` (None before any write);
    anything else (a state with an `__interrupt__` too) is left as it is."""
    if type(values) is dict and values.keys() <= {ROOT}:
        return values.get(ROOT)
    return values


def root_output(output: dict[str, Any]) -> Any:
    """`invoke`'s result for a root-channel graph: the bare value; while paused, LangGraph's
    `{"__interrupt__": [...]}` alone (it leaves the root's value out)."""
    if _INTERRUPT in output:
        return {_INTERRUPT: output[_INTERRUPT]}
    return output.get(ROOT)


def _chunk(mode: str, chunk: Any) -> Any:
    if mode == "values":
        return root_output(chunk) if type(chunk) is dict else chunk
    if mode == "updates" and type(chunk) is dict:
        return {
            node: root_value(update) if type(update) is dict else update
            for node, update in chunk.items()
        }
    return chunk


def root_chunks(spec: Any) -> Callable[[str, Any], Any] | None:
    """For a root-channel graph, what turns a `(mode, chunk)`'s chunk into LangGraph's
    (bare values, `{node: value}` updates); None for any other graph."""
    return _chunk if is_root(spec) else None
