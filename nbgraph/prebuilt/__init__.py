"""Ready-made nodes, routers and agents, as `langgraph.prebuilt` has them: `ToolNode` runs the
tool calls of the latest AI message, `tools_condition` routes to it or to END,
`create_react_agent` builds the model-and-tools loop on them; `InjectedState`,
`InjectedStore`, `InjectedToolCallId` and `ToolRuntime` mark the tool parameters the tool
node fills (hidden from the model).

Needs `langchain_core` (`pip install nbgraph[langchain]`); it is imported when this package
is, never by `import nbgraph`.
"""

from nbgraph.prebuilt.injection import (
    InjectedState,
    InjectedStore,
    InjectedToolCallId,
    ToolRuntime,
)
from nbgraph.prebuilt.react_agent import (
    AgentState,
    AgentStatePydantic,
    AgentStateWithStructuredResponse,
    AgentStateWithStructuredResponsePydantic,
    create_react_agent,
    create_tool_calling_executor,
)
from nbgraph.prebuilt.tool_node import ToolNode, tools_condition

__all__ = [
    "AgentState",
    "AgentStatePydantic",
    "AgentStateWithStructuredResponse",
    "AgentStateWithStructuredResponsePydantic",
    "InjectedState",
    "InjectedStore",
    "InjectedToolCallId",
    "ToolNode",
    "ToolRuntime",
    "create_react_agent",
    "create_tool_calling_executor",
    "tools_condition",
]
