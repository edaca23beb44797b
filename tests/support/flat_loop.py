"""The flat loop the column tests run: a counter, a list without reducer, a sum and a log."""

from __future__ import annotations

import operator
from typing import Annotated, TypedDict

__all__ = ["START_VALUES", "S", "tick"]


class S(TypedDict):
    count: int
    items: list  # no reducer
    total: Annotated[int, operator.add]
    log: Annotated[list, "append"]


START_VALUES = {"count": 0, "items": [], "total": 0, "log": []}


def tick(state: S) -> dict:
    return {"count": state["count"] + 1, "log": [state["count"]], "total": 2, "items": [1]}
