"""Claims of thread ids in an SQLite checkpoint file: who holds one, and whether its holder
(a process of this host) is gone, so the claim can be taken over."""

from __future__ import annotations

import os
import socket
import time
import uuid

HOST = socket.gethostname()
LIVE_OWNERS: set[str] = set()
"""The claims held by savers of this process, to tell them from a dead process's with our pid."""


def new_owner() -> str:
    """A fresh claim owner, `"host:pid:token"`."""
    return f"{HOST}:{os.getpid()}:{uuid.uuid4().hex}"


def is_stale(owner: str) -> bool:
    """Whether a claim's owner is a process of this host that no longer runs it."""
    host, _, rest = owner.partition(":")
    pid_text, _, _ = rest.partition(":")
    if host != HOST or not pid_text.isdigit() or int(pid_text) <= 0:
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


def describe_claim(owner: str, claimed_at: float) -> str:
    """Who holds a claim and since when, for a `ThreadBusyError`."""
    host, _, rest = owner.partition(":")
    pid, _, _ = rest.partition(":")
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(claimed_at))
    here = "this process" if host == HOST and pid == str(os.getpid()) else f"pid {pid}"
    return f"claimed by {here} on host {host!r} since {when}"
