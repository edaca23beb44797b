"""Claims of thread ids in an SQLite checkpoint file: who holds one, and whether its holder
(a process of this host) is gone, so the claim can be taken over."""

from __future__ import annotations

import os
import socket
import time
import uuid
from typing import Any

__all__ = ["LIVE_OWNERS", "check_unclaimed", "new_owner", "take_claim"]

_HOST = socket.gethostname()
LIVE_OWNERS: set[str] = set()
"""The claims held by savers of this process, to tell them from a dead process's with our pid."""


def new_owner() -> str:
    """A fresh claim owner, `"host:pid:token"`."""
    return f"{_HOST}:{os.getpid()}:{uuid.uuid4().hex}"


def _is_stale(owner: str) -> bool:
    """Whether a claim's owner is a process of this host that no longer runs it."""
    host, _, rest = owner.partition(":")
    pid_text, _, _ = rest.partition(":")
    if host != _HOST or not pid_text.isdigit() or int(pid_text) <= 0:
        return False  # another host's (or a malformed) claim cannot be checked
    pid = int(pid_text)
    if pid == os.getpid():
        return owner not in LIVE_OWNERS  # an earlier process that had our pid
    return not _pid_alive(pid)


def _pid_alive(pid: int) -> bool:
    if os.name == "nt":
        return True  # os.kill(pid, 0) would end the process there; assume it runs
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # it exists, but belongs to another user
    return True


def _describe_claim(owner: str, claimed_at: float) -> str:
    """Who holds a claim and since when, for a `ThreadBusyError`."""
    host, _, rest = owner.partition(":")
    pid, _, _ = rest.partition(":")
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(claimed_at))
    here = "this process" if host == _HOST and pid == str(os.getpid()) else f"pid {pid}"
    return f"claimed by {here} on host {host!r} since {when}"


def take_claim(conn: Any, thread_id: str, owner: str) -> None:
    """Claim `thread_id` for `owner` in an open write transaction, unless a live one holds it.

    Raises:
        ThreadBusyError: another live saver holds the thread.
    """
    check_unclaimed(conn, thread_id)
    conn.execute("INSERT OR REPLACE INTO claims VALUES (?, ?, ?)", (thread_id, owner, time.time()))


def check_unclaimed(conn: Any, thread_id: str) -> None:
    """Raise `ThreadBusyError` if a live saver (of any process on this host, or another
    host's) holds `thread_id`; a stale claim does not count."""
    from nbgraph.checkpoint.base import ThreadBusyError

    query = "SELECT owner, claimed_at FROM claims WHERE thread_id = ?"
    row = conn.execute(query, (thread_id,)).fetchone()
    if row is not None and not _is_stale(row[0]):
        raise ThreadBusyError(thread_id, _describe_claim(*row))
