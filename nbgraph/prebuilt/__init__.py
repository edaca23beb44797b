"""Ready-made nodes, routers and agents, as `langgraph.prebuilt` has them.

`ToolNode` runs the tool calls of the latest AI message, `tools_condition` routes to it or to
END, `create_react_agent` builds the model-and-tools loop on them; `InjectedState`,
`InjectedStore`, `InjectedToolCallId` and `ToolRuntime` mark the tool parameters the tool node
fills (hidden from the model).

Needs `langchain_core` (`pip install nbgraph[langchain]`); it is imported when this package
is, never by `import nbgraph`.
"""

from nbgraph.prebuilt.injection import (
    InjectedState,
    InjectedStore,
    InjectedToolCallId,
    ToolRuntime,
)
from nbgraph.prebuilt.react_agent import *  # noqa: F403
from nbgraph.prebuilt.react_agent import __all__ as _agent_names
from nbgraph.prebuilt.tool_node import ToolNode, tools_condition

__all__ = [
    "InjectedState",
    "InjectedStore",
    "InjectedToolCallId",
    "ToolNode",
    "ToolRuntime",
    "tools_condition",
]
__all__ += _agent_names  # (`create_react_agent` and its states)
