"""`astream_events(version="v2")`: LangChain's event stream of a graph run, made by
langchain_core's own event stream handler hearing the run's callbacks
(`engine.streaming.chain_events`): the graph's `on_chain_start/stream/end`, each node's,
and those of the chat models, tools and custom events the nodes call.

The run is the graph's `astream` with the handler in its config's callbacks: no other way
of running it. langchain_core is imported only when events are asked for.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

__all__ = ["astream_events"]

_FILTERS = (
    "include_names",
    "include_types",
    "include_tags",
    "exclude_names",
    "exclude_types",
    "exclude_tags",
)


def astream_events(
    graph: Any, graph_input: Any, config: Any, version: str, kwargs: dict[str, Any]
) -> AsyncIterator[dict[str, Any]]:
    """The events of `graph.astream(graph_input, config, **kwargs)` (see the module doc).

    Raises:
        ImportError: langchain_core is not installed.
        NotImplementedError: a version other than "v2" (nbgraph has neither LangChain's old
            "v1" events nor LangGraph's "v3" protocol).
    """
    if version != "v2":
        raise NotImplementedError(
            f"astream_events(version={version!r}) is not supported by nbgraph; use "
            "version='v2' (LangChain's event stream)."
        )
    try:
        from langchain_core.tracers.event_stream import _astream_events_implementation_v2
    except ImportError as error:
        raise ImportError(
            "astream_events streams LangChain's events, which needs langchain_core: "
            f"pip install nbgraph[langchain] ({error})"
        ) from None
    filters = {key: kwargs.pop(key) for key in _FILTERS if key in kwargs}
    return _astream_events_implementation_v2(
        graph, graph_input, config, **filters, **kwargs
    )  # (it calls `graph.astream` with its handler among the config's callbacks)
