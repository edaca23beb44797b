"""LangGraph's `langgraph.typing`: the type variables its generic classes are written with
(`StateGraph[StateT, ContextT, InputT, OutputT]`, `Runtime[ContextT]`), for annotations."""

from typing import Any

from typing_extensions import TypeVar

__all__ = ["ContextT", "InputT", "OutputT", "StateT", "StateT_co", "StateT_contra"]

StateT = TypeVar("StateT")
StateT_co = TypeVar("StateT_co", covariant=True)
StateT_contra = TypeVar("StateT_contra", contravariant=True)
ContextT = TypeVar("ContextT", default=None)
InputT = TypeVar("InputT", default=Any)
OutputT = TypeVar("OutputT", default=Any)
