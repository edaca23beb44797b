"""The record of a branch-lineage run: its states and each task's effects on its own lineage."""
