"""A compiled graph's structure as LangGraph's `get_graph()` gives it: its nodes and edges.

The nodes are `__start__`, each node and `__end__`; each edge has `source`, `target`, `data` (a
path map's label when it differs from the target) and `conditional`.

The edges are the ones LangGraph's drawing finds: those from nodes a run can reach from
START; a router's edges when its targets are known (a path map, or `-> Literal[...]`); an
edge to END for every node with no edge out (an `add_edge(node, END)` beside other edges
of that node is not drawn, as in LangGraph).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from nbgraph.blueprint.spec import GraphSpec
from nbgraph.blueprint.subgraphs import graph_of_node
from nbgraph.primitives import END, START

__all__ = ["Edge", "Node", "drawable_parts"]


class Node(NamedTuple):
    """A node of the drawable graph (langchain_core's `Node` fields)."""

    id: str
    name: str
    data: Any
    metadata: dict[str, Any] | None


class Edge(NamedTuple):
    """An edge of the drawable graph (langchain_core's `Edge` fields)."""

    source: str
    target: str
    data: str | None = None
    conditional: bool = False


def drawable_parts(spec: GraphSpec, xray: int | bool = False) -> tuple[dict[str, Node], list[Edge]]:
    """The nodes (by id, in the order LangGraph lists them) and the edges of `spec`; with
    `xray` (True: every level, a number: that many levels) each subgraph node is replaced
    by its graph's nodes, named `node:inner` as LangGraph names them."""
    nodes, edges = _own_parts(spec)
    depth = xray if type(xray) is int else (-1 if xray else 0)
    for name in list(nodes) if depth else ():
        inner = graph_of_node(spec, name)
        if inner is not None:
            _expand(
                nodes, edges, name, drawable_parts(inner.spec, depth - 1 if depth > 0 else True)
            )
    return nodes, edges


def _expand(
    nodes: dict[str, Node], edges: list[Edge], name: str, inner: tuple[dict, list[Edge]]
) -> None:
    """Replace node `name` by the drawable graph `inner`, as LangGraph's xray does: its
    START dropped when one edge leaves it, its END when one edge enters it; edges into
    `name` go to the first node left, edges out of it leave from the last."""
    inner_nodes, inner_edges = dict(inner[0]), list(inner[1])
    first = _trimmed(inner_nodes, inner_edges, START, 0)
    last = _trimmed(inner_nodes, inner_edges, END, 1)
    del nodes[name]
    replaced: list[Edge] = []
    for edge in edges:
        if edge.target == name:
            replaced.append(edge._replace(target=f"{name}:{first}"))
        elif edge.source == name:
            replaced.append(edge._replace(source=f"{name}:{last}"))
        else:
            replaced.append(edge)
    for key, node in inner_nodes.items():
        nodes[f"{name}:{key}"] = node._replace(id=f"{name}:{key}")
    replaced += [
        e._replace(source=f"{name}:{e.source}", target=f"{name}:{e.target}") for e in inner_edges
    ]
    edges[:] = replaced


def _trimmed(nodes: dict[str, Node], edges: list[Edge], end: str, side: int) -> str:
    """Drop `end` (START: side 0, END: side 1) when exactly one edge touches it, and name
    the node it joined; else keep it and name it."""
    touching = [e for e in edges if e[side] == end]
    if len(touching) != 1:
        return end
    edges.remove(touching[0])
    nodes.pop(end, None)
    return touching[0][1 - side]


def _own_parts(spec: GraphSpec) -> tuple[dict[str, Node], list[Edge]]:
    """The nodes and edges of `spec` itself, its subgraphs as single nodes."""
    nodes = {START: Node(START, START, None, None)}
    for name, node in spec.nodes.items():
        nodes[name] = Node(name, name, node.fn, _metadata(spec, name) or None)
    found = _reachable_edges(spec)
    edges: list[Edge] = []
    for source, target, conditional, label in sorted(found, key=_order):
        data = label if label != target else None
        _add(nodes, edges, Edge(source, target, data, conditional))
    targets = {e[1] for e in found if e[1] != END}
    for source in sorted(targets - {e[0] for e in found}):
        _add(nodes, edges, Edge(source, END))
    return nodes, edges


def _order(edge: tuple[str, str, bool, str | None]) -> tuple[str, str, bool, str]:
    return edge[0], edge[1], edge[2], edge[3] or ""


def _add(nodes: dict[str, Node], edges: list[Edge], edge: Edge) -> None:
    """Add `edge` unless the pair is there already; END joins the nodes with its first edge."""
    if any(e.source == edge.source and e.target == edge.target for e in edges):
        return
    if edge.target == END and END not in nodes:
        nodes[END] = Node(END, END, None, None)
    edges.append(edge)


def _metadata(spec: GraphSpec, name: str) -> dict[str, Any]:
    """What LangGraph's drawing notes on a node: its `metadata=`, defer, interrupts, a tool
    node's tools."""
    node = spec.nodes[name]
    metadata: dict[str, Any] = dict(node.metadata or {})
    if node.defer:
        metadata["defer"] = True
    before, after = name in spec.interrupt_before, name in spec.interrupt_after
    if before or after:
        metadata["__interrupt"] = ",".join(
            w for w, on in (("before", before), ("after", after)) if on
        )
    tools = getattr(node.fn, "tools_by_name", None)
    if isinstance(tools, Mapping) and tools:
        metadata["__tools"] = list(tools)
    return metadata


def _outgoing(spec: GraphSpec, source: str) -> list[tuple[str, str, bool, str | None]]:
    """The edges out of `source` a drawing can know: static, waiting, routers with known
    targets, and a node's declared Command destinations."""
    out = [(source, t, False, None) for t in spec.edges.get(source, ()) if t != END]
    out += [(source, w.target, False, None) for w in spec.waiting if source in w.sources]
    for branch in spec.branches.get(source, ()):
        for key, target in (branch.path_map or {}).items():
            out.append((source, target, True, str(key)))
    node = spec.nodes.get(source)
    for target in (node.destinations or ()) if node is not None else ():
        out.append((source, target, True, None))
    return out


def _reachable_edges(spec: GraphSpec) -> set[tuple[str, str, bool, str | None]]:
    """The edges out of every node a run can reach from START (a waiting edge's target is
    reached once all its sources are)."""
    reached, todo, found = {START}, [START], set()
    while todo:
        source = todo.pop()
        for edge in _outgoing(spec, source):
            found.add(edge)
            target = edge[1]
            if target == END or target in reached:
                continue
            if not edge[2] and not _joined(spec, source, target, reached):
                continue
            reached.add(target)
            todo.append(target)
    return {e for e in found if e[0] in reached and (e[1] in reached or e[1] == END)}


def _joined(spec: GraphSpec, source: str, target: str, reached: set[str]) -> bool:
    """Whether `target` runs after `source`: a plain edge, or a join all of whose sources
    are reached."""
    if target in spec.edges.get(source, ()):
        return True
    return any(
        w.target == target and source in w.sources and all(s in reached for s in w.sources)
        for w in spec.waiting
    )
