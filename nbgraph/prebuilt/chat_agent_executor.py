"""LangGraph's `langgraph.prebuilt.chat_agent_executor`: `create_react_agent` and the states
its agents keep (they live in `nbgraph.prebuilt.react_agent`)."""

from nbgraph.prebuilt.react_agent import (
    AgentState,
    AgentStatePydantic,
    AgentStateWithStructuredResponse,
    AgentStateWithStructuredResponsePydantic,
    create_react_agent,
    create_tool_calling_executor,
)

__all__ = [
    "AgentState",
    "AgentStatePydantic",
    "AgentStateWithStructuredResponse",
    "AgentStateWithStructuredResponsePydantic",
    "create_react_agent",
    "create_tool_calling_executor",
]
