"""The `Message` model (a frozen pydantic model) and reading a message from common forms.

Imported on first use of a message (`nbgraph.messages.Message`, or `add_messages` given
something to read), so `import nbgraph` does not import pydantic.
"""

from __future__ import annotations

import copy
import itertools
import operator
from typing import Any, Literal

import pydantic

from nbgraph.messages.message_types import MESSAGE_TYPES

__all__ = ["Message", "RemoveMessage"]

_ROLE_ALIASES = {"human": "user", "ai": "assistant"}

_FIELD_KEYS = ("content", "id", "name", "tool_calls", "tool_call_id", "metadata")

_ACCEPTED_FORMS = (
    "a Message, a (role, content) tuple, a dict with 'role' (or 'type') and 'content', "
    "a str (a user message), or an object with .type and .content (like a LangChain message)"
)

_REPR_CONTENT_CHARS = 60
_REPR_ID_CHARS = 12


def _short(text: str, limit: int) -> str:
    """`text` cut to `limit` characters, the cut marked with an ellipsis."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


class _Sealed:
    """Mixin: an empty container a frozen `Message` may share; changing it is refused."""

    __slots__ = ()

    def _refuse(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(
            "A Message is frozen, and so is its empty tool_calls/metadata; make a new one: "
            "message.model_copy(update={'metadata': {...}})."
        )

    __setitem__ = __delitem__ = __iadd__ = __ior__ = _refuse
    append = extend = insert = pop = remove = clear = update = setdefault = popitem = _refuse

    def __deepcopy__(self, memo: Any) -> Any:
        return self

    def __copy__(self) -> Any:
        return self


class _SealedList(_Sealed, list):  # type: ignore[misc]
    __slots__ = ()


class _SealedDict(_Sealed, dict):  # type: ignore[misc]
    __slots__ = ()


_NO_CALLS: list = _SealedList()
_NO_METADATA: dict = _SealedDict()
_CONTENT = operator.attrgetter("content")
_CALLS = operator.attrgetter("tool_calls")
_METADATA = operator.attrgetter("metadata")
_STR = frozenset({str})


def _short_id(value: str) -> str:
    """An id short enough for a one-line repr (uuids keep their first 8 characters)."""
    return value if len(value) <= _REPR_ID_CHARS else value[:8] + "…"


class Message(pydantic.BaseModel):
    """One chat message.

    Args:
        role: who speaks: "user", "assistant", "system", "tool", or any other string.
            LangChain's names are normalised: "human" becomes "user", "ai" "assistant".
        content: the text, or a list of content parts.
        id: a unique id; `add_messages` gives one to messages that have none.
        name: an optional speaker name.
        tool_calls: the tool calls an assistant message asks for.
        tool_call_id: for a tool message, the id of the call it answers.
        metadata: anything else worth keeping.

    >>> Message(role="human", content="hi", id="m1")
    Message(user: 'hi', id='m1')
    >>> print(Message(role="ai", content="hello"))
    assistant: hello
    """

    model_config = pydantic.ConfigDict(extra="forbid", frozen=True)

    role: str
    content: Any = ""
    id: str | None = None
    name: str | None = None
    tool_calls: list[dict] = pydantic.Field(default_factory=list)
    tool_call_id: str | None = None
    metadata: dict = pydantic.Field(default_factory=dict)

    @pydantic.model_validator(mode="after")
    def _seal_empty(self) -> Message:
        if not self.tool_calls:  # an empty list/dict is sealed, so the message can be shared
            self.__dict__["tool_calls"] = _NO_CALLS
        if not self.metadata:
            self.__dict__["metadata"] = _NO_METADATA
        return self

    def shareable(self) -> bool:
        """Whether nothing in this message can change: it is frozen, and its containers are
        the sealed empty ones. Then a copy of a list of messages may share it (the engine's
        copies of `messages` cost a list, not a copy of every message)."""
        return (
            type(self.content) is str
            and self.tool_calls is _NO_CALLS
            and self.metadata is _NO_METADATA
        )

    @staticmethod
    def all_shareable(messages: list | tuple) -> bool:
        """Whether every one of `messages` (all of one `Message` class) is `shareable`,
        read at C speed: a node's copy of a long conversation checks it on every read."""
        return (
            set(map(type, map(_CONTENT, messages))) <= _STR
            and all(map(operator.is_, map(_CALLS, messages), itertools.repeat(_NO_CALLS)))
            and all(map(operator.is_, map(_METADATA, messages), itertools.repeat(_NO_METADATA)))
        )

    def __deepcopy__(self, memo: dict[int, Any] | None = None) -> Message:
        if self.shareable():
            return self
        return self.model_copy(
            update={
                name: copy.deepcopy(getattr(self, name), memo)
                for name in ("content", "tool_calls", "metadata")
            }
        )

    @pydantic.field_validator("role", mode="before")
    @classmethod
    def _normalise_role(cls, value: Any) -> Any:
        if not isinstance(value, str) or not value:
            raise ValueError(
                f"role must be a non-empty str such as 'user' or 'assistant', got {value!r}"
            )
        return _ROLE_ALIASES.get(value, value)

    @classmethod
    def coerce(cls, obj: Any) -> Message:
        """Read a message from any of the forms nodes commonly return.

        Accepted: a `Message` (returned as is), a `(role, content)` tuple, a dict with
        "role" (or "type") and "content" plus any `Message` field (other keys go into
        `metadata`), a str (a user message), or an object with `.type` and `.content`
        such as a LangChain message. A role of "remove" gives a `RemoveMessage`.

        Args:
            obj: the value to read.

        Returns:
            The message.

        Raises:
            TypeError: `obj` is none of the accepted forms.

        >>> Message.coerce(("human", "hi"))
        Message(user: 'hi')
        >>> Message.coerce({"type": "ai", "content": "hello", "id": "a1"})
        Message(assistant: 'hello', id='a1')
        >>> Message.coerce("just text").role
        'user'
        """
        if isinstance(obj, Message):
            return obj
        if isinstance(obj, str):
            return cls(role="user", content=obj)
        if isinstance(obj, tuple):
            return cls._from_tuple(obj)
        if isinstance(obj, dict):
            return cls._from_dict(obj)
        if hasattr(obj, "type") and hasattr(obj, "content"):
            return cls._from_duck(obj)
        raise TypeError(
            f"Cannot read a message from {type(obj).__name__} {_short(repr(obj), 80)}: "
            f"expected {_ACCEPTED_FORMS}"
        )

    @classmethod
    def _build(cls, role: Any, fields: dict[str, Any], source: str) -> Message:
        if not isinstance(role, str) or not role:
            raise TypeError(
                f"Cannot read a message from {source}: its role must be a non-empty str "
                f"such as 'user' or 'assistant', got {type(role).__name__} {role!r}"
            )
        if role == "remove":
            if not fields.get("id"):
                raise TypeError(
                    f"Cannot read a message from {source}: a 'remove' message needs the id "
                    "of the message to remove"
                )
            return RemoveMessage(**fields)
        return cls(role=role, **fields)

    @classmethod
    def _from_tuple(cls, obj: tuple) -> Message:
        if len(obj) != 2:
            raise TypeError(
                f"Cannot read a message from a tuple of {len(obj)} items {_short(repr(obj), 80)}: "
                "expected exactly (role, content)"
            )
        role, content = obj
        return cls._build(role, {"content": content}, f"tuple {_short(repr(obj), 80)}")

    @classmethod
    def _from_dict(cls, obj: dict) -> Message:
        if "role" in obj:
            role = obj["role"]
        elif "type" in obj:
            role = obj["type"]
        else:
            raise TypeError(
                f"Cannot read a message from dict with keys {sorted(map(str, obj))}: "
                "expected a 'role' (or 'type') key"
            )
        fields = {k: obj[k] for k in _FIELD_KEYS if k in obj}
        extra = {k: v for k, v in obj.items() if k not in _FIELD_KEYS and k not in ("role", "type")}
        if extra:
            metadata = fields.get("metadata")
            if metadata is None:
                fields["metadata"] = extra
            elif isinstance(metadata, dict):
                fields["metadata"] = {**extra, **metadata}
        return cls._build(role, fields, f"dict {_short(repr(obj), 80)}")

    @classmethod
    def _from_duck(cls, obj: Any) -> Message:
        role = obj.type
        if isinstance(role, str) and role.endswith("MessageChunk"):
            role = role.removesuffix("MessageChunk").lower()  # "AIMessageChunk" -> "ai"
        if role == "chat" and isinstance(getattr(obj, "role", None), str):
            role = obj.role  # LangChain's ChatMessage keeps its real role in `.role`
        fields: dict[str, Any] = {"content": obj.content}
        for key in ("id", "name", "tool_call_id"):
            value = getattr(obj, key, None)
            if value is not None:
                fields[key] = value
        tool_calls = getattr(obj, "tool_calls", None)
        if tool_calls:
            fields["tool_calls"] = list(tool_calls)
        metadata = {
            key: value
            for key in ("additional_kwargs", "response_metadata")
            if isinstance(value := getattr(obj, key, None), dict) and value
        }
        if metadata:
            fields["metadata"] = metadata
        return cls._build(role, fields, f"{type(obj).__name__} {_short(repr(obj), 80)}")

    def _content_preview(self) -> str:
        content = self.content
        if isinstance(content, str):
            return repr(_short(content, _REPR_CONTENT_CHARS))
        if isinstance(content, list):
            return f"[{len(content)} part{'' if len(content) == 1 else 's'}]"
        return _short(repr(content), _REPR_CONTENT_CHARS)

    def __repr__(self) -> str:
        parts = [f"{self.role}: {self._content_preview()}"]
        if self.id is not None:
            parts.append(f"id={_short_id(self.id)!r}")
        if self.name is not None:
            parts.append(f"name={self.name!r}")
        if self.tool_calls:
            parts.append(f"tool_calls={len(self.tool_calls)}")
        if self.tool_call_id is not None:
            parts.append(f"tool_call_id={self.tool_call_id!r}")
        return f"{type(self).__name__}({', '.join(parts)})"

    def __str__(self) -> str:
        content = self.content if isinstance(self.content, str) else repr(self.content)
        return f"{self.role}: {content}"


class RemoveMessage(Message):
    """An instruction to `add_messages`: delete the message with this id.

    With `id=REMOVE_ALL_MESSAGES` it deletes every message before it instead.

    >>> RemoveMessage(id="m1")
    RemoveMessage(id='m1')
    """

    role: Literal["remove"] = "remove"
    id: str

    def __repr__(self) -> str:
        return f"RemoveMessage(id={_short_id(self.id)!r})"

    def __str__(self) -> str:
        return f"remove: {self.id}"


# The model's public home is `nbgraph.messages` (its repr, pickles and saved type names).
Message.__module__ = RemoveMessage.__module__ = "nbgraph.messages"
__test__ = {"Message": Message, "RemoveMessage": RemoveMessage}  # their doctests run here
MESSAGE_TYPES.update((Message, RemoveMessage))
