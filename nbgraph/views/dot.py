"""Drawing a graph (and a run over it) as a `graphviz.Digraph`, from small pure functions.

Nothing here renders or displays: `views.render` turns a Digraph into SVG. Every label that
comes from a node name or a state value goes through `label()`, which escapes it.

A node that runs a graph is drawn as a cluster holding that graph's own drawing, with its
subruns' counts over it (`Overlay.subgraphs`: what ran inside, how often). The graph a node
runs is the compiled graph added as the node (`add_node("name", app)` keeps it as the node
function's `app`), or, in a run's drawing, the graph its tasks' subruns ran (a node function
that invokes a graph itself); nested subgraphs are drawn the same way, one cluster inside the
other.
"""

from __future__ import annotations

import dataclasses
import html
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from nbgraph.blueprint import GraphSpec
from nbgraph.blueprint.subgraphs import is_compiled_graph
from nbgraph.primitives import END, MISSING, START
from nbgraph.record.text import safe_str, visible
from nbgraph.record.text import short as text_of
from nbgraph.views.display import drawing
from nbgraph.views.overlay import Overlay, ends_implicitly
from nbgraph.views.theme import FADED_INK as FADED
from nbgraph.views.theme import INK

if TYPE_CHECKING:
    import graphviz

__all__ = [
    "FADED",
    "FADED_FILL",
    "FADED_TEXT",
    "FAILED_FILL",
    "FAILED_INK",
    "HIGHLIGHT_FILL",
    "HIGHLIGHT_INK",
    "INK",
    "PAUSED_FILL",
    "PAUSED_INK",
    "RAN_FILL",
    "TERMINAL_FILL",
    "drawing",
    "graph_dot",
    "label",
    "short",
]

# Six-digit colours only: graphviz rejects the three-digit form. (INK and FADED, the two a
# drawing's SVG has recoloured for the theme, are `views.theme`'s.)
FADED_TEXT = "#707070"  # a faded node's label: mid grey on its light box, on any theme
FADED_FILL = "#f4f4f4"
RAN_FILL = "#d9ead3"
FAILED_FILL = "#f4cccc"
FAILED_INK = "#990000"
HIGHLIGHT_FILL = "#fff2cc"
PAUSED_FILL = "#cfe2f3"
PAUSED_INK = "#0b5394"
HIGHLIGHT_INK = "#b45f06"
_IDLE_FILL = "#ffffff"
TERMINAL_FILL = "#444444"


def label(*lines: Any) -> Any:
    """A DOT label of escaped lines: state text never becomes markup or an escape sequence.

    >>> str(label("a<b>", 'say "hi"\\\\'))
    'a<b>\\\\nsay "hi"\\\\\\\\'
    """
    import graphviz

    text = "\\n".join(graphviz.escape(visible(str(line))) for line in lines)
    return graphviz.nohtml(text)


def short(value: Any, width: int = 40) -> str:
    """A one-line, bounded text form of a value for a label (never raises: a value whose
    repr fails shows as a placeholder; see `nbgraph.record.text`)."""
    return text_of(value, width)


_CAPTION_WIDTH = 90
"""A caption line's longest: a long caption wraps, it never widens the drawing."""

_FAN_OUT = 12
"""A node with more ways out than this has its targets staggered over several ranks."""


def wrapped(text: str, width: int = _CAPTION_WIDTH) -> list[str]:
    """`text` as lines: one per " — " part, a part longer than `width` broken at spaces.

    >>> wrapped("run done: 3 supersteps — showing step 2")
    ['run done: 3 supersteps', '— showing step 2']
    """
    import textwrap

    parts = text.split(" — ")
    lines = [("— " if i else "") + part for i, part in enumerate(parts)]
    return [w for line in lines for w in (textwrap.wrap(line, width) or [""])]


class _Ids:
    """Synthetic DOT ids, so a node name is only ever a label (names may hold ':' or '"')."""

    def __init__(self, prefix: str = "") -> None:
        self.ids: dict[str, str] = {}
        self.prefix = prefix
        self.alias: dict[str, str] = {}  # a folded node -> its summary box (`_summarised`)
        self.folded: set[tuple[str, str]] = set()  # the summary boxes' ways, drawn once

    def __call__(self, name: str) -> str:
        if name not in self.ids:
            self.ids[name] = f"{self.prefix}n{len(self.ids)}"
        return self.ids[name]

    def nested(self, prefix: str) -> _Ids:
        """Ids for a graph drawn inside this one (a subgraph's cluster): behind `prefix`,
        which should start with one of this drawing's ids so that it is unique."""
        return _Ids(prefix)


def graph_dot(
    spec: GraphSpec,
    overlay: Overlay | None = None,
    title: str = "",
    expand: bool = True,
    caption: bool = True,
) -> graphviz.Digraph:
    """The graph: START, END, nodes, plain, waiting, conditional and Command edges.

    With an `overlay`, the run is drawn over it: run counts, taken edges, failures, focus.
    With `expand`, a node that runs a graph is a cluster holding that graph's drawing
    (`_draw_cluster`); without, one box. With `caption` (default), the title and the
    overlay's caption are drawn above the graph, wrapped; without, the inspector shows them
    outside the picture.
    """
    dot = drawing("graph", graph_attr={"rankdir": "TB", "fontname": "Helvetica", "fontcolor": INK})
    dot.attr("node", fontname="Helvetica", fontsize="11", color=INK)
    dot.attr("edge", fontname="Helvetica", fontsize="9", color=INK, fontcolor=INK)
    ids = _Ids()
    lines = [title] if title else []
    if overlay is not None and overlay.caption:
        lines.append(overlay.caption)
    if lines and caption:
        dot.attr(label=label(*(w for line in lines for w in wrapped(line))), labelloc="t")
    _draw_body(dot, ids, spec, overlay, expand)
    dot.nbgraph_ids = dict(ids.ids)  # node name -> DOT id: what a click maps back (clicks.py)
    dot.nbgraph_alias = dict(ids.alias)  # a node folded into a summary box -> that box's name
    return dot  # a `drawing`: shows as SVG and PNG (a notebook reopened untrusted)


def _draw_body(dot: Any, ids: _Ids, spec: GraphSpec, overlay: Overlay | None, expand: bool) -> None:
    """A graph's terminals, nodes and edges into `dot` (a drawing, or a cluster of one)."""
    _terminals(dot, ids, overlay)
    boxes = _summarised(spec)
    ids.alias = {name: box for box, names in boxes.items() for name in names}
    for name, node in spec.nodes.items():
        if name in ids.alias:
            continue
        if not (expand and _draw_cluster(dot, ids, name, node, overlay)):
            _draw_node(dot, ids, name, node, overlay)
    _draw_summaries(dot, ids, boxes, overlay)
    for name in _unknown_endpoints(spec):
        dot.node(
            ids(name),
            label(name, "(unknown node)"),
            shape="box",
            style="dashed",
            color=FAILED_INK,
            fontcolor=FAILED_INK,
        )
    for source, targets in spec.edges.items():
        for target in targets:
            marks = ["filter"] if (source, target) in spec.filters else []
            _edge(dot, ids, source, target, overlay, marks=marks)
    for name in ends_implicitly(spec):  # no way out: the run ends after it
        _edge(dot, ids, name, END, overlay, style="dotted", marks=["no edge out"])
    for index, wait in enumerate(spec.waiting):
        _waiting(dot, ids, index, wait.sources, wait.target, overlay)
    for source, branches in spec.branches.items():
        for branch in branches:
            _branch(dot, ids, source, branch, overlay, spec.nodes)
    for name, node in spec.nodes.items():
        for target in node.destinations or ():
            _edge(dot, ids, name, target, overlay, style="dotted", marks=["goto"])
    if overlay is not None:
        _dynamic_edges(dot, ids, spec, overlay)
        _task_calls(dot, ids, spec, overlay)


def _task_calls(dot: Any, ids: _Ids, spec: GraphSpec, overlay: Overlay) -> None:
    """The `@task`s a node called (an entrypoint's): a dashed box each, with the times it
    ran, and a dashed arrow from its caller with the times it was called."""
    for name in sorted({task for _, task in overlay.calls} - set(spec.nodes)):
        lines = [name, "@task", f"ran ×{overlay.runs.get(name, 0)}"]
        attrs = {"shape": "box", "style": "rounded,filled,dashed", "fillcolor": RAN_FILL}
        if name in overlay.failed:
            lines.append(f"raised {overlay.failed[name]}")
            attrs.update(fillcolor=FAILED_FILL, color=FAILED_INK, fontcolor=FAILED_INK)
        if name in overlay.paused:
            lines.append("paused: waiting for an answer")
            attrs.update(fillcolor=PAUSED_FILL, color=PAUSED_INK, fontcolor=PAUSED_INK)
        dot.node(ids(name), label(*lines), **attrs)
    for (caller, name), count in sorted(overlay.calls.items()):
        dot.edge(ids(caller), ids(name), label=f"call ×{count}", style="dashed")


_FAN_SHOWN = 8
"""Of a wide fan-out's targets, the ones drawn; the rest share one summary box."""


def _summarised(spec: GraphSpec) -> dict[str, list[str]]:
    """A summary box for each node with more than `_FAN_OUT` plain targets: the box's name
    -> the targets it stands for (all but the first `_FAN_SHOWN`). Only plain nodes fold
    (reached from that node alone, no subgraph, router or goto of their own), so a 200-node
    fan-out is drawn as a few boxes and a count instead of one very long row."""
    incoming: dict[str, set[str]] = {}
    for source, targets in spec.edges.items():
        for target in targets:
            incoming.setdefault(target, set()).add(source)
    for source, branches in spec.branches.items():
        for branch in branches:
            for target in (branch.path_map or {}).values():
                incoming.setdefault(target, set()).update((source, "(router)"))
    boxes = {}
    for source, targets in spec.edges.items():
        plain = [
            t
            for t in dict.fromkeys(targets)
            if t in spec.nodes
            and incoming.get(t) == {source}
            and t not in spec.branches
            and not spec.nodes[t].destinations
            and _subgraph_spec(spec.nodes[t]) is None
        ]
        if len(plain) > _FAN_OUT:
            boxes[f"\x00more after {source}"] = plain[_FAN_SHOWN:]
    return boxes


def _draw_summaries(dot: Any, ids: _Ids, boxes: dict[str, list[str]], overlay: Any) -> None:
    """Each summary box: how many nodes it stands for, the first and last names, and with a
    run how many of them ran and how often."""
    for box, names in boxes.items():
        lines = [f"… {len(names)} more nodes", f"{names[0]} … {names[-1]}"]
        attrs = {"shape": "box", "style": "rounded,filled,dashed", "fillcolor": _IDLE_FILL}
        if overlay is not None:
            ran = [overlay.runs.get(n, 0) for n in names]
            if any(ran):
                lines.append(f"{sum(map(bool, ran))} ran, ×{sum(ran)} in all")
                attrs["fillcolor"] = RAN_FILL
            running = sum(n in overlay.current for n in names)
            if running:
                lines.append(f"▶ {running} run this step")
                attrs.update(fillcolor=HIGHLIGHT_FILL, color=HIGHLIGHT_INK, penwidth="2.5")
            elif overlay.focus and not any(n in overlay.focus for n in names):
                attrs.update(color=FADED, fontcolor=FADED_TEXT, fillcolor=FADED_FILL)
        dot.node(ids(box), label(*lines), **attrs)


_NOTHING = "\x00"
"""A focus no node has: a faded node's cluster is drawn with everything in it faded."""


def _subgraph_spec(node: Any) -> Any:
    """The spec of the compiled graph a node runs (added as the node), else None."""
    app = getattr(node.fn, "app", None)
    return app.spec if is_compiled_graph(app) else None


def _draw_cluster(dot: Any, ids: Any, name: str, node: Any, overlay: Overlay | None) -> bool:
    """Draw node `name` as a cluster holding the graph it runs; False if it runs none.

    The node's own box stays (the parent's edges meet it), with a dotted line to the
    subgraph's START; inside, the subgraph's nodes with its subruns' counts (with an
    overlay: a subgraph none of whose runs were recorded is drawn as not run). When the
    drawing highlights a step or a branch that leaves the node out, its inside is faded too.
    """
    ran = overlay.subgraphs.get(name) if overlay is not None else None
    spec = ran[0] if ran is not None else _subgraph_spec(node)
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
        cluster.attr(
            label=label(title),
            style="rounded,dashed",
            color=PAUSED_INK,
            fontsize="10",
            fontcolor=INK,
        )
        _draw_node(cluster, ids, name, node, overlay)
        _draw_body(cluster, inner_ids, spec, inner, expand=True)
        link = {"color": FADED} if faded else {}
        cluster.edge(ids(name), inner_ids(START), style="dotted", arrowhead="none", **link)
    return True


def _unknown_endpoints(spec: GraphSpec) -> list[str]:
    """Names edges point at that are not nodes (a graph still being built)."""
    named = [s for s in spec.edges] + [t for ts in spec.edges.values() for t in ts]
    named += [n for w in spec.waiting for n in (*w.sources, w.target)]
    named += [s for s in spec.branches]
    named += [t for bs in spec.branches.values() for b in bs for t in (b.path_map or {}).values()]
    named += [t for node in spec.nodes.values() for t in node.destinations or ()]
    known = {*spec.nodes, START, END}
    return list(dict.fromkeys(n for n in named if n not in known))


def _terminals(dot: Any, ids: _Ids, overlay: Overlay | None) -> None:
    for name, shape in ((START, "circle"), (END, "doublecircle")):
        faded = overlay is not None and overlay.focus and name not in overlay.focus
        dot.node(
            ids(name),
            label("START" if name == START else "END"),
            shape=shape,
            style="filled",
            fillcolor=FADED_FILL if faded else TERMINAL_FILL,
            fontcolor=FADED_TEXT if faded else "#ffffff",
            color=FADED if faded else INK,
            fontsize="9",
            width="0.5",
            fixedsize="true",
        )


def _draw_node(dot: Any, ids: _Ids, name: str, node: Any, overlay: Overlay | None) -> None:
    """One node's box: its name, and with an overlay its count, failure, pause, focus."""
    lines = [name]
    if node.defer:
        lines.append("(deferred)")
    if node.merge is not None:
        lines.append(f"merge: {getattr(node.merge, '__name__', 'strategy')}")
    attrs = {"shape": "box", "style": "rounded,filled", "fillcolor": _IDLE_FILL}
    if node.defer:
        attrs["style"] = "rounded,filled,dashed"
    if overlay is not None:
        runs = overlay.runs.get(name, 0)
        if runs:
            lines.append(f"ran ×{runs}")
            attrs["fillcolor"] = RAN_FILL
        else:
            attrs.update(color=FADED, fontcolor=FADED_TEXT)
        if name in overlay.failed:
            lines.append(f"raised {overlay.failed[name]}")
            attrs.update(fillcolor=FAILED_FILL, color=FAILED_INK, fontcolor=FAILED_INK)
        if name in overlay.handed:  # Command.PARENT: the run ended there, not a failure
            lines.append(overlay.handed[name])
            attrs.update(color=PAUSED_INK, fontcolor=PAUSED_INK)
        if name in overlay.paused:
            lines.append("paused: waiting for an answer")
            attrs.update(fillcolor=PAUSED_FILL, color=PAUSED_INK, fontcolor=PAUSED_INK)
        stack_at = len(lines)  # (a followed task of many: its siblings drawn here)
        if name in overlay.notes:
            lines.append(overlay.notes[name])
        if overlay.focus or overlay.current:
            _focus_node(name, lines, attrs, overlay)
        if name in overlay.followed:
            rows = [_html_text(line) for line in lines]
            rows.insert(stack_at, _task_stack(overlay.followed[name]))
            dot.node(ids(name), _html_label(rows), **attrs)
            return
    dot.node(ids(name), label(*lines), **attrs)


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _html_text(text: Any) -> str:
    """A line for an HTML-like label: escaped, control characters written as escapes (XML,
    which graphviz parses such a label as, cannot hold them).

    >>> _html_text('<b> & "q"\\x01')
    '&lt;b&gt; &amp; &quot;q&quot;\\\\x01'
    """
    line = _CONTROL.sub(lambda m: repr(m[0])[1:-1], visible(str(text)))
    return html.escape(line)


def _html_label(rows: list[str]) -> str:
    """An HTML-like DOT label of already-escaped rows, one above the other."""
    cells = "".join(f"<TR><TD>{row}</TD></TR>" for row in rows)
    return f'<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="1">{cells}</TABLE>>'


def _task_stack(followed: Any) -> str:
    """The tasks of a node at one step as a row of cells, the followed one highlighted and
    named (with its `Send` argument), the others faded: one cell each up to `_FAN_SHOWN`
    tasks, else one faded cell counting them ("+ 199 other tasks")."""
    on = f'BGCOLOR="{HIGHLIGHT_FILL}" COLOR="{HIGHLIGHT_INK}"'
    off = f'BGCOLOR="{FADED_FILL}" COLOR="{FADED}"'
    name = f"task {followed.index + 1}"
    if followed.arg is not MISSING:
        name += f": {short(followed.arg, 24)}"
    mine = f"<TD {on}><B>{_html_text(name)}</B></TD>"
    if followed.count > _FAN_SHOWN:
        others = [f"+ {followed.count - 1} other tasks"]
        at = 0
    else:
        others = [str(i + 1) for i in range(followed.count) if i != followed.index]
        at = followed.index
    cells = [f'<TD {off}><FONT COLOR="{FADED_TEXT}">{_html_text(t)}</FONT></TD>' for t in others]
    cells.insert(at, mine)
    return (
        '<TABLE BORDER="0" CELLBORDER="1" CELLSPACING="2" CELLPADDING="2">'
        f"<TR>{''.join(cells)}</TR></TABLE>"
    )


def _focus_node(name: str, lines: list[str], attrs: dict[str, str], overlay: Overlay) -> None:
    """Runs this step (bold, filled), ran before on the way here (outlined), or faded."""
    if name in overlay.current:
        lines.append("▶ runs this step")
        attrs.update(fillcolor=HIGHLIGHT_FILL, color=HIGHLIGHT_INK, penwidth="2.5")
    elif name in overlay.focus and overlay.current:  # a trigger, or a branch's earlier task
        attrs.update(color=HIGHLIGHT_INK, penwidth="1.5", style=f"{attrs['style']},dashed")
    elif name in overlay.focus:  # a branch followed at no step: its whole chain
        attrs.update(fillcolor=HIGHLIGHT_FILL, color=HIGHLIGHT_INK, penwidth="2.5")
    else:
        attrs.update(color=FADED, fontcolor=FADED_TEXT, fillcolor=FADED_FILL)
        return
    if name in overlay.failed:
        attrs["fillcolor"] = FAILED_FILL


def _edge_attrs(
    source: str, target: str, overlay: Overlay | None, base: dict[str, str], marks: list[str]
) -> dict[str, str]:
    if overlay is None:
        return _taken(base, None, marks, None, False)
    count = overlay.edges.get((source, target), 0)
    sends = overlay.sends.get((source, target), 0)
    if sends:
        marks = [*marks, f"Send ×{sends}"]
    focused = (source, target) in overlay.focus_edges
    attrs = _taken(base, count or (None if sends else 0), marks, overlay, focused)
    if sends and not (overlay.focus and not focused):
        attrs["penwidth"] = "2"
    return attrs


def _edge(
    dot: Any,
    ids: _Ids,
    source: str,
    target: str,
    overlay: Overlay | None,
    style: str = "solid",
    marks: Iterable[str] = (),
) -> None:
    shown = (ids.alias.get(source, source), ids.alias.get(target, target))
    if shown != (source, target):  # a folded node's way: one way for the summary box
        if shown not in ids.folded:
            ids.folded.add(shown)
            dot.edge(ids(shown[0]), ids(shown[1]), style="dashed")
        return
    attrs = _edge_attrs(source, target, overlay, {"style": style}, list(marks))
    dot.edge(ids(source), ids(target), **attrs)


def _waiting(
    dot: Any,
    ids: _Ids,
    index: int,
    sources: tuple[str, ...],
    target: str,
    overlay: Overlay | None,
) -> None:
    """A waiting edge as one join: each source into a junction, the junction into the target."""
    junction = f"{ids.prefix}join{index}"
    dot.node(junction, label(""), shape="point", width="0.12", color=INK)
    for box in dict.fromkeys(ids.alias[s] for s in sources if s in ids.alias):
        dot.edge(ids(box), junction, arrowhead="none", style="dashed")
    for source in (s for s in sources if s not in ids.alias):
        count = overlay.runs.get(source, 0) if overlay else None
        focused = overlay is not None and (source, target) in overlay.focus_edges
        dot.edge(
            ids(source), junction, **_taken({"arrowhead": "none"}, count, [], overlay, focused)
        )
    if overlay is None:
        fired = None
    elif target == END:
        fired = min(overlay.runs.get(source, 0) for source in sources)
    else:
        fired = max(overlay.edges.get((source, target), 0) for source in sources)
    focused = overlay is not None and any((s, target) in overlay.focus_edges for s in sources)
    dot.edge(junction, ids(target), **_taken({}, fired, ["wait all"], overlay, focused))


def _taken(
    base: dict[str, str],
    count: int | None,
    marks: list[str],
    overlay: Overlay | None,
    focused: bool,
) -> dict[str, str]:
    """Edge attributes for a way taken `count` times (None: no run to show)."""
    attrs, text = dict(base), list(marks)
    if count:
        text.append(f"×{count}")
        attrs["penwidth"] = "2"
    elif count is not None:
        attrs.update(color=FADED, fontcolor=FADED)
    if overlay is not None and overlay.focus:
        if focused:
            attrs.update(color=HIGHLIGHT_INK, penwidth="3")
        else:
            attrs.update(color=FADED, fontcolor=FADED)
    if text:
        attrs["label"] = label(" ".join(text))
    return attrs


def _branch(
    dot: Any, ids: _Ids, source: str, branch: Any, overlay: Overlay | None, names: Any
) -> None:
    if branch.path_map is None:
        _open_router(dot, ids, source, branch, overlay, names)
        return
    by_target: dict[str, list[str]] = {}
    for key, target in branch.path_map.items():
        by_target.setdefault(target, []).append(safe_str(key))
    for target, keys in by_target.items():
        _edge(dot, ids, source, target, overlay, style="dashed", marks=[" | ".join(keys)])


def _open_router(
    dot: Any, ids: _Ids, source: str, branch: Any, overlay: Overlay | None, names: Any
) -> None:
    """A router without a path map: a diamond, "or END", and a dotted "maybe" way to each
    node its code names (`lambda s: "draft" if ... else "write"`: the loop back to draft is
    drawn, as LangGraph's drawing does not). A way the run took is drawn by `_dynamic_edges`."""
    router = f"router{source}"
    dot.node(ids(router), label(_router_name(source, branch.name)), shape="diamond", fontcolor=INK)
    attrs = _edge_attrs(source, router, None, {"style": "dashed"}, ["→ any node or Send"])
    dot.edge(ids(source), ids(router), **attrs)
    dotted = {"style": "dotted", "color": INK, "fontcolor": INK}
    for target in named_targets(branch.router, names):
        way = (source, target)
        if overlay is None or not (overlay.edges.get(way) or overlay.sends.get(way)):
            shown = ids.alias.get(target, target)  # (a folded node: its summary box)
            dot.edge(ids(router), ids(shown), label=label("maybe"), **dotted)
    dot.edge(ids(router), ids(END), label=label("or END"), **dotted)


def named_targets(router: Any, names: Any) -> list[str]:
    """The nodes in `names` that a router's code names, in order: its string constants
    (nested functions' too) and the strings it reads from globals or its closure. A guess
    at where a router without a path map may go, for the drawing only.

    >>> DONE = "write"
    >>> named_targets(lambda s: "draft" if s else DONE, {"draft", "write", "plan"})
    ['draft', 'write']
    """
    function = getattr(router, "__func__", router)  # (a bound method's function)
    code = getattr(function, "__code__", None)
    if code is None:
        return []
    scope = getattr(function, "__globals__", {})
    found: list[Any] = []

    def read(code: Any) -> None:
        for const in code.co_consts:
            if hasattr(const, "co_consts"):
                read(const)
            else:
                found.extend(const if isinstance(const, (tuple, frozenset)) else [const])
        found.extend(scope.get(name) for name in code.co_names)

    read(code)
    for cell in getattr(function, "__closure__", None) or ():
        try:
            found.append(cell.cell_contents)
        except ValueError:  # (an empty cell)
            continue
    return [name for name in dict.fromkeys(f for f in found if isinstance(f, str)) if name in names]


def _router_name(source: str, name: str) -> str:
    """A router without a path map, named by its function, or a lambda by its place
    ("after tock"); never "?"."""
    return f"route after {source}" if name in ("<lambda>", "", None) else f"{name}(state)"


def _dynamic_edges(dot: Any, ids: _Ids, spec: GraphSpec, overlay: Overlay) -> None:
    """Ways the run took that no static edge or path map shows (open routers, gotos, Sends)."""
    static = {(s, t) for s, ts in spec.edges.items() for t in ts}
    static |= {
        (s, t) for s, bs in spec.branches.items() for b in bs for t in (b.path_map or {}).values()
    }
    static |= {(n, t) for n, node in spec.nodes.items() for t in node.destinations or ()}
    static |= {(s, w.target) for w in spec.waiting for s in w.sources}
    static |= {(name, END) for name in ends_implicitly(spec)}
    for source, target in sorted(set(overlay.edges) | set(overlay.sends)):
        if (source, target) in static:
            continue
        _edge(dot, ids, source, target, overlay, style="dashed")
