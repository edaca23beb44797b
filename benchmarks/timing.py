"""The one timing rule the benchmark scripts share: best of N, after a collection."""

import gc
import time
from collections.abc import Callable
from typing import Any


def best_seconds(fn: Callable[[], Any], repeat: int = 5) -> float:
    """The fastest of `repeat` calls: the least-disturbed run, as this machine is a noisy VM."""
    times = []
    for _ in range(repeat):
        if gc.isenabled():
            gc.collect()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)
