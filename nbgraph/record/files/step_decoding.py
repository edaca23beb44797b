"""A run's steps back from the JSON data `nbgraph.record.files.step_encoding` made."""

from __future__ import annotations

from typing import Any

from nbgraph.blueprint import GraphSpec
from nbgraph.codec.values import decode_error, decode_value
from nbgraph.engine.facts import Attempt, Join, StepLog, Task, pinned_map
from nbgraph.primitives import MISSING, Interrupt
from nbgraph.record.files.log_shape import PLAIN_TASK, check_step, read_plain_step
from nbgraph.record.log_data import join_from_data, reset_from_data

__all__ = ["BrokenDocument", "checked_steps", "decode_join", "decode_step", "mapping"]


class BrokenDocument(Exception):
    """Inside decoding: the document has the right format but not the right shape."""


def _decode_task(data: dict[str, Any]) -> Task:
    routes = [decode_value(route) for route in data.get("routes", ())]
    return Task(
        step=data["step"],
        index=data["index"],
        node=data["node"],
        kind=data["kind"],
        arg=decode_value(data["arg"]) if "arg" in data else MISSING,
        triggers=tuple(data["triggers"]),
        writes=[(_field(decode_value(k)), decode_value(v)) for k, v in data["writes"]],
        routes=routes or (),
        dropped=tuple((decode_value(k), decode_value(v), w) for k, v, w in data.get("dropped", ())),
        error=decode_error(data.get("error")),
        started=float(data["started"]),
        ended=float(data["ended"]),
        parent=str(data.get("parent", "")),
        custom=[decode_value(chunk) for chunk in data.get("custom", ())] or (),
        attempts=tuple(_decode_attempt(attempt) for attempt in data.get("attempts", ())),
        from_cache=bool(data.get("from_cache", False)),
        returned=tuple(decode_value(value) for value in data.get("returned", ())),
        interrupts=tuple(
            Interrupt(decode_value(i["value"]), i["id"]) for i in data.get("interrupts", ())
        ),
    )


def _decode_attempt(data: dict[str, Any]) -> Attempt:
    error = decode_error(data["error"])
    if error is None:
        raise BrokenDocument("a failed attempt has no error")
    return Attempt(data["number"], data["started"], data["ended"], error, data["wait"])


def _task_from_plain_data(data: dict[str, Any]) -> Task:
    """A task of the common kind (no arg, error, retries, custom chunks, ...) whose values
    need no decoding (`decode_step`'s `plain`): `_decode_task`'s result, made directly."""
    return Task(
        data["step"],
        data["index"],
        data["node"],
        data["kind"],
        triggers=tuple(data["triggers"]),
        writes=[(_field(k), v) for k, v in data["writes"]],
        routes=data.get("routes") or (),
        started=float(data["started"]),
        ended=float(data["ended"]),
        returned=tuple(data.get("returned", ())),
    )


def decode_step(
    data: dict[str, Any], graph: GraphSpec, functions: bool, plain: bool = False
) -> StepLog:
    """A step back from its data.

    Args:
        plain: the document holds no tagged value (no `"$type"`): values are taken as
            they are, and a common step is read without the general decoding.
    """
    common = not data["resets"] and not data["merged"] and data["afters"] is None
    if plain and common and len(data) == 8:  # (8 entries: no kept values, joins or heads)
        tasks = data["tasks"]
        return StepLog(
            data["step"],
            [
                _task_from_plain_data(t) if t.keys() <= PLAIN_TASK else _decode_task(t)
                for t in tasks
            ],
            graph.fields,
            written=tuple(_field(name) for name in data["written"]),
            cleared=tuple(data["cleared"]),
            applied=bool(data["applied"]),
        )
    number = data["step"]
    resets = [
        reset_from_data(number, item, _decoded_state, decode_value) for item in data["resets"]
    ]
    merged = [(w, decode_value(f), decode_value(v)) for w, f, v in data["merged"]]
    afters = data["afters"]
    afters = None if afters is None else mapping(decode_value(afters), "a step's afters")
    kept = data.get("kept")
    if kept and not functions:  # without graph=, the values its reducers made
        decoded = {
            k: [kind, decode_value(part)] for k, (kind, part) in mapping(kept, "kept").items()
        }
        afters = {**(afters or {}), **pinned_map(decoded, f"step {number}'s kept values")}
    return StepLog(
        number,
        [_decode_task(task) for task in data["tasks"]],
        graph.fields,
        written=tuple(_field(decode_value(name)) for name in data["written"]),
        resets=resets or (),
        cleared=tuple(decode_value(name) for name in data["cleared"]),
        merged=merged or (),
        applied=bool(data["applied"]),
        afters=afters,
        joins=[decode_join(join) for join in data.get("joins", ())] or (),
        heads=tuple(data.get("heads", ())),
    )


def checked_steps(
    steps: list[Any], graph: GraphSpec, functions: bool, plain: bool = False
) -> list[StepLog]:
    """The steps back from their data, each checked first (`check_step`; the document's
    other entries are checked already): a common step of a document with no tagged value
    (`plain`) is checked as it is read, in one pass, by the run file's one fast reader
    (`log_shape.read_plain_step`, beside the schema).

    Raises:
        LogShapeError: a step is not shaped as a step, naming its entry.
    """
    decoded = []
    fields = graph.fields
    for index, data in enumerate(steps):
        step = read_plain_step(data, fields) if plain else None
        if step is None:  # not a common step, or not sure: the schema says
            check_step(data, index)
            step = decode_step(data, graph, functions, plain)
        decoded.append(step)
    return decoded


def _field(name: Any) -> Any:
    """`name`, a field a step wrote (a dict state's key may be any hashable value)."""
    try:
        hash(name)
    except TypeError:
        raise BrokenDocument(f"a written field should be a name, found {name!r}"[:200]) from None
    return name


def _decoded_state(value: Any) -> dict[str, Any]:
    return mapping(decode_value(value), "a reset's or join's values")


def decode_join(data: dict[str, Any]) -> Join:
    return join_from_data(data, _decoded_state, decode_value)


def mapping(value: Any, what: str) -> dict[str, Any]:
    if type(value) is not dict:
        raise BrokenDocument(f"{what} should be a JSON object, found {type(value).__name__}")
    return value
