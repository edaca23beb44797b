"""What `run.quiz()` asks and answers, without widgets: a run's merges, each reducer's fold
spelled out write by write, a learner's typed answer read and judged, all as escaped HTML.

A *merge* is one row of `run.effects` where a reducer folded writes into a field: the value
before, each write with its writer in write order, the reducer, the value after. The fold is
redone here one write at a time with the engine's own `reduce_field` (on copies, so the
record is never changed) to show each intermediate value; the value after is always the
run's own. An answer is read with `ast.literal_eval` (never `eval`): the learner types a
Python literal (`['a', 'b']`, `18`, `{'x': 1}`); a list of chat messages may be answered by
their contents (`['hi', 'hello']`) or `(role, content)` pairs.
"""

from __future__ import annotations

import ast
import html
from dataclasses import dataclass, field
from typing import Any

from nbgraph.codec.values import same
from nbgraph.engine.facts import field_spec, reduce_field
from nbgraph.isolation import isolate
from nbgraph.primitives import MISSING, is_overwrite, overwrite_value
from nbgraph.record.compare.messages import is_message
from nbgraph.record.text import short
from nbgraph.views.drawings.theme import BORDER, ERROR, FADED
from nbgraph.views.panels.table_view import readable_id

__all__ = [
    "Merge",
    "Verdict",
    "judge",
    "merges_of",
    "question_html",
    "shown",
    "verdict_html",
    "writer_text",
]

_LONG = 2000
"""A value is shown up to this many characters (its whole value stays in the run)."""

_MESSAGE_RULE = (
    "a message whose id is already in the list replaces that message (matched by id); "
    "a message with a new id is appended"
)


def shown(value: Any, note: bool = False) -> str:
    """A value as a learner would type it (its repr; `MISSING` for no value, with `note`
    "MISSING (no value yet)"), not escaped."""
    if value is MISSING:
        return "MISSING (no value yet)" if note else "MISSING"
    return short(value, _LONG)  # (reads only what it shows: a look costs what it shows)


@dataclass
class Merge:
    """One (step, field) whose writes a reducer folded: what the quiz asks about.

    Attributes:
        fold: one line per write, how the reducer took it in (`operator.add(['a'], ['b'])
            -> ['a', 'b']`), ending at the recorded value after.
    """

    step: int
    field: str
    reducer: str
    before: Any
    writes: list[tuple[str, Any]]
    after: Any
    point: str = ""
    fold: list[str] = field(default_factory=list)
    rule: str = ""


def merges_of(run: Any, fields: Any = None, steps: Any = None) -> list[Merge]:
    """The run's merges in order (applied rows of `run.effect_list`; a conflict, a dropped
    key and a root reset are not merges), optionally only of `fields` (a name or names)
    and of `steps` (a step number or numbers)."""
    wanted = {fields} if isinstance(fields, str) else set(fields) if fields else None
    when = {steps} if isinstance(steps, int) else set(steps) if steps is not None else None
    found = []
    for effect in run.effect_list:
        if not effect.applied or effect.conflict or effect.dropped_key or effect.root_reset:
            continue
        if (wanted is not None and effect.field not in wanted) or not effect.writes:
            continue
        if when is not None and effect.step not in when:
            continue
        spec = field_spec(run.graph.fields, effect.field)
        merge = Merge(
            effect.step,
            effect.field,
            effect.reducer,
            effect.before,
            list(effect.writes),
            effect.after,
            effect.point,
        )
        merge.rule, merge.fold = _fold(spec, merge)
        found.append(merge)
    return found


def _reducer_call(spec: Any) -> str:
    """How the fold names the reducer: `operator.add`, `append`, `keep_max`."""
    reducer = spec.reducer
    fn = getattr(reducer, "fn", None)
    fn = getattr(fn, "function", fn)  # (a run file's reducer, bounded: the function inside)
    module = getattr(fn, "__module__", "") or ""
    if module in ("operator", "_operator"):
        return f"operator.{fn.__name__}"
    return reducer.name


def _fold(spec: Any, merge: Merge) -> tuple[str, list[str]]:
    """The reducer's rule in words and its fold, one line per write."""
    if spec.reducer is None:
        rule = "no reducer (overwrite): the last write wins, the value before is dropped"
        return rule, [
            f"{shown(merge.before)} -> {shown(merge.after)} (written by "
            f"{writer_text(merge.writes[-1][0])})"
        ]
    name = _reducer_call(spec)
    rule = f"each write is folded in turn: value = {name}(value, write)"
    if spec.reducer.name in ("append_messages", "add_messages"):
        rule = f"{name}: {_MESSAGE_RULE}"
    lines: list[str] = []
    value, bypassed = merge.before, False
    try:
        for writer, write in merge.writes:
            if is_overwrite(write):
                value, bypassed = isolate(overwrite_value(write)), True
                lines.append(
                    f"Overwrite from {writer_text(writer)} bypasses {name}: -> {shown(value)}"
                )
            elif bypassed:
                lines.append(
                    f"{shown(write)} from {writer_text(writer)} is ignored (an "
                    "Overwrite came first in this step)"
                )
            elif value is MISSING and not spec.reducer.takes_missing:
                value = reduce_field(spec, MISSING, [(writer, write)], merge.step)
                lines.append(f"no value yet: the first write is taken as it is -> {shown(value)}")
            else:
                old = shown(value)
                value = reduce_field(spec, isolate(value), [(writer, write)], merge.step)
                lines.append(f"{name}({old}, {shown(write)}) -> {shown(value)}")
    except Exception as error:  # (a reducer that cannot be called again here)
        return rule, [
            f"(the fold cannot be redone here: {type(error).__name__}) -> {shown(merge.after)}"
        ]
    if not same(value, merge.after):
        lines.append(
            f"the run recorded -> {shown(merge.after)} (redone here the fold "
            "gave another value: the reducer is not a pure function of its inputs)"
        )
    return rule, lines


def writer_text(writer: str) -> str:
    """A writer as the quiz names it: `the input` for the run's input, else `node 'name'`."""
    return "the input" if writer == "__start__" else f"node {writer!r}"


@dataclass(frozen=True)
class Verdict:
    """How a typed answer compares with the value after."""

    parsed: bool
    right: bool
    message: str


def judge(answer: str, merge: Merge) -> Verdict:
    """Read `answer` with `ast.literal_eval` and compare it with the merge's value after.

    >>> m = Merge(1, "log", "add", ["a"], [("b", ["b"])], ["a", "b"])
    >>> judge("['a', 'b']", m).right, judge("['b']", m).right, judge("a, b", m).parsed
    (True, False, False)
    """
    text = answer.strip()
    if not text:
        return Verdict(
            False,
            False,
            "Type the value after the merge first, as Python (for example [1, 2], 3 or 'text').",
        )
    if text == "MISSING":
        guess: Any = MISSING
    else:
        try:
            guess = ast.literal_eval(text)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError) as error:
            why = type(error).__name__
            return Verdict(
                False,
                False,
                f"Could not read {text[:80]!r} as a Python value "
                f"({why}): type a literal such as [1, 2], 3, 'text' or "
                "{'k': 1} (strings in quotes).",
            )
    right = _matches(guess, merge.after)
    return Verdict(True, right, "Right!" if right else "Not quite.")


def _matches(guess: Any, after: Any) -> bool:
    """Equality, and for a list of chat messages: their contents or (role, content) pairs."""
    if same(guess, after):
        return True
    messages = isinstance(after, list) and after and all(is_message(m) for m in after)
    if messages and isinstance(guess, list | tuple) and len(guess) == len(after):
        return all(_message_matches(g, m) for g, m in zip(guess, after, strict=True))
    return False


_ROLES = {"user": "human", "assistant": "ai"}


def _message_matches(guess: Any, message: Any) -> bool:
    content = getattr(message, "content", MISSING)
    if isinstance(guess, str):
        return same(guess, content)
    if isinstance(guess, tuple) and len(guess) == 2:
        role = getattr(message, "type", None) or getattr(message, "role", None)
        return _ROLES.get(guess[0], guess[0]) == role and same(guess[1], content)
    return False


_BOX = f"border:1px solid {BORDER};border-radius:4px;padding:6px 10px;margin:4px 0"
_RIGHT = "color:var(--jp-success-color1, #2e7d32)"
_CODE = "font-family:monospace;white-space:pre-wrap;overflow-wrap:anywhere"


def _code(text: str) -> str:
    return f"<span style='{_CODE}'>{html.escape(text)}</span>"


def question_html(merge: Merge, number: int, total: int) -> str:
    """The question: where, the value before, each write with its writer, the reducer;
    the value after asked for, never shown. Escaped."""
    where = f"step {merge.step}"
    if merge.point and not merge.point.startswith("merge:"):
        where += f" ({html.escape(readable_id(merge.point))})"
    writes = "".join(
        f"<li>{_code(shown(write))} <span style='{FADED}'>from "
        f"{html.escape(writer_text(writer))}</span></li>"
        for writer, write in merge.writes
    )
    return (
        f"<div class='nbgraph-quiz-question' style='{_BOX}'>"
        f"<b>Merge {number} of {total}</b>: {where}, field <b>{_code(merge.field)}</b>, "
        f"reducer <b>{_code(merge.reducer)}</b>"
        f"<div>before: {_code(shown(merge.before, note=True))}</div>"
        f"<div>writes, in the order they are merged:</div><ol style='margin:2px 0'>{writes}</ol>"
        f"<div>after: <b>?</b> <span style='{FADED}'>type it below as Python, then "
        f"check</span></div></div>"
    )


def verdict_html(verdict: Verdict | None, merge: Merge) -> str:
    """The feedback after a check (or a reveal, `verdict` None): right or wrong, the
    reducer's rule and its fold write by write, and the value after. Escaped."""
    if verdict is not None and not verdict.parsed:
        said = html.escape(verdict.message)
        return f"<div class='nbgraph-quiz-feedback' style='{_BOX};{ERROR}'>{said}</div>"
    if verdict is None:
        head = "<b>The answer</b>"
    else:
        color = _RIGHT if verdict.right else ERROR
        head = f"<b style='{color}'>{html.escape(verdict.message)}</b>"
    fold = "".join(f"<li>{_code(line)}</li>" for line in merge.fold)
    return (
        f"<div class='nbgraph-quiz-feedback' style='{_BOX}'>{head} "
        f"<div>{html.escape(merge.rule)}:</div><ol style='margin:2px 0'>{fold}</ol>"
        f"<div>after: {_code(shown(merge.after))}</div></div>"
    )
