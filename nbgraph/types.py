"""LangGraph's `langgraph.types`, spelled the same: the value types nodes and callers use.

`from langgraph.types import Command, Send, interrupt` becomes `from nbgraph.types import
Command, Send, interrupt`. The types live in `nbgraph.primitives` (the basics layer); this
module adds the names that need the engine, so it sits on the top floor.
"""

from nbgraph.engine.core.interrupts import interrupt
from nbgraph.primitives import *  # noqa: F403  (the public names, `primitives.__all__`)
from nbgraph.primitives import __all__ as _primitives

__all__ = [*_primitives, "interrupt"]
