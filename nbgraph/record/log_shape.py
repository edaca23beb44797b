"""What a run file's document must look like, checked before any of it is used.

`check_document` walks the JSON document of `Run.to_json` against `RUN_DOCUMENT`, a small
schema of its entries' types, then checks that the names it uses agree (tasks run nodes of
the graph, steps go up, a task sits in its step). A file that was damaged or edited is
refused here, at load time, with the path of the first entry that is wrong, instead of
loading and failing later in a table, a drawing or the inspector.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from nbgraph.errors import NbgraphError

_NUMBER_LIMIT = 2**62  # a step number, an index, a time: well inside an int64 column


class LogShapeError(NbgraphError, ValueError):
    """A run document's entry is not what `Run.to_json` writes; the message gives its path."""


class Shape:
    """A check of one JSON value; `problems` yields what is wrong, each naming its path."""

    def problems(self, value: Any, path: str) -> Iterator[str]:
        raise NotImplementedError

    def fits(self, value: Any) -> bool:
        """Whether `value` has this shape (the fast check; `problems` says what is wrong)."""
        return not any(True for _ in self.problems(value, ""))


class Is(Shape):
    """One of some JSON types: `Is(str)`, `Is(int, None)`; `Is(float)` takes an int too,
    `Is(object)` anything. Numbers must be finite and fit a table's int64 column."""

    def __init__(self, *kinds: Any, choices: tuple[Any, ...] = ()) -> None:
        self.kinds, self.choices = kinds, choices
        self.anything = object in kinds
        self.exact = frozenset(k if k is not None else type(None) for k in kinds) - {int, float}

    def fits(self, value: Any) -> bool:
        if self.anything:
            return True
        kind = type(value)
        if kind in self.exact:
            return not self.choices or value in self.choices
        if kind is int and (int in self.kinds or float in self.kinds):
            return -_NUMBER_LIMIT < value < _NUMBER_LIMIT
        if kind is float and float in self.kinds:
            return -_NUMBER_LIMIT < value < _NUMBER_LIMIT  # nan fails both
        return False

    def problems(self, value: Any, path: str) -> Iterator[str]:
        if object in self.kinds or (value is None and None in self.kinds):
            return
        kind = type(value)
        fits = kind in self.kinds or (float in self.kinds and kind is int)
        if fits and kind in (int, float):  # steps, indices, times: what tables hold
            fits = math.isfinite(value) and abs(value) < _NUMBER_LIMIT
        if not fits:
            names = " or ".join("null" if k is None else k.__name__ for k in self.kinds)
            article = "an" if names[0] in "aeiou" else "a"
            yield f"{path} should be {article} {names}, found {_show(value)}"
        elif self.choices and value not in self.choices:
            choices = ", ".join(map(repr, self.choices))
            yield f"{path} should be one of {choices}, found {_show(value)}"


class ListOf(Shape):
    """A list whose items all have `item`'s shape (exactly `size` of them if given)."""

    def __init__(self, item: Shape, size: int | None = None, nullable: bool = False) -> None:
        self.item, self.size, self.nullable = item, size, nullable

    def fits(self, value: Any) -> bool:
        if type(value) is not list:
            return value is None and self.nullable
        if self.size is not None and len(value) != self.size:
            return False
        fits = self.item.fits
        return all(map(fits, value))

    def problems(self, value: Any, path: str) -> Iterator[str]:
        if value is None and self.nullable:
            return
        if type(value) is not list:
            yield f"{path} should be a list, found {_show(value)}"
            return
        if self.size is not None and len(value) != self.size:
            yield f"{path} should be a list of {self.size} items, found {len(value)}"
            return
        for index, item in enumerate(value):
            yield from self.item.problems(item, f"{path}[{index}]")


class Pair(Shape):
    """A list of fixed length whose items have the given shapes, in order."""

    def __init__(self, *items: Shape) -> None:
        self.items = items

    def fits(self, value: Any) -> bool:
        if type(value) is not list or len(value) != len(self.items):
            return False
        return all(shape.fits(item) for shape, item in zip(self.items, value, strict=True))

    def problems(self, value: Any, path: str) -> Iterator[str]:
        if type(value) is not list or len(value) != len(self.items):
            yield f"{path} should be a list of {len(self.items)} items, found {_show(value)}"
            return
        for index, (shape, item) in enumerate(zip(self.items, value, strict=True)):
            yield from shape.problems(item, f"{path}[{index}]")


class MapOf(Shape):
    """An object whose values all have `item`'s shape."""

    def __init__(self, item: Shape, nullable: bool = False) -> None:
        self.item, self.nullable = item, nullable

    def fits(self, value: Any) -> bool:
        if type(value) is not dict:
            return value is None and self.nullable
        return all(map(self.item.fits, value.values()))

    def problems(self, value: Any, path: str) -> Iterator[str]:
        if value is None and self.nullable:
            return
        if type(value) is not dict:
            yield f"{path} should be an object, found {_show(value)}"
            return
        for key, item in value.items():
            yield from self.item.problems(item, f"{path}[{key!r}]")


class Obj(Shape):
    """An object with `required` entries (and maybe `optional` ones), each of its shape."""

    def __init__(
        self, required: dict[str, Shape], optional: dict[str, Shape] | None = None,
        nullable: bool = False,
    ) -> None:  # fmt: skip
        self.required, self.optional, self.nullable = required, optional or {}, nullable

    def fits(self, value: Any) -> bool:
        if type(value) is not dict:
            return value is None and self.nullable
        for key, shape in self.required.items():
            if key not in value or not shape.fits(value[key]):
                return False
        for key, shape in self.optional.items():
            if key in value and not shape.fits(value[key]):
                return False
        return True

    def problems(self, value: Any, path: str) -> Iterator[str]:
        if value is None and self.nullable:
            return
        if type(value) is not dict:
            yield f"{path} should be an object, found {_show(value)}"
            return
        for key, shape in self.required.items():
            if key not in value:
                yield f"{path}: the entry {key!r} is missing"
            else:
                yield from shape.problems(value[key], f"{path}[{key!r}]")
        for key, shape in self.optional.items():
            if key in value:
                yield from shape.problems(value[key], f"{path}[{key!r}]")


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


ANY = Is(object)
STR = Is(str)
NAMES = ListOf(STR)
BOOL = Is(bool)
SCHEMA_INFO = Obj({"class": STR, "kind": STR, "fields": NAMES})
ERROR = Obj({"type": STR, "message": STR}, {"notes": NAMES}, nullable=True)
FIELD = Obj(
    {"name": STR, "type": STR, "reducer": Is(str, None), "registered": BOOL, "ephemeral": BOOL,
     "managed": BOOL, "private": BOOL,
     "initial": Obj({"type": STR, "value": ANY}, nullable=True)},
)  # fmt: skip
NODE = Obj(
    {"name": STR, "defer": BOOL, "merge": Is(str, bool, None),
     "destinations": ListOf(STR, nullable=True), "input": Obj(SCHEMA_INFO.required, nullable=True),
     "is_async": BOOL, "takes_config": BOOL},
)  # fmt: skip
BRANCH = Obj(
    {"source": STR, "router": STR, "path_map": ListOf(Pair(ANY, STR), nullable=True),
     "is_async": BOOL, "takes_config": BOOL},
)  # fmt: skip
GRAPH = Obj(
    {"fields": ListOf(FIELD), "state": SCHEMA_INFO, "input": SCHEMA_INFO, "output": SCHEMA_INFO,
     "nodes": ListOf(NODE), "edges": MapOf(NAMES),
     "waiting": ListOf(Obj({"sources": NAMES, "target": STR})), "branches": ListOf(BRANCH),
     "filters": ListOf(Pair(STR, STR)), "state_merger": BOOL, "open_schema": BOOL,
     "interrupt_before": NAMES, "interrupt_after": NAMES},
    {"semantics": Is(str, choices=("supersteps", "branches")), "end_merge": Is(str, None)},
)  # fmt: skip
TASK = Obj(
    {"step": Is(int), "index": Is(int), "node": STR, "kind": STR, "triggers": NAMES,
     "writes": ListOf(Pair(ANY, ANY)), "started": Is(float), "ended": Is(float)},
    {"arg": ANY, "routes": ListOf(ANY), "dropped": ListOf(Pair(ANY, ANY, STR)), "error": ERROR,
     "parent": STR},
)  # fmt: skip
RESET = Obj(
    {"node": STR, "reason": STR, "sources": NAMES, "dropped": NAMES, "values": ANY},
    {"id": STR, "parent": STR},
)  # fmt: skip
JOIN = Obj(
    {"step": Is(int), "id": STR, "node": STR, "parents": NAMES, "strategy": STR},
    {"base": STR, "applied": NAMES, "values": ANY, "dropped": NAMES},
)  # fmt: skip
STEP = Obj(
    {"step": Is(int), "applied": BOOL, "written": ListOf(ANY), "cleared": ListOf(ANY),
     "merged": ListOf(Pair(STR, ANY, ANY)), "resets": ListOf(RESET), "afters": Is(dict, None),
     "tasks": ListOf(TASK)},
    {"joins": ListOf(JOIN), "heads": NAMES},
)  # fmt: skip
RUN = Obj(
    {"status": Is(str, choices=("running", "done", "failed", "interrupted")), "error": ERROR,
     "input": ANY, "config": Is(dict), "warnings": NAMES, "final": ANY, "steps": ListOf(STEP)},
    {"semantics": Is(str, choices=("supersteps", "branches")), "end": Obj(JOIN.required,
     JOIN.optional, nullable=True)},
)  # fmt: skip
RUN_DOCUMENT = Obj({"graph": GRAPH, "run": RUN})
"""The shape of a run document (`format` and `version` are checked before)."""


def graph_problems(description: Any, what: str) -> Iterator[str]:
    """What is wrong with a graph description (`describe_graph`'s), each naming its path
    from `what`; a checkpoint thread's first checkpoint holds one too."""
    problems = list(GRAPH.problems(description, what))
    yield from problems
    if not problems:
        yield from _name_problems(description, {"steps": []})


def check_document(document: dict[str, Any]) -> None:
    """Raise `LogShapeError` unless `document` has `RUN_DOCUMENT`'s shape and its names agree.

    The message names the first entry that is wrong (as a path) and what was expected.
    """
    if not RUN_DOCUMENT.fits(document):
        for problem in RUN_DOCUMENT.problems(document, "document"):
            raise LogShapeError(problem)
    for problem in _name_problems(document["graph"], document["run"]):
        raise LogShapeError(problem)


def _name_problems(graph: dict[str, Any], run: dict[str, Any]) -> Iterator[str]:
    nodes = [node["name"] for node in graph["nodes"]]
    fields = [field["name"] for field in graph["fields"]]
    for what, names in (("node", nodes), ("field", fields)):
        doubled = sorted({name for name in names if names.count(name) > 1})
        if doubled:
            yield f"the graph has two {what}s named {doubled[0]!r}"
    schemas = [graph["state"], graph["input"], graph["output"]]
    schemas += [node["input"] for node in graph["nodes"] if node["input"] is not None]
    for schema in schemas:
        unknown = [name for name in schema["fields"] if name not in fields]
        if unknown:
            yield f"the schema {schema['class']!r} names {unknown[0]!r}, not a field of the graph"
    known = {*nodes, "__start__", "__end__"}
    for source, targets in graph["edges"].items():
        for name in (source, *targets):
            if name not in known:
                yield f"an edge of the graph names {name!r}, which is not one of its nodes"
    for edge in graph["waiting"]:
        for name in (*edge["sources"], edge["target"]):
            if name not in known:
                yield f"a waiting edge names {name!r}, which is not one of the graph's nodes"
    for branch in graph["branches"]:
        if branch["source"] not in known:
            yield f"a router follows {branch['source']!r}, which is not one of the graph's nodes"
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
        previous = number
        indices = [task["index"] for task in step["tasks"]]
        if len(set(indices)) != len(indices):
            yield f"step {number} has two tasks with the same index"
        for task in step["tasks"]:
            if task["step"] != number:
                yield f"a task of step {number} says it ran in step {task['step']!r}"
            if task["node"] not in nodes:
                yield f"a task of step {number} runs {task['node']!r}, not a node of the graph"
