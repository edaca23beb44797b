"""Subgraphs in a graph drawing: a node that runs a graph drawn as a cluster holding that
graph's own drawing, with its subruns' counts over it (what ran inside, how often).

The graph a node runs is the compiled graph added as the node (`add_node("name", app)`
keeps it as the node function's `app`), or, in a run's drawing, the graph its tasks' subruns
ran (a node function that invokes a graph itself). The counts of all the subruns a node's
tasks started are summed; nested subgraphs are drawn the same way, one cluster inside the
other.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from nbgraph.graph.subgraphs import is_compiled_graph
from nbgraph.types import START
from nbgraph.views.dot import FADED, PAUSED_INK, Overlay, label

_NOTHING = "\x00"
"""A focus no node has: a faded node's cluster is drawn with everything in it faded."""


def subgraph_spec(node: Any) -> Any:
    """The spec of the compiled graph a node runs (added as the node), else None."""
    app = getattr(node.fn, "app", None)
    return app.spec if is_compiled_graph(app) else None


def subrun_overlays(run: Any, overlay_of: Any) -> dict[str, tuple[Any, Overlay]]:
    """Node name -> (the graph its tasks ran, the summed overlay of those subruns).

    `overlay_of(sub)` gives one subrun's overlay (with its own `subgraphs`, for nesting).
    """
    nodes = {task.id: task.node for task in run.log.tasks()}
    found: dict[str, tuple[Any, Overlay]] = {}
    for sub in run.subruns:
        name = nodes.get(sub.task)
        if name is None:
            continue
        one = overlay_of(sub)
        if name in found:
            spec, total = found[name]
            found[name] = (spec, summed(total, one))
        else:
            found[name] = (sub.graph, summed(Overlay(), one))
    return found


def summed(a: Overlay, b: Overlay) -> Overlay:
    """The counts of two runs of one graph added up (failures, pauses and commands handed
    to the parent of either)."""
    total = Overlay(
        failed={**a.failed, **b.failed},
        paused=a.paused | b.paused,
        handed={**a.handed, **b.handed},
    )
    for mine, theirs, into in (
        (a.runs, b.runs, total.runs),
        (a.edges, b.edges, total.edges),
        (a.sends, b.sends, total.sends),
    ):
        for key in {*mine, *theirs}:
            into[key] = mine.get(key, 0) + theirs.get(key, 0)
    total.subgraphs = dict(a.subgraphs)
    for name, (spec, inner) in b.subgraphs.items():
        before = total.subgraphs.get(name)
        total.subgraphs[name] = (spec, summed(before[1], inner) if before else inner)
    return total


def draw_cluster(dot: Any, ids: Any, name: str, node: Any, overlay: Overlay | None) -> bool:
    """Draw node `name` as a cluster holding the graph it runs; False if it runs none.

    The node's own box stays (the parent's edges meet it), with a dotted line to the
    subgraph's START; inside, the subgraph's nodes with its subruns' counts (with an
    overlay: a subgraph none of whose runs were recorded is drawn as not run). When the
    drawing highlights a step or a branch that leaves the node out, its inside is faded too.
    """
    from nbgraph.views.dot import draw_body, draw_node

    ran = overlay.subgraphs.get(name) if overlay is not None else None
    spec = ran[0] if ran is not None else subgraph_spec(node)
    if spec is None:
        return False
    inner = ran[1] if ran is not None else (Overlay() if overlay is not None else None)
    faded = inner is not None and bool(overlay.focus) and name not in overlay.focus
    if faded:
        inner = dataclasses.replace(inner, focus={_NOTHING}, focus_edges=set())
    inner_ids = ids.nested(f"{ids(name)}_")
    with dot.subgraph(name=f"cluster_{ids(name)}") as cluster:
        title = f"subgraph {name}"
        if inner is not None:
            runs = sum(count for node_name, count in inner.runs.items() if node_name != START)
            title += f" — {runs} task{'s' * (runs != 1)} inside"
        cluster.attr(label=label(title), style="rounded,dashed", color=PAUSED_INK, fontsize="10")
        draw_node(cluster, ids, name, node, overlay)
        draw_body(cluster, inner_ids, spec, inner, expand=True)
        link = {"color": FADED} if faded else {}
        cluster.edge(ids(name), inner_ids(START), style="dotted", arrowhead="none", **link)
    return True
