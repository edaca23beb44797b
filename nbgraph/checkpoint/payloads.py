"""A checkpoint's values as JSON text and back (`encode_value`, never pickle), for savers
that keep text."""

from __future__ import annotations

import json
import math
import warnings
from typing import Any

from nbgraph.codec import nesting
from nbgraph.codec.nesting import ValueTooDeepError, field_of
from nbgraph.codec.values import TAG, UnknownTagError, ValueEncoder, decode_value
from nbgraph.errors import CheckpointFileError

__all__ = ["dump_payload", "is_plain", "load_payload"]


def dump_payload(value: Any, what: str = "A checkpoint's value", warn_as: str | None = None) -> str:
    """`value` as JSON text, through `encode_value` (never pickle).

    A str holding a lone surrogate (half of an emoji, cut from a stream) is kept as a JSON
    `\\udXXX` escape, which reads back the same. A value kept only as its repr (it comes
    back as an `Unrepresentable`) is warned about, naming its field and class, once for
    each (`warn_as`, field, class) as Python's warnings go (`warn_as`: where it is saved).

    Raises:
        ValueTooDeepError: `value` is nested deeper than nbgraph saves, naming the field
            (`what` says what the value is).

    >>> dump_payload({"n": (1, 2)})
    '{"n":{"$type":"tuple","items":[1,2]}}'
    """
    try:
        plain = is_plain(value)  # most payloads are plain JSON data already: dumped as they are
    except RecursionError:
        plain = False
    if plain and (fast := nesting.orjson()) is not None:
        try:
            return fast.dumps(value).decode()
        except TypeError:  # orjson: an int over 64 bits, a lone surrogate, deep nesting
            pass
    try:
        if plain:
            try:
                return _json_text(value)
            except ValueError:  # an int too long for JSON text: the encoder tags it
                pass
        encoder = ValueEncoder()
        data = encoder(value)
    except ValueTooDeepError as error:
        field = field_of(value, error.path)
        raise error.within(f"{what} (field {field!r})" if field else what) from None
    if encoder.lost:
        _warn_lost(data, warn_as or what)
    return _json_text(data)


def _warn_lost(data: Any, where: str) -> None:
    """Warn of each field of `data` holding a value kept only as its repr."""
    for field, class_name in _reprs(data):
        name = f"field {field!r}" if field else "a value"
        warnings.warn(
            f"{where}: {name} holds a {class_name}, which is saved only as its repr: it comes "
            "back as an Unrepresentable (a resumed run or another process gets that, not the "
            "object). docs/VALUES.md lists the values kept exactly; MemorySaver keeps any.",
            UserWarning,
            stacklevel=4,
        )


def _reprs(data: Any) -> dict[tuple[str | None, str], None]:
    """The (field, class name) of each repr-tagged value in encoded `data`, in order."""
    found: dict[tuple[str | None, str], None] = {}
    stack: list[tuple[Any, list[Any]]] = [(data, [])]
    while stack:
        node, path = stack.pop()
        if type(node) is list:
            stack.extend((item, [*path, i]) for i, item in reversed(list(enumerate(node))))
        elif type(node) is dict:
            if node.get(TAG) == "repr":
                found[field_of(data, path), str(node.get("class"))] = None
            else:
                stack.extend((item, [*path, k]) for k, item in reversed(list(node.items())))
    return found


def _json_text(data: Any) -> str:
    """JSON data as compact text (a lone surrogate kept as a `\\udXXX` escape)."""
    text = nesting.dumps(data, ensure_ascii=False, separators=(",", ":"))
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: UTF-8 cannot hold it, JSON escapes can
            text = nesting.dumps(data, ensure_ascii=True, separators=(",", ":"))
    return text


def is_plain(value: Any) -> bool:
    """Whether `value` is plain JSON data as `encode_value` leaves it: str-keyed dicts
    without a `"$type"` key, lists, str, int, bool, None, finite floats (exact types).

    Raises:
        RecursionError: `value` nests deeper than the stack.
    """
    kind = type(value)
    if kind is list:
        for item in value:
            k = type(item)
            if not (k is str or k is int or k is bool or item is None or is_plain(item)):
                return False
        return True
    if kind is dict:
        if TAG in value:
            return False
        for key, item in value.items():
            k = type(item)
            if type(key) is not str or not (
                k is str or k is int or k is bool or item is None or is_plain(item)
            ):
                return False
        return True
    if kind is str or kind is int or kind is bool or value is None:
        return True
    return kind is float and math.isfinite(value)


_MARKS = ('"$type"', "\\u")  # a tag's key in JSON text; a \u escape might spell one too
_BYTE_MARKS = tuple(mark.encode() for mark in _MARKS)


def load_payload(text: Any, where: str) -> Any:
    """The value `dump_payload` made `text` from.

    Raises:
        CheckpointFileError: `text` is not JSON text, nests too deep, holds a tag this
            nbgraph does not know, or is not shaped as `encode_value` makes it, naming
            `where`.
    """
    if not isinstance(text, str | bytes):
        raise CheckpointFileError(
            f"{where} is a {type(text).__name__}, not JSON text; expected a value saved by nbgraph."
        )
    try:
        data = nesting.loads(text)
        marks = _MARKS if type(text) is str else _BYTE_MARKS
        if marks[0] not in text and marks[1] not in text:
            return data  # no tag: the JSON is the value (decoding would copy it as it is)
        return decode_value(data)
    except ValueTooDeepError as error:
        raise CheckpointFileError(f"{where}: {error}") from None
    except json.JSONDecodeError as error:
        raise CheckpointFileError(
            f"{where} is not valid JSON ({error}); expected a value saved by nbgraph."
        ) from None
    except UnknownTagError as error:
        raise CheckpointFileError(
            f"{where} holds a value tagged {error.tag!r}, which this nbgraph does not know; "
            "it was probably saved by a newer nbgraph."
        ) from None
    except (KeyError, ValueError, TypeError, AttributeError, IndexError, OverflowError) as error:
        raise CheckpointFileError(
            f"{where} is not a value saved by nbgraph ({type(error).__name__}: {error})."
        ) from None
