"""The inspector's play button, timed in the kernel.

`ipywidgets.Play` keeps its timer in each front-end view: every view of one Play model
listens to `playing` and starts (or, seeing the change second, pauses) the model's timer.
Display the same inspector twice (notebook 04 did) and the model has two views: the first
view starts the timer and advances one step, the second sees `playing` already true in
the model's `previous` and calls `pause()` — play stops after one step. A `Playback` is a
toggle button with no front-end logic and a kernel thread that advances the value, so any
number of views show one playback.
"""

from __future__ import annotations

import threading
import time

import ipywidgets
import traitlets

__all__ = ["Playback"]


class Playback(ipywidgets.HBox):
    """A play/pause toggle advancing `value` from `min` to `max`, one step per `interval` ms.

    Link `value` to a slider (`ipywidgets.link`). Playing from the last step starts again at
    `min`; playing stops at `max`.

    Attributes:
        button: the toggle (its `value` is whether it plays).
        speed: the playing speed (its `value` is `interval`: `"2×"` plays a step every
            350 ms when the normal interval is 700 ms).
    """

    value = traitlets.Int(0)
    min = traitlets.Int(0)
    max = traitlets.Int(0)
    interval = traitlets.Int(700, help="milliseconds between steps")

    def __init__(self, min: int = 0, max: int = 0, interval: int = 700, **kwargs: object) -> None:
        super().__init__(**kwargs)
        self.min, self.max, self.interval = min, max, interval
        self.button = ipywidgets.ToggleButton(
            value=False, description="▶ play", tooltip="play the steps", layout={"width": "90px"}
        )
        self.speed = ipywidgets.Dropdown(
            options=_speeds(interval),
            value=interval,
            tooltip="playing speed",
            layout={"width": "80px"},
        )
        ipywidgets.dlink((self.speed, "value"), (self, "interval"))
        self.children = [self.button, self.speed]
        self.button.observe(self._toggled, "value")
        self._thread: threading.Thread | None = None

    @property
    def playing(self) -> bool:
        """Whether it is playing."""
        return self.button.value

    def play(self) -> None:
        """Start playing (from `min` when at `max`)."""
        self.button.value = True

    def pause(self) -> None:
        """Stop where it is."""
        self.button.value = False

    def _toggled(self, change: dict) -> None:
        self.button.description = "❚❚ pause" if change["new"] else "▶ play"
        if not change["new"]:
            return
        if self.value >= self.max:
            self.value = self.min
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._run, name="nbgraph-play", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        while self.button.value:
            time.sleep(self.interval / 1000)
            if not self.button.value:
                return
            if self.value >= self.max:
                self.button.value = False
                return
            self.value += 1
            if self.value >= self.max:
                self.button.value = False

    def join(self, timeout: float | None = None) -> None:
        """Wait until it stops playing (tests, scripts)."""
        if self._thread is not None:
            self._thread.join(timeout)


_SPEEDS = (0.25, 0.5, 1, 2, 4, 8)
"""The speeds offered, as multiples of the normal speed."""


def _speeds(interval: int) -> list[tuple[str, int]]:
    """The speed dropdown's options: a label and its interval in ms, slowest first.

    >>> _speeds(700)[:3]
    [('¼×', 2800), ('½×', 1400), ('1×', 700)]
    """
    labels = {0.25: "¼×", 0.5: "½×"}
    return [(labels.get(x, f"{x}×"), max(1, round(interval / x))) for x in _SPEEDS]
