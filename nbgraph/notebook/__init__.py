"""The notebook layer: the objects a user touches, composed from the layers below.

`StateGraph` (the builder, plus `compile()` and `draw()`), `CompiledStateGraph` (the engine's
graph, plus `run()`, `last_run` and its drawing) and `Run` (the record, plus its drawings and
the inspector). Nothing below imports this package.
"""

from nbgraph.notebook.app import CompiledStateGraph
from nbgraph.notebook.graph import StateGraph
from nbgraph.notebook.run import Run

__all__ = ["CompiledStateGraph", "Run", "StateGraph"]
