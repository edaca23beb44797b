"""A run's runtime context and its nodes' store calls: `Run.context`, `Run.store_ops`, and both
in the run file.

What a run was given besides its input (`invoke(..., context=...)`), and what it did outside its
state (the store calls its nodes made), kept as JSON in the run file too."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from nbgraph.codec.values import decode_value, encode_value
from nbgraph.engine.facts import StoreOp
from nbgraph.isolation import isolate
from nbgraph.record.text import safe_repr

if TYPE_CHECKING:
    import pandas as pd

    from nbgraph.engine.facts import RunLog

__all__ = ["ContextFacts", "context_line", "decode_store_ops", "encode_store_ops"]

_STORE_OP_COLUMNS = ["step", "node", "op", "namespace", "key", "value"]


class ContextFacts:
    """`RunRecord`'s view of the context and the store calls (it has `log`)."""

    log: RunLog

    @property
    def context(self) -> Any:
        """The context the run's nodes saw (`runtime.context`), a copy; None if none given."""
        return isolate(self.log.context)

    @property
    def store_ops(self) -> pd.DataFrame:
        """Every store call the nodes made, in order: step, node, op (`get`, `search`, `put`,
        `delete`, `list_namespaces`), namespace, key, value (written, or read: a search
        gives `[(key, value), ...]`)."""
        import pandas as pd

        rows = [
            (o.step, o.node, o.op, o.namespace, o.key, isolate(o.value)) for o in self.log.store_ops
        ]
        return pd.DataFrame(rows, columns=_STORE_OP_COLUMNS)


def encode_store_ops(ops: list[StoreOp]) -> list[list[Any]]:
    """The store calls as JSON lists (values through the value codec)."""
    return [[o.step, o.node, o.op, list(o.namespace), o.key, encode_value(o.value)] for o in ops]


def decode_store_ops(data: list[Any]) -> list[StoreOp]:
    """`encode_store_ops` read back."""
    return [
        StoreOp(int(step), str(node), str(op), tuple(namespace), key, decode_value(value))
        for step, node, op, namespace, key, value in data
    ]


def context_line(log: RunLog, width: int = 120) -> str:
    """One plain-text line naming the run's context and how many store calls it made
    ('' if neither); escape it before it goes into HTML."""
    parts = []
    if log.context is not None:
        parts.append(f"context: {safe_repr(log.context)[:width]}")
    if log.store_ops:
        parts.append(f"store calls: {len(log.store_ops)} (run.store_ops)")
    return "; ".join(parts)
