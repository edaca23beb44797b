"""`run.quiz()`: predict, then see; an ipywidgets quiz over a recorded run's merges.

At each merge (`views.quiz_fold`) the learner sees the value before, each write with its
writer in write order and the reducer, types the value after, and checks: right or wrong,
then the reducer's fold spelled out write by write. Previous / next walk the merges; the
score counts each merge's first check. The quiz only reads the run.

Its display also carries `text/html`, a static snapshot of the question shown (never its
answer), and `text/plain`, for wherever the widget cannot be shown (an untrusted notebook,
nbconvert, `nbgraph.share`).
"""

from __future__ import annotations

import html
from typing import Any

import ipywidgets

from nbgraph.errors import InvalidArgumentError
from nbgraph.views.quiz_fold import (
    Merge,
    judge,
    merges_of,
    question_html,
    shown,
    verdict_html,
    writer_text,
)

__all__ = ["Quiz", "quiz"]

_NOTE = (
    "<p style='opacity:0.7'><i>A snapshot of the quiz's question (the widget needs the "
    "kernel that made it): re-run the cell to answer it. The answer is not shown here.</i></p>"
)


def quiz(run: Any, fields: Any = None, steps: Any = None) -> Quiz:
    """A quiz over `run`'s merges (optionally only those of `fields`, a name or names, and
    of `steps`, a step number or numbers)."""
    merges = merges_of(run, fields, steps)
    if not merges:
        which = f" of {fields!r}" if fields else ""
        which += f" at step(s) {steps!r}" if steps is not None else ""
        raise InvalidArgumentError(
            f"run.quiz(fields={fields!r}, steps={steps!r}): this run has no merges{which} to "
            f"ask about (a merge is a step where a field's writes were folded: run.effects' "
            f"applied rows)."
        )
    return Quiz(run, merges)


class Quiz(ipywidgets.VBox):
    """Predict each merge's value after, then see it with the reducer's fold.

    Attributes:
        merges: the merges asked about, in run order.
        index: the merge shown (0-based).
        results: per merge index, whether its first check was right.
        answer: the text box; check, reveal, previous, next: the buttons.
        question, feedback, score: the HTML shown.
    """

    def __init__(self, run: Any, merges: list[Merge]) -> None:
        super().__init__()
        self.run, self.merges, self.index = run, merges, 0
        self.results: dict[int, bool] = {}
        self.score = ipywidgets.HTML()
        self.question = ipywidgets.HTML()
        self.answer = ipywidgets.Text(
            placeholder="the value after, as Python: [1, 2], 3, 'text', {'k': 1}",
            description="after =",
            layout=ipywidgets.Layout(width="min(100%, 40em)"),
        )
        self.check_button = ipywidgets.Button(description="check", button_style="primary")
        self.reveal_button = ipywidgets.Button(description="show the answer")
        self.previous = ipywidgets.Button(description="◀ previous merge")
        self.next = ipywidgets.Button(description="next merge ▶")
        self.feedback = ipywidgets.HTML()
        self.check_button.on_click(lambda _: self.check())
        self.reveal_button.on_click(lambda _: self.reveal())
        self.previous.on_click(lambda _: self.go(self.index - 1))
        self.next.on_click(lambda _: self.go(self.index + 1))
        buttons = ipywidgets.HBox([self.check_button, self.reveal_button])
        moves = ipywidgets.HBox([self.previous, self.next])
        self.add_class("nbgraph-quiz")
        self.children = [self.score, self.question, self.answer, buttons, self.feedback, moves]
        self.go(0)

    @property
    def merge(self) -> Merge:
        """The merge shown."""
        return self.merges[self.index]

    def go(self, index: int) -> None:
        """Show merge `index` (clamped to the merges), its answer hidden."""
        self.index = max(0, min(index, len(self.merges) - 1))
        self.question.value = question_html(self.merge, self.index + 1, len(self.merges))
        self.answer.value = ""
        self.feedback.value = ""
        self.previous.disabled = self.index == 0
        self.next.disabled = self.index == len(self.merges) - 1
        self._score()

    def check(self, answer: str | None = None) -> bool:
        """Judge the typed answer (or `answer`): show right or wrong and the fold. Returns
        whether it was right; the first check that parses counts for the score."""
        if answer is not None:
            self.answer.value = answer
        verdict = judge(self.answer.value, self.merge)
        if verdict.parsed:
            self.results.setdefault(self.index, verdict.right)
        self.feedback.value = verdict_html(verdict, self.merge)
        self._score()
        return verdict.right

    def reveal(self) -> None:
        """Show the value after and the fold without an answer (counts as not right)."""
        self.results.setdefault(self.index, False)
        self.feedback.value = verdict_html(None, self.merge)
        self._score()

    def _score(self) -> None:
        right = sum(self.results.values())
        self.score.value = (
            f"<b>Predict, then see.</b> Score: {right} right of {len(self.results)} "
            f"checked ({len(self.merges)} merge{'s' * (len(self.merges) != 1)})"
        )

    def text(self) -> str:
        """The shown question as plain text (no answer)."""
        merge = self.merge
        writes = "; ".join(f"{shown(w)} from {writer_text(who)}" for who, w in merge.writes)
        return (
            f"<Quiz over {self.run!r}: merge {self.index + 1} of {len(self.merges)}, step "
            f"{merge.step}, field {merge.field!r}, reducer {merge.reducer}: before "
            f"{shown(merge.before)}, writes {writes}; after = ? (answer in the widget)>"
        )

    def snapshot_html(self) -> str:
        """The shown question as static HTML (escaped; never the answer)."""
        title = html.escape(self.text(), quote=True)
        return (
            f"<div class='nbgraph-quiz-snapshot' title='{title}'>{_NOTE}{self.score.value}"
            f"{self.question.value}</div>"
        )

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any] | None:
        bundle = super()._repr_mimebundle_(**kwargs)
        if bundle is not None:
            bundle["text/html"] = self.snapshot_html()
            bundle["text/plain"] = self.text()
        return bundle

    def __repr__(self) -> str:
        return self.text()
