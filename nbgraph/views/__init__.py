"""Pictures and tables for Jupyter: graphviz drawings, styled tables, display helpers."""
