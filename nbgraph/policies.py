"""A node's retry and cache policies, as LangGraph spells them: `RetryPolicy`, `CachePolicy`.

Plain values: the builder checks them, the engine acts on them (`engine.retrying`,
`engine.caching`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

__all__ = [
    "CachePolicy",
    "RetryPolicy",
    "default_cache_key",
    "default_retry_on",
    "policy_problems",
    "retry_policies",
]

_NOT_RETRIED = (
    ValueError,
    TypeError,
    ArithmeticError,
    ImportError,
    LookupError,
    NameError,
    SyntaxError,
    RuntimeError,
    ReferenceError,
    StopIteration,
    StopAsyncIteration,
    OSError,
)


def default_retry_on(exc: Exception) -> bool:
    """LangGraph's default `retry_on`: retry a `ConnectionError` and a 5xx HTTP error (of
    httpx or requests), never a programming error (`ValueError`, `TypeError`, `KeyError`,
    `OSError`, ...); retry anything else.

    >>> default_retry_on(ConnectionError()), default_retry_on(ValueError())
    (True, False)
    """
    if isinstance(exc, ConnectionError):
        return True
    status = _http_status(exc)
    if status is not None:
        return 500 <= status < 600 if status >= 0 else True
    return not isinstance(exc, _NOT_RETRIED)


def _http_status(exc: Exception) -> int | None:
    """The status of an httpx or requests HTTP error (-1: requests' without a response);
    None for any other exception. Neither library is imported here: an exception of theirs
    can only exist if it already was."""
    httpx = sys.modules.get("httpx")
    if httpx is not None and isinstance(exc, httpx.HTTPStatusError):
        return int(exc.response.status_code)
    requests = sys.modules.get("requests")
    if requests is not None and isinstance(exc, requests.HTTPError):
        response = exc.response
        return int(response.status_code) if response else -1
    return None


class RetryPolicy(NamedTuple):
    """How to retry a node that raised: `add_node(..., retry_policy=RetryPolicy(...))`.

    Attributes:
        initial_interval: seconds before the first retry.
        backoff_factor: how much the interval grows after each retry.
        max_interval: the longest wait between attempts, in seconds.
        max_attempts: attempts in all, the first one included.
        jitter: add a random 0-1 s to each wait.
        retry_on: which exceptions to retry: a class, a sequence of classes, or a
            callable `(exception) -> bool` (default: `default_retry_on`).

    >>> RetryPolicy(max_attempts=2, retry_on=KeyError).max_attempts
    2
    """

    initial_interval: float = 0.5
    backoff_factor: float = 2.0
    max_interval: float = 128.0
    max_attempts: int = 3
    jitter: bool = True
    retry_on: type[Exception] | Sequence[type[Exception]] | Callable[[Exception], bool] = (
        default_retry_on
    )


def default_cache_key(*args: Any, **kwargs: Any) -> bytes:
    """The default cache key of a node's input: its bytes with mappings and sets in a stable
    order, so equal inputs give equal keys (as LangGraph's default does).

    The bytes come from `pickle.dumps`; they are hashed as a key and never loaded.
    """
    import pickle

    return pickle.dumps((_freeze(args), _freeze(kwargs)), protocol=5, fix_imports=False)


def _freeze(value: Any, depth: int = 0) -> Any:
    if depth > 200:
        return repr(value)
    if isinstance(value, Mapping):
        return tuple(sorted(((repr(k), _freeze(v, depth + 1)) for k, v in value.items())))
    if isinstance(value, (set, frozenset)):
        return tuple(sorted(repr(_freeze(v, depth + 1)) for v in value))
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v, depth + 1) for v in value)
    return value


@dataclass(frozen=True)
class CachePolicy:
    """Reuse a node's writes for an input it has seen: `add_node(..., cache_policy=...)`
    with `compile(cache=InMemoryCache())`.

    Attributes:
        key_func: `(node_input) -> str | bytes`, the cache key of an input.
        ttl: seconds an entry lives; None: until the cache is cleared.

    >>> CachePolicy(ttl=60).ttl
    60
    """

    key_func: Callable[..., str | bytes] = default_cache_key
    ttl: int | float | None = None


def policy_problems(where: str, retry: Any, cache: Any, option: str = "retry_policy") -> list[str]:
    """What is wrong with a `retry_policy=` (or `option=`) and a `cache_policy=`, each problem
    starting with `where` (`"Node 'a'"`, say)."""
    problems = []
    policies = retry_policies(retry)
    for policy in policies if policies is not None else ():
        problems += _retry_problems(where, policy)
    if policies is None:
        problems.append(
            f"{where}: {option}= must be a RetryPolicy or a sequence of them, got {retry!r}."
        )
    if cache is not None and not isinstance(cache, CachePolicy):
        problems.append(f"{where}: cache_policy= must be a CachePolicy, got {cache!r}.")
    elif cache is not None and not callable(cache.key_func):
        problems.append(f"{where}: CachePolicy.key_func must be callable.")
    return problems


def retry_policies(retry: Any) -> tuple[RetryPolicy, ...] | None:
    """`retry_policy=` as a tuple of policies (first matching applies); None if it is not one."""
    if retry is None:
        return ()
    if isinstance(retry, RetryPolicy):
        return (retry,)
    listed = isinstance(retry, Sequence) and not isinstance(retry, (str, bytes))
    if listed and all(isinstance(item, RetryPolicy) for item in retry):
        return tuple(retry)
    return None


def _retry_problems(node: str, policy: RetryPolicy) -> list[str]:
    where = f"{node}: RetryPolicy"
    problems = []
    if not isinstance(policy.max_attempts, int) or policy.max_attempts < 1:
        problems.append(f"{where}.max_attempts must be an int >= 1, got {policy.max_attempts!r}.")
    for name in ("initial_interval", "backoff_factor", "max_interval"):
        value = getattr(policy, name)
        if not isinstance(value, (int, float)) or value < 0:
            problems.append(f"{where}.{name} must be a number >= 0, got {value!r}.")
    if not _valid_retry_on(policy.retry_on):
        problems.append(
            f"{where}.retry_on must be an exception class, a sequence of them, or a callable "
            f"(exception) -> bool; got {policy.retry_on!r}."
        )
    return problems


def _valid_retry_on(retry_on: Any) -> bool:
    if isinstance(retry_on, Sequence):
        return all(isinstance(c, type) and issubclass(c, BaseException) for c in retry_on)
    return callable(retry_on)
