"""A run's root resets and joins back from the plain data the engine keeps them as
(`reset_data`, `join_data`): for `Run.from_checkpointer` and run files.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from nbgraph.engine.facts import Join, RootReset

__all__ = ["join_from_data", "reset_from_data"]


def _same(value: Any) -> Any:
    return value


def reset_from_data(
    step: int, data: Mapping[str, Any], values: Callable[[Any], Any] = dict,
    name: Callable[[Any], Any] = _same,
) -> RootReset:  # fmt: skip
    """A root reset back from `reset_data` (older data has no id or parent)."""
    return RootReset(
        step,
        data["node"],
        data["reason"],
        tuple(data["sources"]),
        tuple(name(field) for field in data["dropped"]),
        values(data["values"]),
        str(data.get("id", "")),
        str(data.get("parent", "")),
    )


def join_from_data(
    data: Mapping[str, Any], values: Callable[[Any], Any] = dict,
    name: Callable[[Any], Any] = _same,
) -> Join:  # fmt: skip
    """A join back from `join_data`."""
    merged = data["values"]
    return Join(
        int(data["step"]),
        str(data["id"]),
        str(data["node"]),
        tuple(data["parents"]),
        str(data["strategy"]),
        str(data["base"]),
        tuple(data["applied"]),
        None if merged is None else values(merged),
        tuple(name(field) for field in data["dropped"]),
    )
