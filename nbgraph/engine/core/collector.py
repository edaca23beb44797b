"""The cyclic garbage collector paused while many small acyclic objects are built.

A long table of effect rows, a state tree, a thread's history of snapshots: building
them with the collector on spends most of the time in young collections that walk what
was built so far, again and again. `collector_paused` turns the collector off for the
block; on leaving, what the block built is moved to the oldest generation at once
(`gc.freeze()` then `gc.unfreeze()`, when nothing else is frozen), so the young
collection that would follow does not walk it all once more; a full collection still walks
it, as any old object. The pause is the process's, as `gc.disable` is, and lasts only while
nbgraph's own code runs. (The times: benchmarks/README.md, "Timings behind the code".)
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

__all__ = ["collector_paused"]


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while building many small acyclic objects; on
    leaving, move them to the oldest generation and turn it back on (if it was on)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            if not gc.get_freeze_count():  # (someone's frozen objects stay frozen)
                gc.freeze()
                gc.unfreeze()
            gc.enable()
