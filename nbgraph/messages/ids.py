"""Message ids: random version-4 UUID strings, as LangGraph's `add_messages` gives, made
without a system call each.

`uuid.uuid4()` reads 16 bytes from `os.urandom` and builds a `UUID` object before it is
formatted; a message id needs uniqueness, not secrecy, so the 122 random bits come from a
private generator (seeded from `os.urandom`, reseeded in a forked child; a node's
`random.seed()` does not touch it) and are formatted directly, which is faster (the times:
benchmarks/README.md, "Timings behind the code").
"""

from __future__ import annotations

import os
import random

__all__ = ["new_message_id"]

_IDS = random.Random()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_IDS.seed)

_CLEAR = ~((0xF000 << 64) | (0xC000 << 48))  # the version nibble and the variant's two bits
_SET = (0x4000 << 64) | (0x8000 << 48)  # version 4, the RFC 4122 variant


def new_message_id() -> str:
    """A fresh id: the text of a random version-4 UUID.

    >>> import uuid
    >>> u = uuid.UUID(new_message_id())
    >>> (u.version, u.variant == uuid.RFC_4122, str(u) == new_message_id())
    (4, True, False)
    """
    h = "%032x" % (_IDS.getrandbits(128) & _CLEAR | _SET)
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
