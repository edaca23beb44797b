"""A tool-call review read from an interrupt's value, and a person's decisions written as the
answer that shape expects (pure functions: the answer panel, `views.panels.answer_panel`, shows
them).

Three shapes are known, each answered as its own code reads the answer:

- langchain's `HumanInTheLoopMiddleware`, batched: `{"action_requests": [{"name", "args",
  "description"}], "review_configs": [{"action_name", "allowed_decisions"}]}`, answered
  `{"decisions": [{"type": "approve"} | {"type": "edit", "edited_action": {"name", "args"}}
  | {"type": "reject", "message"?} | {"type": "respond", "message"}]}`, one decision per
  action in order;
- the same middleware per call: `{"type": "tool_approval", "tool_call_id", "name", "args",
  "description"}`, answered with one decision;
- tool calls at a breakpoint (`calls_review`: an AI message's calls, paused before the node
  that runs them), answered with a list of the middleware's decisions, one per call
  (`Run.review_calls` does them);
- LangGraph's older `HumanInterrupt` (a list of them, or one): `{"action_request": {"action",
  "args"}, "config": {"allow_accept", "allow_edit", "allow_respond", "allow_ignore"},
  "description"}`, answered with a `HumanResponse` each (`{"type": "accept" | "edit" |
  "response" | "ignore", "args"}`), a list for a list.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from nbgraph.record.text import plural

__all__ = [
    "DECISIONS",
    "Action",
    "Review",
    "ReviewAnswerError",
    "calls_review",
    "review_answer",
    "review_of",
]

DECISIONS = ("approve", "edit", "reject", "respond")
"""Every decision, in the order offered; "respond" (answer in the tool's place, with a
message) only where a review config allows it."""
_DEFAULT = DECISIONS[:3]


class ReviewAnswerError(ValueError):
    """A decision the review cannot take (names the tool call and the field)."""


@dataclass(frozen=True)
class Action:
    """One tool call to review.

    Attributes:
        name: the tool.
        args: the arguments the model gave it.
        description: the text the graph gave the reviewer ("" if none).
        allowed: the decisions allowed, in `DECISIONS` order.
        known_args: the argument names an edit may give (the schema's, else `args`').
        rejects_as: for a `HumanInterrupt`, how a rejection goes back: `"response"` (with
            the reason) when it allows only responses, `"ignore"` when only ignoring,
            `"either"` (a response when a reason is given); "" for the middleware's shapes.
    """

    name: str
    args: dict[str, Any]
    description: str
    allowed: tuple[str, ...]
    known_args: tuple[str, ...]
    rejects_as: str = ""


@dataclass(frozen=True)
class Review:
    """A tool-call review: its shape (`"batched"`, `"per_call"`, `"human_interrupt"`,
    `"human_interrupts"` for a list) and its actions, in order."""

    shape: str
    actions: tuple[Action, ...]


def review_of(value: Any) -> Review | None:
    """The review `value` asks for, or None if it is not one of the known shapes.

    >>> review = review_of({"type": "tool_approval", "tool_call_id": "c1",
    ...                     "name": "search", "args": {"q": "x"}, "description": "ok?"})
    >>> review.shape, review.actions[0].name, review.actions[0].allowed
    ('per_call', 'search', ('approve', 'edit', 'reject'))
    """
    if isinstance(value, Mapping):
        if _is_list(value.get("action_requests")) and "review_configs" in value:
            return _batched(value)
        if value.get("type") == "tool_approval" and isinstance(value.get("name"), str):
            return Review("per_call", (_action(value, value.get("args"), _DEFAULT),))
        if _is_human_interrupt(value):
            return Review("human_interrupt", (_human_action(value),))
        return None
    if _is_list(value) and value and all(_is_human_interrupt(v) for v in value):
        return Review("human_interrupts", tuple(_human_action(v) for v in value))
    return None


def calls_review(calls: Sequence[Mapping[str, Any]]) -> Review:
    """The review of tool calls waiting at a breakpoint (`name`, `args`, `id` each).

    >>> review = calls_review([{"name": "add", "args": {"a": 1}, "id": "c1"}])
    >>> review_answer(review, [("reject", "")])
    [{'type': 'reject'}]
    """
    return Review("breakpoint", tuple(_action(c, c.get("args"), _DEFAULT) for c in calls))


def review_answer(review: Review, decisions: Sequence[tuple[str, Any]]) -> Any:
    """The answer to `review`: one `(decision, detail)` per action, in order — `("approve",
    None)`, `("edit", new_args)`, `("reject", message)` (message "" for none) or
    `("respond", message)`.

    >>> review = review_of({"action_requests": [{"name": "add", "args": {"a": 1}}],
    ...                     "review_configs": []})
    >>> review_answer(review, [("edit", {"a": 2})])
    {'decisions': [{'type': 'edit', 'edited_action': {'name': 'add', 'args': {'a': 2}}}]}

    Raises:
        ReviewAnswerError: a decision the action does not allow, or an edit that is not an
            object or names an argument the tool call does not have (named).
    """
    if len(decisions) != len(review.actions):
        raise ReviewAnswerError(
            f"The review has {plural(len(review.actions), 'tool call')} but got "
            f"{plural(len(decisions), 'decision')}: decide each one."
        )
    for number, (action, (kind, detail)) in enumerate(
        zip(review.actions, decisions, strict=True), 1
    ):
        _check(action, number, kind, detail)
    if review.shape in ("human_interrupt", "human_interrupts"):
        answers = [_human_response(a, *d) for a, d in zip(review.actions, decisions, strict=True)]
        return answers[0] if review.shape == "human_interrupt" else answers
    made = [_decision(a, *d) for a, d in zip(review.actions, decisions, strict=True)]
    if review.shape == "breakpoint":
        return made
    return made[0] if review.shape == "per_call" else {"decisions": made}


def _check(action: Action, number: int, kind: str, detail: Any) -> None:
    where = f"tool call {number} ({action.name!r})"
    if kind not in action.allowed:
        raise ReviewAnswerError(
            f"The decision for {where} is {kind!r}; it allows {list(action.allowed)}."
        )
    if kind == "edit":
        if not isinstance(detail, Mapping):
            raise ReviewAnswerError(
                f"The edited args of {where} must be a JSON object such as "
                f'{{"{next(iter(action.known_args), "arg")}": ...}}, got {type(detail).__name__}.'
            )
        unknown = [k for k in detail if k not in action.known_args]
        if unknown:
            raise ReviewAnswerError(
                f"The edited args of {where} name unknown arg{'s' * (len(unknown) > 1)} "
                f"{', '.join(repr(k) for k in unknown)}; its args are {list(action.known_args)}."
            )


def _decision(action: Action, kind: str, detail: Any) -> dict[str, Any]:
    if kind == "edit":
        return {"type": "edit", "edited_action": {"name": action.name, "args": dict(detail)}}
    if kind == "respond" or (kind == "reject" and detail):
        return {"type": kind, "message": str(detail or "")}
    return {"type": kind}


def _human_response(action: Action, kind: str, detail: Any) -> dict[str, Any]:
    if kind == "approve":
        return {"type": "accept", "args": None}
    if kind == "edit":
        return {"type": "edit", "args": {"action": action.name, "args": dict(detail)}}
    responds = action.rejects_as in ("response", "either")
    if responds and (detail or action.rejects_as == "response"):  # (the reason goes back)
        return {"type": "response", "args": str(detail or "")}
    return {"type": "ignore", "args": None}


def _batched(value: Mapping[str, Any]) -> Review:
    configs = {
        c.get("action_name"): c for c in value.get("review_configs") or [] if isinstance(c, Mapping)
    }
    actions = []
    for request in value["action_requests"]:
        request = request if isinstance(request, Mapping) else {}
        config = configs.get(request.get("name"), {})
        allowed = config.get("allowed_decisions") or _DEFAULT
        schema = config.get("args_schema")
        properties = schema.get("properties") if isinstance(schema, Mapping) else None
        actions.append(_action(request, request.get("args"), allowed, properties))
    return Review("batched", tuple(actions))


def _action(source: Mapping[str, Any], args: Any, allowed: Any, properties: Any = None) -> Action:
    args = dict(args) if isinstance(args, Mapping) else {}
    known = list(args)
    if isinstance(properties, Mapping):
        known += [k for k in properties if k not in known]
    return Action(
        name=str(source.get("name", "?")),
        args=args,
        description=str(source.get("description") or ""),
        allowed=tuple(d for d in DECISIONS if d in allowed),
        known_args=tuple(str(k) for k in known),
    )


def _is_human_interrupt(value: Any) -> bool:
    return (
        isinstance(value, Mapping)
        and isinstance(value.get("action_request"), Mapping)
        and "action" in value["action_request"]
    )


def _human_action(value: Mapping[str, Any]) -> Action:
    request, config = value["action_request"], value.get("config") or {}
    allowed = [
        kind
        for kind, flags in (
            ("approve", ("allow_accept",)),
            ("edit", ("allow_edit",)),
            ("reject", ("allow_ignore", "allow_respond")),
        )
        if any(config.get(flag) for flag in flags)
    ]
    action = _action(
        {"name": request.get("action"), "description": value.get("description")},
        request.get("args"),
        allowed,
    )
    ignore, respond = bool(config.get("allow_ignore")), bool(config.get("allow_respond"))
    rejects_as = "either" if ignore and respond else "response" if respond else "ignore"
    return Action(*(getattr(action, f) for f in ("name", "args", "description")),
                  action.allowed, action.known_args, rejects_as)  # fmt: skip


def _is_list(value: Any) -> bool:
    return isinstance(value, list | tuple)
