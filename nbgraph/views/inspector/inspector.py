"""The step-through inspector: `inspect(run)` makes the widget of
`views.inspector.inspector_widget`.

This module stays light (`import nbgraph` imports it): ipywidgets is imported only when an
inspector is made.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from nbgraph.views.inspector.inspector_widget import Inspector

__all__ = ["inspect"]


def inspect(run: Any, other: Any = None) -> Inspector:
    """An inspector widget for `run` (optionally compared with `other`, another run).

    >>> # in a notebook: nbgraph.inspect(app.last_run), or app.last_run.inspect()
    """
    from nbgraph.engine.facts import RunLog
    from nbgraph.errors import InvalidArgumentError

    for name, value in (("run", run), ("other", other)):
        if (value is not None or name == "run") and not isinstance(
            getattr(value, "log", None), RunLog
        ):
            raise InvalidArgumentError(
                f"nbgraph.inspect({name}=): expected a run (app.last_run, Run.load(...)), got "
                f"{type(value).__name__}."
            )
    if not run.log.steps:  # (a run refused before its first step, say by run_many)
        error = run.log.error
        why = f" ({type(error).__name__}: {error})" if error is not None else ""
        raise InvalidArgumentError(
            f"nbgraph.inspect(run=): this run has no steps to show: it ended "
            f"{run.log.status!r} before its first step{why}. Its error is run.error."
        )
    from nbgraph.views.inspector.inspector_widget import Inspector

    return Inspector(run, other)
