"""How one step of a stepped run displays: the step drawn over the graph, then its reducer
effects (`app.stepper(...).step()`), and the stepper's own status panel.
"""

from __future__ import annotations

import html
from typing import Any, ClassVar

import pandas as pd

from nbgraph.views.drawings.display import picture_html
from nbgraph.views.drawings.render import render_svg
from nbgraph.views.panels.panels import state_html
from nbgraph.views.panels.table_view import effects_table_html

__all__ = ["StepEffects", "step_effects", "stepper_html"]


class StepEffects(pd.DataFrame):
    """The `effects` rows of one step (a DataFrame), shown in a notebook with the step drawn
    over the graph above the table. Anything derived from it is a plain DataFrame.

    Attributes:
        picture: the DOT source of the step's drawing ("" for none).
        caption: one line saying which step this is and what runs next.
    """

    _metadata: ClassVar[list[str]] = ["picture", "caption"]
    picture: str = ""
    caption: str = ""

    @property
    def _constructor(self) -> type[pd.DataFrame]:
        return pd.DataFrame

    def _repr_html_(self) -> str:  # type: ignore[override]
        svg = render_svg(self.picture).svg if self.picture else None
        table = (  # the one HTML renderer of effect rows (`table_view.effect_cells`)
            effects_table_html(pd.DataFrame(self))
            if len(self)
            else "<p><i>this step wrote nothing</i></p>"
        )
        return (
            f"<div class='nbgraph-step'><p><b>{html.escape(self.caption)}</b></p>"
            f"{picture_html(svg or '')}{table}</div>"  # (an untrusted notebook: an <img>)
        )


def step_effects(frame: pd.DataFrame, picture: str, caption: str) -> StepEffects:
    """`frame` as a `StepEffects` with its drawing (DOT source) and caption."""
    out = StepEffects(frame.reset_index(drop=True))
    out.picture, out.caption = picture, caption
    return out


def stepper_html(caption: str, state: dict[str, Any], question: str = "") -> str:
    """The stepper's panel: where it is, what runs next, a question it waits on, the state."""
    asks = f"<p><b>waiting for an answer:</b> {html.escape(question)}</p>" if question else ""
    return (
        f"<div class='nbgraph-stepper'><p><b>{html.escape(caption)}</b></p>{asks}"
        f"{state_html(state)}</div>"
    )
