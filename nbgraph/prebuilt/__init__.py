"""Ready-made nodes and routers, as `langgraph.prebuilt` has them: `ToolNode` runs the tool
calls of the latest AI message, `tools_condition` routes to it or to END; `InjectedState`,
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
from nbgraph.prebuilt.tool_node import ToolNode, tools_condition

__all__ = [
    "InjectedState",
    "InjectedStore",
    "InjectedToolCallId",
    "ToolNode",
    "ToolRuntime",
    "tools_condition",
]
