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
from typing import TYPE_CHECKING

from nbgraph.policies import RetryPolicy

if TYPE_CHECKING:
    from nbgraph.engine.tasks import Task
    from nbgraph.graph import NodeSpec


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
    task.routes = ()
    task.dropped = ()
    return wait


def matching_policy(policies: Sequence[RetryPolicy], error: Exception) -> RetryPolicy | None:
    """The first policy whose `retry_on` says `error` is retried, or None.

    >>> matching_policy([RetryPolicy(retry_on=KeyError)], KeyError("x")).retry_on
    <class 'KeyError'>
    """
    for policy in policies:
        if retries(policy, error):
            return policy
    return None


def retries(policy: RetryPolicy, error: Exception) -> bool:
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
    interval = min(
        policy.max_interval, policy.initial_interval * policy.backoff_factor ** (failed - 1)
    )
    return interval + random.uniform(0, 1) if policy.jitter else interval
