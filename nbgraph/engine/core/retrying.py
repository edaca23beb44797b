"""Retrying a task whose node raised, as its `RetryPolicy` says; every failed attempt kept.

`RunLoop.execute` runs one attempt; when it failed, `next_attempt` decides whether another
follows (the first policy whose `retry_on` matches the error applies, as in LangGraph), keeps
the failed attempt on the task, clears what it wrote, and says how long to wait first.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from nbgraph.codec.values import decode_error, encode_error
from nbgraph.engine.core.tasks import ParentCommand
from nbgraph.policies import RetryPolicy

if TYPE_CHECKING:
    from nbgraph.blueprint import NodeSpec
    from nbgraph.engine.core.tasks import Task

__all__ = [
    "Attempt",
    "attempts_data",
    "attempts_from_data",
    "attempts_problems",
    "matching_policy",
    "next_attempt",
    "retry_wait",
]


@dataclass(frozen=True, slots=True)
class Attempt:
    """A failed attempt of a task that was tried again.

    Attributes:
        number: 1 for the first attempt, then 2, 3, ...
        started: when it started (`time.time()`); `ended`: when it failed.
        error: the exception it raised.
        wait: the seconds waited before the next attempt.
    """

    number: int
    started: float
    ended: float
    error: BaseException
    wait: float = 0.0


def next_attempt(task: Task, node: NodeSpec) -> float | None:
    """If `task` failed and its node's retry policies retry the error: keep the failed
    attempt on the task, clear its writes, routes and error, and return the seconds to wait
    before the next attempt. None when the task stands as it is (it succeeded, was
    interrupted, its error is not retried, or its attempts are used up).
    """
    error = task.error
    if error is None or not node.retry or task.interrupts or not isinstance(error, Exception):
        return None
    if isinstance(error, ParentCommand):  # (not a failure: a command for the parent)
        return None
    try:
        policy = matching_policy(node.retry, error)
    except Exception as problem:  # a retry_on callable that raised: that is the error
        problem.add_note(
            f"nbgraph: while deciding whether to retry node {task.node!r} at step "
            f"{task.step} (its RetryPolicy.retry_on, called with the error it raised)"
        )
        problem.__cause__ = error
        task.error = problem
        return None
    number = len(task.attempts) + 1
    if policy is None or number >= policy.max_attempts:
        return None
    wait = retry_wait(policy, number)
    task.attempts = (*task.attempts, Attempt(number, task.started, time.time(), error, wait))
    task.error = None
    task.writes = []
    task.routes = task.returned = ()
    task.dropped = ()
    return wait


def matching_policy(policies: Sequence[RetryPolicy], error: Exception) -> RetryPolicy | None:
    """The first policy whose `retry_on` says `error` is retried, or None.

    >>> matching_policy([RetryPolicy(retry_on=KeyError)], KeyError("x")).retry_on
    <class 'KeyError'>
    """
    for policy in policies:
        if _retries(policy, error):
            return policy
    return None


def _retries(policy: RetryPolicy, error: Exception) -> bool:
    """Whether `policy.retry_on` (a class, a sequence of classes, a callable) takes `error`."""
    retry_on = policy.retry_on
    if isinstance(retry_on, Sequence):
        return isinstance(error, tuple(retry_on))
    if isinstance(retry_on, type) and issubclass(retry_on, BaseException):
        return isinstance(error, retry_on)
    return bool(retry_on(error))


def retry_wait(policy: RetryPolicy, failed: int) -> float:
    """Seconds to wait after the `failed`-th failed attempt, as LangGraph computes them:
    `initial_interval * backoff_factor ** (failed - 1)`, at most `max_interval`, plus a
    random 0-1 s with `jitter`.

    >>> retry_wait(RetryPolicy(initial_interval=1.0, jitter=False), 3)
    4.0
    """
    try:
        grown = policy.initial_interval * policy.backoff_factor ** (failed - 1)
    except OverflowError:  # (thousands of attempts: the wait stopped growing long ago)
        grown = policy.max_interval
    interval = min(policy.max_interval, grown)
    return interval + random.uniform(0, 1) if policy.jitter else interval


def attempts_data(task: Task) -> dict[str, Any]:
    """A task's failed attempts and cache mark as plain data (for a checkpoint's task);
    empty for a task tried once and run."""
    data: dict[str, Any] = {}
    if task.attempts:
        data["attempts"] = [
            [a.number, float(a.started), float(a.ended), encode_error(a.error), float(a.wait)]
            for a in task.attempts
        ]
    if task.from_cache:
        data["from_cache"] = True
    return data


def attempts_from_data(data: dict[str, Any]) -> dict[str, Any]:
    """`Task` keyword arguments back from `attempts_data` (errors as `RecordedError`s)."""
    if "attempts" not in data and "from_cache" not in data:
        return {}
    attempts = tuple(
        Attempt(number, started, ended, decode_error(error), wait)  # type: ignore[arg-type]
        for number, started, ended, error, wait in data.get("attempts", ())
    )
    return {"attempts": attempts, "from_cache": bool(data.get("from_cache", False))}


def attempts_problems(data: dict[str, Any]) -> list[str]:
    """What is wrong with a checkpoint task's `attempts` and `from_cache`, if it has them."""
    problems = []
    attempts = data.get("attempts", [])
    shaped = type(attempts) is list and all(
        type(a) is list
        and len(a) == 5
        and type(a[0]) is int
        and all(type(x) is float for x in (a[1], a[2], a[4]))
        and type(a[3]) is dict
        and type(a[3].get("type")) is str
        and type(a[3].get("message")) is str
        for a in attempts
    )
    if not shaped:
        problems.append(
            "'attempts' should be a list of [number, started, ended, error, wait], "
            f"found {str(attempts)[:60]!r}"
        )
    if type(data.get("from_cache", False)) is not bool:
        problems.append(f"'from_cache' should be true or false, found {data['from_cache']!r}")
    return problems
