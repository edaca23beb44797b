"""A graph as Mermaid flowchart text, line for line as langchain_core's `draw_mermaid` writes
it.

The same lines for the same nodes and edges, so `app.get_graph().draw_mermaid()` gives on
nbgraph the text it gives on LangGraph."""

from __future__ import annotations

import re
import string
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["NODE_STYLES", "first_and_last", "mermaid_text"]

NODE_STYLES = {
    "default": "fill:#f2f0ff,line-height:1.2",
    "first": "fill-opacity:0",
    "last": "fill:#bfb6fc",
}
"""langchain_core's `NodeStyles` defaults: the `classDef` lines at the end."""

_MARKDOWN_SPECIAL = tuple("*_`")
_SAFE = set(string.ascii_letters + string.digits + "_-")
_LABEL_ESCAPES = {
    "[": "#91;",
    "]": "#93;",
    "(": "#40;",
    ")": "#41;",
    "{": "#123;",
    "}": "#125;",
    '"': "#quot;",
    "<": "#60;",
    ">": "#62;",
    "|": "#124;",
}
_PLAIN_YAML = re.compile(r"^[A-Za-z0-9_.#-]+$")


def _safe_id(label: str) -> str:
    """A Mermaid node id: `[A-Za-z0-9_-]` kept, every other character `\\` + its hex code."""
    return "".join(ch if ch in _SAFE else "\\" + format(ord(ch), "x") for ch in label)


def first_and_last(nodes: Mapping[str, Any], edges: Sequence[Any]) -> tuple[str | None, ...]:
    """The single node no edge enters, and the single node no edge leaves (None if not one)."""
    targets = {e.target for e in edges}
    sources = {e.source for e in edges}
    first = [key for key in nodes if key not in targets]
    last = [key for key in nodes if key not in sources]
    return (first[0] if len(first) == 1 else None, last[0] if len(last) == 1 else None)


def mermaid_text(
    nodes: Mapping[str, Any],
    edges: Sequence[Any],
    *,
    with_styles: bool = True,
    curve_style: Any = "linear",
    node_colors: Any = None,
    wrap_label_n_words: int = 9,
    frontmatter_config: dict[str, Any] | None = None,
) -> str:
    """Mermaid text for `nodes` (id -> node with `.name`, `.metadata`) and `edges`
    (`.source`, `.target`, `.data`, `.conditional`).

    Args: as langchain_core's `Graph.draw_mermaid`.

    >>> from nbgraph.blueprint.drawable import Edge, Node
    >>> nodes = {k: Node(k, k, None, None) for k in ("__start__", "a", "__end__")}
    >>> text = mermaid_text(nodes, [Edge("__start__", "a"), Edge("a", "__end__")])
    >>> [line.strip() for line in text.splitlines()[6:9]]
    ['__start__([<p>__start__</p>]):::first', 'a(a)', '__end__([<p>__end__</p>]):::last']
    """
    first, last = first_and_last(nodes, edges)
    text = "graph TD;\n"
    if with_styles:
        curve = getattr(curve_style, "value", curve_style)
        config = dict(frontmatter_config or {})
        inner = dict(config.get("config", {}))
        inner["flowchart"] = {**inner.get("flowchart", {}), "curve": curve}
        config["config"] = inner
        text = "---\n" + _yaml(config, 0) + "---\n" + text
        for key, node in nodes.items():
            text += "\t" + _node_line(key, node, first, last) + "\n"
    for edge in edges:
        text += "\t" + _edge_line(edge, wrap_label_n_words) + "\n"
    if with_styles:
        styles = _styles(node_colors)
        text += "".join(f"\tclassDef {name} {style}\n" for name, style in styles.items())
    return text


def _node_line(key: str, node: Any, first: str | None, last: str | None) -> str:
    name = node.name.split(":")[-1]
    special = name.startswith(_MARKDOWN_SPECIAL) and name.endswith(_MARKDOWN_SPECIAL)
    label = f"<p>{name}</p>" if special else name
    lines = _metadata_lines(node.metadata or {})
    if lines:
        label = f"{label}<hr/><small><em>" + "\n".join(lines) + "</em></small>"
    if key == last:
        return f"{_safe_id(key)}([{label}]):::last"
    if key == first:
        return f"{_safe_id(key)}([{label}]):::first"
    return f"{_safe_id(key)}({label})"


def _edge_line(edge: Any, wrap: int) -> str:
    if edge.data is None:
        arrow = " -.-> " if edge.conditional else " --> "
    else:
        words = str(edge.data).split()
        data = str(edge.data)
        if len(words) > wrap:
            data = "&nbsp<br>&nbsp".join(
                " ".join(words[i : i + wrap]) for i in range(0, len(words), wrap)
            )
        arrow = (
            f" -. &nbsp;{data}&nbsp; .-> " if edge.conditional else f" -- &nbsp;{data}&nbsp; --> "
        )
    return f"{_safe_id(edge.source)}{arrow}{_safe_id(edge.target)};"


def _metadata_lines(metadata: Mapping[str, Any]) -> list[str]:
    lines = []
    for key, value in metadata.items():
        shown = _metadata_value(value)
        if shown is not None:
            text = f"{key} = {shown}".replace("#", "#35;")
            lines.append("".join(_LABEL_ESCAPES.get(ch, ch) for ch in text))
    return lines


def _metadata_value(value: Any) -> str | None:
    scalars = (str, int, float, bool)
    if isinstance(value, scalars):
        return str(value)
    if isinstance(value, (list, tuple, set)) and all(isinstance(v, scalars) for v in value):
        items = [str(v) for v in value]
        return ", ".join(sorted(items) if isinstance(value, set) else items)
    return None


def _styles(node_colors: Any) -> dict[str, str]:
    if node_colors is None:
        return dict(NODE_STYLES)
    if isinstance(node_colors, Mapping):
        return {**NODE_STYLES, **node_colors}
    return {name: getattr(node_colors, name, style) for name, style in NODE_STYLES.items()}


def _yaml(value: Mapping[str, Any], depth: int) -> str:
    """A small block-style YAML dump (keys sorted, as `yaml.dump` writes them)."""
    text = ""
    for key in sorted(value):
        item = value[key]
        if isinstance(item, Mapping):
            text += "  " * depth + f"{key}:\n" + _yaml(item, depth + 1)
        else:
            text += "  " * depth + f"{key}: {_scalar(item)}\n"
    return text


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    text = str(value)
    return text if _PLAIN_YAML.match(text) else "'" + text.replace("'", "''") + "'"
