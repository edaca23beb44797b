"""Items that expire: a store's TTLs (`InMemoryStore(ttl={...})`, `put(..., ttl=minutes)`).

As LangGraph's stores with TTLs (`langgraph.store.sqlite.SqliteStore`): an item put with a
TTL (or the store's `default_ttl`) expires that many minutes later; a read (`get`,
`search`) with `refresh_on_read` starts its time again; an expired item is deleted by
`sweep_ttl()` (and by the sweeper thread `start_ttl_sweeper()` starts), and is read as any
other until then.
"""

from __future__ import annotations

import concurrent.futures
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from nbgraph.errors import InvalidArgumentError
from nbgraph.store.base import NOT_PROVIDED

__all__ = ["Expiry", "check_ttl"]

_CONFIG_KEYS = {
    "default_ttl": (int, float, type(None)),
    "refresh_on_read": (bool,),
    "sweep_interval_minutes": (int, float, type(None)),
}


def check_ttl(ttl: Any, where: str) -> float | None:
    """`ttl` (minutes) if it is None or a number > 0.

    Raises:
        InvalidArgumentError: naming `where` and the value.
    """
    if ttl is None:
        return None
    if isinstance(ttl, bool) or not isinstance(ttl, int | float) or not ttl > 0:
        raise InvalidArgumentError(
            f"{where}: a TTL is a number of minutes > 0, or None for none; got {ttl!r}."
        )
    return float(ttl)


class Expiry:
    """When each item of a store expires, and the thread that sweeps the expired ones.

    Args:
        config: LangGraph's `TTLConfig` (`default_ttl` minutes, `refresh_on_read`,
            `sweep_interval_minutes`), or None.
        delete: deletes one item `(namespace, key)` of the store (the sweep's).
        sweep: what the sweeper thread calls, for a store that keeps its own times (an
            SQLite file's); default `Expiry.sweep`.
        owner: the store's class name, for the messages.

    Raises:
        InvalidArgumentError: `config` is not a dict, or has an unknown key or a value of
            the wrong type.
    """

    def __init__(
        self,
        config: Any,
        delete: Callable[[tuple[str, ...], str], None],
        sweep: Callable[[], int] | None = None,
        owner: str = "InMemoryStore",
    ) -> None:
        self.config = _checked_config(config, owner)
        self._sweep = sweep or self.sweep
        self.times: dict[tuple[tuple[str, ...], str], tuple[float, float]] = {}  # (at, ttl)
        self._delete = delete
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._sweeper: threading.Thread | None = None

    def ttl_of(self, given: Any) -> float | None:
        """A put's TTL: `given`, or the store's `default_ttl` when none was given."""
        if given is NOT_PROVIDED:
            return check_ttl((self.config or {}).get("default_ttl"), "ttl={'default_ttl'}")
        return check_ttl(given, "store.put(..., ttl=)")

    def start(self, where: tuple[tuple[str, ...], str], ttl: float | None) -> None:
        """An item was put: it expires `ttl` minutes from now (never, for None)."""
        with self._lock:
            if ttl is None:
                self.times.pop(where, None)
            else:
                self.times[where] = (time.time() + ttl * 60, ttl)

    def forget(self, where: tuple[tuple[str, ...], str]) -> None:
        with self._lock:
            self.times.pop(where, None)

    def refresh(self, places: list[tuple[tuple[str, ...], str]], asked: bool | None) -> None:
        """Items were read: their time starts again if the store refreshes on read and the
        read did not say `refresh_ttl=False`."""
        if not (self.config or {}).get("refresh_on_read", False) or asked is False:
            return
        now = time.time()
        with self._lock:
            for where in places:
                if where in self.times:
                    self.times[where] = (now + self.times[where][1] * 60, self.times[where][1])

    def sweep(self) -> int:
        """Delete the expired items; how many there were."""
        now = time.time()
        with self._lock:
            expired = [where for where, (at, _) in self.times.items() if at < now]
        count = 0
        for where in expired:
            with self._lock:  # (put again since, with a new time: it stays)
                timed = self.times.get(where)
                if timed is None or timed[0] >= now:
                    continue
            self._delete(*where)
            count += 1
        return count

    def start_sweeper(self, minutes: float | None) -> concurrent.futures.Future[None]:
        """Sweep every `minutes` (or the config's `sweep_interval_minutes`, or 5) on a
        daemon thread until `stop_sweeper`; the future ends when it stops (a store without
        TTLs: at once)."""
        future: concurrent.futures.Future[None] = concurrent.futures.Future()
        if not self.config:
            future.set_result(None)
            return future
        future.add_done_callback(lambda f: self._stop.set() if f.cancelled() else None)
        if self._sweeper is not None and self._sweeper.is_alive():
            return future
        self._stop.clear()
        interval = float(minutes or self.config.get("sweep_interval_minutes") or 5) * 60

        def sweep_until_stopped() -> None:
            while not self._stop.wait(interval):
                self._sweep()
            if not future.done():
                future.set_result(None)

        self._sweeper = threading.Thread(
            target=sweep_until_stopped, daemon=True, name="nbgraph-store-ttl"
        )
        self._sweeper.start()
        return future

    def stop_sweeper(self, timeout: float | None) -> bool:
        """Stop the sweeper thread; whether it stopped (or was not running)."""
        sweeper = self._sweeper
        if sweeper is None or not sweeper.is_alive():
            return True
        self._stop.set()
        sweeper.join(timeout)
        if sweeper.is_alive():
            return False
        self._sweeper = None
        return True


def _checked_config(config: Any, owner: str) -> dict[str, Any] | None:
    if config is None:
        return None
    if not isinstance(config, Mapping):
        raise InvalidArgumentError(
            f"{owner}(ttl=...) takes a dict like {{'default_ttl': 60, 'refresh_on_read': "
            f"True}}; got {type(config).__name__}."
        )
    for key, value in config.items():
        kinds = _CONFIG_KEYS.get(key)
        if (
            kinds is None
            or not isinstance(value, kinds)
            or (bool not in kinds and isinstance(value, bool))
        ):
            raise InvalidArgumentError(
                f"{owner}(ttl={{{key!r}: {value!r}}}): the keys are "
                f"{list(_CONFIG_KEYS)}: default_ttl and sweep_interval_minutes in minutes, "
                "refresh_on_read a bool."
            )
    check_ttl(config.get("default_ttl"), f"{owner}(ttl={{'default_ttl': ...}})")
    return dict(config)
