"""Tasks: one node run in one superstep, from the input it is handed to its writes and routes.

A task's input is isolated (`StateView`, or a freshly built model), its output is read into
`(field, value)` writes (copied on intake) and its next destinations, and its routers see the
step's starting state plus only this task's writes.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from nbgraph.blueprint import Branch, GraphSpec, NodeSpec
from nbgraph.blueprint.subgraphs import is_compiled_graph
from nbgraph.engine.core.writes import field_spec, reduce_field
from nbgraph.errors import InvalidUpdateError, NbgraphError
from nbgraph.errors import ParentCommand as _LangGraphParentCommand
from nbgraph.isolation import Pending, StateView, isolate
from nbgraph.messages.langchain_messages import MessageTypeError
from nbgraph.primitives import (
    END,
    MISSING,
    OVERWRITE_KEY,
    Command,
    Mutation,
    Overwrite,
    Send,
    is_overwrite,
)
from nbgraph.schema import ROOT, SchemaInfo, pydantic_updates

__all__ = [
    "VIEWED",
    "ParentCommand",
    "RouteError",
    "Task",
    "absorb_output",
    "absorb_route",
    "absorb_update",
    "node_input",
    "note_failure",
    "prepared",
    "router_state",
    "router_view",
    "state_for",
    "update_chunk",
    "warn_dropped",
]

_IMMUTABLE = frozenset({int, float, str, bool, type(None), bytes, complex, range})
"""A write of one of these types is kept as it is (no copy to make)."""
VIEWED = ("typeddict", "dict")  # the schema kinds a node is handed as a `StateView`


class RouteError(NbgraphError, KeyError):
    """A router, a `Command` or a `Send` pointed at a node that does not exist."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class ParentCommand(NbgraphError, _LangGraphParentCommand):
    """A node returned `Command(graph=Command.PARENT, ...)`: it stops its graph's run, and
    the parent's task that ran that graph takes the command (LangGraph's `ParentCommand`).
    Raised out of a graph that has no parent.

    Attributes:
        command: the command, as the parent's task takes it (`graph` cleared).
    """

    def __init__(self, command: Command) -> None:
        self.command = Command(update=command.update, goto=command.goto, resume=command.resume)
        super().__init__(self.command)

    def __str__(self) -> str:
        return (
            f"{self.command!r} addresses the parent graph (Command.PARENT): the parent's "
            "task that ran this graph takes it (an error only where there is no parent)."
        )


@dataclass(slots=True, eq=False)
class Task:
    """One run of one node in one superstep, and everything it produced.

    Attributes:
        step: the superstep.
        index: position in the step's write order.
        node: the node's name.
        kind: `"edge"` (triggered by edges, routers or gotos) or `"send"`.
        arg: the `Send`'s argument (the whole input of a send task).
        triggers: the nodes whose edges, routers or Commands triggered it (for a send task,
            the node that sent it).
        writes: `(field, value)` in the order the node wrote them.
        routes: node names (END included) and `Send`s chosen by its Commands and routers,
            in order.
        dropped: what it wrote that was dropped: `(key, value, reason)` each.
        error: the exception it raised, if any.
        started: when it started (`time.time()`; a retried task: its last attempt);
            `ended`: when it finished.
        interrupts: the `Interrupt` that paused it (it will run again when answered).
        held: the graph run inside its node stopped at a static breakpoint (it runs again,
            resuming that graph, when the run is resumed).
        parent: with `semantics="branches"`, the id of the lineage point it read (a state
            tree id: `"merge:0"`, `"task:<id>"`, `"join:..."` or `"reset:..."`).
        cached: its writes were taken from the checkpoint (it had finished before the run
            paused or failed) or from the node cache, so it is not run again.
        custom: what its node wrote with `get_stream_writer()`, in order.
        attempts: its failed attempts before the last one (`engine.retrying.Attempt` each),
            when its node's `retry_policy` tried it again.
        from_cache: its writes and routes came from the node cache (`cache_policy=`).
        cache_key: its key in the node cache, when its node has a cache policy.
        subruns: the `RunLog`s of the graphs run inside its node (a subgraph added as the
            node, or graphs its function invoked), in start order.
        returned: what its routers returned, in order (kept for the views: why it went
            where it went).
    """

    step: int
    index: int
    node: str
    kind: str = "edge"
    arg: Any = MISSING
    triggers: tuple[str, ...] = ()
    writes: list[tuple[str, Any]] = field(default_factory=list)
    routes: list[str | Send] | tuple[()] = ()
    dropped: tuple[tuple[str, Any, str], ...] = ()
    error: BaseException | None = None
    started: float = 0.0
    ended: float = 0.0
    interrupts: tuple[Any, ...] = ()
    held: bool = False
    parent: str = ""
    cached: bool = False
    custom: list[Any] | tuple[()] = ()
    attempts: tuple[Any, ...] = ()
    from_cache: bool = False
    cache_key: Any = None
    subruns: list[Any] | tuple[()] = ()
    returned: tuple[Any, ...] = ()

    @property
    def id(self) -> str:
        return f"{self.step}:{self.index}:{self.node}"

    def __repr__(self) -> str:
        return f"Task(step={self.step}, node={self.node!r}, kind={self.kind!r})"


def _add_route(task: Task, target: str | Send) -> None:
    """Append a destination (most tasks have none: the list is made on first use)."""
    if task.routes:
        task.routes.append(target)  # type: ignore[union-attr]
    else:
        task.routes = [target]


def node_input(spec: GraphSpec, node: NodeSpec, task: Task, values: dict, managed: dict) -> Any:
    """What the node is called with: an isolated state in its schema's form."""
    if task.kind == "send":
        return isolate(task.arg)  # the recorded argument stays as it was sent
    if node.input is not None:
        return state_for(node.input, values, managed, whole=False)
    return state_for(spec.state, values, managed, whole=not spec.beyond_state)


def state_for(schema: SchemaInfo, values: dict, managed: dict, *, whole: bool) -> Any:
    """The state in `schema`'s form over the engine's `values`, isolated from them."""
    if whole:
        view = StateView(values)
    else:
        view = StateView({k: values[k] for k in schema.fields if k in values})
    for name, value in managed.items():
        if name in schema.fields:
            dict.__setitem__(view, name, value)
    if schema.kind in VIEWED:
        return view
    return schema.build(view.resolved())


def absorb_output(spec: GraphSpec, node: NodeSpec, task: Task, output: Any) -> None:
    """Read a node's return value into the task's writes and routes."""
    if output is None:
        return
    if isinstance(output, Command):
        _absorb_command(spec, task, output)
    elif isinstance(output, (list, tuple)) and any(isinstance(i, Command) for i in output):
        for item in output:
            if isinstance(item, Command):
                _absorb_command(spec, task, item)
            else:
                absorb_update(spec, node, task, item)
    else:
        absorb_update(spec, node, task, output)


def _absorb_command(spec: GraphSpec, task: Task, command: Command) -> None:
    if command.graph == Command.PARENT:  # the parent's task takes it (engine.subruns)
        raise ParentCommand(command)
    if command.update is not None:
        absorb_update(spec, None, task, command.update)
    for target in command.goto_targets():
        _add_route(task, _checked_target(spec, task.node, target, "Command(goto=...)"))


def absorb_update(spec: GraphSpec, node: NodeSpec | None, task: Task, output: Any) -> None:
    """Read an update (a node's output that is not a `Command`) into the task's writes."""
    if type(output) is dict and spec.state.kind != "root":  # (`_update_pairs` and `_keep`
        # of a dict, inline: a frame a key a task, which every budget in benchmarks/budgets.json
        # shows; `_keep` for a key the state does not take as it is)
        unprepared, writes = spec.unprepared, task.writes
        for key, value in output.items():
            kind = type(value)
            if kind in _IMMUTABLE and key in unprepared:
                writes.append((key, value))
            elif (kind is list or kind is dict) and key in unprepared:
                writes.append((key, isolate(value)))  # (a plain dict: no Overwrite with prepare)
            else:
                kept = _keep(spec, task, key, value)
                if kept is not MISSING:
                    writes.append((key, kept))
        return
    for key, value in _update_pairs(spec, node, task, output):
        kept = _keep(spec, task, key, value)
        if kept is not MISSING:
            task.writes.append((key, kept))


def update_chunk(
    task: Task, keys: frozenset[str], writes: list[tuple[str, Any]] | None = None
) -> Any:
    """What `stream_mode="updates"` shows for a task, as LangGraph shows it.

    None if it wrote no shown field; a list of one-key dicts if it wrote a field twice;
    otherwise one dict of its writes (`writes`, when given: the task's as its node returned
    them).
    """
    shown = [(key, value) for key, value in writes or task.writes if key in keys]
    if not shown:
        return None
    chunk = dict(shown)
    return chunk if len(chunk) == len(shown) else [{key: value} for key, value in shown]


def _update_pairs(
    spec: GraphSpec, node: NodeSpec | None, task: Task, output: Any
) -> list[tuple[str, Any]]:
    if spec.state.kind == "root":  # a root-channel state: the output is the root's value
        return [(ROOT, output)]
    if type(output) is dict or isinstance(output, Mapping):
        return list(output.items())
    if isinstance(output, Mutation):
        return [(output.field, output)]
    if isinstance(output, (list, tuple)) and output:
        if all(isinstance(item, Mutation) for item in output):
            return [(item.field, item) for item in output]
        if all(isinstance(item, tuple) and len(item) == 2 for item in output) and node is None:
            return list(output)  # Command(update=[(key, value), ...])
    for schema in (spec.state, node.input if node else None):
        if schema is not None:
            pairs = schema.updates_from(output)
            if pairs is not None:
                return pairs
    if hasattr(type(output), "model_fields"):
        return pydantic_updates(output)
    raise InvalidUpdateError(
        f"Expected dict, got {output!r}: node {task.node!r} at step {task.step} must return "
        "a dict of the fields it changes, a model of the state, a Command, a list of "
        "Commands, a Mutation, or None."
    )


def _keep(spec: GraphSpec, task: Task, key: str, value: Any) -> Any:
    field_info = spec.fields.get(key)
    if field_info is None and not spec.open_schema:
        _drop(task, key, value, "the state has no such field")
        return MISSING
    if field_info is not None and field_info.managed:
        _drop(task, key, value, "it is managed by the engine")
        return MISSING
    try:
        return prepared(field_info, value)
    except MessageTypeError as exc:
        where = f"node {task.node!r} at step {task.step} wrote field {key!r}"
        raise MessageTypeError(f"{where}: {exc}") from exc


def prepared(field_info: Any, value: Any) -> Any:
    """A write's value as the field keeps it: isolated, through its reducer's `prepare`
    (inside an `Overwrite` or its JSON form `{"__overwrite__": ...}` too)."""
    if isinstance(value, Mutation):
        return value
    prepare = field_info.reducer.prepare if field_info and field_info.reducer else None
    if type(value) is Overwrite:
        inner = isolate(value.value)
        return Overwrite(prepare(inner) if prepare else inner)
    if prepare is not None and type(value) is dict and is_overwrite(value):
        return {OVERWRITE_KEY: prepare(isolate(value[OVERWRITE_KEY]))}
    return prepare(isolate(value)) if prepare else isolate(value)


def _drop(task: Task, key: str, value: Any, why: str) -> None:
    task.dropped = (*task.dropped, (key, isolate(value), why))


def _checked_target(spec: GraphSpec, source: str, target: Any, how: str) -> str | Send:
    if isinstance(target, Send):
        if target.node not in spec.nodes:
            raise RouteError(
                f"{how} from {source!r} sent to unknown node {target.node!r}; "
                f"known nodes: {', '.join(spec.nodes)}."
            )
        return Send(target.node, isolate(target.arg))
    if target == END or target in spec.nodes:
        return target
    raise RouteError(
        f"{how} from {source!r} chose {target!r}, which is not a node; "
        f"known nodes: {', '.join(spec.nodes)} (or END)."
    )


def router_state(
    spec: GraphSpec, task: Task, values: dict, managed: dict, branch: Branch | None = None
) -> Any:
    """The state a router sees: the step's start plus only this task's writes, in the
    schema its first parameter is annotated with (default: the state schema's fields)."""
    schema = branch.input if branch is not None and branch.input is not None else spec.state
    if schema is not spec.state or spec.beyond_state:
        values = {k: v for k, v in values.items() if k in schema.fields}
    view = StateView(values)
    if task.writes:
        own: dict[str, list[tuple[str, Any]]] = {}
        for key, value in task.writes:
            if key not in schema.fields and not spec.open_schema:
                continue
            if key in own:
                own[key].append((task.node, value))
            else:
                own[key] = [(task.node, value)]
        fields = spec.fields
        for key, key_writes in own.items():
            info = fields.get(key)
            if len(key_writes) == 1 and (info is None or info.reducer is None):
                value = key_writes[0][1]  # a plain overwrite: the value itself (copied on read)
                if type(value) is not Overwrite and not isinstance(value, Mutation):
                    dict.__setitem__(view, key, value)
                    continue
            fresh = _Fresh((info or field_spec(fields, key), values, key_writes, task))
            dict.__setitem__(view, key, fresh)  # (a new view: nothing read yet)
    for name, value in managed.items():
        if name in schema.fields:
            dict.__setitem__(view, name, value)
    if schema.kind in ("typeddict", "dict"):
        return view
    return schema.build(view.resolved())


def router_view(spec: GraphSpec, task: Task, values: dict, known: dict) -> Any:
    """`router_state` for a router of the state's own schema without managed fields (a
    viewed router: `engine.core.plans`) when `task` wrote each field at most once, else
    None: one pass over its writes, no grouping. A field written without a reducer holds
    its value (copied when read), a reduced one a lazy `_Fresh`; `known`: the fields a
    view shows, by name (`_GraphPlans.known`)."""
    writes = task.writes
    count = len(writes)
    if count > 1 and (writes[0][0] == writes[1][0] if count == 2 else _written_twice(writes)):
        return None  # (a field written twice: two writes' keys compared inline)
    view = StateView(values)
    node = task.node
    for key, value in writes:
        info = known.get(key)
        if info is None:
            if key not in spec.state.fields and not spec.open_schema:
                continue
            return None
        if (
            info.reducer is None
            and type(value) is not Overwrite
            and not isinstance(value, Mutation)
        ):
            dict.__setitem__(view, key, value)
        else:
            dict.__setitem__(view, key, _Fresh((info, values, [(node, value)], task)))
    return view


def _written_twice(writes: list) -> bool:
    """Whether a task's `(field, value)` writes write a field twice (two writes: their keys
    compared, no dict made)."""
    if len(writes) == 2:
        return writes[0][0] == writes[1][0]
    return len(dict(writes)) != len(writes)


class _Fresh(tuple, Pending):
    """A field's value after one task's writes, computed only if a router reads it:
    `_Fresh((field, values, writes, task))` (a tuple: made without a Python call)."""

    __slots__ = ()

    def compute(self) -> Any:
        field, values, writes, task = self
        value = reduce_field(field, isolate(values.get(field.name, MISSING)), writes, task.step)
        return value if field.reducer is not None else isolate(value)  # (a write's own value)


def absorb_route(spec: GraphSpec, branch: Branch, task: Task, result: Any) -> None:
    """Read a router's return value into the task's routes."""
    items = result if isinstance(result, (list, tuple)) else [result]
    how = f"Router {branch.name!r}"
    for item in items:
        if item is None:
            continue
        if not isinstance(item, Send) and branch.path_map is not None:
            try:
                item = branch.path_map[item]
            except (KeyError, TypeError):
                raise RouteError(
                    f"Router {branch.name!r} after {task.node!r} returned {item!r}, which its "
                    f"path_map does not have; path_map keys: {list(branch.path_map)}."
                ) from None
        _add_route(task, _checked_target(spec, task.node, item, how))


def note_failure(error: BaseException, task: Task, where: str = "running node") -> None:
    """Add a note naming the node and step to an exception a task raised (once)."""
    note = f"nbgraph: while {where} {task.node!r} at step {task.step}"
    if note not in getattr(error, "__notes__", ()):
        error.add_note(note)


def warn_dropped(spec: GraphSpec, warned: list[str], task: Task) -> None:
    """Warn (and note in `warned`, the run's warnings) that `task` wrote keys that were
    dropped, pointing at its node's code."""
    node = spec.nodes.get(task.node)
    if node is not None and is_compiled_graph(getattr(node.fn, "app", None)):
        return  # a subgraph's own keys the parent lacks: LangGraph drops them silently
    message = (
        f"Node {task.node!r} at step {task.step} wrote keys that were dropped: "
        f"{', '.join(f'{key!r} ({why})' for key, _, why in task.dropped)}."
    )
    warned.append(message)
    code = getattr(spec.nodes[task.node].fn, "__code__", None)
    if code is None:
        warnings.warn(message, UserWarning, stacklevel=2)
    else:  # point at the node that wrote them, not at the engine
        warnings.warn_explicit(message, UserWarning, code.co_filename, code.co_firstlineno)
