"""A langchain `Runnable` (a `RunnableLambda`, a chain, LangGraph's `ToolNode`, ...) added
as a node: named as LangGraph names it (`runnable.get_name()`) and run through its
`invoke(state, config)`.

No langchain import: a value is a Runnable when `langchain_core` is already loaded (it must
be, for the value to exist) and the value is an instance of its `Runnable`.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig

__all__ = ["RunnableNode", "as_node", "is_runnable", "langchain_config", "runnable_name"]


def is_runnable(value: Any) -> bool:
    """Whether `value` is a langchain `Runnable` (False when langchain_core is not loaded)."""
    base = sys.modules.get("langchain_core.runnables.base")
    return base is not None and isinstance(value, base.Runnable)


def runnable_name(runnable: Any) -> str:
    """The node name LangGraph gives a Runnable added without one: `get_name()`."""
    return runnable.get_name()


class RunnableNode:
    """A Runnable as a node function: `node(state, config)` is `runnable.invoke(state, config)`.

    Attributes:
        runnable: the Runnable itself.
    """

    def __init__(self, runnable: Any) -> None:
        self.runnable = runnable
        self.__name__ = runnable_name(runnable)

    def __call__(self, state: Any, config: RunnableConfig) -> Any:
        return self.runnable.invoke(state, langchain_config(config))

    def __repr__(self) -> str:
        return f"RunnableNode({self.runnable!r})"


class _AsyncRunnableNode(RunnableNode):
    """A Runnable that can only be awaited (a `RunnableLambda` of an `async def`): the node
    awaits `runnable.ainvoke(state, config)`."""

    async def __call__(self, state: Any, config: RunnableConfig) -> Any:
        return await self.runnable.ainvoke(state, langchain_config(config))


def as_node(runnable: Any) -> RunnableNode:
    """The node function for a Runnable: awaited when it only has an async form."""
    only_async = hasattr(runnable, "afunc") and not hasattr(runnable, "func")
    return _AsyncRunnableNode(runnable) if only_async else RunnableNode(runnable)


def langchain_config(config: Any) -> Any:
    """The run's config as a langchain `RunnableConfig`: its own keys, the rest dropped."""
    if not isinstance(config, dict):
        return config
    keep = (
        "tags",
        "metadata",
        "callbacks",
        "run_name",
        "max_concurrency",
        "configurable",
        "recursion_limit",
    )
    return {key: value for key, value in config.items() if key in keep}
