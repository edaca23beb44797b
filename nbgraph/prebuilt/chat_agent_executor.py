"""LangGraph's `langgraph.prebuilt.chat_agent_executor`: `create_react_agent` and the states
its agents keep (they live in `nbgraph.prebuilt.react_agent`, whose `__all__` is this
module's)."""

from nbgraph.prebuilt import react_agent as _react_agent
from nbgraph.prebuilt.react_agent import *  # noqa: F403

__all__ = list(_react_agent.__all__)
