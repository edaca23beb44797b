"""`astream_events(version="v2")` and `astream_log`: LangChain's event stream and run log of a
graph run.

They are made by langchain_core's own handlers hearing the run's callbacks
(`engine.streaming.chain_events`): the graph's `on_chain_start/stream/end`, each node's, and
those of the chat models, tools and custom events the nodes call.

The run is the graph's `astream` with the handler in its config's callbacks: no other way
of running it. langchain_core is imported only when events or a log are asked for.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

__all__ = ["astream_events", "astream_log"]

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


def astream_log(
    graph: Any, graph_input: Any, config: Any, kwargs: dict[str, Any]
) -> AsyncIterator[Any]:
    """LangChain's `astream_log` of `graph.astream(graph_input, config, **kwargs)`:
    `RunLogPatch`es (`RunLog`s with `diff=False`) of the graph's run, its streamed chunks
    and the runs inside it that the `include_*`/`exclude_*` filters keep.

    Raises:
        ImportError: langchain_core is not installed.
    """
    try:
        from langchain_core.tracers.log_stream import (
            LogStreamCallbackHandler,
            _astream_log_implementation,
        )
    except ImportError as error:
        raise ImportError(
            "astream_log streams LangChain's run log, which needs langchain_core: "
            f"pip install nbgraph[langchain] ({error})"
        ) from None
    diff = kwargs.pop("diff", True)
    listed = kwargs.pop("with_streamed_output_list", True)
    filters = {key: kwargs.pop(key) for key in _FILTERS if key in kwargs}
    handler = LogStreamCallbackHandler(auto_close=False, _schema_format="original", **filters)
    return _astream_log_implementation(  # (it calls `graph.astream` with the handler)
        graph, graph_input, config, stream=handler, diff=diff,
        with_streamed_output_list=listed, **kwargs,
    )  # fmt: skip
