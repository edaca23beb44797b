"""What a saved notebook keeps of an inspector: a static snapshot of the step it showed.

ipywidgets displays a widget as an `application/vnd.jupyter.widget-view+json` bundle that
names a model living in the kernel (`Widget._repr_mimebundle_`). Reopen the saved notebook
without that kernel (and without saved widget state) and the model is gone. The inspector's
bundle therefore also carries `text/html`: the step label, the picture and the panels as they
were when it was displayed. Whatever cannot show the widget shows that instead: nbconvert's
HTML, GitHub and nbviewer, an untrusted notebook (JupyterLab and Notebook 7 never run an
untrusted widget, and sanitize its HTML: the picture is kept as an image, `picture_html`),
a front-end without ipywidgets.

A live run's box (`SnapshotBox`) carries the same snapshot of the inspector inside it; its
display is sent again when the run ends (`refresh`), so the saved notebook keeps the end.
"""

from __future__ import annotations

import html
from typing import Any

import ipywidgets

from nbgraph.views.drawings.display import picture_html

__all__ = ["SnapshotBox", "snapshot_html", "with_snapshot"]

_NOTE = (
    "<p style='opacity:0.7'><i>A snapshot of the inspector at step {step} of {last} (the "
    "widget needs the kernel that made it): re-run the cell to interact.</i></p>"
)
_EMPTY = (
    "<p style='opacity:0.7'><i>{what} (the widget needs the kernel that made it): re-run "
    "the cell to see it.</i></p>"
)


def snapshot_html(inspector: Any) -> str:
    """The inspector's shown step as static HTML: its label, picture, messages and panels
    (each already escaped where it was built), side by side as in the widget. The picture's
    box and the panels' carry classes (`nbgraph-snapshot-picture`, `nbgraph-snapshot-panels`)
    a page's style sheet can lay out anew (the docs site's `docs/stylesheets/pictures.css`)."""
    note = _NOTE.format(step=int(inspector.step), last=int(inspector.steps[-1]))
    label = f"<p>{inspector.step_label.value}</p>"
    picture = inspector.graph.value
    beside = (
        "<div style='display:flex;flex-wrap:wrap;gap:8px;align-items:flex-start'>"
        f"<div class='nbgraph-snapshot-picture' style='max-width:40%;overflow:auto'>"
        f"{picture_html(picture, picture)}</div>"
        f"<div class='nbgraph-snapshot-panels' style='flex:1 1 60%;min-width:0;overflow:auto'>"
        f"{inspector.state.value}"
        f"{inspector.effects.value}</div></div>"
    )
    compared = inspector.comparison.value
    return (
        f"<div class='nbgraph-snapshot' title='{html.escape(repr(inspector), quote=True)}'>"
        f"{note}{label}{inspector.error.value}{beside}{compared}</div>"
    )


class SnapshotBox(ipywidgets.VBox):
    """A `VBox` (a live run's view) whose display also carries `text/html`: a snapshot of
    the inspector inside it, or a line saying it needs its kernel (`with_snapshot`); and
    whose display can be sent again (`show`, then `refresh`) so that a saved notebook keeps
    its last state."""

    _handle: Any = None
    what = "A live run's view"
    """What the box is, in the line shown when it holds no inspector yet."""

    def show(self) -> None:
        """Display the box now, remembering where (for `refresh`)."""
        from IPython.display import display

        self._handle = display(self, display_id=True)

    def refresh(self) -> None:
        """Send the box's display again (with a new snapshot), where `show` put it."""
        if self._handle is not None:
            self._handle.update(self)

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any] | None:
        inside = next((c for c in self.children if hasattr(c, "step_label")), None)
        return with_snapshot(super()._repr_mimebundle_(**kwargs), inside, self.what)


def with_snapshot(bundle: dict[str, Any] | None, inspector: Any, what: str) -> Any:
    """A widget's display `bundle` with a `text/html` snapshot of `inspector` (and its repr
    as `text/plain`); with no inspector, a line saying what the widget is (`what`) and that
    it needs its kernel."""
    if bundle is not None:
        shown = inspector is not None
        bundle["text/html"] = snapshot_html(inspector) if shown else _EMPTY.format(what=what)
        bundle["text/plain"] = repr(inspector) if shown else f"<{what}>"
    return bundle
