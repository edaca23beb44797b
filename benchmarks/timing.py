"""The timing rules the benchmark scripts share: one call after a collection (wall clock, or
wall and CPU); best of N."""

import gc
import time
from collections.abc import Callable
from typing import Any


def call_seconds(fn: Callable[[], Any]) -> float:
    """One call of `fn`, timed after a garbage collection (if the collector is on)."""
    if gc.isenabled():
        gc.collect()
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def best_seconds(fn: Callable[[], Any], repeat: int = 5) -> float:
    """The fastest of `repeat` calls: the least-disturbed run, as this machine is a noisy VM."""
    return min(call_seconds(fn) for _ in range(repeat))


def call_times(fn: Callable[[], Any]) -> tuple[float, float]:
    """One call of `fn` after a garbage collection, as `call_seconds`: (wall seconds, CPU
    seconds of this process, every thread: `time.process_time`)."""
    if gc.isenabled():
        gc.collect()
    cpu, start = time.process_time(), time.perf_counter()
    fn()
    return time.perf_counter() - start, time.process_time() - cpu
