"""Why a step's tasks went where they went: each router's input and what it returned.

A router after a node is called with the state of the step's start plus only that task's
writes; the record keeps the task's writes (so the input is rebuilt here, as the engine
builds it) and what its routers returned (`Task.returned`), then where the run went
(`Task.routes`). Pure functions of the record, escaped, shown in the inspector's effects panel.
"""

from __future__ import annotations

import html
from typing import Any

from nbgraph.engine.facts import apply_writes
from nbgraph.isolation import isolate
from nbgraph.record.text import short

__all__ = ["router_input", "routing_html"]

_BOX = "margin-top:6px;border-left:3px solid #888;padding-left:6px"


def router_input(run: Any, task: Any, start: dict[str, Any] | None = None) -> dict[str, Any]:
    """The state the routers after `task` read: its step's start plus only its own writes
    (folded through the fields' reducers), in the router's schema when it names one.
    `start`: the state at the start of the task's step, when the caller has it already.

    >>> from nbgraph import END, START, StateGraph
    >>> app = (StateGraph(dict).add_node("a", lambda s: {"n": s["n"] + 1})
    ...        .add_conditional_edges("a", lambda s: END if s["n"] > 1 else "a")
    ...        .add_edge(START, "a").compile())
    >>> run = app.run({"n": 0})
    >>> [router_input(run, t)["n"] for t in run.log.tasks() if t.step > 0]
    [1, 2]
    """
    values = dict(run.timeline.start_of(task.step) if start is None else start)
    for name in dict(task.writes):  # (copies: a reducer may extend a value in place)
        if name in values:
            values[name] = isolate(values[name])
    apply_writes(run.graph.fields, values, task.writes, task.step, task.node)
    branches = run.graph.branches.get(task.node, ())
    schema = branches[0].input if branches else None
    if schema is not None:
        values = {k: v for k, v in values.items() if k in schema.fields}
    return values


def routing_html(run: Any, step: int, tasks: Any, most: int = 12) -> str:
    """The routing of `step`'s `tasks` (HTML): per task whose node has routers, the router's
    name, its input (the fields the task just wrote marked) and what it returned, then where
    the run went; the first `most` such tasks, then a line counting the others. Empty when
    no task of the step was routed."""
    routed = [
        task
        for task in (tasks if step > 0 else ())
        if task.error is None and not task.interrupts and run.graph.branches.get(task.node)
    ]
    if not routed:
        return ""
    start = run.timeline.start_of(step)  # (read once for the step's tasks)
    parts = [_task_html(run, task, start) for task in routed[:most]]
    if len(routed) > most:
        parts.append(
            f"<div style='{_BOX}'><i>… and {len(routed) - most} more routed tasks</i></div>"
        )
    return "".join(parts)


def _task_html(run: Any, task: Any, start: dict[str, Any]) -> str:
    names = ", ".join(b.name for b in run.graph.branches.get(task.node, ()))
    try:
        seen = router_input(run, task, start)
    except Exception as error:  # (a record whose writes do not fold again)
        seen_html = f"<i>its input cannot be rebuilt ({html.escape(type(error).__name__)})</i>"
    else:
        wrote = set(dict(task.writes))
        seen_html = "<br>".join(
            f"{'<b>' if k in wrote else ''}{html.escape(str(k))}{'</b>' if k in wrote else ''}"
            f" = {_shown(v)}"
            for k, v in seen.items()
        )
    returned = getattr(task, "returned", ())
    if returned:
        said = ", ".join(_shown(r, 160) for r in returned)
    elif any(type(route).__name__ == "Send" for route in task.routes):
        said = "<i>the Sends it went to</i>"  # (a fan-out's: kept once, as its routes)
    else:
        said = "<i>not recorded (an imported, restored or cached task)</i>"
    went = _routes_html(task.routes)
    return (
        f"<div style='{_BOX}'><b>routing after {html.escape(task.node)}</b> "
        f"(task {html.escape(task.id)}): router <b>{html.escape(names)}</b><br>"
        f"read: <span style='font-family:monospace'>{seen_html}</span><br>"
        f"returned: <span style='font-family:monospace'>{said}</span> → went to: "
        f"<span style='font-family:monospace'>{went}</span></div>"
    )


ROUTES_SHOWN = 8
"""Where a task went, shown at once; the rest (a fan-out's many `Send`s) fold under a count."""


def _routes_html(routes: Any) -> str:
    """Where a task went, escaped: every route, those past `ROUTES_SHOWN` folded.

    >>> _routes_html(["a", "b"]), _routes_html([])
    ('&#x27;a&#x27;, &#x27;b&#x27;', '—')
    >>> "<details><summary><i>… 2 more</i></summary>" in _routes_html(list(range(10)))
    True
    """
    shown = [_shown(r, 160) for r in routes]
    if len(shown) <= ROUTES_SHOWN:
        return ", ".join(shown) or "—"
    rest = len(shown) - ROUTES_SHOWN
    return (
        ", ".join(shown[:ROUTES_SHOWN])
        + f"<details><summary><i>… {rest} more</i></summary>{', '.join(shown[ROUTES_SHOWN:])}"
        + "</details>"
    )


def _shown(value: Any, width: int = 80) -> str:
    """A value on one line as Python writes it (strings keep their quotes), escaped."""
    return html.escape(short(value, width))
