"""The inspector's panels: the state, the reducer effects, values and text diffs, and the answer,
fork, router, tool-review and traceback panels; the pandas tables' display."""
