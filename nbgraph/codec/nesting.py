"""How deeply nested a value a file may hold, and the stack to write and read one that deep.

Values and JSON documents nested up to `MAX_DEPTH` containers deep are written and read (what
`json` itself reaches from a shallow stack is about 990); deeper ones are refused with a
`ValueTooDeepError` naming where. Encoding and decoding recurse, so for a deep value they run
with a raised recursion limit (`deep_stack`), bounded so the C stack stays safe.
"""

from __future__ import annotations

import contextlib
import functools
import json
import re
import sys
import threading
from collections.abc import Iterator
from types import ModuleType
from typing import Any

from nbgraph.errors import NbgraphError

__all__ = [
    "MAX_DEPTH",
    "ValueTooDeepError",
    "deep_stack",
    "dumps",
    "field_of",
    "loads",
    "orjson",
]


@functools.cache
def orjson() -> ModuleType | None:
    """The `orjson` module (a dependency: JSON as UTF-8 bytes, several times json's speed),
    imported on first use; None where it is missing (json does the work then)."""
    try:
        import orjson as module
    except ImportError:
        return None
    return module


MAX_DEPTH = 1000
"""The deepest nesting of containers (lists, dicts, tuples, models...) a file keeps."""

_MAX_JSON_DEPTH = 2 * MAX_DEPTH + 16
"""The deepest JSON nesting read: a tagged container (`{"$type": ..., "items": [...]}`) is
two JSON levels, and a document wraps its values in a few more."""

_EXTRA_FRAMES = 4 * _MAX_JSON_DEPTH
_lock = threading.Lock()
_users = 0
_saved_limit = 0


class ValueTooDeepError(NbgraphError, ValueError):
    """A value is nested deeper than `MAX_DEPTH` containers; `path` says where."""

    def __init__(self, path: list[Any] | None = None, what: str = "A value") -> None:
        self.path = list(path or ())
        self.what = what
        super().__init__(self._message())

    def _message(self) -> str:
        where = f" at {_format_path(self.path)}" if self.path else ""
        return (
            f"{self.what} is nested more than {MAX_DEPTH} containers deep{where}; nbgraph "
            f"saves values nested up to {MAX_DEPTH} deep. Flatten it, or keep it out of the "
            "state."
        )

    def within(self, what: str) -> ValueTooDeepError:
        """The same error, saying what the value is (a field, a checkpoint...)."""
        return ValueTooDeepError(self.path, what)


def _format_path(path: list[Any]) -> str:
    """`["tasks", 0, "writes"]` as `['tasks'][0]['writes']`; a long path by its start.

    >>> _format_path(["log", 0, 1]), _format_path(list(range(20)))
    ("['log'][0][1]", '[0][1][2][3][4][5][6][7]... (20 levels down)')
    """
    shown = "".join(f"[{part!r}]" for part in path[:8])
    return shown if len(path) <= 8 else f"{shown}... ({len(path)} levels down)"


def field_of(data: Any, path: list[Any]) -> str | None:
    """The state field a path into a checkpoint payload or run document leads into, if any:
    the name `N` of a `[N, value]` write entry (`... ['writes'][i][1] ...`), or a key of a
    `values`/`final`/`input`/`afters` mapping."""
    node, field = data, None
    for index, part in enumerate(path):
        parent_key = path[index - 1] if index else None
        if parent_key == "writes" and type(node) is list and type(part) is int:
            entry = node[part] if part < len(node) else None
            if type(entry) is list and entry and type(entry[0]) is str:
                field = entry[0]
        elif parent_key in ("values", "final", "input", "afters") and type(part) is str:
            field = part
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            break
    return field


@contextlib.contextmanager
def deep_stack() -> Iterator[None]:
    """Within the block, Python may recurse deep enough to walk a `MAX_DEPTH` value.

    The recursion limit is raised while any thread is inside such a block, and put back
    when the last one leaves.
    """
    global _users, _saved_limit
    with _lock:
        if _users == 0:
            _saved_limit = sys.getrecursionlimit()
            sys.setrecursionlimit(_saved_limit + _EXTRA_FRAMES)
        _users += 1
    try:
        yield
    finally:
        with _lock:
            _users -= 1
            if _users == 0 and sys.getrecursionlimit() == _saved_limit + _EXTRA_FRAMES:
                sys.setrecursionlimit(_saved_limit)


def dumps(data: Any, **options: Any) -> str:
    """`json.dumps(data, **options)`, deep enough for data nested `_MAX_JSON_DEPTH` deep."""
    try:
        return json.dumps(data, **options)
    except RecursionError:
        pass
    with deep_stack():
        return json.dumps(data, **options)


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_BRACKET = re.compile(r"[\[\]{}]")


def _json_depth(text: str) -> int:
    """How deeply JSON text nests its arrays and objects (strings skipped).

    >>> _json_depth('{"a": [1, [2]], "b": "[[["}')
    3
    """
    depth = deepest = 0
    for match in _BRACKET.finditer(_STRING.sub('""', text)):
        if match.group() in "[{":
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth -= 1
    return deepest


def loads(text: str | bytes) -> Any:
    """`json.loads(text)` for JSON nested up to `_MAX_JSON_DEPTH` deep.

    Raises:
        ValueTooDeepError: the text nests deeper.
        ValueError: not JSON (`json.JSONDecodeError`), or a number json refuses.
    """
    try:
        return json.loads(text)
    except RecursionError:
        pass
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    depth = _json_depth(text)
    if depth > _MAX_JSON_DEPTH:
        raise ValueTooDeepError(what=f"The JSON text (nested {depth} deep)")
    with deep_stack():
        return json.loads(text)
