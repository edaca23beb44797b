"""The run record: state tree, states at any point, per-field reducer effects, tables."""

from nbgraph.record.run import Run, StateRef
from nbgraph.record.serialize import RunFileError
from nbgraph.record.tree import StateTree, TreeNode

__all__ = ["Run", "RunFileError", "StateRef", "StateTree", "TreeNode"]
