"""`stream(..., subgraphs=True)` against `invoke` on compare.py's subgraph workload (a parent
self-loop whose node is a two-node subgraph, 1,000 calls), on nbgraph and on LangGraph.

Prints the best of `--repeat` runs per call of the subgraph for: `invoke`; `stream` of the
parent's updates (`subgraphs=False`, the subgraph's chunks not streamed); `stream(updates,
subgraphs=True)`; `stream(["updates", "values", "custom"], subgraphs=True)`. Run it once with
`PYTHONPATH` on main and once on a branch to see that streaming namespaces costs `invoke`
nothing.

    python benchmarks/subgraph_streams.py [--calls 1000] [--repeat 7] [--no-langgraph]
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from typing import Any

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from compare import api_langgraph, api_nbgraph, subgraph_graph, thread_config  # noqa: E402
from timing import best_seconds  # noqa: E402


def ways(app: Any, calls: int) -> dict[str, Callable[[], Any]]:
    """The timed calls: each runs the whole 1,000-call workload once."""

    def args() -> tuple[dict[str, Any], dict[str, Any]]:
        return {"count": 0, "note": ""}, thread_config(calls + 10)

    def invoke() -> None:
        assert app.invoke(*args())["count"] == calls

    def stream(**kwargs: Any) -> Callable[[], None]:
        def run() -> None:
            chunks = list(app.stream(*args(), **kwargs))
            assert chunks, "the stream yielded nothing"

        return run

    return {
        "invoke": invoke,
        "stream updates": stream(stream_mode="updates"),
        "stream updates, subgraphs=True": stream(stream_mode="updates", subgraphs=True),
        "stream updates+values+custom, subgraphs=True": stream(
            stream_mode=["updates", "values", "custom"], subgraphs=True
        ),
    }


def main(argv: list[str] | None = None) -> dict[str, dict[str, float]]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--no-langgraph", action="store_true")
    options = parser.parse_args(argv)
    apis = [api_nbgraph()]
    if not options.no_langgraph and (lg := api_langgraph()) is not None:
        apis.append(lg)
    results: dict[str, dict[str, float]] = {}
    for api in apis:
        app = subgraph_graph(api, options.calls)
        for name, call in ways(app, options.calls).items():
            try:
                seconds = best_seconds(call, options.repeat)
            except Exception as error:  # (an nbgraph that refuses subgraphs=True: main before)
                print(f"{api.name:9} {name:46} refused: {type(error).__name__}")
                continue
            results.setdefault(name, {})[api.name] = seconds
            print(f"{api.name:9} {name:46} {seconds / options.calls * 1e6:8.1f} µs/call")
    return results


if __name__ == "__main__":
    main()
