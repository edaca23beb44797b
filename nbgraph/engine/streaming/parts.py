"""`version="v2"` streams and `invoke(stream_mode=...)`: a run's chunks in the shapes
LangGraph returns them.

- A v2 stream yields one `StreamPart` dict per chunk, whatever the modes asked:
  `{"type": mode, "ns": namespace, "data": chunk}`, and a `values` part also
  `"interrupts"` (the `__interrupt__` the chunk carried, taken out of it). A state of a
  pydantic or dataclass output schema is handed as an instance of it (`values` parts, and a
  `checkpoints` part's `values` past the input checkpoint).
- `invoke(stream_mode=m)` with `m` other than `"values"` returns the list of what
  `stream(stream_mode=m)` yields; `version="v2"` with `"values"` returns a `GraphOutput`
  (the last values and the questions that paused the run).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from typing import Any

from nbgraph.blueprint import GraphSpec
from nbgraph.errors import InvalidArgumentError
from nbgraph.primitives import START, GraphOutput

__all__ = [
    "VERSIONS",
    "aoutput_of",
    "aparts_of",
    "as_parts",
    "check_version",
    "output_of",
    "parts_of",
]

VERSIONS = ("v1", "v2")
_INTERRUPT = "__interrupt__"


def check_version(version: Any) -> str:
    """`version` if it is one of `VERSIONS`, else an error naming it."""
    if version not in VERSIONS:
        raise InvalidArgumentError(
            f"version={version!r} is not a stream format; choose 'v1' (chunks as before) or "
            "'v2' (StreamPart dicts; invoke returns a GraphOutput)."
        )
    return version


def _mapper(schema: Any) -> Callable[[dict], Any] | None:
    """What makes a state dict an instance of `schema` (pydantic or dataclass), if anything."""
    if schema.kind in ("pydantic", "dataclass"):
        return lambda values: schema.cls(**values)
    return None


def as_parts(spec: GraphSpec, items: Iterable[Any], subgraphs: bool) -> Iterator[dict]:
    """The v2 parts of a stream run with a list of modes (`(mode, chunk)` items, or
    `(namespace, mode, chunk)` with `subgraphs`)."""
    output, state = _mapper(spec.output), _mapper(spec.state)
    for item in items:
        ns, mode, chunk = item if subgraphs else ((), *item)
        yield _part(tuple(ns), mode, chunk, output, state)


def _part(ns: tuple, mode: str, chunk: Any, output: Any, state: Any) -> dict:
    if mode == "values":
        interrupts: tuple = ()
        if isinstance(chunk, dict):
            chunk = dict(chunk)
            interrupts = tuple(chunk.pop(_INTERRUPT, ()))
            if output is not None:
                chunk = output(chunk)
        return {"type": mode, "ns": ns, "data": chunk, "interrupts": interrupts}
    if mode == "checkpoints" and state is not None and isinstance(chunk, dict):
        values = chunk.get("values")
        if isinstance(values, dict) and START not in chunk.get("next", ()):
            chunk = {**chunk, "values": state(values)}
    return {"type": mode, "ns": ns, "data": chunk}


def _mode_list(stream_mode: Any) -> list[str]:
    return [stream_mode] if isinstance(stream_mode, str) else list(stream_mode)


def parts_of(
    graph: Any, graph_input: Any, config: Any, stream_mode: Any, kwargs: dict[str, Any]
) -> Iterator[dict]:
    """`graph.stream(..., version="v2")`: its v1 stream, run with a list of modes, as parts."""
    subgraphs = bool(kwargs.get("subgraphs", False))
    modes = _mode_list(stream_mode or graph.stream_mode)
    items = graph.stream(graph_input, config, stream_mode=modes, **kwargs)
    return as_parts(graph.spec, items, subgraphs)


async def aparts_of(
    graph: Any, graph_input: Any, config: Any, stream_mode: Any, kwargs: dict[str, Any]
) -> AsyncIterator[dict]:
    """`parts_of` for `astream`."""
    subgraphs = bool(kwargs.get("subgraphs", False))
    modes = _mode_list(stream_mode or graph.stream_mode)
    async for item in graph.astream(graph_input, config, stream_mode=modes, **kwargs):
        for part in as_parts(graph.spec, (item,), subgraphs):
            yield part


def output_of(items: Iterable[Any], stream_mode: Any, version: str) -> Any:
    """What `invoke(stream_mode=..., version=...)` returns, from what `stream` yielded."""
    if stream_mode != "values":
        return list(items)
    latest, interrupts = None, []  # (only v2 comes here: v1 values is invoke's own path)
    for part in items:
        latest = part["data"]
        interrupts.extend(part.get("interrupts", ()))
    return GraphOutput(value=latest, interrupts=tuple(interrupts))


async def aoutput_of(items: AsyncIterator[Any], stream_mode: Any, version: str) -> Any:
    """`output_of` for `astream`'s items."""
    return output_of([item async for item in items], stream_mode, version)
