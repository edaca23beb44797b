"""The checks `compile()` runs on a builder's collected parts, and the options nbgraph accepts
but does not act on: each returns problems (or warns) for `GraphBuildError` to list.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from nbgraph.blueprint.spec import Branch, GraphSpec, NodeSpec
from nbgraph.primitives import END, START
from nbgraph.schema import FieldSpec, SchemaInfo

if TYPE_CHECKING:
    from nbgraph.blueprint.builder import GraphBuilder

__all__ = [
    "MERGE_NAMES",
    "RESERVED",
    "all_fields",
    "compile_problems",
    "edge_problems",
    "expand",
    "ignored",
    "unreachable",
]

RESERVED = (START, END)
_SEMANTICS = ("supersteps", "branches")
MERGE_NAMES = ("delta", "fold")


def edge_problems(builder: GraphBuilder) -> list[str]:
    """What is wrong with the builder's edges: unknown nodes, START or END misused, no START."""
    problems: list[str] = []
    known = set(builder.nodes)

    def check(name: str, role: str, where: str) -> None:
        if role == "source" and name == END:
            problems.append(f"{where}: END cannot be the source of an edge.")
        elif role == "target" and name == START:
            problems.append(f"{where}: START cannot be the target of an edge.")
        elif name not in known and name not in RESERVED:
            hint = f" (known nodes: {', '.join(sorted(known))})" if known else ""
            problems.append(f"{where}: unknown node {name!r}{hint}.")

    for source, target in builder.edges:
        where = f"Edge {source!r} -> {target!r}"
        check(source, "source", where)
        check(target, "target", where)
    for edge in builder.waiting:
        where = f"Waiting edge {list(edge.sources)} -> {edge.target!r}"
        for source in edge.sources:
            if source == START:
                problems.append(f"{where}: START cannot be waited on.")
            else:
                check(source, "source", where)
        check(edge.target, "target", where)
    for branch in builder.branches:
        where = f"Conditional edge from {branch.source!r}"
        check(branch.source, "source", where)
        for target in (branch.path_map or {}).values():
            check(target, "target", f"{where} (path_map)")
    has_start = any(s == START for s, _ in builder.edges) or any(
        b.source == START for b in builder.branches
    )
    if not has_start:
        problems.append(
            "No edge from START: add one, e.g. add_edge(START, "
            f"{next(iter(builder.nodes), 'first_node')!r})."
        )
    return problems


def all_fields(
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


def expand(names: Sequence[str], nodes: Mapping[str, NodeSpec]) -> tuple[str, ...]:
    if "*" in names:
        return tuple(nodes)
    return tuple(names)


def unreachable(spec: GraphSpec) -> list[str]:
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


def ignored(where: str, options: Mapping[str, Any], keep: tuple[str, ...]) -> None:
    """Warn about LangGraph options nbgraph accepts but does not act on."""
    ignored = sorted(k for k, v in options.items() if k not in keep and v is not None)
    if ignored:
        warnings.warn(
            f"{where}: nbgraph does not support {', '.join(ignored)} yet; ignored.",
            UserWarning,
            stacklevel=3,
        )


def compile_problems(semantics: str, end_merge: Any) -> list[str]:
    """What is wrong with `compile()`'s `semantics=` and `end_merge=`."""
    problems = []
    if semantics not in _SEMANTICS:
        problems.append(f"compile(semantics={semantics!r}): expected one of {list(_SEMANTICS)}.")
    if not callable(end_merge) and end_merge not in MERGE_NAMES:
        problems.append(
            f"compile(end_merge={end_merge!r}): expected 'delta', 'fold' or a callable "
            "(list_of_states) -> state."
        )
    return problems
