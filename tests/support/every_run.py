"""Every run the apps make while a block runs (subgraphs' too), collected as `Run`s."""

from __future__ import annotations

import contextlib
from typing import Any

__all__ = ["every_run"]


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
