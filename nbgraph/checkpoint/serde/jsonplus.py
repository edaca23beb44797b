"""LangGraph's `langgraph.checkpoint.serde.jsonplus`: `JsonPlusSerializer`, on nbgraph's codec.

nbgraph's savers write values through its own codec (`nbgraph.codec`: tagged JSON data,
never pickle, docs/VALUES.md). `JsonPlusSerializer` is that codec as LangGraph's serializer
object: `dumps_typed(value)` gives `("json", bytes)` (`"null"` for None, `"bytes"` and
`"bytearray"` as they are), `loads_typed` reads it back. LangGraph's own forms (`"msgpack"`,
`"pickle"`) are not read: they would need LangGraph's codec, and pickle runs code.

>>> from datetime import date
>>> serde = JsonPlusSerializer()
>>> kind, data = serde.dumps_typed({"when": date(2024, 5, 1), "n": (1, 2)})
>>> kind
'json'
>>> serde.loads_typed((kind, data))
{'when': datetime.date(2024, 5, 1), 'n': (1, 2)}
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from nbgraph.checkpoint.payloads import dump_payload, load_payload
from nbgraph.errors import InvalidArgumentError

__all__ = ["InvalidModuleError", "JsonPlusSerializer", "saver_serde"]


class InvalidModuleError(Exception):
    """A value names a class in a module it may not be loaded from (LangGraph's name; nbgraph's
    codec says so with its own `ModelsArgumentError` and `UnknownTagError`)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class JsonPlusSerializer:
    """nbgraph's value codec with LangGraph's serializer methods.

    Args:
        pickle_fallback: LangGraph's switch to pickle what msgpack cannot write. nbgraph
            never pickles (a pickle runs code when read back): a value its codec cannot
            write comes back as an `Unrepresentable` holding its repr, True or not
            (docs/VALUES.md); the flag is kept as given.
        allowed_json_modules, allowed_msgpack_modules: LangGraph's lists of modules a
            value's class may come from; nbgraph's codec has its own rule (a file never makes
            it import a module: `nbgraph.codec.classes`), so these are accepted and kept.
    """

    def __init__(
        self,
        *,
        pickle_fallback: bool = False,
        allowed_json_modules: Iterable[tuple[str, ...]] | Literal[True] | None = None,
        allowed_msgpack_modules: Any = None,
    ) -> None:
        self.pickle_fallback = pickle_fallback
        self.allowed_json_modules = allowed_json_modules
        self.allowed_msgpack_modules = allowed_msgpack_modules

    def __repr__(self) -> str:
        return "JsonPlusSerializer()"

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        """`obj` as `(type name, bytes)`: `"json"` (nbgraph's tagged JSON), or `"null"`,
        `"bytes"`, `"bytearray"` for those."""
        if obj is None:
            return "null", b""
        if isinstance(obj, bytes):
            return "bytes", obj
        if isinstance(obj, bytearray):
            return "bytearray", bytes(obj)
        return "json", dump_payload(obj, "A value given to JsonPlusSerializer").encode()

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        """The value `dumps_typed` gave `data` for."""
        kind, raw = data
        if kind == "null":
            return None
        if kind == "bytes":
            return bytes(raw)
        if kind == "bytearray":
            return bytearray(raw)
        if kind == "json":
            return load_payload(raw, "JsonPlusSerializer.loads_typed's data")
        raise InvalidArgumentError(
            f"JsonPlusSerializer.loads_typed: cannot read data of type {kind!r}; expected "
            "'json', 'null', 'bytes' or 'bytearray' (what nbgraph's dumps_typed writes; "
            "LangGraph's 'msgpack' and 'pickle' forms are not read)."
        )

    def dumps(self, obj: Any) -> bytes:
        """`obj` as JSON bytes (LangGraph's untyped form)."""
        return dump_payload(obj, "A value given to JsonPlusSerializer").encode()

    def loads(self, data: bytes) -> Any:
        """The value `dumps` gave `data` for."""
        return load_payload(data, "JsonPlusSerializer.loads's data")


def saver_serde(serde: Any, saver: str) -> JsonPlusSerializer:
    """What a saver's `serde=` becomes: None gives a `JsonPlusSerializer`, one is kept.

    Raises:
        InvalidArgumentError: another serializer (LangGraph's own, an encrypting one): the
            saver writes through nbgraph's codec, so it could not honour it.
    """
    if serde is None:
        return JsonPlusSerializer()
    if isinstance(serde, JsonPlusSerializer):
        return serde
    raise InvalidArgumentError(
        f"{saver}(serde={serde!r}): nbgraph's savers write values through nbgraph's codec "
        "(tagged JSON, never pickle), so they cannot use another serializer; expected None "
        "or nbgraph.checkpoint.serde.jsonplus.JsonPlusSerializer()."
    )
