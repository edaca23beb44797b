"""One superstep of an imported LangGraph thread: its tasks, their writes, triggers, sends,
errors and interrupts.

The tasks are rebuilt from a checkpoint's snapshot (`get_state_history`: names, paths, errors,
interrupts) and the checkpointer's pending writes (`CheckpointTuple.pending_writes`: every write
of every task, in order).

LangGraph applies a step's writes task by task in the order of the tasks' paths
(`task_path_str` of `path[:3]`, pulls before pushes); a task's `index` here is that order,
so `effects` show writers as LangGraph folded them.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from nbgraph.engine.facts import Task, prepared
from nbgraph.errors import NbgraphError
from nbgraph.primitives import Interrupt, Overwrite, Send

__all__ = [
    "ERROR",
    "INTERRUPT",
    "NULL_TASK",
    "ImportedTaskError",
    "Triggers",
    "make_task",
    "step_tasks",
    "writes_by_task",
]

_START = "__start__"
ERROR, INTERRUPT, _TASKS = "__error__", "__interrupt__", "__pregel_tasks"
NULL_TASK = "00000000-0000-0000-0000-000000000000"
"""The task id LangGraph files a thread-wide `Command(resume=...)` under."""


class ImportedTaskError(NbgraphError, RuntimeError):
    """A LangGraph task's error whose class is not a built-in: LangGraph's history keeps
    only its text (`kind` is the class name it gives)."""

    kind = "Exception"

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


@dataclass
class Triggers:
    """What is waiting to start which node: the tasks of the latest step that wrote
    `branch:to:<node>` (a later step's writers replace an earlier step's, except for a
    deferred node, which every writer since it last ran started), the sources of waiting
    edges (`join:<a>+<b>:<node>`), and the `Send`s of the last step, in order."""

    deferred: frozenset[str] = frozenset()
    edges: dict[str, list[tuple[int, str]]] = field(default_factory=dict)
    joins: dict[str, list[str]] = field(default_factory=dict)
    sends: list[tuple[str, Send]] = field(default_factory=list)

    def take(self, name: str) -> tuple[str, ...]:
        edges = [node for _, node in self.edges.pop(name, ())]
        joins = self.joins.pop(name, [])
        return tuple(edges or joins)

    def start(self, target: str, node: str, step: int) -> None:
        """`node` (run in `step`) starts `target` in a later step."""
        found = self.edges.setdefault(target, [])
        if found and found[-1][0] != step and target not in self.deferred:
            found.clear()
        found.append((step, node))

    def note(self, task: Task, raw: list[tuple[str, Any]]) -> None:
        """Remember what `task`'s channel writes start in a later step."""
        for channel, value in raw:
            if channel.startswith("branch:to:"):
                self.start(channel.removeprefix("branch:to:"), task.node, task.step)
            elif channel.startswith("join:"):
                sources, _, target = channel.removeprefix("join:").rpartition(":")
                self.joins.setdefault(target, sources.split("+"))
            elif channel == _TASKS:
                self.sends.append((task.node, _send(value)))


def _path_key(path: Any) -> str:
    """LangGraph's sort key of a task path (its `task_path_str`), the order writes apply."""
    if isinstance(path, (tuple, list)):
        return "~" + ", ".join(_path_key(part) for part in path)
    return f"{path:010d}" if isinstance(path, int) else str(path)


def writes_by_task(pending: Iterable[Any]) -> dict[str, list[tuple[str, Any]]]:
    """A checkpoint's pending writes grouped by task id, each in the order written."""
    found: dict[str, list[tuple[str, Any]]] = {}
    for item in pending:
        task_id, channel, value = item[0], item[1], item[2]
        found.setdefault(task_id, []).append((channel, value))
    return found


def step_tasks(
    step: int,
    planned: list[Any],
    writes: dict[str, list[tuple[str, Any]]],
    spec: Any,
    triggers: Triggers,
    *,
    head: bool,
    origins: list[tuple[Task, Any]] | None = None,
) -> list[tuple[Task, list[tuple[str, Any]]]]:
    """The tasks LangGraph ran from one checkpoint, in write order, each with its raw writes.

    Args:
        step: the nbgraph step they make (the next checkpoint's step).
        planned: the checkpoint snapshot's `tasks` (`PregelTask`s).
        writes: its pending writes by task id.
        spec: the graph (channels not its fields are LangGraph's bookkeeping; writes to
            `branch:to:<node>` along its static edges are not routes).
        triggers: what earlier steps started (consumed as the tasks are read).
        head: the thread's last checkpoint: keep its errors and interrupts (a task that ran
            again after an error or an interrupt and finished shows only what it wrote).
        origins: if given, gets `(task, planned PregelTask)` for each task made (its
            LangGraph id and the namespace of a subgraph it ran).
    """
    ran = [t for t in planned if t.id in writes or (head and (t.error or t.interrupts))]
    ran.sort(key=lambda t: _path_key(tuple(t.path[:3])))
    sends = [send for _, send in triggers.sends]
    senders = [node for node, _ in triggers.sends]
    triggers.sends = []
    out = []
    for index, planned_task in enumerate(ran):
        raw = writes.get(planned_task.id, [])
        task = make_task(step, index, planned_task, raw, spec, head)
        path = tuple(planned_task.path)
        if task.node == _START:
            task.kind = "input"
        elif path and path[0] == "__pregel_push" and isinstance(path[1], int):
            position = path[1]
            if position < len(sends):
                task.kind, task.arg = "send", sends[position].arg
                task.triggers = (senders[position],)
        else:
            task.triggers = triggers.take(task.node)
        out.append((task, raw))
        if origins is not None:
            origins.append((task, planned_task))
    return out


def make_task(
    step: int, index: int, planned: Any, raw: list[tuple[str, Any]], spec: Any, head: bool,
    name: str | None = None,
) -> Task:  # fmt: skip
    """One task from its raw channel writes: its field writes (LangGraph's `Overwrite` as
    nbgraph's; through the field's `prepare`, so messages are kept as nbgraph's record keeps
    them), its routes (`branch:to:` writes off its static edges, and its `Send`s), and on the
    thread's last checkpoint its error and interrupts; named `name` or as planned."""
    task = Task(step, index, name or planned.name)
    fields = spec.fields
    task.writes = [(c, prepared(fields[c], _field_value(v))) for c, v in raw if c in fields]
    static = spec.edges.get(task.node, ())
    routes: list[Any] = []
    for channel, value in raw:
        target = channel.removeprefix("branch:to:")
        if target != channel and target not in static:
            routes.append(target)
        elif channel == _TASKS:
            routes.append(_send(value))
    task.routes = routes or ()
    if head and planned is not None:
        if planned.error:
            task.error = _task_error(planned.error)
        if planned.interrupts:
            task.interrupts = tuple(Interrupt(i.value, str(i.id)) for i in planned.interrupts)
    return task


def _field_value(value: Any) -> Any:
    """A written value with LangGraph's `Overwrite` as nbgraph's (the same meaning)."""
    if type(value).__name__ == "Overwrite" and type(value).__module__.startswith("langgraph"):
        return Overwrite(value.value)
    return value


def _send(value: Any) -> Send:
    return Send(value.node, value.arg) if hasattr(value, "node") else value


def _task_error(text: Any) -> BaseException:
    """A task's error from the text LangGraph's history keeps (`"ValueError('bad')"`):
    the built-in class itself when it is one, else an `ImportedTaskError` of that name."""
    if isinstance(text, BaseException):
        return text
    text = str(text)
    kind, _, rest = text.partition("(")
    message: Any = rest[:-1] if rest.endswith(")") else text
    try:
        parsed = ast.literal_eval(f"({message},)") if message else ()
    except (ValueError, SyntaxError):
        parsed = (message,)
    found = getattr(builtins, kind, None)
    if isinstance(found, type) and issubclass(found, Exception):
        try:
            return found(*parsed)
        except Exception:  # a built-in that wants other arguments: keep its text
            pass
    cls = type(kind if kind.isidentifier() else "ImportedTaskError", (ImportedTaskError,), {})
    cls.kind = kind
    return cls(*(parsed or (text,)))
