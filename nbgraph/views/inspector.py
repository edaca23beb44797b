"""The step-through inspector: `inspect(run)` makes the widget of `views.inspector_widget`.

This module stays light (`import nbgraph` imports it): ipywidgets is imported only when an
inspector is made, or when `Inspector` is first read from here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from nbgraph.views.inspector_widget import Inspector

def inspect(run: Any, other: Any = None) -> Inspector:
    """An inspector widget for `run` (optionally compared with `other`, another run).

    >>> # in a notebook: nbgraph.inspect(app.last_run), or app.last_run.inspect()
    """
    from nbgraph.views.inspector_widget import Inspector

    return Inspector(run, other)


def __getattr__(name: str) -> Any:
    if name == "Inspector":  # the widget class, imported with ipywidgets on first use
        from nbgraph.views.inspector_widget import Inspector

        return Inspector
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
