"""Nested runs: a graph run inside another run's node (a subgraph) — its log on the calling task,
its pauses, checkpoints and edges to the parent.
"""
