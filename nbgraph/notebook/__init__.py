"""The notebook layer: the objects a user touches, composed from the layers below.

`StateGraph` (the builder, plus `compile()` and `draw()`), `CompiledStateGraph` (the engine's
graph, plus `run()`, `last_run` and its drawing) and `Run` (the record, plus its drawings and
the inspector). Nothing below imports this package.

`CompiledStateGraph` is loaded when first asked for (`compile()` does): `import nbgraph`
does not load the engine's run loop.
"""

from typing import Any

from nbgraph.notebook.graph import StateGraph
from nbgraph.notebook.run import Run

__all__ = ["CompiledStateGraph", "Run", "StateGraph"]


def __getattr__(name: str) -> Any:
    if name == "CompiledStateGraph":
        from nbgraph.notebook.app import CompiledStateGraph

        return CompiledStateGraph
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
