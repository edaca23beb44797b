"""A run as one self-contained HTML file (`run.save_html(path)`): a kernel-less inspector to
attach to a bug report or hand to a class, opened from disk with no network.

The file holds an SVG of the graph (the run drawn over it, laid out once by graphviz), one of
each subrun's graph, one of the state tree (`views/share_runs.py`), and the run's and its
subruns' steps as JSON data: each step's tasks, reducer effects and state changes, as short
texts (`nbgraph.record.text.short`) in one table of distinct strings. A small script shipped
in the package (`views/static/share_html.js`, no CDN, no fetch) steps through them with
buttons, the arrow keys and clicks on the picture's nodes, fading the nodes that did not run;
it opens a subrun from the task that ran it, marks the shown step's boxes in the tree, and
opens the step of a tree box clicked.

Everything that came from a user or a node reaches the page as JSON (every `<`, `>` and `&`
escaped, so no text can close the data's script element) and is put on the page with
`textContent`, never as HTML; the SVGs are graphviz's, made from escaped labels.

Long values are cut to `VALUE_WIDTH` characters, so the size grows with the steps, not with
the values. `benchmarks/share_html.py` measures what a long run's page costs to write, its
size and how long a browser takes to open it (benchmarks/README.md, "Timings behind the
code").
"""

from __future__ import annotations

import html
import json
import traceback
from collections import Counter
from pathlib import Path
from typing import Any

from nbgraph.engine.facts import initial_values
from nbgraph.primitives import MISSING
from nbgraph.record.run_context import context_line
from nbgraph.record.text import NO_VALUE, safe_repr, short, status_text
from nbgraph.views.share_runs import Picture, SharedRun, pictures, shared_runs, tree_picture
from nbgraph.views.text_diff import changed_text_plain
from nbgraph.views.traceback_panel import node_frame_text

__all__ = ["page_data", "run_page", "save_html"]

STATIC = Path(__file__).parent / "static"
VALUE_WIDTH = 120
"""How much of a value's text the file keeps (the inspector's panels show about as much)."""
_MAX_WRITES = 6
_TRACEBACK_CHARS = 6000
_OK, _FAILED, _PAUSED, _CACHED = 0, 1, 2, 3
_CHANGED, _NOT_APPLIED, _CONFLICT = 1, 2, 4
EFFECT_CELLS = ("field", "reducer", "before", "writes", "after", "flags")
"""The cells of an effect row in the page's data, in order (the data's `effectColumns`)."""


class _Strings:
    """Distinct texts, each stored once and referred to by its index (-1: none)."""

    def __init__(self) -> None:
        self.index: dict[str, int] = {}

    def __call__(self, text: str | None) -> int:
        if text is None:
            return -1
        if type(text) is not str:  # (a dict state's key may be any hashable: its short text)
            text = short(text, VALUE_WIDTH)
        found = self.index.get(text)
        if found is None:
            found = self.index[text] = len(self.index)
        return found

    def value(self, value: Any) -> int:
        """A value's short text (MISSING: none)."""
        return -1 if value is MISSING else self(short(value, VALUE_WIDTH))

    @property
    def texts(self) -> list[str]:
        return list(self.index)


def save_html(run: Any, path: str | Path, title: str | None = None) -> Path:
    """Write `run` as one self-contained HTML file at `path` (see `run_page`).

    Args:
        run: a `nbgraph.Run`.
        path: where to write it (parent folders must exist); `.html` is the usual suffix.
        title: the page's title (default: the run's repr).

    Returns:
        The path written.
    """
    if title is not None and not isinstance(title, str):
        from nbgraph.errors import wrong_argument

        raise wrong_argument("run.save_html(path, title=)", "a str or None", title)
    target = Path(path)
    text = run_page(run, title)
    target.write_text(text, encoding="utf-8", errors="backslashreplace")
    return target


def run_page(run: Any, title: str | None = None) -> str:
    """The HTML text of the file `save_html` writes: the pictures, the data, the script."""
    runs, left_out = shared_runs(run)
    drawn = pictures(runs)
    tree = tree_picture(runs)
    data = page_data(run, runs, drawn, tree)
    heading = title if title is not None else repr(run)
    data["title"], data["left_out"] = heading, left_out
    script = (STATIC / "share_html.js").read_text(encoding="utf-8")
    style = (STATIC / "share_html.css").read_text(encoding="utf-8")
    graphs = "\n".join(
        f'<div class="nbg-graph" data-picture="{index}" hidden>{picture.svg}</div>'
        for index, picture in enumerate(drawn)
    )
    return _PAGE.format(
        title=html.escape(heading),
        style=style,
        svg=graphs,
        tree=tree.svg,
        data=_json_for_script(data),
        script=script,
    )


def page_data(
    run: Any,
    runs: list[SharedRun] | None = None,
    drawn: list[Picture] | None = None,
    tree: Picture | None = None,
) -> dict[str, Any]:
    """The run as the page's JSON data: texts in `strings`, everything else indices into it.

    Keys: `title`, `status`, `facts` (context, warnings), `error` (the traceback),
    `initial` (`[[field, value], ...]` before step 0), `steps`, `picture` (the run's index
    into `pictures`); `subruns`, each with the same keys less `title` and `facts`, plus
    `name` (its breadcrumb), `label` (name and input), `parent` (0: the run, k:
    `subruns[k - 1]`) and `at` (`[position of the step, position of the task]` in the
    parent that started it); `pictures`, each `{"ids": DOT id -> node name, "problem":
    why it is not drawn}`; and `tree` (`{"ids": DOT id -> [run, step], "problem": ...}`).
    A step is `[number, tasks, effects, state changes, applied]`, a task `[node, status,
    triggers, what ran inside it]`, an effect a row of cells named once by `effectColumns`
    (`EFFECT_CELLS`: the page reads each cell by that name, never by position), a state
    change `[field, value]` (value -1: the field is gone).

    Args:
        run: a `nbgraph.Run`.
        runs: the run and its subruns (`share_runs.shared_runs`; default: those).
        drawn: the pictures (`share_runs.pictures`); none by default.
        tree: the state tree's picture (`share_runs.tree_picture`); none by default.

    >>> from nbgraph import START, StateGraph
    >>> app = (StateGraph(dict, reducers={"log": "append"})
    ...        .add_node("a", lambda s: {"log": ["<a>"]}).add_edge(START, "a").compile())
    >>> data = page_data(app.run({"log": []}))
    >>> [data["strings"][i] for i in (data["steps"][1][1][0][0], data["steps"][1][3][0][1])]
    ['a', "['<a>']"]
    """
    strings = _Strings()
    runs = runs if runs is not None else shared_runs(run)[0]
    data: dict[str, Any] = {"title": repr(run), **_run_data(runs[0], strings)}
    data["effectColumns"] = list(EFFECT_CELLS)
    data["facts"] = [strings(t) for t in _facts(run)]
    data["subruns"] = [
        {
            "name": strings(shared.name),
            "label": strings(shared.label),
            "parent": shared.parent,
            **_run_data(shared, strings),
        }
        for shared in runs[1:]
    ]
    _place_subruns(runs, data)
    data["pictures"] = [
        {"ids": {k: strings(v) for k, v in p.targets.items()}, "problem": p.problem}
        for p in drawn or ()
    ]
    data["tree"] = {"ids": tree.targets if tree else {}, "problem": tree.problem if tree else ""}
    data["strings"] = strings.texts
    return data


def _run_data(shared: SharedRun, strings: _Strings) -> dict[str, Any]:
    """One run's own part of the data: status, error, picture, initial values and steps."""
    run = shared.run
    steps = [_step_data(run, step, strings) for step in run.log.steps]
    _state_changes(run, steps, strings)
    initial = initial_values(run.graph)
    return {
        "status": run.status,
        "error": strings(_error_text(run.error)) if run.error is not None else -1,
        "picture": shared.picture,
        "initial": [[strings(k), strings.value(v)] for k, v in initial.items()],
        "steps": steps,
    }


def _place_subruns(runs: list[SharedRun], data: dict[str, Any]) -> None:
    """Each subrun's `at`: where in its parent's data the task that started it is."""
    for shared, sub in zip(runs[1:], data["subruns"], strict=True):
        parent = data if shared.parent == 0 else data["subruns"][shared.parent - 1]
        positions = {row[0]: index for index, row in enumerate(parent["steps"])}
        sub["at"] = [positions.get(shared.step, 0), shared.task]


def _step_data(run: Any, log: Any, strings: _Strings) -> list[Any]:
    tasks = [
        [strings(t.node), _task_status(t), strings(", ".join(t.triggers)), _inside(t, strings)]
        for t in (log.tasks if log.step > 0 else ())
    ]
    return [log.step, tasks, [], [], int(bool(log.applied))]


def _inside(task: Any, strings: _Strings) -> int:
    """What ran inside the task (a subgraph, a graph its node invoked), in words (the page
    adds a way to open each of those runs)."""
    subruns = task.subruns or ()
    if not subruns:
        return -1
    steps = sum(max(0, len(sub.steps) - 1) for sub in subruns)
    runs = f"{len(subruns)} graph run{'s' * (len(subruns) != 1)}"
    return strings(f"{runs}, {steps} step{'s' * (steps != 1)}")


def _task_status(task: Any) -> int:
    if task.error is not None:
        return _FAILED
    if task.interrupts:
        return _PAUSED
    return _CACHED if task.cached else _OK


def _state_changes(run: Any, steps: list[list[Any]], strings: _Strings) -> None:
    """Each step's effects and state changes, from the run's effect rows (one pass)."""
    at = {row[0]: row for row in steps}
    branches = run.log.semantics == "branches"
    for effect in run.effect_list:
        row = at.get(effect.step)
        if row is None:
            continue
        after = effect.cell("after")
        flags = (
            (_CHANGED if effect.changed else 0)
            | (0 if effect.applied else _NOT_APPLIED)
            | (_CONFLICT if effect.conflict else 0)
        )
        cells = {
            "field": strings(effect.field),
            "reducer": strings(str(effect.reducer)),
            "before": _effect_value(effect.cell("before"), strings),
            "writes": strings(_writes_text(effect.writes)),
            "after": _effect_after(effect.cell("before"), after, strings),
            "flags": flags,
        }
        row[2].append([cells[name] for name in EFFECT_CELLS])
        if effect.applied and not branches:
            row[3].append([strings(effect.field), strings.value(after)])
    if branches:  # lineages merge: the state after a step is the timeline's, not a fold
        for row, log in zip(steps, run.log.steps, strict=True):
            if log.applied:
                state = run.timeline.after(log.step)
                row[3] = [[strings(k), strings.value(v)] for k, v in state.items()]


def _effect_value(value: Any, strings: _Strings) -> int:
    """An effect's before or after: its short text, or `NO_VALUE` for no value."""
    return strings(NO_VALUE) if value is MISSING else strings.value(value)


def _effect_after(before: Any, after: Any, strings: _Strings) -> int:
    """An effect's after: a long text's change marked in words (`[-old-]{+new+}`,
    `views.text_diff`), else as `_effect_value`."""
    marked = changed_text_plain(before, after, VALUE_WIDTH)
    return strings(marked) if marked is not None else _effect_value(after, strings)


def _writes_text(writes: list[tuple[str, Any]]) -> str:
    """`writer: value` for the first few writes, and how many more."""
    shown = [f"{writer}: {short(value, 60)}" for writer, value in writes[:_MAX_WRITES]]
    more = len(writes) - _MAX_WRITES
    if more > 0:
        writers = Counter(writer for writer, _ in writes[_MAX_WRITES:])
        shown.append("… " + ", ".join(f"{w} ×{n}" for w, n in writers.most_common(3)))
    return "; ".join(shown)


def _facts(run: Any) -> list[str]:
    facts = [f"status: {status_text(run.status)}"]
    context = context_line(run.log)
    if context:
        facts.append(context)
    facts += [f"warning: {w}" for w in run.warnings[:20]]
    return facts


def _error_text(error: BaseException) -> str:
    """Where the node's own code raised the error (`traceback_panel.node_frame_text`), then
    the error and its traceback as Python prints them (cut to a readable length)."""
    try:
        text = "".join(traceback.format_exception(error))
    except Exception:  # (a broken __str__ or traceback: the repr will do)
        text = safe_repr(error)
    if len(text) > _TRACEBACK_CHARS:
        text = "…" + text[-_TRACEBACK_CHARS:]
    try:  # the node's own frame first, as the inspector shows it; then the whole traceback
        first = node_frame_text(error)
    except Exception:
        first = ""
    return f"{first}\n\nthe whole traceback:\n{text}" if first else text


def _json_for_script(data: Any) -> str:
    """JSON that may sit inside a `<script>` element: ASCII only (a lone surrogate becomes
    `\\udc80`, which JavaScript reads back), `<`, `>` and `&` as `\\u` escapes.

    >>> _json_for_script({"a": "</script><b>&"})
    '{"a":"\\\\u003c/script\\\\u003e\\\\u003cb\\\\u003e\\\\u0026"}'
    """
    text = json.dumps(data, ensure_ascii=True, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; \
style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<title>{title}</title>
<style>
{style}
</style>
</head>
<body>
<div class="nbg-page">
<header>
<h1 id="nbg-title"></h1>
<p id="nbg-facts" class="nbg-facts"></p>
<p class="nbg-help">A saved nbgraph run: step with the buttons, the ← → keys (Home, End) or \
the slider; click a node to go to its next run, or a box of the state tree to open its step. \
Nothing here runs code: re-run the notebook to change it.</p>
<p class="nbg-help">Comparing runs and "edit and fork here" need the kernel: they are in the \
notebook's inspector (<code>run.inspect()</code>), not in this file.</p>
</header>
<nav class="nbg-runs" id="nbg-runs" hidden>
<button type="button" id="nbg-back" title="the run that started this one">◀ back</button>
<label>run <select id="nbg-run" aria-label="run or subrun"></select></label>
<span id="nbg-left-out" class="nbg-quiet"></span>
</nav>
<nav class="nbg-controls">
<button type="button" id="nbg-first" title="first step (Home)">|◀ first</button>
<button type="button" id="nbg-prev" title="previous step (←)">◀ previous</button>
<input type="range" id="nbg-slider" min="0" max="0" value="0" aria-label="step">
<button type="button" id="nbg-next" title="next step (→)">next ▶</button>
<button type="button" id="nbg-last" title="last step (End)">last ▶|</button>
<button type="button" id="nbg-play" title="play">▶ play</button>
</nav>
<p id="nbg-label" class="nbg-label"></p>
<p id="nbg-note" class="nbg-note" role="status"></p>
<main class="nbg-body">
<section class="nbg-picture" id="nbg-picture">
{svg}
<pre id="nbg-problem" class="nbg-problem"></pre>
</section>
<section class="nbg-panels">
<div id="nbg-stopped"></div>
<h2>tasks</h2><div id="nbg-tasks"></div>
<h2>reducer effects</h2><div id="nbg-effects"></div>
<h2>state after the step</h2><div id="nbg-state"></div>
</section>
</main>
<section class="nbg-tree-section">
<h2>state tree <span class="nbg-quiet">(the shown step's boxes are marked)</span></h2>
<div class="nbg-tree" id="nbg-tree">
{tree}
</div>
<pre id="nbg-tree-problem" class="nbg-problem"></pre>
</section>
</div>
<script type="application/json" id="nbgraph-data">{data}</script>
<script>
{script}
</script>
</body>
</html>
"""
