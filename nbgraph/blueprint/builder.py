"""`GraphBuilder`: the builder methods of `StateGraph` (nodes, edges, routers) and `validate()`.

Builder methods only collect; `validate()` checks everything once and raises one
`GraphBuildError` listing every problem, else returns the frozen `GraphSpec`. `compile()` and
`draw()` are the notebook layer's (`nbgraph.notebook.graph.StateGraph`), which builds on this.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import Any, Self

from nbgraph.blueprint.node_policies import NodePolicies
from nbgraph.blueprint.runnables import as_node, is_runnable, runnable_name
from nbgraph.blueprint.signatures import (
    async_form,
    callable_name,
    destinations,
    first_param_annotation,
    is_async,
    literal_targets,
    name_of,
    takes_config,
)
from nbgraph.blueprint.spec import Branch, GraphSpec, NodeSpec, WaitingEdge
from nbgraph.blueprint.subgraphs import as_subgraph_node, is_compiled_graph, subgraph_name
from nbgraph.blueprint.validate import (
    MERGE_NAMES,
    RESERVED,
    all_fields,
    edge_problems,
    expand,
    ignored,
    unreachable,
)
from nbgraph.errors import GraphBuildError, wrong_argument
from nbgraph.primitives import END, START, IsLastStep, RemainingSteps
from nbgraph.schema import FieldSpec, SchemaInfo, read_schema, schema_kind

__all__ = ["GraphBuilder"]


class GraphBuilder(NodePolicies):
    """The builder half of `nbgraph.StateGraph`: collects nodes, edges and routers, and
    `validate()` checks them into a `GraphSpec`. The notebook layer's `StateGraph` adds
    `compile()` and `draw()`; its docstring lists the arguments.
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
        self._defaults: dict[str, Any] = {}  # set_node_defaults(): retry and cache policies

    def __repr__(self) -> str:
        return f"StateGraph({name_of(self.state_schema)}, nodes={list(self.nodes)})"

    @property
    def managed(self) -> dict[str, Any]:
        """The managed fields of the graph's schemas (state, input, output, the nodes' own),
        by name: each is `RemainingSteps` or `IsLastStep`, which the engine fills in every
        step (LangGraph's `StateGraph.managed`)."""
        schemas = [self.state_schema, self.input_schema, self.output_schema]
        schemas += [node.input.cls for node in self.nodes.values() if node.input is not None]
        found: dict[str, Any] = {}
        for schema in schemas:
            if schema_kind(schema) in (None, "dict"):
                continue
            for name, field in read_schema(schema, problems=[]).fields.items():
                if field.managed:
                    found.setdefault(name, RemainingSteps if field.type is int else IsLastStep)
        return found

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
    ) -> Self:
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
                from a `-> Command[Literal["a", "b"]]` annotation); `metadata=` a dict,
                added to the node's config metadata and shown by `get_graph()` (LangGraph's).
                `retry_policy=` takes a `RetryPolicy` or a list of them (the first whose
                `retry_on` matches applies); `cache_policy=` a `CachePolicy`, used when the
                graph is compiled with `cache=`.

        Returns:
            The builder, so calls chain.
        """
        name, action = _named_action(node, action)
        if action is None or not callable(action):
            self._problems.append(f"Node {name!r}: expected a callable, got {action!r}.")
            return self
        if name in RESERVED:
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
            is_async=is_async(action),
            takes_config=takes_config(action),
            input=self._reader_schema(f"Node {name!r}", action, input_schema),
            defer=bool(defer),
            merge=merge,
            destinations=destinations(action, options.pop("destinations", None)),
            afn=async_form(action),
            metadata=self._node_metadata(name, options.pop("metadata", None)),
            **self._policies(name, options),
        )
        ignored(f"add_node({name!r})", options, keep=())
        return self

    def _node_metadata(self, name: str, metadata: Any) -> dict[str, Any] | None:
        """`add_node(metadata=...)`: a dict (copied), or None."""
        if metadata is None or isinstance(metadata, Mapping):
            return None if metadata is None else dict(metadata)
        self._problems.append(
            f"Node {name!r}: metadata= must be a dict, got {metadata!r} "
            f"(a {type(metadata).__name__})."
        )
        return None

    def _reader_schema(self, who: str, fn: Callable[..., Any], declared: Any) -> SchemaInfo | None:
        """The schema a node or router reads: `declared`, else its first parameter's
        annotation; None for the state schema itself (or no schema)."""
        cls = declared if declared is not None else first_param_annotation(fn)
        if cls is None or cls is self.state_schema or schema_kind(cls) in (None, "dict"):
            return None
        problems: list[str] = []
        info = read_schema(cls, problems=problems, private=True)
        self._problems.extend(f"{who} input schema: {p}" for p in problems)
        return info

    def add_sequence(
        self, nodes: Sequence[Callable[..., Any] | tuple[str, Callable[..., Any]]]
    ) -> Self:
        """Add nodes that run one after another (no edge from START is added).

        Args:
            nodes: functions (named by `__name__`) or `(name, function)` pairs.
        """
        if isinstance(nodes, (str, bytes)) or not isinstance(nodes, Sequence):
            raise wrong_argument(
                "add_sequence(nodes)", "a list of functions or (name, function) pairs", nodes
            )
        if not nodes:
            self._problems.append("add_sequence() needs at least one node.")
            return self
        previous: str | None = None
        for item in nodes:
            name, fn = item if isinstance(item, tuple) else (callable_name(item), item)
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
    ) -> Self:
        """Add a plain edge `a -> b`, or a waiting edge `[a, b] -> c`.

        Args:
            start_key: the source, or a list of sources that must all run first.
            end_key: the target.
            state_filter: EvoFabric's edge filter: `(state) -> state` the target starts
                from; its result resets the state's root.
        """
        if not isinstance(end_key, str):
            self._problems.append(f"Edge to {end_key!r}: the target must be a node name (a str).")
            return self
        if not isinstance(start_key, str) and (
            not isinstance(start_key, Sequence) or not all(isinstance(s, str) for s in start_key)
        ):
            self._problems.append(
                f"Edge {start_key!r} -> {end_key!r}: the source must be a node name (a str) or "
                "a list of node names."
            )
            return self
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
    ) -> Self:
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
            mapping = literal_targets(path)
        elif isinstance(path_map, Mapping):
            mapping = dict(path_map)
        elif not isinstance(path_map, (list, tuple, set, frozenset)):
            raise wrong_argument(
                f"add_conditional_edges({source!r}, path, path_map=)",
                "a dict of return values to node names, a list of node names, or None",
                path_map,
            )
        else:
            mapping = {name: name for name in path_map}
        reads = self._reader_schema(f"Router {callable_name(path)!r} after {source!r}", path, None)
        self.branches.append(
            Branch(source, path, mapping, is_async(path), takes_config(path), reads)
        )
        return self

    def set_entry_point(self, key: str) -> Self:
        """Same as `add_edge(START, key)`."""
        return self.add_edge(START, key)

    def set_finish_point(self, key: str) -> Self:
        """Same as `add_edge(key, END)`."""
        return self.add_edge(key, END)

    def set_conditional_entry_point(self, path: Callable[..., Any], path_map: Any = None) -> Self:
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
        fields = all_fields(state, input_info, output_info, readers)
        problems.extend(edge_problems(self))
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
        object.__setattr__(spec, "interrupt_before", expand(interrupt_before, self.nodes))
        object.__setattr__(spec, "interrupt_after", expand(interrupt_after, self.nodes))
        for name in unreachable(spec):
            warnings.warn(
                f"Node {name!r} cannot be reached by any edge from START (only a "
                "Command(goto=...) could run it).",
                UserWarning,
                stacklevel=3,
            )
        return spec

    def _side_schema(self, cls: Any, state: SchemaInfo, problems: list[str]) -> SchemaInfo:
        if cls is self.state_schema:
            return state
        return read_schema(cls, problems=problems)

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
        return GraphSpec(
            state=state,
            input=input_info,
            output=output_info,
            fields=fields,
            nodes={name: self._with_defaults(node) for name, node in self.nodes.items()},
            edges={k: tuple(v) for k, v in edges.items()},
            waiting=tuple(self.waiting),
            branches={k: tuple(v) for k, v in branches.items()},
            filters=dict(self.filters),
            state_merger=self.state_merger,
            open_schema=state.kind == "dict",
        )


def _named_action(node: Any, action: Any) -> tuple[str, Any]:
    """`add_node`'s name and node function: a node added without a name is named as
    LangGraph names it; a compiled graph runs through its `invoke(state)` (a subgraph), a
    langchain Runnable through its `invoke(state, config)`."""
    if not isinstance(node, str):
        action = node
        if is_compiled_graph(action):
            node = subgraph_name(action)
        else:
            node = runnable_name(action) if is_runnable(action) else callable_name(action)
    if is_compiled_graph(action):
        return node, as_subgraph_node(action)
    return node, as_node(action) if is_runnable(action) else action
