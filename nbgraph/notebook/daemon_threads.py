"""`DaemonThreadPool`: `run_many`'s default executor, whose threads do not hold the process open
at exit.

So a run abandoned by a second Ctrl-C (a node that never returns) does not keep a script from
ending. Python cannot stop a thread: that run goes on until its node returns or the process
ends."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Executor, Future
from queue import Empty, SimpleQueue
from typing import Any

__all__ = ["DaemonThreadPool"]


class DaemonThreadPool(Executor):
    """A `concurrent.futures` thread pool of daemon threads, started as work arrives.

    >>> with DaemonThreadPool(2, "demo") as pool:
    ...     pool.submit(sum, [1, 2]).result()
    3
    """

    def __init__(self, workers: int, name: str) -> None:
        self._workers, self._name = workers, name
        self._work: SimpleQueue[Any] = SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()
        self._closed = False

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future:
        with self._lock:
            if self._closed:
                raise RuntimeError("cannot schedule new futures after shutdown")
            future: Future = Future()
            self._work.put((future, fn, args, kwargs))
            if len(self._threads) < self._workers:
                name = f"{self._name}_{len(self._threads)}"
                thread = threading.Thread(target=self._serve, name=name, daemon=True)
                thread.start()
                self._threads.append(thread)
        return future

    def _serve(self) -> None:
        while (item := self._work.get()) is not None:
            future, fn, args, kwargs = item
            del item
            if future.set_running_or_notify_cancel():
                try:
                    result = fn(*args, **kwargs)
                except BaseException as error:  # (as ThreadPoolExecutor: the future holds it)
                    future.set_exception(error)
                else:
                    future.set_result(result)
            del future, fn, args, kwargs

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        with self._lock:
            self._closed = True
            while cancel_futures:
                try:
                    item = self._work.get_nowait()
                except Empty:
                    break
                if item is not None:
                    item[0].cancel()
            for _ in self._threads:
                self._work.put(None)
        if wait:
            for thread in self._threads:
                thread.join()
