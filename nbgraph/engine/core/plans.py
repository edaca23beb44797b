"""Per-node plans: what running a node takes, worked out once per compiled graph.

A `NodePlan` holds, for one node, what the one task-execution path (`TaskRunner.execute`)
would otherwise ask at every task: the function and the parameters it wants filled
(`injections`), its routers and theirs, whether it is handed the engine's values as a
`StateView` directly, and whether its outgoing edges are plain (no filter, waiting edge,
defer or merge at their targets), so committing its step only queues the targets. Plans
are made the first time a node runs and kept per compiled graph (in the spec's
`__dict__`, as its `cached_property`s are), so they live as long as the graph.
"""

from __future__ import annotations

from typing import Any

from nbgraph.engine.core.node_context.injection import injections
from nbgraph.engine.core.root_state import bare_field, shown_keys
from nbgraph.engine.core.tasks import VIEWED
from nbgraph.primitives import END
from nbgraph.schema import FieldSpec

__all__ = ["NO_RESET", "NodePlan", "RouterPlan", "plans_of"]

NO_RESET = (None, "delta")
"""A node's `merge` values that take the shared state as it is (supersteps: nothing merged)."""


class RouterPlan:
    """One router after a node: its branch, its function, the parameters it wants filled,
    and whether it sees the state's schema (`viewed`: its input is a `StateView`)."""

    __slots__ = ("branch", "fn", "viewed", "wanted")

    def __init__(self, branch: Any, viewed: bool) -> None:
        self.branch, self.fn = branch, branch.router
        self.wanted = injections(branch.router)
        self.viewed = viewed and branch.input is None


class NodePlan:
    """What running one node takes (see the module's docstring).

    Attributes:
        node: the node's `NodeSpec`; `fn` its function; `wanted` its injected parameters.
        routers: a `RouterPlan` per router after it, in order.
        viewed: an edge task of it is handed `StateView(values)` (no input schema, no
            managed field, a TypedDict or dict state).
        plain: its outgoing edges are plain: committing queues `targets` and nothing else.
        targets: its edges' targets (END left out).
        is_async: the node or one of its routers is a coroutine function.
        afn, awanted: the node's async form, run instead in an async run (`NodeSpec.afn`),
            and its injected parameters; `fn` and `wanted` when it has none.
    """

    __slots__ = (
        "afn",
        "awanted",
        "fn",
        "is_async",
        "node",
        "plain",
        "routers",
        "targets",
        "viewed",
        "wanted",
    )

    def __init__(self, spec: Any, name: str, viewed: bool) -> None:
        node = self.node = spec.nodes.get(name)  # (None for START: its routers only)
        self.fn = node.fn if node is not None else None
        self.wanted = injections(node.fn) if node is not None else ()
        self.afn = node.afn if node is not None and node.afn is not None else self.fn
        self.awanted = injections(self.afn) if self.afn is not self.fn else self.wanted
        branches = tuple(spec.branches.get(name, ()))
        self.routers = tuple(RouterPlan(branch, viewed) for branch in branches)
        self.viewed = viewed and node is not None and node.input is None
        self.is_async = any(branch.is_async for branch in branches) or (
            node is not None and node.is_async
        )
        self.targets = tuple(t for t in spec.edges.get(name, ()) if t != END)
        self.plain = not spec.waits_by_source.get(name) and all(
            spec.filters.get((name, t)) is None
            and not spec.nodes[t].defer
            and spec.nodes[t].merge in NO_RESET
            for t in self.targets
        )


class _Interned(dict):
    """A dict that hands back the one object kept for each key it is asked for (up to
    `_INTERNED` keys: past them, a key is handed back as it is)."""

    def __missing__(self, key: Any) -> Any:
        if len(self) < _INTERNED:
            self[key] = key
        return key


_INTERNED = 4096
"""The most tuples a graph keeps shared (each a tuple of node or field names)."""


class _GraphPlans:
    """A compiled graph's node plans (made as its nodes first run) and the spec-wide facts
    they rest on, which every run of the graph reads as it starts.

    Attributes:
        viewed: a node of the state's schema is handed a `StateView` of the values.
        known: the fields whose writes a router's view shows, by name (of the state's
            schema, or any with an open schema).
        managed: the managed fields (`RunLoop.managed`).
        queued: the nodes a route queues without more ado (`Schedule.plain`).
        shown: the fields `"values"` and `"updates"` chunks show (`root_state.shown_keys`).
        initial: some field starts with a value of its own (`runlog.initial_values`).
        bare: the field callers see bare, or None (`root_state.bare_field`).
        shared: `shared[names]`: one tuple object per distinct tuple of node or field names,
            for every run of the graph (`Schedule.shared`): a long run, and many runs,
            record the same triggers, routes and written fields, and keep each once.
    """

    __slots__ = (
        "bare",
        "initial",
        "known",
        "managed",
        "nodes",
        "queued",
        "shared",
        "shown",
        "spec",
        "viewed",
    )

    def __init__(self, spec: Any) -> None:
        self.spec = spec
        self.managed = tuple(f for f in spec.fields.values() if f.managed)
        self.viewed = not self.managed and not spec.beyond_state and spec.state.kind in VIEWED
        self.queued = frozenset(
            name for name, node in spec.nodes.items() if not node.defer and node.merge in NO_RESET
        )
        self.shown = shown_keys(spec)
        self.bare = bare_field(spec)
        self.initial = any(f.initial is not None and not f.managed for f in spec.fields.values())
        self.shared = _Interned()
        self.nodes: dict[str, NodePlan] = {}
        names = spec.state.fields
        self.known: dict[str, FieldSpec] = {
            k: f
            for k, f in spec.fields.items()
            if f is not None and (k in names or spec.open_schema)
        }

    def of(self, name: str) -> NodePlan:
        """The plan of node `name`, made on first use."""
        plan = self.nodes.get(name)
        if plan is None:
            plan = self.nodes[name] = NodePlan(self.spec, name, self.viewed)
        return plan


def plans_of(spec: Any) -> _GraphPlans:
    """The plans of a compiled graph, made once and kept with it."""
    kept = spec.__dict__.get("_plans")
    if kept is None:
        kept = spec.__dict__["_plans"] = _GraphPlans(spec)
    return kept
