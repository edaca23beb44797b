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
- `output_keys=` (a field or a list of them): the chunks and `invoke`'s result show those
  fields (one field named alone: its bare value), and `values` chunks come when one of
  them changed, as LangGraph's.
- `print_mode=`: the chunks of those modes printed as LangGraph prints them (`[mode]` in
  bold, then the chunk's repr), whatever is streamed.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from typing import Any

from nbgraph.blueprint import GraphSpec
from nbgraph.engine.core.root_state import is_root, root_chunks
from nbgraph.errors import InvalidArgumentError
from nbgraph.primitives import START, GraphOutput

__all__ = [
    "VERSIONS",
    "aoutput_of",
    "aparts_of",
    "aprinted",
    "as_parts",
    "check_version",
    "chunk_shape",
    "collected",
    "invoke_modes",
    "output_keys_of",
    "output_of",
    "parts_of",
    "printed",
    "wants_chunks",
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


def invoke_modes(stream_mode: Any, version: str) -> Any:
    """The modes `invoke` streams with (LangGraph's): v1 `"values"` also reads `"updates"`,
    where the questions that paused the run are."""
    return ["updates", "values"] if stream_mode == "values" and version == "v1" else stream_mode


def wants_chunks(kwargs: dict[str, Any]) -> bool:
    """Whether `invoke`'s keyword arguments ask for more than its own path gives: another
    `stream_mode` than `"values"`, `version="v2"`, or `output_keys=`."""
    mode, version = kwargs.get("stream_mode", "values"), kwargs.get("version", "v1")
    if mode != "values" or check_version(version) == "v2":
        return True
    return "output_keys" in kwargs or bool(kwargs.get("print_mode"))


def output_of(
    stream: Callable[..., Iterable[Any]], graph_input: Any, config: Any, kwargs: dict[str, Any]
) -> Any:
    """What `invoke(stream_mode=..., version=..., output_keys=...)` returns, from what
    `stream` (the graph's) yields with `invoke_modes`."""
    mode, version, modes = _invoked(kwargs)
    items = stream(graph_input, config, stream_mode=modes, version=version, **kwargs)
    return collected(items, mode, version)


async def aoutput_of(
    astream: Callable[..., Any], graph_input: Any, config: Any, kwargs: dict[str, Any]
) -> Any:
    """`output_of` for `ainvoke`, over `astream`."""
    mode, version, modes = _invoked(kwargs)
    items = astream(graph_input, config, stream_mode=modes, version=version, **kwargs)
    return collected([item async for item in items], mode, version)


def _invoked(kwargs: dict[str, Any]) -> tuple[Any, str, Any]:
    """What an `invoke` call asks of its stream: its mode and version (taken out of
    `kwargs`), and the modes its stream runs with."""
    mode, version = kwargs.pop("stream_mode", "values"), kwargs.pop("version", "v1")
    return mode, version, invoke_modes(mode, version)


def collected(items: Iterable[Any], stream_mode: Any, version: str) -> Any:
    """`invoke`'s result from its stream's items: the chunks; with `"values"` the last
    values (and the questions that paused the run), LangGraph's algorithm."""
    if stream_mode != "values":
        return list(items)
    latest, interrupts = None, []
    for item in items:
        if version == "v2":
            latest = item["data"]
            interrupts.extend(item.get("interrupts", ()))
        elif item[0] == "values":
            latest = item[1]
        elif type(item[1]) is dict and _INTERRUPT in item[1]:
            interrupts.extend(item[1][_INTERRUPT])
    if version == "v2":
        return GraphOutput(value=latest, interrupts=tuple(interrupts))
    if not interrupts:
        return latest
    return {**latest, _INTERRUPT: interrupts} if type(latest) is dict else {_INTERRUPT: interrupts}


def output_keys_of(spec: GraphSpec, kwargs: dict[str, Any]) -> frozenset[str] | None:
    """`output_keys=` (taken from a call's `kwargs`): the fields a run's chunks show
    (`RunLoop(keys=)`); None: its own (a graph of bare values keeps its own)."""
    output_keys = kwargs.pop("output_keys")
    if output_keys is None or is_root(spec):
        return None
    return frozenset([output_keys] if isinstance(output_keys, str) else output_keys)


def chunk_shape(spec: GraphSpec, kwargs: dict[str, Any]) -> Callable[[str, Any], Any] | None:
    """What shapes a stream's chunks: a bare-valued graph's (`root_chunks`); with
    `output_keys=`, `values` chunks in its order, and one key named alone (not in a list)
    shown bare, in `values` and `updates` chunks alike (LangGraph's)."""
    keys = kwargs.get("output_keys")
    if keys is None or is_root(spec):
        return root_chunks(spec)
    bare = isinstance(keys, str)
    order = [keys] if bare else list(keys)

    def shape(mode: str, chunk: Any) -> Any:
        if type(chunk) is not dict or mode not in ("values", "updates"):
            return chunk
        if mode == "updates":
            if not bare:
                return chunk
            return {n: u.get(keys) if type(u) is dict and n != _INTERRUPT else u
                    for n, u in chunk.items()}  # fmt: skip
        if bare:
            return chunk.get(keys) if _INTERRUPT not in chunk else {_INTERRUPT: chunk[_INTERRUPT]}
        shown = {k: chunk[k] for k in order if k in chunk}
        return {**shown, _INTERRUPT: chunk[_INTERRUPT]} if _INTERRUPT in chunk else shown

    return shape


def printed(
    graph: Any, graph_input: Any, config: Any, stream_mode: Any, kwargs: dict[str, Any]
) -> Iterator[Any]:
    """`stream(..., print_mode=...)`: the chunks of those modes printed as they come
    (LangGraph's `[mode] chunk` lines), the chunks of `stream_mode` yielded as usual."""
    wanted, shown, subgraphs, single, modes = _printing(graph, stream_mode, kwargs)
    for item in graph.stream(graph_input, config, stream_mode=modes, **kwargs):
        out = _printed(item, wanted, shown, subgraphs, single)
        if out is not _SKIP:
            yield out


async def aprinted(
    graph: Any, graph_input: Any, config: Any, stream_mode: Any, kwargs: dict[str, Any]
) -> AsyncIterator[Any]:
    """`printed` for `astream`."""
    wanted, shown, subgraphs, single, modes = _printing(graph, stream_mode, kwargs)
    async for item in graph.astream(graph_input, config, stream_mode=modes, **kwargs):
        out = _printed(item, wanted, shown, subgraphs, single)
        if out is not _SKIP:
            yield out


_SKIP = object()


def _printing(graph: Any, stream_mode: Any, kwargs: dict[str, Any]) -> tuple:
    asked = stream_mode or graph.stream_mode
    wanted, shown = _mode_list(asked), _mode_list(kwargs.pop("print_mode"))
    modes = list(dict.fromkeys([*wanted, *shown]))  # (the stream runs with both)
    return wanted, shown, bool(kwargs.get("subgraphs")), isinstance(asked, str), modes


def _printed(item: Any, wanted: list, shown: list, subgraphs: bool, single: bool) -> Any:
    ns, mode, chunk = item if subgraphs else ((), *item)
    if mode in shown:
        where = f" \033[1;30;33m[graph={ns}]\033[0m" if subgraphs and ns else ""
        print(f"\033[1m[{mode}]\033[0m{where} {chunk!r}")
    if mode not in wanted:
        return _SKIP
    if single:
        return (ns, chunk) if subgraphs else chunk
    return (ns, mode, chunk) if subgraphs else (mode, chunk)
