"""`run.compare_view(other)`: two runs compared in one widget, one step control driving both.

The first step where they differ is marked and one click away, one picture holds both runs
(`views.compare_picture`), and only the fields that differ are shown, before and after in each
run side by side (`views.compare_panels`).

What differs is `run.compare(other)`'s finding (`record.compare.divergence`), read once.
The widget's display also carries a static snapshot (`text/html`) of the step it shows, so
an untrusted notebook, `python -m nbgraph.share` and the docs site show the comparison with
no kernel and no script from the network (`views.snapshot`). This module imports
ipywidgets: `Run.compare_view` loads it only when a comparison is made.
"""

from __future__ import annotations

import html
from typing import Any

import ipywidgets

from nbgraph.record.compare.divergence import Divergence, divergence
from nbgraph.views.compare_panels import (
    COMPARE_CLASS,
    differences_html,
    label_html,
    pictures_html,
    summary_html,
)
from nbgraph.views.compare_picture import compare_pictures, same_drawing

__all__ = ["CompareView", "compare_snapshot_html"]

_PICTURE = {"flex": "1 1 420px", "min_width": "0", "overflow": "hidden"}
_PANEL = {"flex": "1 1 520px", "min_width": "0", "overflow": "auto"}
"""The picture and the fields side by side when the output has room for both (about 1,000
px), else one above the other, each the whole width: never a picture squeezed to a strip."""
_NOTE = (
    "<p style='opacity:0.7'><i>A snapshot of the comparison at step {step} (the widget needs "
    "the kernel that made it): re-run the cell to step through it.</i></p>"
)


class CompareView(ipywidgets.VBox):
    """Two runs side by side in one widget: step through both at once.

    Attributes:
        runs: the two runs (this, other).
        names: what the widget calls them (default "this" and "other").
        found: where they differ (`record.compare.divergence.Divergence`).
        step: the step shown.
    """

    def __init__(self, this: Any, other: Any, names: tuple[str, str] = ("this", "other")) -> None:
        super().__init__()
        self.runs, self.names = (this, other), names
        self.found: Divergence = divergence(this, other)
        self._same = same_drawing(this, other)  # (one drawing holds both runs)
        lasts = (this.log.steps[-1].step, other.log.steps[-1].step)
        self.slider = ipywidgets.IntSlider(
            min=0, max=max(lasts), description="step", continuous_update=False
        )
        self.previous = ipywidgets.Button(description="◀ previous", tooltip="previous step")
        self.next = ipywidgets.Button(description="next ▶", tooltip="next step")
        first = self.found.first
        self.first = ipywidgets.Button(
            description=f"⚑ first difference: step {first}" if first is not None else "⚑ none",
            tooltip="go to the first step where the runs differ",
            disabled=first is None,
            button_style="warning" if first is not None else "",
            layout={"width": "auto"},
        )
        self.next_difference = ipywidgets.Button(
            description="next difference ▶▶",
            disabled=len(self.found.steps) < 2,
            layout={"width": "auto"},
        )
        self.summary = ipywidgets.HTML(summary_html(self.found, names, lasts))
        self.label = ipywidgets.HTML()
        self.label.add_class("nbgraph-compare-label")
        self.picture = ipywidgets.HTML(layout=_PICTURE)
        self.fields = ipywidgets.HTML(layout=_PANEL)
        self._wire()
        self._lay_out()
        start = first if first is not None else min(1, self.slider.max)
        if self.slider.value == start:
            self.show(start)
        self.slider.value = start

    def _wire(self) -> None:
        self.slider.observe(lambda change: self.show(change["new"]), "value")
        self.previous.on_click(lambda _: self.go(self.step - 1))
        self.next.on_click(lambda _: self.go(self.step + 1))
        self.first.on_click(lambda _: self.go_to_first())
        self.next_difference.on_click(lambda _: self.go_to_next_difference())

    def _lay_out(self) -> None:
        controls = ipywidgets.HBox(
            [self.previous, self.slider, self.next, self.first, self.next_difference],
            layout={"flex_flow": "row wrap"},
        )
        body = ipywidgets.HBox(
            [self.picture, self.fields], layout={"flex_flow": "row wrap", "width": "100%"}
        )
        self.children = [self.summary, controls, self.label, body]
        self.add_class(COMPARE_CLASS)

    @property
    def step(self) -> int:
        return self.slider.value

    def go(self, step: int) -> None:
        """Show `step` in both runs (clamped to the longer run's steps)."""
        self.slider.value = max(self.slider.min, min(self.slider.max, step))

    def go_to_first(self) -> None:
        """Show the first step where the runs differ (nothing happens if they do not)."""
        if self.found.first is not None:
            self.go(self.found.first)

    def go_to_next_difference(self) -> None:
        """Show the next step after the shown one where the runs differ (from the last
        one: the first again)."""
        later = [s for s in self.found.steps if s > self.step]
        if later or self.found.steps:
            self.go(later[0] if later else self.found.steps[0])

    def show(self, step: int) -> None:
        """Fill the label, the picture and the fields for `step`."""
        with self.picture.hold_sync(), self.fields.hold_sync(), self.label.hold_sync():
            self.label.value = label_html(step, self.runs, self.names, self.found)
            self.picture.value = pictures_html(self._drawn(step))
            self.fields.value = differences_html(step, self.runs, self.names, self.found)

    def _drawn(self, step: int) -> list[Any]:
        return compare_pictures(*self.runs, step, self.names, self._same)

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any] | None:
        """ipywidgets' bundle with a `text/html` snapshot of the shown step (for wherever
        the widget cannot be shown) and a `text/plain` line saying what it is."""
        bundle = super()._repr_mimebundle_(**kwargs)
        if bundle is not None:
            bundle["text/html"] = compare_snapshot_html(self)
            bundle["text/plain"] = repr(self)
        return bundle

    def __repr__(self) -> str:
        first = self.found.first
        where = f"first difference at step {first}" if first is not None else "no difference"
        return (
            f"<CompareView of {self.names[0]} and {self.names[1]}: {where}; at step "
            f"{self.slider.value}>"
        )


def compare_snapshot_html(view: CompareView) -> str:
    """The comparison at its shown step as static HTML: where the runs first differ, the
    step, the picture (with an image copy for untrusted pages) and the fields that differ."""
    step = view.step
    body = (
        "<div style='display:flex;flex-wrap:wrap;gap:8px;align-items:flex-start'>"
        f"<div style='flex:1 1 420px;min-width:0;overflow:auto'>"
        f"{pictures_html(view._drawn(step), static=True)}</div>"
        f"<div style='flex:1 1 520px;min-width:0;overflow:auto'>{view.fields.value}</div></div>"
    )
    return (
        f"<div class='{COMPARE_CLASS} nbgraph-snapshot' "
        f"title='{html.escape(repr(view), quote=True)}'>{_NOTE.format(step=step)}"
        f"{view.summary.value}<p>{view.label.value}</p>{body}</div>"
    )
