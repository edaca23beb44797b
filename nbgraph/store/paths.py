"""The texts a store item gives its index: the parts of its value a field path names.

A path reads as LangGraph's store reads it: `"text"`, `"a.b"` (nested keys), `"tags[0]"`,
`"tags[-1]"`, `"sections[*].body"` (every element), `"*"` (every value of a dict or list),
`"{title,meta.author}"` (several fields at once; it ends the path), and `"$"` (the whole
value as JSON). What a path reaches becomes text: a string as it is, a number or bool as
`str()` makes it, a list or dict as JSON with sorted keys; `None` and other objects give
nothing.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = ["WHOLE", "path_tokens", "texts_at"]

WHOLE = "$"
"""The path of the whole value."""

_OPENERS = {"[": "]", "{": "}"}


def path_tokens(path: str) -> list[str]:
    """`path` split into its steps: keys, `[index]` and `{fields}` groups (kept whole).

    >>> path_tokens("sections[*].body")
    ['sections', '[*]', 'body']
    >>> path_tokens("a.{b,c.d}")
    ['a', '{b,c.d}']
    """
    tokens: list[str] = []
    current: list[str] = []
    i = 0
    while i < len(path):
        char = path[i]
        if char in _OPENERS:
            if current:
                tokens.append("".join(current))
                current = []
            end = _group_end(path, i, char, _OPENERS[char])
            tokens.append(path[i:end])
            i = end
            continue
        if char == ".":
            if current:
                tokens.append("".join(current))
                current = []
        else:
            current.append(char)
        i += 1
    if current:
        tokens.append("".join(current))
    return tokens


def _group_end(path: str, start: int, opener: str, closer: str) -> int:
    """The index after the `closer` that matches `path[start]` (or the end of `path`)."""
    depth, i = 0, start
    while i < len(path):
        depth += (path[i] == opener) - (path[i] == closer)
        i += 1
        if depth == 0:
            break
    return i


def texts_at(value: Any, path: str | list[str]) -> list[str]:
    """The texts of `value` at `path` (a path, or its `path_tokens`), in document order.

    >>> texts_at({"sections": [{"body": "a"}, {"body": 2}]}, "sections[*].body")
    ['a', '2']
    >>> texts_at({"b": 1, "a": [True]}, "$")
    ['{"a": [true], "b": 1}']
    """
    if isinstance(value, Mapping) and not isinstance(value, dict):
        value = dict(value)
    if not path or path == WHOLE:
        return [_as_json(value)]
    tokens = path_tokens(path) if isinstance(path, str) else path
    found: list[str] = []
    _read(value, tokens, 0, found)
    return found


def _as_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _leaf(value: Any) -> list[str]:
    """The text of what a path ends at."""
    if isinstance(value, str | int | float | bool):
        return [str(value)]
    if isinstance(value, list | dict):
        return [_as_json(value)]
    return []


def _read(value: Any, tokens: list[str], pos: int, found: list[str]) -> None:
    if pos == len(tokens):
        found.extend(_leaf(value))
        return
    token = tokens[pos]
    if token.startswith("[") and token.endswith("]"):
        if isinstance(value, list):
            for element in _elements(value, token[1:-1]):
                _read(element, tokens, pos + 1, found)
    elif token.startswith("{") and token.endswith("}"):
        if isinstance(value, dict):
            found.extend(_fields(value, token[1:-1]))
    elif token == "*":
        if isinstance(value, dict | list):
            children = value.values() if isinstance(value, dict) else value
            for child in children:
                _read(child, tokens, pos + 1, found)
    elif isinstance(value, dict) and token in value:
        _read(value[token], tokens, pos + 1, found)


def _elements(items: list, index: str) -> list[Any]:
    """The elements `[index]` names: all for `*`, one for an int in range, else none."""
    if index == "*":
        return items
    try:
        position = int(index)
    except ValueError:
        return []
    if position < 0:
        position += len(items)
    return [items[position]] if 0 <= position < len(items) else []


def _fields(value: dict, names: str) -> list[str]:
    """The texts of a `{a,b.c}` group: each field's value (keys only, nested by dots)."""
    found = []
    for name in names.split(","):
        keys = path_tokens(name.strip())
        current: Any = value if keys else None
        for key in keys:
            current = current.get(key) if isinstance(current, dict) else None
            if current is None:
                break
        if isinstance(current, str | int | float | bool | list | dict):
            found.extend(_leaf(current))
    return found
