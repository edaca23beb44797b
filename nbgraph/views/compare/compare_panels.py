"""The panels of two runs compared at one step, as escaped HTML: where the runs part, the
step's tasks in each, and each field that differs, before and after in each run side by side.

Pure functions of the two runs and their `Divergence` (`record.compare.divergence`, which
reads `run.compare(other)`): the widget (`views.compare.compare_view`), its static snapshot and the
tests use the same strings. Every value goes through `html.escape`.
"""

from __future__ import annotations

import html
from typing import Any

from nbgraph.primitives import MISSING
from nbgraph.record.compare.divergence import ROW_KINDS, Divergence, writes_by_field
from nbgraph.record.compare.messages import compare_values
from nbgraph.record.compare.values import first_difference
from nbgraph.record.text import plural
from nbgraph.views.drawings.display import picture_html, svg_element
from nbgraph.views.drawings.theme import BORDER, CHANGED, FADED, themed_svg
from nbgraph.views.inspector.step_list import tasks_text
from nbgraph.views.panels.table_view import ending
from nbgraph.views.panels.text_diff import changed_text_html
from nbgraph.views.panels.value_tree import value_tree_html

__all__ = [
    "COMPARE_CLASS",
    "differences_html",
    "label_html",
    "pictures_html",
    "summary_html",
]

COMPARE_CLASS = "nbgraph-compare"
"""The class of the comparison widget and of its snapshot."""
_WIDTH = 60  # a value's one line, in characters, before it unfolds
_TABLE = "border-collapse:collapse;font-family:monospace;font-size:12px;width:100%"
_CELL = f"border:1px solid {BORDER};padding:3px 6px;text-align:left;vertical-align:top"
_VALUE = f"{_CELL};overflow-wrap:anywhere"
"""A run's column: half the width (the field's name is on a row of its own above)."""
_LINE = "display:flex;gap:0 6px"
_KEY = f"flex:0 0 4.6em;white-space:nowrap;font-style:italic;{FADED}"
_HEAD = "font-weight:normal;background:color-mix(in srgb, currentColor 6%, transparent)"


def summary_html(found: Divergence, names: tuple[str, str], lasts: tuple[int, int]) -> str:
    """One line: where the runs first differ and at which steps, or that they do not."""
    a, b = map(html.escape, names)
    ends = f"{a} has {plural(lasts[0], 'step')}, {b} {plural(lasts[1], 'step')}"
    if found.first is None:
        return f"<div class='nbgraph-compare-summary'><b>No difference</b> ({ends}).</div>"
    steps = ", ".join(map(str, found.steps[:30])) + (" …" if len(found.steps) > 30 else "")
    return (
        f"<div class='nbgraph-compare-summary'>⚑ <b>{a} and {b} first differ at step "
        f"{found.first}</b>; steps that differ: {steps} ({ends}).</div>"
    )


def label_html(step: int, runs: tuple[Any, Any], names: tuple[str, str], found: Divergence) -> str:
    """The step shown, with each run's tasks at that step (or why it has none)."""
    mark = ""
    if step == found.first:
        mark = " — <b>⚑ the first difference</b>"
    elif step in found.steps:
        mark = " — <b>≠ the runs differ here</b>"
    parts = [f"{html.escape(name)}: {html.escape(_tasks(run, step))}" for run, name in
             zip(runs, names, strict=True)]  # fmt: skip
    return f"<b>step {step}</b>{mark}<br>" + " &nbsp;|&nbsp; ".join(parts)


def _tasks(run: Any, step: int) -> str:
    if step not in run.timeline.index:
        return f"no step {step} (it ended at step {run.log.steps[-1].step}, {run.status})"
    log = run.timeline.step_log(step)
    text = tasks_text([t.node for t in log.tasks]) if step > 0 else "input"
    return text if log.applied else f"{text} — {ending(log.tasks)}"


def differences_html(
    step: int, runs: tuple[Any, Any], names: tuple[str, str], found: Divergence
) -> str:
    """A table: a row for the step's tasks or outcome where they differ, then one row per
    field that differs at `step` (after it, or in what a node wrote to it): in each run's
    column its value before the step, each write with its writer, and after; under the
    field's name, where the two values after first differ."""
    rows = found.step_rows(step)
    cells = []
    if rows is not None:
        for record in rows.to_dict("records"):
            if record["what"] in ROW_KINDS:
                why = record.get("why") or record.get("note") or ""
                cells.append(_row(_name(record["what"], why), _plain(record["this"]),
                                  _plain(record["other"])))  # fmt: skip
    reads = [_read(run, step) for run in runs]
    for name in found.fields(step):
        sides = [_side(read, name) for read in reads]
        where = first_difference(sides[0][2], sides[1][2])
        for side, run_name in zip(("on the left", "on the right"), names, strict=True):
            where = where.replace(side, f"in {run_name}")
        long = changed_text_html(sides[0][2], sides[1][2], _WIDTH)  # (a long text: marked)
        left = _cell(sides[0], sides[1][1])
        right = _cell(sides[1], sides[0][1])
        cells.append(_row(_name(name, where), left, right, long, f"vs {names[0]}"))
    if not cells:
        return "<i>no difference at this step</i>"
    head = "".join(f"<th style='{_CELL};width:50%'>{html.escape(h)}</th>" for h in names)
    return (
        f"<table class='nbgraph-compare-fields' style='{_TABLE}'><thead><tr>{head}</tr></thead>"
        f"<tbody>{''.join(cells)}</tbody></table>"
    )


def _name(name: str, why: str) -> str:
    note = f" <span style='{FADED};font-weight:normal'>— {html.escape(why)}</span>" if why else ""
    return f"<b>{html.escape(str(name))}</b>{note}"


def _plain(value: Any) -> str:
    """A cell of a row about the step (its tasks, outcome): words, not a value's repr."""
    if isinstance(value, (list, tuple)):
        return html.escape(", ".join(map(str, value))) or "<i>none</i>"
    return html.escape(str(value))


def _row(name: str, left: str, right: str, marked: str | None = None, against: str = "") -> str:
    if marked is not None:  # (a long text: where it differs from the left one, marked)
        key = f"<span style='{_KEY}'>{html.escape(against)}</span>"
        right += f"<div style='{_LINE}'>{key}<span>{marked}</span></div>"
    return (  # the field's name across both columns, then each run's values: the whole width
        f"<tr><th colspan='2' style='{_CELL};{_HEAD}'>{name}</th></tr>"
        f"<tr><td class='nbgraph-value' style='{_VALUE}'>{left}</td>"
        f"<td class='nbgraph-value' style='{_VALUE}'>{right}</td></tr>"
    )


def _read(run: Any, step: int) -> tuple[Any, dict[str, Any], dict[str, Any], dict] | None:
    """What a run's column reads at `step`, once for every field: (its log, the state its
    tasks read, the state after it, its writes by field); None for a step it has not."""
    if step not in run.timeline.index:
        return None
    log = run.timeline.step_log(step)
    before = run.timeline.start_of(step) if step > 0 else {}
    after = run.state_at(step) if log.applied else {}
    return log, before, after, writes_by_field(log)


def _side(read: Any, name: str) -> tuple[Any, list[tuple[str, Any]], Any, Any]:
    """A run's field at the step (`_read`): (before, writes, after, the step's log or None)."""
    if read is None:
        return MISSING, [], MISSING, None
    log, before, after, writes = read
    return before.get(name, MISSING), writes.get(name, []), after.get(name, MISSING), log


def _cell(side: tuple[Any, list[tuple[str, Any]], Any, Any], theirs: list) -> str:
    """A run's column for one field: before, each write with its writer (those the other
    run did not write alike marked), after (or why the step has none)."""
    before, writes, after, log = side
    if log is None:
        return "<i>no such step in this run</i>"
    step = log.step
    lines = [("before", value_tree_html(before, _WIDTH), "")] if step > 0 else []
    for index, (node, value) in enumerate(writes):
        other = theirs[index] if index < len(theirs) else None
        alike = other is not None and other[0] == node and compare_values(other[1], value) is None
        text = f"<b>{html.escape(node)}</b>: {value_tree_html(value, _WIDTH)}"
        lines.append(("writes", text, "" if alike else CHANGED))
    if step > 0 and not writes:
        lines.append(("writes", "<i>none</i>", ""))
    shown = value_tree_html(after, _WIDTH) if log.applied else f"<i>{ending(log.tasks)}</i>"
    lines.append(("after", shown, CHANGED))
    return "".join(
        f"<div style='{_LINE}'><span style='{_KEY}'>{key}</span>"
        f"<span style='min-width:0;{mark}'>{text}</span></div>"
        for key, text, mark in lines
    )


def pictures_html(drawn: list[Any], static: bool = False) -> str:
    """The pictures (`compare_picture.Drawn`): inline SVG fitted to the width (never below
    readable labels: then the box scrolls); `static`: also an image copy for a sanitized,
    untrusted page (`display.picture_html`)."""
    shown = []
    for picture in drawn:
        title = f"<div><b>{html.escape(picture.title)}</b></div>" if picture.title else ""
        if picture.svg is None:
            shown.append(f"{title}<pre>{html.escape(picture.problem)}</pre>")
            continue
        inline = themed_svg(svg_element(picture.svg), fit=True).replace(
            "max-width:100%;", f"max-width:100%;min-width:{picture.min_width}px;", 1
        )
        body = picture_html(picture.svg, inline) if static else inline
        shown.append(f"{title}<div style='overflow:auto;max-height:640px'>{body}</div>")
    return f"<div class='nbgraph-compare-picture'>{''.join(shown)}</div>"
