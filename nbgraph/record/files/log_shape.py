"""What a run file's document must look like, checked before any of it is used.

`check_document` walks the JSON document of `Run.to_json` against `_RUN_DOCUMENT`, a small
schema of its entries' types, then checks that the names it uses agree (tasks run nodes of
the graph, steps go up, a task sits in its step). A file that was damaged or edited is
refused here, at load time, with the path of the first entry that is wrong, instead of
loading and failing later in a table, a drawing or the inspector. `Run.load` checks the
document without its steps, then each step as it is decoded (`check_step`; a common step
by `fits_plain_step`, the run file's one fast reader), then the steps' names
(`check_step_names`): the same checks and messages.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from nbgraph.blueprint.description import GRAPH, graph_name_problems
from nbgraph.codec.shapes import ANY, BOOL, NAMES, STR, Is, ListOf, MapOf, Obj, Pair, Shape
from nbgraph.engine.facts import StepLog, Task
from nbgraph.errors import NbgraphError

__all__ = [
    "LIMIT",
    "PLAIN_TASK",
    "STEP_KEYS",
    "TASK_KEYS",
    "LogShapeError",
    "check_document",
    "check_step",
    "check_step_names",
    "fits_plain_step",
    "known_nodes",
    "read_plain_step",
    "step_name_problems",
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
        return all(read_plain_step(step) is not None or step_fits(step) for step in value)

    def problems(self, value: Any, path: str) -> Iterator[str]:
        return self.schema.problems(value, path)


STEP_KEYS = frozenset(_STEP.required)
"""The entries of a step with no joins, heads or kept values."""
TASK_KEYS = frozenset(_TASK.required)
"""The entries every task has."""
PLAIN_TASK = TASK_KEYS | {"routes", "returned"}
"""The entries of a plain task (no arg, error, retries, custom chunks, ...)."""
_NO_FIELDS: dict[str, Any] = {}
LIMIT = 2**62
"""A step number, task index or time is between -LIMIT and LIMIT (as `Is`: it fits a
table's int64 column)."""


def fits_plain_step(step: Any) -> bool:
    """True if `step` is a common step and fits `_STEP` (`read_plain_step` reads it); False:
    not sure (ask the schema)."""
    return read_plain_step(step) is not None


def _hashed(name: Any) -> Any:
    hash(name)
    return name


def read_plain_step(data: Any, fields: Any = _NO_FIELDS) -> StepLog | None:
    """The run file's one fast reader: `data` as a `StepLog` (of `fields`) if it is a common
    step (no resets, merges, afters, joins or heads; plain tasks: `_read_plain_task`) that
    fits `_STEP`, read in one pass; None if not, or not sure (then the schema reads it, and
    `step_decoding.decode_step` decodes it). Values are taken as they are: for a document
    with no tagged value (`$type`). What `decode_step` would make of it."""
    if type(data) is not dict or data.keys() != STEP_KEYS:
        return None
    number, applied, cleared, tasks = data["step"], data["applied"], data["cleared"], data["tasks"]
    written = data["written"]
    if not (
        type(number) is int
        and _LOW < number < _HIGH
        and type(applied) is bool
        and type(written) is list
        and type(cleared) is list
        and data["merged"] == []
        and data["resets"] == []
        and data["afters"] is None
        and type(tasks) is list
    ) or (cleared and not all(type(name) is str for name in cleared)):
        return None
    decoded = []
    for task in tasks:
        one = _read_plain_task(task)
        if one is None:
            return None
        decoded.append(one)
    try:  # (a written field is a name: hashable; if not, the decoder says so)
        names = tuple(map(_hashed, written))
    except TypeError:
        return None
    return StepLog(number, decoded, fields, written=names, cleared=tuple(cleared), applied=applied)


_SEQUENCES = (list, tuple)  # (a list from JSON; the tuple: an entry left out)
_TIMES = (float, int)
_LOW, _HIGH = -LIMIT, LIMIT
_EARLIEST, _LATEST = float(-LIMIT), float(LIMIT)  # (the same numbers: 2**62 is a float's)


def _read_plain_task(task: Any) -> Task | None:
    """`task` as a `Task` if it is a plain one (`PLAIN_TASK`'s entries) that fits `_TASK`;
    None if not, or not sure."""
    if type(task) is not dict:
        return None
    keys = task.keys()
    if not (keys >= TASK_KEYS and keys <= PLAIN_TASK):
        return None
    step, index, triggers, writes = task["step"], task["index"], task["triggers"], task["writes"]
    started, ended, node, kind = task["started"], task["ended"], task["node"], task["kind"]
    routes, returned = task.get("routes", ()), task.get("returned", ())
    if not (
        type(step) is int
        and _LOW < step < _HIGH
        and type(index) is int
        and _LOW < index < _HIGH
        and type(node) is str
        and type(kind) is str
        and type(triggers) is list
        and type(writes) is list
        and type(started) in _TIMES
        and _EARLIEST < started < _LATEST  # (nan fails both)
        and type(ended) in _TIMES
        and _EARLIEST < ended < _LATEST
        and type(routes) in _SEQUENCES
        and type(returned) in _SEQUENCES
    ):
        return None
    for trigger in triggers:
        if type(trigger) is not str:
            return None
    pairs = []
    for pair in writes:
        if type(pair) is not list or len(pair) != 2 or pair[0].__hash__ is None:
            return None
        pairs.append((pair[0], pair[1]))
    return Task(
        step,
        index,
        node,
        kind,
        triggers=tuple(triggers),
        writes=pairs,
        routes=routes or (),
        started=float(started),
        ended=float(ended),
        returned=tuple(returned),
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
    if not _STEP.fits(step):  # (its callers asked `read_plain_step` first)
        for problem in _STEP.problems(step, f"document['run']['steps'][{index}]"):
            raise LogShapeError(problem)


def check_step_names(document: dict[str, Any]) -> None:
    """Raise `LogShapeError` unless the names the steps of `document` (their shapes
    checked) use agree with its graph and each other."""
    for problem in _step_name_problems(document["graph"], document["run"]):
        raise LogShapeError(problem)


def _step_name_problems(graph: dict[str, Any], run: dict[str, Any]) -> Iterator[str]:
    yield from _step_problems(run["steps"], known_nodes(graph))
    if run.get("semantics") == "branches":  # a branch run's afters: per lineage point
        for step in run["steps"]:
            pinned = MapOf(Is(dict), nullable=True)
            yield from pinned.problems(step["afters"], f"the afters of step {step['step']}")


def _step_problems(steps: list[dict[str, Any]], nodes: set[str]) -> Iterator[str]:
    previous = None
    for index, step in enumerate(steps):
        yield from step_name_problems(step, index, previous, nodes)
        previous = step["step"]


def known_nodes(graph: dict[str, Any]) -> set[str]:
    """The names a task of a run of `graph` (its description) may run."""
    return {*(node["name"] for node in graph["nodes"]), "__start__", "__end__"}


def _takes_input(step: dict[str, Any]) -> bool:
    """The step applies a new input to a thread (its tasks are the input's): LangGraph numbers
    its checkpoint past the last step's, so a step number is skipped before it."""
    tasks = step["tasks"]
    return bool(tasks) and all(task["kind"] == "input" for task in tasks)


def step_name_problems(
    step: dict[str, Any], index: int, previous: int | None, nodes: set[str]
) -> Iterator[str]:
    """What is wrong with the names of `step` (entry `index` of the steps, its shape
    checked), after step number `previous` (None: the first), in a graph of `nodes`."""
    number = step["step"]
    if previous is not None and number <= previous:
        yield f"step {number} (entry {index} of 'steps') does not come after step {previous}"
    elif previous is not None and number != previous + 1 and not _takes_input(step):
        entry = f"step {number} (entry {index} of 'steps')"
        yield f"{entry} follows step {previous}: a step is missing"
    tasks = step["tasks"]
    if len(tasks) > 1 and len({task["index"] for task in tasks}) != len(tasks):
        yield f"step {number} has two tasks with the same index"
    for task in tasks:
        if task["step"] != number:
            yield f"a task of step {number} says it ran in step {task['step']!r}"
        if task["node"] not in nodes and task["kind"] != "call":  # (a `@task`'s name)
            yield f"a task of step {number} runs {task['node']!r}, not a node of the graph"
