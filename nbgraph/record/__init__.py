"""The run record: state tree, states at any point, per-field reducer effects, tables.

`RunRecord` is the record itself; `nbgraph.Run` (the notebook layer) adds its drawings.
"""

from nbgraph.record.files.serialize import RunFileError
from nbgraph.record.run import RunRecord, StateRef
from nbgraph.record.tree import StateTree, TreeNode

__all__ = ["RunFileError", "RunRecord", "StateRef", "StateTree", "TreeNode"]
