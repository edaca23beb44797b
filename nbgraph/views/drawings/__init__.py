"""Drawings: the graph and the state tree as DOT and SVG, the run drawn over the graph, the theme,
and drawings fitted to a notebook's output."""
