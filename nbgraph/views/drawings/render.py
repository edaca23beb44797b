"""Turning DOT into SVG, offline: the `dot` program when it is installed, else the
`graphviz-pure` binary that `pip install nbgraph` brings, else nothing (and a clear hint).

Rendered SVG is cached by DOT source, so stepping back and forth through a run lays out each
picture once.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

__all__ = [
    "INSTALL_HINT",
    "LAYOUT_EDGES",
    "LAYOUT_NODES",
    "Rendered",
    "clear_cache",
    "layout_problem",
    "render_svg",
    "render_with",
    "renderers",
]

INSTALL_HINT = (
    "No graphviz renderer found: install the `dot` program (Debian/Ubuntu: "
    "`sudo apt-get install graphviz`) or `pip install graphviz-pure`; showing the DOT source."
)
_TIMEOUT_SECONDS = 60
LAYOUT_NODES = 1000
"""The most nodes a picture is laid out with (a run file may describe any graph)."""
LAYOUT_EDGES = 600
"""The most edges a picture is laid out with: graphviz's layout time grows fast with them
(the times: benchmarks/README.md, "Timings behind the code")."""
_NODE_LINE = re.compile(r'^\s*(?:"(?:[^"\\]|\\.)*"|\w+)\s*(?:\[|;|$)', re.M)
_KEYWORDS = frozenset({"graph", "node", "edge", "digraph", "subgraph", "strict"})


@dataclass(frozen=True)
class Rendered:
    """The outcome of rendering: SVG text, or None with the reason."""

    svg: str | None
    renderer: str
    problem: str = ""


def renderers() -> list[tuple[str, str]]:
    """Available renderers in order of preference, as (name, executable path)."""
    found = []
    system = shutil.which("dot")
    if system:
        found.append(("dot", system))
    for folder in _script_folders():
        candidate = Path(folder) / "graphviz-pure"
        if candidate.is_file():
            found.append(("graphviz-pure", str(candidate)))
            break
    else:
        other = shutil.which("graphviz-pure")
        if other:
            found.append(("graphviz-pure", other))
    return found


@lru_cache(maxsize=1)
def _script_folders() -> tuple[str, ...]:
    """Where this Python's scripts are installed (the same for the whole process; what is in
    them is looked at on every `renderers()`)."""
    return tuple({sysconfig.get_path("scripts"), str(Path(sys.executable).parent)})


def render_svg(source: str) -> Rendered:
    """SVG for a DOT source, from the first renderer that works (cached by source)."""
    return _render_cached(source, tuple(renderers()))


@lru_cache(maxsize=256)
def _render_cached(source: str, available: tuple[tuple[str, str], ...]) -> Rendered:
    output, name, problems = render_with(source, "svg", available)
    if output is not None:
        return Rendered(output.decode("utf-8"), name)
    if not available:
        return Rendered(None, "", INSTALL_HINT)
    return Rendered(None, "", "Rendering failed: " + "; ".join(problems))


_LOOKS_RIGHT = {
    "svg": lambda out: out.lstrip().startswith((b"<?xml", b"<svg")),
    "png": lambda out: out.startswith(b"\x89PNG\r\n\x1a\n"),
}
"""How each format's output starts: a renderer that exits 0 with anything else failed."""


def render_with(
    source: str, fmt: str, available: Sequence[tuple[str, str]]
) -> tuple[bytes | None, str, list[str]]:
    """`source` rendered as `fmt` ("svg" or "png") by the first of `available` that works:
    `(output, renderer name, [])`, or `(None, "", what each renderer said)`. A graph past
    `LAYOUT_NODES` or `LAYOUT_EDGES` is not laid out (`(None, "", [why])`), and a renderer
    that times out is not followed by another (their timeouts would add up)."""
    too_large = layout_problem(source)
    if too_large:
        return None, "", [too_large]
    problems = []
    for name, program in available:
        try:
            done = subprocess.run(
                [program, f"-T{fmt}"],
                input=source.encode("utf-8", "backslashreplace"),  # (a lone surrogate)
                capture_output=True,
                timeout=_TIMEOUT_SECONDS,
                check=False,
            )
        except subprocess.TimeoutExpired as error:
            problems.append(f"{name}: {error}")
            break
        except OSError as error:
            problems.append(f"{name}: {error}")
            continue
        if done.returncode == 0 and _LOOKS_RIGHT[fmt](done.stdout):
            return done.stdout, name, []
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        problems.append(f"{name} exited {done.returncode}: {message[-1] if message else ''}")
    return None, "", problems


def layout_problem(source: str) -> str:
    """Why `source` is too large to lay out quickly, or "" (counted from the DOT text: an
    edge a `->` or `--`, a node a statement naming one).

    >>> layout_problem("digraph { a -> b }"), layout_problem("digraph {" + "a -> b;" * 601)[:29]
    ('', 'The graph is too large to lay')
    """
    edges = source.count("->") + source.count("--")
    nodes = sum(1 for m in _NODE_LINE.finditer(source) if m.group().strip() not in _KEYWORDS)
    if edges <= LAYOUT_EDGES and nodes <= LAYOUT_NODES:
        return ""
    return (
        f"The graph is too large to lay out quickly ({nodes:,} nodes, {edges:,} edges; a "
        f"picture is drawn for at most {LAYOUT_NODES:,} nodes and {LAYOUT_EDGES:,} edges): "
        "showing its DOT source instead."
    )


def clear_cache() -> None:
    """Forget rendered pictures (e.g. after installing graphviz)."""
    _render_cached.cache_clear()
