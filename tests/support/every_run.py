"""Every run the apps make while a block runs (subgraphs' too), collected as `Run`s."""

from __future__ import annotations

import contextlib
from typing import Any

__all__ = ["case_runs", "every_run"]


@contextlib.contextmanager
def every_run() -> Any:
    """Every run any app makes meanwhile (subgraphs' too), as its `Run`, in a list."""
    from nbgraph.engine.app import CompiledGraph

    found: list[Any] = []
    running = CompiledGraph._running

    @contextlib.contextmanager
    def recorded(app: Any, run: Any) -> Any:
        try:
            with running(app, run):
                yield
        finally:
            found.append(app.last_run)

    CompiledGraph._running = recorded
    try:
        yield found
    finally:
        CompiledGraph._running = running


def case_runs(case: Any) -> list[Any]:
    """Every run a compat case makes on nbgraph (its subgraphs' too); a case that raises
    keeps the runs it made."""
    import asyncio

    from tests.support.harness import api_for

    with every_run() as found, contextlib.suppress(Exception):
        app, graph_input, config = case(api_for("nbgraph"))
        if getattr(case, "is_async", False):
            asyncio.run(app.ainvoke(graph_input, config))
        else:
            app.run(graph_input, config)
    return found
