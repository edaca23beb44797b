"""Text forms of recorded values that never raise: every table, panel and label uses these.

A value that came from a node may have a `__repr__` (or `__str__`) that raises: a
half-initialised object, a proxy to a closed resource, an ORM row after its session ended.
Showing a run must not fail because of one, so its text becomes a placeholder naming the
class and the error. The text is not escaped here: callers escape it for HTML or DOT.
"""

from __future__ import annotations

import dataclasses
import sys
from typing import Any

from nbgraph.record.cells import ListPrefix, TextPrefix
from nbgraph.record.message_text import is_langchain_message, message_text

__all__ = ["NO_VALUE", "plural", "safe_repr", "safe_str", "short", "status_text", "visible"]

_ERROR_CHARS = 60
_DEPTH = 100  # containers nested deeper than this are cut with "…" (repr's own limit is ~1000)
_CONTAINERS = {dict: "}", list: "]", ListPrefix: "]", tuple: ")"}
_OPENINGS = {"}": "{", "]": "[", ")": "("}
_DATACLASS_FIELD = dataclasses._FIELD  # type: ignore[attr-defined]  # (not a ClassVar/InitVar)


NO_VALUE = "MISSING"
"""The one word every view shows for a field with no value yet (a cell holding `MISSING`):
the name of the object the cell holds, so what is read is what can be typed."""

_STATUS_WORDS = {"interrupted": "paused (waiting for an answer)"}


def status_text(status: str) -> str:
    """A run's status in words: a run paused at `interrupt()` reads "paused", not as a
    failure (its `status` stays `"interrupted"`, LangGraph's word for it).

    >>> status_text("interrupted"), status_text("done")
    ('paused (waiting for an answer)', 'done')
    """
    return _STATUS_WORDS.get(status, status)


def plural(count: int, word: str, words: str | None = None) -> str:
    """`count` and the word, plural unless the count is 1.

    >>> plural(1, "superstep"), plural(2, "node"), plural(0, "entry", "entries")
    ('1 superstep', '2 nodes', '0 entries')
    """
    return f"{count} {word if count == 1 else words or word + 's'}"


def safe_repr(value: Any) -> str:
    """`repr(value)`, or a placeholder if that raises (or returns something not a str).

    >>> class Broken:
    ...     def __repr__(self):
    ...         raise ValueError("closed")
    >>> safe_repr(Broken()), safe_repr([1, "a"])
    ('<Broken: repr raised ValueError: closed>', "[1, 'a']")
    """
    return _guarded(repr, value, "repr")


def safe_str(value: Any) -> str:
    """`str(value)`, or a placeholder if that raises (an exception's message, a key).

    >>> class Broken(Exception):
    ...     def __str__(self):
    ...         raise RuntimeError("no")
    >>> safe_str(Broken())
    '<Broken: str raised RuntimeError: no>'
    """
    return _guarded(str, value, "str")


def _guarded(show: Any, value: Any, what: str) -> str:
    try:
        text = show(value)
        if type(text) is not str:
            raise TypeError(f"__{what}__ returned {type(text).__name__}, not str")
        return text
    except Exception as error:  # the placeholder must not fail in turn
        try:
            message = str(error)
        except Exception:
            message = "(its message cannot be shown either)"
        if len(message) > _ERROR_CHARS:
            message = message[: _ERROR_CHARS - 1] + "…"
        detail = f": {message}" if message else ""
        return f"<{type(value).__name__}: {what} raised {type(error).__name__}{detail}>"


def visible(text: str) -> str:
    """`text` with each lone surrogate (half of an emoji cut from a stream) written as its
    escape, as repr writes it: UTF-8 (a DOT file, a widget's message) cannot hold one.

    >>> visible("answer \\ud83d"), visible("ok")
    ('answer \\\\ud83d', 'ok')
    """
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


def short(value: Any, width: int = 40) -> str:
    """A one-line text of at most `width` characters: the repr, cut with "…".

    Only as much of `value` is read as the text shows: a long str or bytes is sliced, a long
    list, tuple, dict, set, or a dataclass's or pydantic model's fields are read item by
    item, so a cell holding a 100,000-item log or a 10 MB transcript costs what its first
    items cost (other objects keep their own repr).

    >>> short(list(range(100_000)), 20), short({"a": [1, 2]}), short("x\\ny")
    ('[0, 1, 2, 3, 4, 5, …', "{'a': [1, 2]}", "'x\\\\ny'")
    """
    text = " ".join(_bounded(value, width + 1).split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _bounded(value: Any, budget: int, inside: tuple[int, ...] = ()) -> str:
    """The repr of `value`, or (if longer than `budget`) at least its first `budget` chars,
    reading only as much of `value` as that takes: a long str or bytes is sliced before its
    repr, a collection (a set too), a dataclass's or a pydantic model's fields are read
    item by item until the text is long enough. Other objects keep their own repr.

    `inside` holds the ids of the containers being written around `value`: a container met
    again inside itself is written as repr writes it (`[...]`, `{...}`), and one nested
    deeper than `_DEPTH` as "…", so no value makes the text recurse without end.
    """
    kind = type(value)
    if kind in _TEXTS or kind is TextPrefix:
        return _text_head(value, budget)
    closing = _CONTAINERS.get(kind)
    if closing is None or (kind is tuple and len(value) == 1):  # "(x,)": left to repr
        if is_langchain_message(value):  # langchain's repr spells every empty field
            return message_text(value)
        return _object(value, budget, inside)
    opening = "[" if kind is ListPrefix else _OPENINGS[closing]
    if id(value) in inside:
        return f"{opening}...{closing}"
    if len(inside) >= _DEPTH:
        return f"{opening}…"
    inside = (*inside, id(value))
    if kind is dict:
        items: Any = (
            f"{_bounded(k, budget, inside)}: {_bounded(v, budget, inside)}"
            for k, v in value.items()
        )
    else:
        items = (_bounded(item, budget, inside) for item in value)
    return _joined(opening, items, closing, budget)


_TEXTS = (str, bytes, bytearray)


def _text_head(value: Any, budget: int) -> str:
    """The repr of the first characters of a str or bytes (a `TextPrefix`'s too), enough to
    fill `budget` once whitespace is collapsed (at most 64 times as many), its closing
    quote replaced by "…" when the value goes on."""
    length, taken = len(value), budget + 1
    while True:
        piece = value.head(taken) if type(value) is TextPrefix else value[:taken]
        text = safe_repr(piece)
        if taken >= length:
            return text
        if len(" ".join(text.split())) > budget or taken >= 64 * (budget + 1):
            return text[:-1] + "…"
        taken *= 4


def _object(value: Any, budget: int, inside: tuple[int, ...]) -> str:
    """`_bounded` for what is not a str, bytes, list, tuple or dict: a set, a dataclass or
    a pydantic model read field by field (as their own repr writes them), else its repr."""
    kind = type(value)
    plain = _plain_scalar(value)
    if plain is not None:
        return plain
    table = _table_text(value)
    if table is not None:
        return table
    if kind in (set, frozenset):
        if not value:
            return safe_repr(value)
        if id(value) in inside or len(inside) >= _DEPTH:
            return f"{kind.__name__}(…)"
        inside = (*inside, id(value))
        items = (_bounded(item, budget, inside) for item in value)
        text = _joined("{", items, "}", budget)
        return text if kind is set else f"frozenset({text})"
    fields = _fields(value)
    if fields is None or id(value) in inside or len(inside) >= _DEPTH:
        return safe_repr(value)
    inside = (*inside, id(value))
    parts = (f"{name}={_bounded(item, budget, inside)}" for name, item in fields)
    return _joined(f"{_class_name(value)}(", parts, ")", budget)


def _plain_scalar(value: Any) -> str | None:
    """A numpy scalar as the Python number or bool it holds (`np.True_` → `True`,
    `np.float64(0.5)` → `0.5`); None for anything else. numpy is not imported here."""
    module = sys.modules.get("numpy")
    if module is None or not isinstance(value, module.generic):
        return None
    try:
        item = value.item()
    except Exception:
        return None
    return safe_repr(item) if isinstance(item, bool | int | float | complex | str) else None


_COLUMNS_NAMED = 6


def _table_text(value: Any) -> str | None:
    """A pandas DataFrame or Series in one line: its kind, shape and column names (a
    Series: its name and first values); None for anything else. Reads only the head."""
    module = sys.modules.get("pandas")
    if module is None:
        return None
    try:
        if isinstance(value, module.DataFrame):
            rows, columns = value.shape
            names = [safe_str(c) for c in value.columns[:_COLUMNS_NAMED]]
            more = ", …" if columns > _COLUMNS_NAMED else ""
            return f"DataFrame {rows}×{columns} [{', '.join(names)}{more}]"
        if isinstance(value, module.Series):
            head = ", ".join(_bounded(v, 40, ()) for v in value.head(_COLUMNS_NAMED).tolist())
            more = ", …" if len(value) > _COLUMNS_NAMED else ""
            name = "" if value.name is None else f" {safe_str(value.name)}"
            return f"Series{name} ({plural(len(value), 'row')}): [{head}{more}]"
    except Exception:  # a half-built frame: its own repr (guarded) says so
        return None
    return None


def _fields(value: Any) -> Any:
    """The `(name, value)` pairs a dataclass's or pydantic model's own repr shows, or None
    for another object (or one whose class writes its own repr)."""
    kind = type(value)
    method = getattr(kind, "__repr__", None)
    made = getattr(getattr(method, "__wrapped__", None), "__qualname__", "")
    params = getattr(kind, "__dataclass_params__", None)
    try:
        if params is not None and params.repr and "__create_fn__" in made:
            shown = [
                f
                for f in kind.__dataclass_fields__.values()
                if f.repr and f._field_type is _DATACLASS_FIELD
            ]
            return ((f.name, getattr(value, f.name)) for f in shown)
        base = _pydantic_base()
        if base is not None and isinstance(value, base) and method is base.__repr__:
            return ((name, item) for name, item in value.__repr_args__() if name is not None)
    except Exception:  # a half-built object: its own repr (guarded) says so
        return None
    return None


def _class_name(value: Any) -> str:
    name = getattr(value, "__repr_name__", None)
    try:
        shown = name() if callable(name) else type(value).__qualname__
    except Exception:
        shown = None
    return shown if isinstance(shown, str) else type(value).__qualname__


def _pydantic_base() -> Any:
    module = sys.modules.get("pydantic")
    return getattr(module, "BaseModel", None) if module is not None else None


def _joined(opening: str, parts: Any, closing: str, budget: int) -> str:
    kept, used = [], len(opening)
    for part in parts:
        kept.append(part)
        used += len(part) + 2
        if used > budget:  # enough to fill the width: the caller cuts it ("…" marks the cut)
            return opening + ", ".join(kept) + ", …"
    return opening + ", ".join(kept) + closing
