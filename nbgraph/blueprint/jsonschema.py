"""A compiled graph's input and output schemas as LangGraph gives them, as pydantic models and
as JSON schemas.

`get_input_schema()` and `get_output_schema()` give the models, `get_input_jsonschema()` and
`get_output_jsonschema()` their JSON schemas.

As LangGraph: a pydantic state is its own schema; a TypedDict's JSON schema is pydantic's of
it; any other state (a dataclass) becomes a model named `<graph>Input` / `<graph>Output` of
its fields, each with its default (a dataclass field's, None for an optional type, else
required). `get_input_schema()` wraps a non-pydantic input schema in a root model named
`<graph>Input`; `get_output_schema()` is a model of the output fields, each defaulting to
None. pydantic is imported only when one is asked for.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any

from nbgraph.blueprint.spec import GraphSpec
from nbgraph.schema import SchemaInfo

__all__ = [
    "context_jsonschema",
    "input_jsonschema",
    "input_model",
    "output_jsonschema",
    "output_model",
]


def input_model(spec: GraphSpec, name: str) -> Any:
    """`get_input_schema()`: the pydantic input state, else a root model over the input
    schema, named `name + "Input"`."""
    from pydantic import BaseModel, RootModel, create_model

    cls = spec.input.cls
    if isinstance(cls, type) and issubclass(cls, BaseModel):
        return cls
    if spec.input.kind == "root":  # (`StateGraph(Annotated[list, add])`: the bare value)
        cls = _root_type(spec.input)
    return create_model(_suffixed(name, "Input"), __base__=RootModel[cls])  # type: ignore[valid-type]


def output_model(spec: GraphSpec, name: str) -> Any:
    """`get_output_schema()`: a model of the output fields, each defaulting to None."""
    from pydantic import RootModel, create_model

    if spec.output.kind == "root":
        root = _root_type(spec.output)
        return create_model(_suffixed(name, "Output"), __base__=RootModel[root])  # type: ignore[valid-type]
    fields = {key: (f.type, None) for key, f in _fields(spec.output).items()}
    return create_model(_suffixed(name, "Output"), **fields)  # type: ignore[call-overload]


def input_jsonschema(spec: GraphSpec, name: str) -> dict[str, Any]:
    """`get_input_jsonschema()`."""
    return _jsonschema(spec.input, _suffixed(name, "Input"))


def output_jsonschema(spec: GraphSpec, name: str) -> dict[str, Any]:
    """`get_output_jsonschema()`."""
    return _jsonschema(spec.output, _suffixed(name, "Output"))


def context_jsonschema(context_schema: Any) -> dict[str, Any] | None:
    """`get_context_jsonschema()`: the JSON schema of `compile`'s `context_schema` (a
    pydantic model, TypedDict or dataclass), or None without one.

    Raises:
        ValueError: a context schema of another kind, named.
    """
    if context_schema is None:
        return None
    from pydantic import BaseModel, TypeAdapter
    from typing_extensions import is_typeddict

    if isinstance(context_schema, type) and issubclass(context_schema, BaseModel):
        return context_schema.model_json_schema()
    if is_typeddict(context_schema) or dataclasses.is_dataclass(context_schema):
        return TypeAdapter(context_schema).json_schema()
    raise ValueError(
        f"Invalid context schema type: {context_schema!r}. Must be a pydantic BaseModel, "
        "TypedDict or dataclass."
    )


def _jsonschema(info: SchemaInfo, title: str) -> dict[str, Any]:
    from pydantic import BaseModel, RootModel, TypeAdapter, create_model
    from typing_extensions import is_typeddict  # (knows both TypedDicts on Python 3.11)

    cls = info.cls
    if isinstance(cls, type) and issubclass(cls, BaseModel):
        return cls.model_json_schema()
    if info.kind == "root":  # (the bare value, defaulting to None)
        root = _root_type(info)
        model = create_model(title, __base__=RootModel[root], root=(root, None))  # type: ignore[valid-type]
        return model.model_json_schema()
    if is_typeddict(cls):
        return TypeAdapter(cls).json_schema()
    fields = {key: (f.type, _default(cls, key, f.type)) for key, f in _fields(info).items()}
    return create_model(title, **fields).model_json_schema()  # type: ignore[call-overload]


def _root_type(info: SchemaInfo) -> Any:
    """A root-channel state's value type (its `Annotated` reducer left out)."""
    return next(iter(info.fields.values())).type


def _fields(info: SchemaInfo) -> dict[str, Any]:
    """The fields a caller writes or reads (managed values left out)."""
    return {key: f for key, f in info.fields.items() if not f.managed}


def _default(cls: Any, key: str, annotation: Any) -> Any:
    """A field's default as LangGraph reads it: a dataclass field's, None for an optional
    type, else `...` (required)."""
    if dataclasses.is_dataclass(cls):
        found = {f.name: f for f in dataclasses.fields(cls)}.get(key)
        if found is not None and found.default is not dataclasses.MISSING:
            return found.default
        if found is not None and found.default_factory is not dataclasses.MISSING:
            return found.default_factory()
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType) and type(None) in typing.get_args(annotation):
        return None
    return ...


def _suffixed(name: str, suffix: str) -> str:
    """`Runnable.get_name(suffix)`: `LangGraphInput`, or `my_graph_input`."""
    return name + suffix if name[:1].isupper() else f"{name}_{suffix.lower()}"
