"""LangGraph's `langgraph.checkpoint.serde.base`: `SerializerProtocol`, what a saver's
`serde=` is (an object with `dumps_typed` and `loads_typed`)."""

from typing import Any, Protocol, runtime_checkable

__all__ = ["SerializerProtocol", "UntypedSerializerProtocol"]


@runtime_checkable
class UntypedSerializerProtocol(Protocol):
    """An object that turns a value into bytes and back (`dumps`, `loads`)."""

    def dumps(self, obj: Any) -> bytes: ...

    def loads(self, data: bytes) -> Any: ...


@runtime_checkable
class SerializerProtocol(Protocol):
    """An object that turns a value into `(type name, bytes)` and back
    (`dumps_typed`, `loads_typed`), as savers store values."""

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]: ...

    def loads_typed(self, data: tuple[str, bytes]) -> Any: ...
