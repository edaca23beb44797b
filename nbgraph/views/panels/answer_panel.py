"""The inspector's answer panel: a paused run's questions answered, or its tool calls reviewed,
and the run resumed.

A run paused at `interrupt()` shows each question (per task when several wait) with a box to
answer it, or, for a tool-call review (`views.panels.tool_review`), approve / edit / reject (or
respond, where allowed) per tool call; "answer and resume" resumes the thread (`Run.answer`) and
the inspector shows the run grown by the resumed steps.

Views never drive the engine themselves: the panel calls the run's own `answer`
(`Command(resume=...)` through the app's `run`, in the notebook layer). A bad answer (text
that is not JSON when answering as JSON, an edit naming an unknown argument) is refused with
a message naming the question and the field; every value shown is escaped.
"""

from __future__ import annotations

import html
import json
from typing import Any

import ipywidgets

from nbgraph.views.panels.tool_review import (
    Review,
    ReviewAnswerError,
    calls_review,
    review_answer,
    review_of,
)
from nbgraph.views.panels.value_tree import value_tree_html

__all__ = ["AnswerPanel", "CallsRow", "QuestionRow"]

_TEXT, _JSON = "text", "JSON"
_ERROR = "<span style='color:#990000'>{}</span>"
_WIDGETS = frozenset({"button", "status", "title"})
"""The panel's own widgets (`AnswerPanel._make`); each question's row makes its own."""


class AnswerPanel:
    """The rows of the inspector that answer a paused run.

    Attributes:
        box: the panel (hidden unless the shown run waits on a question).
        rows: one `QuestionRow` per question waiting, in task order.
        button: "answer and resume".
        status: why it cannot answer, what a bad answer got wrong, or what the answer did.
        title: the panel's heading. These three are made when first read: a run that waits
            on nothing has none of them.
        last_run: the run the latest answer made (the thread so far), or None.
    """

    def __init__(self, inspector: Any) -> None:
        self.inspector = inspector
        self.rows: list[QuestionRow] = []
        self.box = ipywidgets.VBox(layout={"display": "none"})
        self.box.add_class("nbgraph-answer")
        self.last_run: Any = None
        self._for: Any = None  # the run the rows were made for

    def _make(self) -> None:
        """The title, button and status: made when a run waiting on an answer is shown, or
        one of them is first read (a run that waits on none hides the panel)."""
        self.button = ipywidgets.Button(
            description="answer and resume", icon="play", layout={"width": "auto"}
        )
        self.button.add_class("nbgraph-answer-button")
        self.status = ipywidgets.HTML()
        self.status.add_class("nbgraph-answer-status")
        self.title = ipywidgets.HTML()
        self.button.on_click(lambda _: self.answer())

    def __getattr__(self, name: str) -> Any:
        if name in _WIDGETS and "title" not in self.__dict__:
            self._make()
            return getattr(self, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def refresh(self) -> None:
        """Follow the shown run: its questions, whether it can be answered (cheap when the
        run is the one the rows were made for)."""
        run = self.inspector.run
        if run is self._for:
            return
        self._for = run
        asked = list(getattr(run, "questions", None) or [])
        calls = None if asked else getattr(run, "pending_calls", None)
        if not asked and calls is None:  # (just answered: what the answer did stays said)
            self.rows = []
            self.box.children = [self.status] if run is self.last_run else []
            self.box.layout.display = "" if run is self.last_run else "none"
            return
        if calls is not None:
            self._show_calls(run, calls)
            return
        several = len(asked) > 1
        self.rows = [QuestionRow(q, several) for q in asked]
        problem = getattr(run, "answer_problem", "This run cannot be answered here.")
        self.button.disabled = problem is not None
        self.button.tooltip = problem or "Command(resume=...) on the run's thread"
        if problem is not None:
            self.status.value = f"<i>{html.escape(problem)}</i>"
        elif run is not self.last_run:
            self.status.value = ""
        count = f"{len(asked)} questions wait" if several else "a question waits"
        self.title.value = (
            f"<b>Paused: {count}.</b> Answer "
            + ("those you can (the others keep waiting) " if several else "")
            + "and resume the thread."
        )
        self.box.children = [self.title, *(r.box for r in self.rows), self.button, self.status]
        self.box.layout.display = ""

    def _show_calls(self, run: Any, calls: Any) -> None:
        """A breakpoint before the node that runs an AI message's tool calls: decide each."""
        self.rows = [CallsRow(calls)]
        self.button.disabled = False
        self.button.tooltip = "approve, edit or reject the calls, then run on"
        if run is not self.last_run:
            self.status.value = ""
        count = len(calls.calls)
        self.title.value = (
            f"<b>Paused before {html.escape(calls.node)}: {count} tool call"
            f"{'s wait' if count != 1 else ' waits'} for approval.</b> Decide each and run on."
        )
        self.box.children = [self.title, self.rows[0].box, self.button, self.status]
        self.box.layout.display = ""

    def answer(self) -> Any:
        """Read the answers, resume the thread, and show the run grown by the resumed steps;
        on a bad answer or a refused resume, say why in the panel (and return None)."""
        given, problems = {}, []
        for row in self.rows:
            try:
                value = row.value()
            except ValueError as error:
                problems.append(str(error))
                continue
            if value is not _UNANSWERED:
                given[row.question.id] = value
        if problems:
            return self._fail(" ".join(problems))
        if not given:
            return self._fail("Write an answer (or decide each tool call) before resuming.")
        resume = next(iter(given.values())) if len(self.rows) == 1 else given
        inspector = self.inspector
        at_breakpoint = isinstance(self.rows[0], CallsRow)
        try:
            run = inspector.run
            grown = run.review_calls(resume) if at_breakpoint else run.answer(resume)
        except Exception as error:  # shown in the panel: the person fixes it and retries
            return self._fail(f"Could not resume: {type(error).__name__}: {error}")
        before = len(run.log.steps)
        catch_up = getattr(run, "catch_up", None)
        if callable(catch_up):  # the run the notebook holds becomes the thread so far too
            grown = catch_up(grown)
            self._for = None  # (the same object, grown: its questions are asked again)
        self.last_run = grown
        inspector.reopen(grown, inspector.other, grown.log.steps[-1].step)
        added = max(0, len(grown.log.steps) - before + (not at_breakpoint))  # (paused: again)
        self.status.value = (
            f"<b>Resumed</b>: {added} step{'s' * (added != 1)} ran "
            f"({html.escape(grown.log.status)}); the run shown now goes on to step "
            f"{grown.log.steps[-1].step}."
        )
        return grown

    def _fail(self, message: str) -> None:
        self.status.value = _ERROR.format(html.escape(message))
        return None


_UNANSWERED = object()


class QuestionRow:
    """One question: what was asked, and the box (or the tool-call decisions) to answer it.

    Attributes:
        question: the `nbgraph.notebook.answer.Question`.
        review: the tool-call review it asks for, or None.
        box: its widgets.
    """

    def __init__(self, question: Any, several: bool) -> None:
        self.question = question
        self.review: Review | None = review_of(question.value)
        self.name = f"The answer to {question.node!r}" + (
            f" (interrupt {question.id})" if several else ""
        )
        which = f" <code>{html.escape(question.id)}</code>" if several else ""
        asks = value_tree_html(question.value, 100)
        if self.review is not None:  # (the calls are shown one by one below)
            count = len(self.review.actions)
            asks = f"a review of {count} tool call{'s' * (count != 1)}"
        head = ipywidgets.HTML(f"<b>{html.escape(question.node)}</b>{which} asks: {asks}")
        head.add_class("nbgraph-question")
        if self.review is None:
            self._free_answer(question.value)
            parts: list[Any] = [head, ipywidgets.HBox([self.text, self.mode])]
        else:
            self.decisions = [_Decision(action) for action in self.review.actions]
            parts = [head, *(d.box for d in self.decisions)]
        self.box = ipywidgets.VBox(parts)

    def _free_answer(self, asked: Any) -> None:
        self.text = ipywidgets.Textarea(
            placeholder="your answer",
            layout={"width": "420px", "max_width": "100%", "height": "3.2em"},
        )
        self.text.add_class("nbgraph-answer-text")
        structured = not isinstance(asked, str)
        self.mode = ipywidgets.Dropdown(
            options=[_TEXT, _JSON],
            value=_JSON if structured else _TEXT,
            description="as",
            layout={"width": "8.5em"},  # room for "JSON" beside its label, not "JSC"
            style={"description_width": "initial"},
        )

    def value(self) -> Any:
        """The answer given (`_UNANSWERED` if none).

        Raises:
            ValueError: a bad answer (its message names this question and the field).
        """
        if self.review is not None:
            return _decided(self.review, self.decisions, f"{self.name}: ")
        text = self.text.value
        if not text.strip():
            return _UNANSWERED
        if self.mode.value == _TEXT:
            return text
        try:
            return json.loads(text)
        except ValueError as error:
            raise ValueError(
                f'{self.name} is not valid JSON ({error}). Write it as JSON ("text" in '
                'double quotes, 3, true, null, [1, 2], {"key": "value"}), or answer as text.'
            ) from None


class CallsRow:
    """Tool calls waiting at a breakpoint: approve / edit / reject each (`Run.review_calls`).

    Attributes:
        question: stands for the calls in the panel's answers (its `id` is "calls").
        review: the calls as a `views.panels.tool_review.Review`.
        box: its widgets.
    """

    def __init__(self, calls: Any) -> None:
        self.review = calls_review(calls.calls)
        self.question = _CallsKey()
        self.decisions = [_Decision(action) for action in self.review.actions]
        self.box = ipywidgets.VBox([d.box for d in self.decisions])

    def value(self) -> Any:
        """The decisions, one per call (`_UNANSWERED` if none was made).

        Raises:
            ValueError: a call left undecided, edited args that are not JSON or name an
                unknown argument.
        """
        return _decided(self.review, self.decisions, "")


def _decided(review: Any, decisions: list[Any], where: str) -> Any:
    """The answer a review's decisions make (`_UNANSWERED` if none was made); `where`
    prefixes each message (the question's name).

    Raises:
        ValueError: a call left undecided, edited args that are not JSON or name an
            unknown argument.
    """
    chosen = [d.chosen() for d in decisions]
    if all(c is None for c in chosen):
        return _UNANSWERED
    missing = [d.action.name for d, c in zip(decisions, chosen, strict=True) if not c]
    if missing:
        verb = "decide" if where else "Decide"
        raise ValueError(f"{where}{verb} the tool call(s) {missing} too.")
    try:
        return review_answer(review, chosen)
    except ReviewAnswerError as error:
        raise ValueError(f"{where}{error}") from None


class _CallsKey:
    id = "calls"


class _Decision:
    """Approve / edit / reject for one tool call; the edit's args as JSON, the reason."""

    def __init__(self, action: Any) -> None:
        self.action = action
        w = ipywidgets
        call = html.escape(f"{action.name}({json.dumps(action.args, default=repr)[:300]})")
        about = f" — {html.escape(action.description[:300])}" if action.description else ""
        self.pick = w.ToggleButtons(options=list(action.allowed), value=None)
        self.pick.add_class("nbgraph-decision")
        self.args = w.Textarea(
            value=json.dumps(action.args, indent=1, default=repr),
            layout={"width": "420px", "max_width": "100%", "height": "4.5em", "display": "none"},
        )
        self.args.add_class("nbgraph-edit-args")
        self.reason = w.Text(
            placeholder="why (optional)",
            layout={"width": "420px", "max_width": "100%", "display": "none"},
        )
        self.pick.observe(lambda _: self._shown(), "value")
        self.box = w.VBox([w.HTML(f"tool call <code>{call}</code>{about}"), self.pick,
                           self.args, self.reason])  # fmt: skip

    def _shown(self) -> None:
        self.args.layout.display = "" if self.pick.value == "edit" else "none"
        self.reason.layout.display = "" if self.pick.value in ("reject", "respond") else "none"
        self.reason.placeholder = (
            "the tool's answer" if self.pick.value == "respond" else "why (optional)"
        )

    def chosen(self) -> tuple[str, Any] | None:
        """(decision, detail), or None if none was picked.

        Raises:
            ValueError: edited args that are not valid JSON (naming the tool call).
        """
        kind = self.pick.value
        if kind is None:
            return None
        if kind == "edit":
            try:
                return kind, json.loads(self.args.value)
            except ValueError as error:
                raise ValueError(
                    f"The edited args of tool call {self.action.name!r} are not valid JSON "
                    f"({error})."
                ) from None
        return kind, self.reason.value if kind in ("reject", "respond") else None
