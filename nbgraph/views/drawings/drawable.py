"""`DrawableGraph`: what `app.get_graph()` returns — the nodes and edges LangGraph's
`get_graph()` gives, its Mermaid text, and a PNG drawn locally with graphviz.

LangGraph's `draw_mermaid_png()` sends the Mermaid text to a web service (mermaid.ink) to
render it; nbgraph draws the same nodes and edges with graphviz on this machine instead, so
`display(Image(app.get_graph().draw_mermaid_png()))` works offline. The picture is laid out
by graphviz, not Mermaid: same graph, different look.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from nbgraph.blueprint.drawable import Edge, Node, drawable_parts
from nbgraph.blueprint.spec import GraphSpec
from nbgraph.primitives import END, START
from nbgraph.record.text import plural
from nbgraph.views.drawings.dot import INK, label
from nbgraph.views.drawings.mermaid import NODE_STYLES, first_and_last, mermaid_text
from nbgraph.views.drawings.render import INSTALL_HINT, render_with, renderers

__all__ = ["DrawableGraph"]


class DrawableGraph:
    """A graph's nodes and edges, as LangGraph's `get_graph()` returns them.

    Attributes:
        nodes: node id -> `Node` (`.id`, `.name`, `.data`, `.metadata`), `__start__` first.
        edges: `Edge`s (`.source`, `.target`, `.data`, `.conditional`).
    """

    def __init__(self, nodes: dict[str, Node], edges: list[Edge]) -> None:
        self.nodes = nodes
        self.edges = edges

    @classmethod
    def of(cls, spec: GraphSpec, xray: int | bool = False) -> DrawableGraph:
        """The drawable graph of a compiled graph's spec (`xray`: subgraphs expanded)."""
        return cls(*drawable_parts(spec, xray))

    def __repr__(self) -> str:
        return (
            f"<DrawableGraph: {plural(len(self.nodes), 'node')}, {plural(len(self.edges), 'edge')}>"
        )

    def first_node(self) -> Node | None:
        """The single node no edge enters, or None."""
        first = first_and_last(self.nodes, self.edges)[0]
        return None if first is None else self.nodes[first]

    def last_node(self) -> Node | None:
        """The single node no edge leaves, or None."""
        last = first_and_last(self.nodes, self.edges)[1]
        return None if last is None else self.nodes[last]

    def draw_mermaid(self, **options: Any) -> str:
        """Mermaid flowchart text, line for line as LangGraph's `draw_mermaid()`.

        Args:
            **options: `with_styles`, `curve_style`, `node_colors`, `wrap_label_n_words`,
                `frontmatter_config`, as langchain_core's.
        """
        return mermaid_text(self.nodes, self.edges, **options)

    def draw_mermaid_png(self, *, output_file_path: str | None = None, **options: Any) -> bytes:
        """A PNG of the graph, drawn offline with graphviz (LangGraph asks a web service).

        Args:
            output_file_path: also write the PNG there.
            **options: LangGraph's drawing options (`draw_method`, `background_color`,
                `curve_style`, ...) are accepted; the look is graphviz's.

        Returns:
            The PNG bytes (they start with the PNG signature).

        Raises:
            RuntimeError: no graphviz renderer is installed (the message says what to install).
        """
        png = _render_png(self.to_dot())
        if output_file_path is not None:
            Path(output_file_path).write_bytes(png)
        return png

    draw_png = draw_mermaid_png

    def to_dot(self) -> str:
        """The graph as DOT text: every name and label escaped."""
        import graphviz

        dot = graphviz.Digraph(graph_attr={"rankdir": "TB"}, node_attr={"fontname": "Helvetica"})
        fill = NODE_STYLES["default"].split(",")[0].split(":")[1]
        for key, node in self.nodes.items():
            terminal = key in (START, END)
            dot.node(
                graphviz.escape(key),
                label(node.name),
                shape="oval" if terminal else "box",
                style="rounded,filled" if not terminal else "filled",
                fillcolor="#bfb6fc" if key == END else ("#ffffff" if terminal else fill),
                color=INK,
            )
        for edge in self.edges:
            attrs = {"style": "dashed"} if edge.conditional else {}
            if edge.data is not None:
                attrs["label"] = label(edge.data)
            dot.edge(graphviz.escape(edge.source), graphviz.escape(edge.target), **attrs)
        return dot.source

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        """Jupyter shows the PNG (never touching the network); `text/plain` always."""
        bundle: dict[str, Any] = {"text/plain": repr(self)}
        wanted = (not include or "image/png" in include) and "image/png" not in (exclude or ())
        if wanted:
            with contextlib.suppress(RuntimeError):  # (no renderer: the text alone)
                bundle["image/png"] = self.draw_mermaid_png()
        return bundle


def _render_png(source: str) -> bytes:
    """PNG bytes for a DOT source, from the first graphviz renderer that works."""
    png, _, problems = render_with(source, "png", renderers())
    if png is None:
        raise RuntimeError(INSTALL_HINT if not problems else "PNG failed: " + "; ".join(problems))
    return png
