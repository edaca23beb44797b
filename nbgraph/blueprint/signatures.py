"""What a node's or router's function says about itself: its name, parameters and return type.

That is whether it is async or takes `config`, the schema its first parameter reads, where its
Commands go, and a router's `-> Literal[...]` targets."""

from __future__ import annotations

import inspect
import typing
from collections.abc import Hashable
from typing import Any, Literal, get_args, get_origin

__all__ = [
    "async_form",
    "callable_name",
    "destinations",
    "first_param_annotation",
    "is_async",
    "literal_targets",
    "name_of",
    "takes_config",
]


def callable_name(fn: Any) -> str:
    return getattr(fn, "name", None) or getattr(fn, "__name__", None) or type(fn).__name__


def name_of(cls: Any) -> str:
    return getattr(cls, "__name__", repr(cls))


def is_async(fn: Any) -> bool:
    if inspect.iscoroutinefunction(fn):
        return True
    call = inspect.getattr_static(type(fn), "__call__", None)
    return call is not None and inspect.iscoroutinefunction(call)


def async_form(fn: Any) -> Any:
    """The async form of a sync node object, run in its place in an async run: its `acall`
    coroutine method (LangGraph's `ToolNode` has both forms); None for other nodes."""
    acall = getattr(fn, "acall", None)
    if acall is None or is_async(fn) or not inspect.iscoroutinefunction(acall):
        return None
    return acall


def _parameters(fn: Any) -> list[inspect.Parameter]:
    try:
        return list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return []


def takes_config(fn: Any) -> bool:
    return any(p.name == "config" for p in _parameters(fn))


def first_param_annotation(fn: Any) -> Any:
    params = _parameters(fn)
    if not params or params[0].annotation is inspect.Parameter.empty:
        return None
    annotation = params[0].annotation
    if isinstance(annotation, str):
        try:
            hints = typing.get_type_hints(fn)
        except Exception:
            return None
        annotation = hints.get(params[0].name)
    return annotation if isinstance(annotation, type) else None


def destinations(fn: Any, declared: Any) -> tuple[str, ...] | None:
    """Where a node's Commands may go: `destinations=`, or `-> Command[Literal[...]]`.

    None: the node declares no Command; `()`: it returns Commands to unknown places.
    """
    if declared is not None:
        if not isinstance(declared, (list, tuple, dict, set, frozenset)):
            from nbgraph.errors import wrong_argument

            raise wrong_argument(
                "add_node(..., destinations=)",
                "a tuple of node names (or a dict of them to labels)",
                declared,
            )
        return tuple(declared)
    try:
        returned = typing.get_type_hints(fn).get("return")
    except Exception:
        return None
    if returned is None or getattr(get_origin(returned) or returned, "__name__", "") != "Command":
        return None
    args = get_args(returned)
    if args and get_origin(args[0]) is Literal:
        return tuple(str(a) for a in get_args(args[0]))
    return ()


def literal_targets(router: Any) -> dict[Hashable, str] | None:
    """A path map read from a router's `-> Literal["a", "b"]` annotation, if it has one."""
    try:
        hints = typing.get_type_hints(router)
    except Exception:
        return None
    returned = hints.get("return")
    if get_origin(returned) is Literal:
        return {value: value for value in get_args(returned) if isinstance(value, str)}
    return None
