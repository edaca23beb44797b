"""Reading a drawing's DOT source: its nodes' labels, its edges, its clusters."""

import re

EVIL = '<b>x</b> "q" & \\'
"""A name with markup, quotes, an ampersand and a backslash: every label must escape it."""


def labels(source: str) -> dict[str, str]:
    """DOT node id -> its label text."""
    found = {}
    for node_id, text in re.findall(r'^\s*(\w+) \[label=("(?:[^"\\]|\\.)*"|\w+)', source, re.M):
        found[node_id] = text.strip('"')
    return found


def edges(source: str) -> list[tuple[str, str, str]]:
    return re.findall(r"^\s*(\w+) -> (\w+)(?: \[(.*)\])?$", source, re.M)


def clusters(source: str) -> dict[str, str]:
    """Cluster name -> its label."""
    found = re.findall(r"subgraph (cluster_\w+) \{\n\s*.*label=(\"(?:[^\"\\]|\\.)*\"|\w+)", source)
    return {name: text.strip('"') for name, text in found}
