"""A run's config: `invoke`'s keyword arguments folded in, defaults filled, every value
checked once before the run starts.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from nbgraph.errors import InvalidArgumentError

__all__ = ["DEFAULT_RECURSION_LIMIT", "run_config"]

DEFAULT_RECURSION_LIMIT = int(os.environ.get("LANGGRAPH_DEFAULT_RECURSION_LIMIT", "10007"))
"""The most supersteps a run takes when its config names no `recursion_limit`: LangGraph's
default (`langgraph._internal._config.DEFAULT_RECURSION_LIMIT`, 10007 on LangGraph 1.2.24),
read from the same environment variable, so `RemainingSteps` counts down from the same
number."""
_CONFIG_KWARGS = ("recursion_limit", "max_concurrency")
"""The config keys `invoke`, `stream` and their async forms also take as keyword arguments."""


def run_config(config: Any, kwargs: dict[str, Any] | None = None) -> dict[str, Any]:
    """The config a run uses: `config` plus `kwargs`' config keys (popped from `kwargs`),
    `recursion_limit` defaulted, each value checked.

    `recursion_limit` must be an integer of at least 1 (None means the default,
    `DEFAULT_RECURSION_LIMIT`); `max_concurrency` an integer of at least 1, or None for no
    limit; `configurable` a dict.

    Args:
        config: the caller's config, a mapping or None.
        kwargs: keyword arguments of `invoke`; the config keys among them are taken out.

    Returns:
        A new dict; the caller's config is not changed.

    Raises:
        InvalidArgumentError: naming every bad value, what it was and what is expected.

    >>> run_config({"max_concurrency": 2})["recursion_limit"] == DEFAULT_RECURSION_LIMIT
    True
    >>> run_config(None, {"recursion_limit": 0})  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    InvalidArgumentError: recursion_limit must be at least 1 ...
    """
    if config is not None and type(config) is not dict and not isinstance(config, Mapping):
        raise InvalidArgumentError(
            f"config must be a dict like {{'configurable': {{'thread_id': '1'}}}} or None, "
            f"got {_shown(config)}."
        )
    merged: dict[str, Any] = {"recursion_limit": DEFAULT_RECURSION_LIMIT, "configurable": {}}
    if config:
        merged.update(config)
    if kwargs:
        for key in _CONFIG_KWARGS:
            if key in kwargs:
                merged[key] = kwargs.pop(key)
    limit = merged["recursion_limit"]
    if limit is None:  # as LangGraph: None is the default
        limit = merged["recursion_limit"] = DEFAULT_RECURSION_LIMIT
    most = merged.get("max_concurrency")
    if (  # (every run starts here, a graph run inside a node too: the plain case at once)
        type(limit) is int
        and limit >= 1
        and (most is None or (type(most) is int and most >= 1))
        and type(merged["configurable"]) is dict
    ):
        return merged
    problems = [
        problem
        for problem in (
            _count_problem(
                "recursion_limit", merged["recursion_limit"], "the most supersteps a run takes"
            ),
            _count_problem(
                "max_concurrency", merged.get("max_concurrency"), "None for no limit", none=True
            ),
            _configurable_problem(merged["configurable"]),
        )
        if problem
    ]
    if problems:
        raise InvalidArgumentError(" ".join(problems))
    return merged


def _count_problem(name: str, value: Any, meaning: str, none: bool = False) -> str:
    """What is wrong with a config value that must be a whole number of at least 1."""
    if value is None and none:
        return ""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
        return ""  # (True is an int, and not a count)
    return f"{name} must be at least 1 (an integer: {meaning}), got {_shown(value)}."


def _configurable_problem(value: Any) -> str:
    if isinstance(value, Mapping):
        return ""
    return f"configurable must be a dict (of thread_id, checkpoint_id, ...), got {_shown(value)}."


def _shown(value: Any) -> str:
    shown = repr(value)
    if len(shown) > 60:
        shown = shown[:57] + "..."
    return shown if type(value) is int else f"{shown} (a {type(value).__name__})"
