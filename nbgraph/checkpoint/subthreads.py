"""Where a saver keeps a subgraph's checkpoints: a thread of its own, so savers need no notion
of namespaces.

The thread is keyed by the parent's thread id and the subgraph's `checkpoint_ns` (see
`engine.subgraph_checkpoints`)."""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["SEP", "split_key", "sub_key", "sub_prefix", "with_sub_keys"]

SEP = "\x1f"
"""Between a thread id and a namespace in a subgraph thread's storage key."""


def sub_key(thread_id: str, ns: str) -> str:
    """The key a saver stores the thread of subgraph namespace `ns` under (`ns` empty: the
    thread itself)."""
    return f"{thread_id}{SEP}{ns}" if ns else thread_id


def split_key(key: str) -> tuple[str, str]:
    """`(thread_id, checkpoint_ns)` of a stored thread key (`ns` is `""` for a root thread)."""
    root, _, ns = key.partition(SEP)
    return root, ns


def with_sub_keys(keys: Iterable[str], thread_id: str) -> list[str]:
    """`thread_id` and the keys among `keys` of its subgraphs' threads (any depth): what
    `delete_thread(thread_id)` deletes."""
    prefix = f"{thread_id}{SEP}"
    return [thread_id, *(key for key in keys if key.startswith(prefix))]


def sub_prefix(thread_id: str) -> tuple[int, str]:
    """`(length, prefix)` every key of `thread_id`'s subgraphs' threads starts with (for SQL)."""
    prefix = f"{thread_id}{SEP}"
    return len(prefix), prefix
