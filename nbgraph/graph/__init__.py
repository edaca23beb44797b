"""The `StateGraph` builder and `compile()`: every check on a graph's shape lives here.

Builder methods only collect; `compile()` checks everything once and raises one
`GraphBuildError` listing every problem, then hands a frozen `GraphSpec` to the engine.
"""

from __future__ import annotations

import inspect
import typing
import warnings
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal, get_args, get_origin

from nbgraph.errors import GraphBuildError
from nbgraph.schema import FieldSpec, SchemaInfo, read_schema, schema_kind
from nbgraph.types import END, START

_RESERVED = (START, END)
SEMANTICS = ("supersteps", "branches")
MERGE_NAMES = ("delta", "fold")


@dataclass(frozen=True, slots=True)
class NodeSpec:
    """A node as the engine runs it."""

    name: str
    fn: Callable[..., Any]
    is_async: bool = False
    takes_config: bool = False
    input: SchemaInfo | None = None
    defer: bool = False
    merge: Callable[[list[Any]], Any] | str | None = None
    destinations: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class Branch:
    """A conditional edge: `router(state)` picks where `source` goes next."""

    source: str
    router: Callable[..., Any]
    path_map: Mapping[Hashable, str] | None = None
    is_async: bool = False
    takes_config: bool = False
    input: SchemaInfo | None = None

    @property
    def name(self) -> str:
        return getattr(self.router, "__name__", type(self.router).__name__)


@dataclass(frozen=True, slots=True)
class WaitingEdge:
    """`add_edge([a, b], c)`: `c` runs once all sources have run since it last ran."""

    sources: tuple[str, ...]
    target: str


@dataclass(frozen=True)
class GraphSpec:
    """A checked graph, frozen: what `compile()` hands the engine and the drawings."""

    state: SchemaInfo
    input: SchemaInfo
    output: SchemaInfo
    fields: dict[str, FieldSpec]
    nodes: dict[str, NodeSpec]
    edges: dict[str, tuple[str, ...]]
    waiting: tuple[WaitingEdge, ...]
    branches: dict[str, tuple[Branch, ...]]
    filters: dict[tuple[str, str], Callable[[Any], Any]]
    state_merger: Callable[[dict, list[dict]], dict] | None = None
    open_schema: bool = False
    interrupt_before: tuple[str, ...] = ()
    interrupt_after: tuple[str, ...] = ()
    waits_by_source: dict[str, tuple[int, ...]] = field(default_factory=dict)
    semantics: str = "supersteps"
    end_merge: Callable[[list[Any]], Any] | str = "delta"

    @cached_property
    def ephemeral(self) -> tuple[str, ...]:
        """Fields that live one superstep (one task, in a branch lineage)."""
        return tuple(name for name, f in self.fields.items() if f.ephemeral)

    @cached_property
    def beyond_state(self) -> frozenset[str]:
        """Fields the state schema does not declare (input, output or node-private keys):
        a node or router that reads the state schema does not see them, as in LangGraph."""
        if self.open_schema:
            return frozenset()
        return frozenset(self.fields) - frozenset(self.state.fields)

    @cached_property
    def transient(self) -> frozenset[str]:
        """Fields marked `Transient`: never written to a checkpoint."""
        return frozenset(name for name, f in self.fields.items() if f.transient is not None)


class StateGraph:
    """Build a graph of nodes that read a typed state and return the fields they change.

    Args:
        state_schema: a TypedDict, pydantic `BaseModel`, dataclass, or `dict`.
        input_schema: keys accepted as input (default: the state schema).
        output_schema: keys returned by `invoke` (default: the state schema).
        reducers: for a `dict` schema, `{field: reducer or registered name}` (langgraphgo).
        ephemeral: for a `dict` schema, fields that live for one superstep.
        state_merger: `(current, [updates]) -> merged` for parallel writes to fields that
            have no reducer (langgraphgo's `stateMerger`); without it they are a conflict.

    >>> app = (StateGraph(dict, reducers={"log": "append"})
    ...        .add_node("a", lambda s: {"log": ["a"]})
    ...        .add_edge(START, "a").compile())
    >>> app.invoke({"log": ["start"]})
    {'log': ['start', 'a']}
    """

    def __init__(
        self,
        state_schema: Any = None,
        context_schema: Any = None,
        *,
        input_schema: Any = None,
        output_schema: Any = None,
        reducers: Mapping[str, Any] | None = None,
        ephemeral: Iterable[str] = (),
        state_merger: Callable[[dict, list[dict]], dict] | None = None,
        **legacy: Any,
    ) -> None:
        input_schema = input_schema if input_schema is not None else legacy.pop("input", None)
        output_schema = output_schema if output_schema is not None else legacy.pop("output", None)
        legacy.pop("config_schema", None)
        self._problems: list[str] = [
            f"StateGraph() got an unexpected argument {key!r}" for key in legacy
        ]
        if state_schema is None:
            if input_schema is None:
                raise GraphBuildError(["StateGraph() needs a state schema (or input_schema)."])
            state_schema = input_schema
        self.state_schema = state_schema
        self.input_schema = input_schema if input_schema is not None else state_schema
        self.output_schema = output_schema if output_schema is not None else state_schema
        self.context_schema = context_schema
        self.reducers = dict(reducers or {})
        self.ephemeral = tuple(ephemeral)
        self.state_merger = state_merger
        self.nodes: dict[str, NodeSpec] = {}
        self.edges: list[tuple[str, str]] = []
        self.waiting: list[WaitingEdge] = []
        self.branches: list[Branch] = []
        self.filters: dict[tuple[str, str], Callable[[Any], Any]] = {}

    def __repr__(self) -> str:
        return f"StateGraph({_name_of(self.state_schema)}, nodes={list(self.nodes)})"

    # --- nodes -----------------------------------------------------------------------------

    def add_node(
        self,
        node: str | Callable[..., Any],
        action: Callable[..., Any] | None = None,
        *,
        defer: bool = False,
        merge: Callable[[list[Any]], Any] | str | None = None,
        input_schema: Any = None,
        **options: Any,
    ) -> StateGraph:
        """Add a node: `add_node("name", fn)` or `add_node(fn)` (named by `fn.__name__`).

        Args:
            node: the name, or the function itself.
            action: the function, when `node` is a name.
            defer: run only when nothing else is left to run (once).
            merge: how a join merges the states arriving at it. A strategy callable
                `(list_of_incoming_states) -> state` (EvoFabric's multi-input merge strategy,
                the Rust seed's `MergeStrategy`; `last_write_wins`, `first_write_wins`) resets
                the state's root. With `compile(semantics="branches")` it may also be
                `"delta"` (the default) or `"fold"`; see docs/BRANCHES.md.
            input_schema: the schema this node reads (default: its first parameter's
                annotation, else the state schema). Keys only declared here are private.
            **options: `destinations=` names where its `Command(goto=...)` may go (also read
                from a `-> Command[Literal["a", "b"]]` annotation); `metadata` is accepted
                for LangGraph compatibility. `retry_policy` and `cache_policy` are refused
                (not supported yet): `compile()` raises `GraphBuildError` naming the node.

        Returns:
            The builder, so calls chain.
        """
        if not isinstance(node, str):
            action, node = node, _callable_name(node)
        name = node
        if action is None or not callable(action):
            self._problems.append(f"Node {name!r}: expected a callable, got {action!r}.")
            return self
        if name in _RESERVED:
            self._problems.append(f"Node name {name!r} is reserved; choose another name.")
            return self
        if name in self.nodes:
            self._problems.append(f"Node {name!r} is added twice; node names must be unique.")
            return self
        if merge is not None and not callable(merge) and merge not in MERGE_NAMES:
            self._problems.append(
                f"Node {name!r}: merge= must be a callable (list_of_states) -> state, "
                f"'delta' or 'fold'; got {merge!r}."
            )
            merge = None
        self.nodes[name] = NodeSpec(
            name=name,
            fn=action,
            is_async=_is_async(action),
            takes_config=_takes_config(action),
            input=self._reader_schema(f"Node {name!r}", action, input_schema),
            defer=bool(defer),
            merge=merge,
            destinations=_destinations(action, options.pop("destinations", None)),
        )
        self._problems.extend(_unsupported_policies(name, options))
        _ignored(f"add_node({name!r})", options, keep=("metadata", *_POLICIES))
        return self

    def _reader_schema(self, who: str, fn: Callable[..., Any], declared: Any) -> SchemaInfo | None:
        """The schema a node or router reads: `declared`, else its first parameter's
        annotation; None for the state schema itself (or no schema)."""
        cls = declared if declared is not None else _first_param_annotation(fn)
        if cls is None or cls is self.state_schema or schema_kind(cls) in (None, "dict"):
            return None
        problems: list[str] = []
        info = read_schema(cls, problems=problems, private=True)
        self._problems.extend(f"{who} input schema: {p}" for p in problems)
        return info

    def add_sequence(
        self, nodes: Sequence[Callable[..., Any] | tuple[str, Callable[..., Any]]]
    ) -> StateGraph:
        """Add nodes that run one after another (no edge from START is added).

        Args:
            nodes: functions (named by `__name__`) or `(name, function)` pairs.
        """
        if not nodes:
            self._problems.append("add_sequence() needs at least one node.")
            return self
        previous: str | None = None
        for item in nodes:
            name, fn = item if isinstance(item, tuple) else (_callable_name(item), item)
            self.add_node(name, fn)
            if previous is not None:
                self.add_edge(previous, name)
            previous = name
        return self

    # --- edges -----------------------------------------------------------------------------

    def add_edge(
        self,
        start_key: str | Sequence[str],
        end_key: str,
        *,
        state_filter: Callable[[Any], Any] | None = None,
    ) -> StateGraph:
        """Add a plain edge `a -> b`, or a waiting edge `[a, b] -> c`.

        Args:
            start_key: the source, or a list of sources that must all run first.
            end_key: the target.
            state_filter: EvoFabric's edge filter: `(state) -> state` the target starts
                from; its result resets the state's root.
        """
        if isinstance(start_key, str):
            self.edges.append((start_key, end_key))
            if state_filter is not None:
                if not callable(state_filter):
                    self._problems.append(
                        f"Edge {start_key!r} -> {end_key!r}: state_filter must be callable."
                    )
                else:
                    self.filters[(start_key, end_key)] = state_filter
            return self
        sources = tuple(start_key)
        if not sources:
            self._problems.append(f"Waiting edge to {end_key!r} has no sources.")
        elif len(sources) == 1 and state_filter is not None:
            return self.add_edge(sources[0], end_key, state_filter=state_filter)
        if state_filter is not None:
            self._problems.append(
                f"Waiting edge {list(sources)} -> {end_key!r}: state_filter works on plain edges."
            )
        self.waiting.append(WaitingEdge(sources, end_key))
        return self

    def add_conditional_edges(
        self,
        source: str,
        path: Callable[..., Any],
        path_map: Mapping[Hashable, str] | Sequence[str] | None = None,
    ) -> StateGraph:
        """After `source` runs, `path(state)` chooses what runs next.

        The router sees the state at the start of the step plus only `source`'s own writes.
        It returns a node name, `END`, a `Send`, or a list of them; with `path_map` (a dict,
        or a list of names) its return values are looked up there (a missing one is an
        error). Without one, a `-> Literal["a", "b"]` return annotation serves as the map;
        a string `path_map` is not a map (LangGraph ignores it), so it is treated as none.
        """
        if not callable(path):
            self._problems.append(f"Conditional edge from {source!r}: router is not callable.")
            return self
        mapping: dict[Hashable, str] | None
        if path_map is None or isinstance(path_map, str):  # LangGraph ignores a str map too
            mapping = _literal_targets(path)
        elif isinstance(path_map, Mapping):
            mapping = dict(path_map)
        else:
            mapping = {name: name for name in path_map}
        reads = self._reader_schema(f"Router {_callable_name(path)!r} after {source!r}", path, None)
        self.branches.append(
            Branch(source, path, mapping, _is_async(path), _takes_config(path), reads)
        )
        return self

    def set_entry_point(self, key: str) -> StateGraph:
        """Same as `add_edge(START, key)`."""
        return self.add_edge(START, key)

    def set_finish_point(self, key: str) -> StateGraph:
        """Same as `add_edge(key, END)`."""
        return self.add_edge(key, END)

    def set_conditional_entry_point(
        self, path: Callable[..., Any], path_map: Any = None
    ) -> StateGraph:
        """Same as `add_conditional_edges(START, path, path_map)`."""
        return self.add_conditional_edges(START, path, path_map)

    # --- compile ---------------------------------------------------------------------------

    def validate(
        self,
        interrupt_before: Sequence[str] = (),
        interrupt_after: Sequence[str] = (),
        extra: Sequence[str] = (),
    ) -> GraphSpec:
        """Check the whole graph and return its frozen spec, or raise `GraphBuildError`."""
        problems = [*self._problems, *extra]
        state = read_schema(
            self.state_schema,
            reducers=self.reducers,
            ephemeral=self.ephemeral,
            problems=problems,
        )
        input_info = self._side_schema(self.input_schema, state, problems)
        output_info = self._side_schema(self.output_schema, state, problems)
        readers = [*self.nodes.values(), *self.branches]
        fields = _all_fields(state, input_info, output_info, readers)
        problems.extend(self._edge_problems())
        for which, names in (
            ("interrupt_before", interrupt_before),
            ("interrupt_after", interrupt_after),
        ):
            for name in names:
                if name != "*" and name not in self.nodes:
                    problems.append(f"{which} names unknown node {name!r}.")
        if problems:
            raise GraphBuildError(problems)
        spec = self._spec(state, input_info, output_info, fields)
        object.__setattr__(spec, "interrupt_before", _expand(interrupt_before, self.nodes))
        object.__setattr__(spec, "interrupt_after", _expand(interrupt_after, self.nodes))
        for name in _unreachable(spec):
            warnings.warn(
                f"Node {name!r} cannot be reached by any edge from START (only a "
                "Command(goto=...) could run it).",
                UserWarning,
                stacklevel=3,
            )
        return spec

    def compile(
        self,
        checkpointer: Any = None,
        *,
        interrupt_before: Sequence[str] = (),
        interrupt_after: Sequence[str] = (),
        debug: bool = False,
        name: str | None = None,
        semantics: str = "supersteps",
        end_merge: Callable[[list[Any]], Any] | str = "delta",
        **options: Any,
    ) -> Any:
        """Check the graph and return a runnable `CompiledStateGraph`.

        Args:
            checkpointer: a saver (`MemorySaver()`, `SqliteSaver(path)`) to keep threads.
            interrupt_before, interrupt_after: node names (or `"*"`) to pause at.
            semantics: `"supersteps"` (LangGraph's, the default) or `"branches"`: each
                parallel branch carries its own copy of the state until a join merges it
                (EvoFabric's and the Rust seed's model; docs/BRANCHES.md gives the rules).
            end_merge: with `"branches"`, how END merges the lineages that reach it:
                `"delta"` (default), `"fold"`, or a strategy `(list_of_states) -> state`.
            name: the graph's name, shown in its repr.

        Raises:
            GraphBuildError: listing every problem (unknown nodes, no edge from START,
                duplicate names, unknown reducer names, bad reducers, ...).
        """
        _ignored("compile()", options, keep=("store", "cache"))
        extra = []
        if semantics not in SEMANTICS:
            extra.append(f"compile(semantics={semantics!r}): expected one of {list(SEMANTICS)}.")
        if not callable(end_merge) and end_merge not in MERGE_NAMES:
            extra.append(
                f"compile(end_merge={end_merge!r}): expected 'delta', 'fold' or a callable "
                "(list_of_states) -> state."
            )
        spec = self.validate(interrupt_before, interrupt_after, extra)
        object.__setattr__(spec, "semantics", semantics)
        object.__setattr__(spec, "end_merge", end_merge)
        from nbgraph.engine.app import CompiledStateGraph  # the engine builds on this module

        return CompiledStateGraph(spec, checkpointer=checkpointer, name=name or "StateGraph")

    def draw(self) -> Any:
        """The graph as it stands, as a `graphviz.Digraph` — even before it compiles.

        Edges to nodes that do not exist yet are drawn to a red "unknown" box.
        """
        from nbgraph.views.dot import graph_dot  # drawings read the spec; they never run it

        problems: list[str] = []
        state = read_schema(
            self.state_schema, reducers=self.reducers, ephemeral=self.ephemeral, problems=problems
        )
        return graph_dot(self._spec(state, state, state, dict(state.fields)))

    def _repr_mimebundle_(
        self, include: Any = None, exclude: Any = None, **kwargs: Any
    ) -> dict[str, Any]:
        from nbgraph.views.display import drawing_bundle

        return drawing_bundle(self.draw(), repr(self), include, exclude)

    def _side_schema(self, cls: Any, state: SchemaInfo, problems: list[str]) -> SchemaInfo:
        if cls is self.state_schema:
            return state
        return read_schema(cls, problems=problems)

    def _edge_problems(self) -> list[str]:
        problems: list[str] = []
        known = set(self.nodes)

        def check(name: str, role: str, where: str) -> None:
            if role == "source" and name == END:
                problems.append(f"{where}: END cannot be the source of an edge.")
            elif role == "target" and name == START:
                problems.append(f"{where}: START cannot be the target of an edge.")
            elif name not in known and name not in _RESERVED:
                hint = f" (known nodes: {', '.join(sorted(known))})" if known else ""
                problems.append(f"{where}: unknown node {name!r}{hint}.")

        for source, target in self.edges:
            where = f"Edge {source!r} -> {target!r}"
            check(source, "source", where)
            check(target, "target", where)
        for edge in self.waiting:
            where = f"Waiting edge {list(edge.sources)} -> {edge.target!r}"
            for source in edge.sources:
                if source == START:
                    problems.append(f"{where}: START cannot be waited on.")
                else:
                    check(source, "source", where)
            check(edge.target, "target", where)
        for branch in self.branches:
            where = f"Conditional edge from {branch.source!r}"
            check(branch.source, "source", where)
            for target in (branch.path_map or {}).values():
                check(target, "target", f"{where} (path_map)")
        has_start = any(s == START for s, _ in self.edges) or any(
            b.source == START for b in self.branches
        )
        if not has_start:
            problems.append(
                "No edge from START: add one, e.g. add_edge(START, "
                f"{next(iter(self.nodes), 'first_node')!r})."
            )
        return problems

    def _spec(
        self,
        state: SchemaInfo,
        input_info: SchemaInfo,
        output_info: SchemaInfo,
        fields: dict[str, FieldSpec],
    ) -> GraphSpec:
        edges: dict[str, list[str]] = {}
        for source, target in self.edges:
            targets = edges.setdefault(source, [])
            if target not in targets:
                targets.append(target)
        branches: dict[str, list[Branch]] = {}
        for branch in self.branches:
            branches.setdefault(branch.source, []).append(branch)
        waits_by_source: dict[str, list[int]] = {}
        for index, edge in enumerate(self.waiting):
            for source in edge.sources:
                waits_by_source.setdefault(source, []).append(index)
        return GraphSpec(
            state=state,
            input=input_info,
            output=output_info,
            fields=fields,
            nodes=dict(self.nodes),
            edges={k: tuple(v) for k, v in edges.items()},
            waiting=tuple(self.waiting),
            branches={k: tuple(v) for k, v in branches.items()},
            filters=dict(self.filters),
            state_merger=self.state_merger,
            open_schema=state.kind == "dict",
            waits_by_source={k: tuple(v) for k, v in waits_by_source.items()},
        )


# --- helpers ---------------------------------------------------------------------------------


def _all_fields(
    state: SchemaInfo,
    input_info: SchemaInfo,
    output_info: SchemaInfo,
    readers: Iterable[NodeSpec | Branch],
) -> dict[str, FieldSpec]:
    fields = dict(state.fields)
    for info in (input_info, output_info):
        for name, spec in info.fields.items():
            fields.setdefault(name, spec)
    for reader in readers:
        if reader.input is not None:
            for name, spec in reader.input.fields.items():
                fields.setdefault(name, spec)
    return fields


def _expand(names: Sequence[str], nodes: Mapping[str, NodeSpec]) -> tuple[str, ...]:
    if "*" in names:
        return tuple(nodes)
    return tuple(names)


def _unreachable(spec: GraphSpec) -> list[str]:
    """Nodes no path from START can reach (skipped if a router's targets are unknown)."""
    open_ended = any(b.path_map is None for bs in spec.branches.values() for b in bs)
    if open_ended or any(n.destinations == () for n in spec.nodes.values()):
        return []
    reached, frontier = {START}, [START]
    while frontier:
        current = frontier.pop()
        nexts = list(spec.edges.get(current, ()))
        nexts += [t for b in spec.branches.get(current, ()) for t in (b.path_map or {}).values()]
        nexts += [w.target for w in spec.waiting if set(w.sources) <= reached]
        node = spec.nodes.get(current)
        nexts += list(node.destinations or ()) if node is not None else []
        for target in nexts:
            if target not in reached:
                reached.add(target)
                frontier.append(target)
    return [name for name in spec.nodes if name not in reached]


_POLICIES = {
    "retry_policy": "retry it when it raises",
    "retry": "retry it when it raises",
    "cache_policy": "reuse its cached results",
}


def _unsupported_policies(node: str, options: Mapping[str, Any]) -> list[str]:
    """A problem for each retry or cache policy given to `node`: nbgraph would run the node
    without it, and a program that counts on it would silently behave differently."""
    return [
        f"Node {node!r}: {key}={options[key]!r} is not supported yet (nbgraph cannot "
        f"{what}); remove it, or run this graph on LangGraph."
        for key, what in _POLICIES.items()
        if options.get(key) is not None
    ]


def _ignored(where: str, options: Mapping[str, Any], keep: tuple[str, ...]) -> None:
    """Warn about LangGraph options nbgraph accepts but does not act on."""
    ignored = sorted(k for k, v in options.items() if k not in keep and v is not None)
    if ignored:
        warnings.warn(
            f"{where}: nbgraph does not support {', '.join(ignored)} yet; ignored.",
            UserWarning,
            stacklevel=3,
        )


def _callable_name(fn: Any) -> str:
    return getattr(fn, "name", None) or getattr(fn, "__name__", None) or type(fn).__name__


def _name_of(cls: Any) -> str:
    return getattr(cls, "__name__", repr(cls))


def _is_async(fn: Any) -> bool:
    if inspect.iscoroutinefunction(fn):
        return True
    call = inspect.getattr_static(type(fn), "__call__", None)
    return call is not None and inspect.iscoroutinefunction(call)


def _parameters(fn: Any) -> list[inspect.Parameter]:
    try:
        return list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return []


def _takes_config(fn: Any) -> bool:
    return any(p.name == "config" for p in _parameters(fn))


def _first_param_annotation(fn: Any) -> Any:
    params = _parameters(fn)
    if not params or params[0].annotation is inspect.Parameter.empty:
        return None
    annotation = params[0].annotation
    if isinstance(annotation, str):
        try:
            hints = typing.get_type_hints(fn)
        except Exception:
            return None
        annotation = hints.get(params[0].name)
    return annotation if isinstance(annotation, type) else None


def _destinations(fn: Any, declared: Any) -> tuple[str, ...] | None:
    """Where a node's Commands may go: `destinations=`, or `-> Command[Literal[...]]`.

    None: the node declares no Command; `()`: it returns Commands to unknown places.
    """
    if declared is not None:
        return tuple(declared)
    try:
        returned = typing.get_type_hints(fn).get("return")
    except Exception:
        return None
    if returned is None or getattr(get_origin(returned) or returned, "__name__", "") != "Command":
        return None
    args = get_args(returned)
    if args and get_origin(args[0]) is Literal:
        return tuple(str(a) for a in get_args(args[0]))
    return ()


def _literal_targets(router: Any) -> dict[Hashable, str] | None:
    """A path map read from a router's `-> Literal["a", "b"]` annotation, if it has one."""
    try:
        hints = typing.get_type_hints(router)
    except Exception:
        return None
    returned = hints.get("return")
    if get_origin(returned) is Literal:
        return {value: value for value in get_args(returned) if isinstance(value, str)}
    return None
