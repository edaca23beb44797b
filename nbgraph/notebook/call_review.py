"""`Run.review_calls`: tool calls waiting at a breakpoint approved, edited or rejected, then the
thread run on.

A run paused before a node (`interrupt_before=["tools"]`) whose state ends with an AI message
calling tools waits for a person to approve, edit or reject those calls. What the panel
(`views.answer_panel`) or `Run.review_calls` decides is done as LangGraph's own programs do it,
through the app:

- approve every call: the thread runs on (`app.run(None, config)`);
- edit some: the AI message is written again with the same id and the edited calls
  (`update_state`, so `add_messages` replaces it), then the thread runs on;
- reject every call: a tool message per call saying so is written as the node that was to
  run them (`update_state(..., as_node=node)`), so that node is skipped, and the thread runs
  on. (Rejecting some calls only is refused: the node runs every call of the message.)

The run returned is the thread's record (`Run.from_checkpointer`), its edit a step of its
own.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from nbgraph.notebook.answer import AnswerError, questions, resume_problem, thread_of
from nbgraph.notebook.fork import attach_app

if TYPE_CHECKING:
    from nbgraph.notebook.run import Run

__all__ = ["PendingCalls", "calls_problem", "pending_calls", "review_calls"]


@dataclass(frozen=True)
class PendingCalls:
    """Tool calls a paused run waits to have approved.

    Attributes:
        node: the node paused before (the one that runs the calls).
        field: the state field holding the messages.
        message: the AI message that made the calls (the field's last message).
        calls: its tool calls (`name`, `args`, `id`), in order.
    """

    node: str
    field: str
    message: Any
    calls: tuple[dict[str, Any], ...]


def pending_calls(run: Run) -> PendingCalls | None:
    """The tool calls `run` waits on at a breakpoint, or None (not paused at a breakpoint
    before one node, or its state's last message calls no tools)."""
    if run.log.status != "interrupted" or questions(run) or resume_problem(run) is not None:
        return None
    snapshot = run.app.get_state(_config(run))
    if len(snapshot.next) != 1:
        return None
    for field, value in snapshot.values.items():
        if isinstance(value, list) and value:
            calls = _tool_calls(value[-1])
            if calls:
                return PendingCalls(snapshot.next[0], field, value[-1], tuple(calls))
    return None


def calls_problem(run: Run) -> str | None:
    """Why `run`'s tool calls cannot be reviewed now (a sentence), or None if they can."""
    if run.log.status != "interrupted":
        return f"This run is not paused (it is {run.log.status})."
    problem = resume_problem(run)
    if problem is None and pending_calls(run) is None:
        return "This run is not paused before a node with tool calls to approve."
    return problem


def review_calls(run: Run, decisions: list[Mapping[str, Any]]) -> Run:
    """Do what `decisions` say with the calls `run` waits on and run the thread on.

    Args:
        run: a run paused at a breakpoint before the node that runs its tool calls.
        decisions: one per call, in order, as langchain's human-in-the-loop writes them:
            `{"type": "approve"}`, `{"type": "edit", "edited_action": {"name", "args"}}`,
            `{"type": "reject", "message": "why"}` (message optional).

    Returns:
        The thread's record, from its first checkpoint to where it now stands.

    Raises:
        AnswerError: nothing to review, a decision per call missing or unknown, or some
            calls rejected and others not.
    """
    problem = calls_problem(run)
    if problem is not None:
        raise AnswerError(problem)
    pending = pending_calls(run)
    assert pending is not None  # (calls_problem said there is one)
    kinds = _kinds(pending, decisions)
    app, config = run.app, _config(run)
    if all(kind == "reject" for kind in kinds):
        answers = [_rejection(call, d) for call, d in zip(pending.calls, decisions, strict=True)]
        app.update_state(config, {pending.field: answers}, as_node=pending.node)
    elif "edit" in kinds:
        calls = [
            {**call, "args": dict(d["edited_action"]["args"])} if kind == "edit" else call
            for call, kind, d in zip(pending.calls, kinds, decisions, strict=True)
        ]
        app.update_state(config, {pending.field: [_with_calls(pending.message, calls)]})
    app.run(None, {"configurable": {"thread_id": thread_of(run), "checkpoint_ns": ""}})
    record = type(run).from_checkpointer(app.checkpointer, thread_of(run), graph=app)
    return attach_app(record, app)


def _kinds(pending: PendingCalls, decisions: Any) -> list[str]:
    names = [call.get("name") for call in pending.calls]
    if not isinstance(decisions, list | tuple) or len(decisions) != len(names):
        raise AnswerError(
            f"Give one decision per tool call, in order: {len(names)} for {names}, got "
            f"{decisions!r:.80}."
        )
    kinds = []
    for number, (name, decision) in enumerate(zip(names, decisions, strict=True), 1):
        kind = decision.get("type") if isinstance(decision, Mapping) else None
        if kind not in ("approve", "edit", "reject"):
            raise AnswerError(
                f"Decision {number} (tool call {name!r}) must be a dict with type 'approve', "
                f"'edit' or 'reject', got {decision!r:.80}."
            )
        edited = decision.get("edited_action") if kind == "edit" else {}
        if kind == "edit" and not isinstance((edited or {}).get("args"), Mapping):
            raise AnswerError(
                f"Decision {number} (tool call {name!r}) edits: give its new args as "
                '{"type": "edit", "edited_action": {"name": ..., "args": {...}}}.'
            )
        kinds.append(kind)
    if "reject" in kinds and set(kinds) != {"reject"}:
        raise AnswerError(
            f"Reject every tool call or none: {pending.node!r} runs every call of the "
            "message, so the calls kept would run the rejected ones too."
        )
    return kinds


def _rejection(call: Mapping[str, Any], decision: Mapping[str, Any]) -> dict[str, Any]:
    reason = decision.get("message") or "no reason given"
    return {
        "role": "tool",
        "content": f"The user rejected the call to {call.get('name')}: {reason}",
        "tool_call_id": call.get("id"),
        "name": call.get("name"),
    }


def _tool_calls(message: Any) -> list[dict[str, Any]]:
    calls = message.get("tool_calls") if isinstance(message, Mapping) else None
    calls = calls if calls is not None else getattr(message, "tool_calls", None)
    if getattr(message, "type", None) not in (None, "ai") or not isinstance(calls, list):
        return []
    return [dict(call) for call in calls if isinstance(call, Mapping)]


def _with_calls(message: Any, calls: list[dict[str, Any]]) -> Any:
    """`message` with `calls` as its tool calls (its id kept: the reducer replaces it)."""
    if isinstance(message, Mapping):
        return {**message, "tool_calls": calls}
    return message.model_copy(update={"tool_calls": calls})


def _config(run: Run) -> dict[str, Any]:
    configurable = {"thread_id": thread_of(run), "checkpoint_ns": ""}
    configurable["checkpoint_id"] = run.checkpoint_head
    return {"configurable": configurable}
