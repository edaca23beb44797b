"""What a run file's document must look like, checked before any of it is used.

`check_document` walks the JSON document of `Run.to_json` against `_RUN_DOCUMENT`, a small
schema of its entries' types, then checks that the names it uses agree (tasks run nodes of
the graph, steps go up, a task sits in its step). A file that was damaged or edited is
refused here, at load time, with the path of the first entry that is wrong, instead of
loading and failing later in a table, a drawing or the inspector. `Run.load` checks the
document without its steps, then each step as it is decoded (`check_step`, or the inline
check of `nbgraph.record.files.step_decoding` for a common one), then the steps' names
(`check_step_names`): the same checks and messages.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from nbgraph.blueprint.description import GRAPH, graph_name_problems
from nbgraph.codec.shapes import ANY, BOOL, NAMES, STR, Is, ListOf, MapOf, Obj, Pair, Shape
from nbgraph.errors import NbgraphError

__all__ = [
    "LIMIT",
    "STEP_KEYS",
    "TASK_KEYS",
    "LogShapeError",
    "check_document",
    "check_step",
    "check_step_names",
]


class LogShapeError(NbgraphError, ValueError):
    """A run document's entry is not what `Run.to_json` writes; the message gives its path."""


_ERROR = Obj({"type": STR, "message": STR}, {"notes": NAMES}, nullable=True)
_ATTEMPT = Obj(
    {"number": Is(int), "started": Is(float), "ended": Is(float), "error": _ERROR,
     "wait": Is(float)},
)  # fmt: skip
_TASK = Obj(
    {"step": Is(int), "index": Is(int), "node": STR, "kind": STR, "triggers": NAMES,
     "writes": ListOf(Pair(ANY, ANY)), "started": Is(float), "ended": Is(float)},
    {"arg": ANY, "routes": ListOf(ANY), "dropped": ListOf(Pair(ANY, ANY, STR)), "error": _ERROR,
     "parent": STR, "custom": ListOf(ANY), "attempts": ListOf(_ATTEMPT), "from_cache": BOOL,
     "interrupts": ListOf(Obj({"value": ANY, "id": STR})), "returned": ListOf(ANY)},
)  # fmt: skip
_RESET = Obj(
    {"node": STR, "reason": STR, "sources": NAMES, "dropped": NAMES, "values": ANY},
    {"id": STR, "parent": STR},
)  # fmt: skip
_JOIN = Obj(
    {"step": Is(int), "id": STR, "node": STR, "parents": NAMES, "strategy": STR},
    {"base": STR, "applied": NAMES, "values": ANY, "dropped": NAMES},
)  # fmt: skip
_STEP = Obj(
    {"step": Is(int), "applied": BOOL, "written": ListOf(ANY), "cleared": NAMES,
     "merged": ListOf(Pair(STR, ANY, ANY)), "resets": ListOf(_RESET), "afters": Is(dict, None),
     "tasks": ListOf(_TASK)},
    {"joins": ListOf(_JOIN), "heads": NAMES},
)  # fmt: skip


class _Steps(Shape):
    """`ListOf(_STEP)`, with a fast check for the common step: one whose tasks ran plain
    nodes (no resets, merges, errors or retries), checked inline; any
    other step takes the schema's check (`problems` is always the schema's)."""

    def __init__(self) -> None:
        self.schema = ListOf(_STEP)

    def fits(self, value: Any) -> bool:
        if type(value) is not list:
            return False
        step_fits = _STEP.fits
        return all(_plain_step(step) or step_fits(step) for step in value)

    def problems(self, value: Any, path: str) -> Iterator[str]:
        return self.schema.problems(value, path)


STEP_KEYS = frozenset(_STEP.required)
"""The entries of a step with no joins, heads or kept values."""
TASK_KEYS = frozenset(_TASK.required)
"""The entries every task has."""
_TASK_PLAIN_KEYS = TASK_KEYS | {"routes", "returned", "arg", "parent", "from_cache"}
LIMIT = 2**62
"""A step number, task index or time is between -LIMIT and LIMIT (as `Is`: it fits a
table's int64 column)."""


def _plain_step(step: Any) -> bool:
    """True if `step` is a common step and fits `_STEP`; False: not sure (ask the schema)."""
    if type(step) is not dict or step.keys() != STEP_KEYS:
        return False
    number, cleared, afters = step["step"], step["cleared"], step["afters"]
    return (
        type(number) is int
        and -LIMIT < number < LIMIT
        and type(step["applied"]) is bool
        and type(step["written"]) is list
        and type(cleared) is list
        and (not cleared or all(type(name) is str for name in cleared))
        and step["merged"] == []
        and step["resets"] == []
        and (afters is None or type(afters) is dict)
        and type(step["tasks"]) is list
        and all(map(_plain_task, step["tasks"]))
    )


def _plain_task(task: Any) -> bool:
    if type(task) is not dict:
        return False
    keys = task.keys()
    if not keys >= TASK_KEYS or not keys <= _TASK_PLAIN_KEYS:
        return False
    step, index, triggers, writes = task["step"], task["index"], task["triggers"], task["writes"]
    started, ended = task["started"], task["ended"]
    return (
        type(step) is int
        and -LIMIT < step < LIMIT
        and type(index) is int
        and -LIMIT < index < LIMIT
        and type(task["node"]) is str
        and type(task["kind"]) is str
        and type(triggers) is list
        and all(map(_is_str, triggers))
        and type(writes) is list
        and all(map(_is_pair, writes))
        and type(started) in _TIMES
        and -LIMIT < started < LIMIT  # (nan fails both)
        and type(ended) in _TIMES
        and -LIMIT < ended < LIMIT
        and (len(keys) == _REQUIRED or _plain_options(task))
    )


_REQUIRED, _TIMES = len(TASK_KEYS), (float, int)


def _is_str(value: Any) -> bool:
    return type(value) is str


def _is_pair(value: Any) -> bool:
    return type(value) is list and len(value) == 2


def _plain_options(task: dict[str, Any]) -> bool:
    return (
        type(task.get("routes", [])) is list
        and type(task.get("returned", [])) is list
        and type(task.get("parent", "")) is str
        and type(task.get("from_cache", False)) is bool
    )


_STORE_OP = Pair(Is(int), STR, STR, NAMES, Is(str, None), ANY)
"""A store call: step, node, op, namespace, key (None for a search), value."""


def _run_shape(steps: Shape) -> Obj:
    return Obj(
        {"status": Is(str, choices=("running", "done", "failed", "interrupted",
                                      "to_parent")), "error": _ERROR,
         "input": ANY, "config": Is(dict), "warnings": NAMES, "final": ANY, "steps": steps},
        {"semantics": Is(str, choices=("supersteps", "branches")), "end": Obj(_JOIN.required,
         _JOIN.optional, nullable=True), "context": ANY,
         "store_ops": ListOf(_STORE_OP)},
    )  # fmt: skip


_RUN_DOCUMENT = Obj({"graph": GRAPH, "run": _run_shape(_Steps())})
"""The shape of a run document (`format` and `version` are checked before)."""
_RUN_SHELL = Obj({"graph": GRAPH, "run": _run_shape(Is(list))})
"""The same, but for each step's own shape (`check_step` checks it)."""


def check_document(document: dict[str, Any], steps: bool = True) -> None:
    """Raise `LogShapeError` unless `document` has `_RUN_DOCUMENT`'s shape and its names agree.

    The message names the first entry that is wrong (as a path) and what was expected.
    Without `steps`, each step is left to `check_step` and `check_step_names` (a reader
    that checks each step as it decodes it).
    """
    shape = _RUN_DOCUMENT if steps else _RUN_SHELL
    if not shape.fits(document):
        for problem in shape.problems(document, "document"):
            raise LogShapeError(problem)
    for problem in graph_name_problems(document["graph"]):
        raise LogShapeError(problem)
    if steps:
        check_step_names(document)


def check_step(step: Any, index: int) -> None:
    """Raise `LogShapeError` unless `step`, entry `index` of a run document's steps, has
    the shape of a step (the message as `check_document`'s)."""
    if not (_plain_step(step) or _STEP.fits(step)):
        for problem in _STEP.problems(step, f"document['run']['steps'][{index}]"):
            raise LogShapeError(problem)


def check_step_names(document: dict[str, Any]) -> None:
    """Raise `LogShapeError` unless the names the steps of `document` (their shapes
    checked) use agree with its graph and each other."""
    for problem in _step_name_problems(document["graph"], document["run"]):
        raise LogShapeError(problem)


def _step_name_problems(graph: dict[str, Any], run: dict[str, Any]) -> Iterator[str]:
    known = {*(node["name"] for node in graph["nodes"]), "__start__", "__end__"}
    yield from _step_problems(run["steps"], known)
    if run.get("semantics") == "branches":  # a branch run's afters: per lineage point
        for step in run["steps"]:
            pinned = MapOf(Is(dict), nullable=True)
            yield from pinned.problems(step["afters"], f"the afters of step {step['step']}")


def _step_problems(steps: list[dict[str, Any]], nodes: set[str]) -> Iterator[str]:
    previous = None
    for index, step in enumerate(steps):
        number = step["step"]
        if previous is not None and number <= previous:
            yield f"step {number} (entry {index} of 'steps') does not come after step {previous}"
        elif previous is not None and number != previous + 1:
            entry = f"step {number} (entry {index} of 'steps')"
            yield f"{entry} follows step {previous}: a step is missing"
        previous = number
        tasks = step["tasks"]
        if len(tasks) > 1 and len({task["index"] for task in tasks}) != len(tasks):
            yield f"step {number} has two tasks with the same index"
        for task in tasks:
            if task["step"] != number:
                yield f"a task of step {number} says it ran in step {task['step']!r}"
            if task["node"] not in nodes and task["kind"] != "call":  # (a `@task`'s name)
                yield f"a task of step {number} runs {task['node']!r}, not a node of the graph"
