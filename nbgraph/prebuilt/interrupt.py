"""LangGraph's `langgraph.prebuilt.interrupt`: the shapes of a human-in-the-loop request
(Agent Inbox's), as typed dicts.

A node asks `interrupt([HumanInterrupt(...)])` and reads the `HumanResponse` it is resumed
with. nbgraph's inspector shows such a request as a tool-call review
(`nbgraph.views.panels.tool_review`). LangGraph marks these deprecated since 1.0 (moved to
`langchain.agents.interrupt`); here they are plain typed dicts.

>>> request = HumanInterrupt(
...     action_request=ActionRequest(action="run_command", args={"command": "ls"}),
...     config=HumanInterruptConfig(
...         allow_ignore=True, allow_respond=True, allow_edit=False, allow_accept=True
...     ),
...     description="Please review the command",
... )
>>> request["action_request"]["action"]
'run_command'
"""

from typing import Literal, TypedDict

__all__ = ["ActionRequest", "HumanInterrupt", "HumanInterruptConfig", "HumanResponse"]


class HumanInterruptConfig(TypedDict):
    """What the person may do with the request: ignore it, answer in words, edit the
    action's arguments, accept it as it is."""

    allow_ignore: bool
    allow_respond: bool
    allow_edit: bool
    allow_accept: bool


class ActionRequest(TypedDict):
    """The action asked about (a tool's name, say) and its arguments."""

    action: str
    args: dict


class HumanInterrupt(TypedDict):
    """The value a node passes to `interrupt()` to ask a person about an action."""

    action_request: ActionRequest
    config: HumanInterruptConfig
    description: str | None


class HumanResponse(TypedDict):
    """The answer a person resumes with: `type` is `"accept"`, `"ignore"`, `"response"`
    (with the words in `args`) or `"edit"` (with the edited `ActionRequest` in `args`)."""

    type: Literal["accept", "ignore", "response", "edit"]
    args: str | ActionRequest | None
