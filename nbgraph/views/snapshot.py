"""What a saved notebook keeps of an inspector: a static snapshot of the step it showed.

ipywidgets displays a widget as an `application/vnd.jupyter.widget-view+json` bundle that
names a model living in the kernel (`Widget._repr_mimebundle_`). Reopen the saved notebook
without that kernel (and without saved widget state) and the model is gone. The inspector's
bundle therefore also carries `text/html`: the step label, the picture and the panels as they
were when it was displayed. Whatever cannot show the widget shows that instead: nbconvert's
HTML, GitHub and nbviewer, an untrusted notebook, a front-end without ipywidgets.
"""

from __future__ import annotations

import html
from typing import Any

__all__ = ["snapshot_html"]

_NOTE = (
    "<p style='opacity:0.7'><i>A snapshot of the inspector at step {step} of {last}: re-run "
    "the cell for the live inspector.</i></p>"
)


def snapshot_html(inspector: Any) -> str:
    """The inspector's shown step as static HTML: its label, picture, messages and panels
    (each already escaped where it was built), side by side as in the widget."""
    note = _NOTE.format(step=int(inspector.step), last=int(inspector.steps[-1]))
    label = f"<p>{inspector.step_label.value}</p>"
    beside = (
        "<div style='display:flex;flex-wrap:wrap;gap:8px;align-items:flex-start'>"
        f"<div style='max-width:40%;overflow:auto'>{inspector.graph.value}</div>"
        f"<div style='flex:1 1 60%;min-width:0;overflow:auto'>{inspector.state.value}"
        f"{inspector.effects.value}</div></div>"
    )
    compared = inspector.comparison.value
    return (
        f"<div class='nbgraph-snapshot' title='{html.escape(repr(inspector), quote=True)}'>"
        f"{note}{label}{inspector.error.value}{beside}{compared}</div>"
    )
