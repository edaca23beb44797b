"""The run picker of a batch (`Runs.inspect()`): filter the runs by status and by path, pick
one, and step through it in the inspector below. It imports ipywidgets: `Runs` loads it only
when a picker is made."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import ipywidgets

from nbgraph.views.inspector.inspector import inspect
from nbgraph.views.inspector.snapshot import with_snapshot

__all__ = ["RunPicker"]


class _Any:
    """The "any" choice of the status and path pickers. Not None: a Dropdown whose value is
    None has nothing picked, and shows blank (the "any" label was never seen)."""

    def __repr__(self) -> str:
        return "any"

    def __bool__(self) -> bool:
        return False  # (no filter)


_ALL = _Any()


class RunPicker(ipywidgets.VBox):
    """Dropdowns for a status, a path and a run, above the inspector of the picked run.

    Attributes:
        status, path, run: the three `ipywidgets.Dropdown`s; `run`'s value is the position
            of the picked run in the batch (None when the filters leave none).
        inspector: the inspector of the picked run (None when none is picked).
    """

    def __init__(
        self,
        indexes: Sequence[int],
        statuses: Sequence[str],
        paths: Sequence[str],
        run_at: Callable[[int], Any],
    ):
        """`run_at(position)` gives the batch's run at that position (read when picked)."""
        self._indexes, self._statuses, self._paths = list(indexes), list(statuses), list(paths)
        self._run_at = run_at
        statuses = Counter(self._statuses)
        by_path = Counter(self._paths)
        self.status = ipywidgets.Dropdown(
            options=[(f"any status ({len(self._indexes)})", _ALL)]
            + [(f"{status} ({count})", status) for status, count in sorted(statuses.items())],
            value=_ALL,
            description="status",
        )
        self.path = ipywidgets.Dropdown(
            options=[("any path", _ALL)]
            + [(f"{count}× {_path_label(path)}", path) for path, count in by_path.most_common()],
            value=_ALL,
            description="path",
            layout=ipywidgets.Layout(width="95%"),
        )
        self.run = ipywidgets.Dropdown(description="run", layout=ipywidgets.Layout(width="95%"))
        self.inspector: Any = None
        self._panel = ipywidgets.Box()
        super().__init__([self.status, self.path, self.run, self._panel])
        self.status.observe(lambda _: self._filter(), names="value")
        self.path.observe(lambda _: self._filter(), names="value")
        self.run.observe(lambda change: self._show(change["new"]), names="value")
        self._filter()

    def _filter(self) -> None:
        options = [
            (f"#{index} · {status} · {_path_label(path)}", position)
            for position, (index, status, path) in enumerate(
                zip(self._indexes, self._statuses, self._paths, strict=True)
            )
            if _matches(self.status.value, status) and _matches(self.path.value, path)
        ]
        self.run.options = options
        self.run.value = options[0][1] if options else None
        self._show(self.run.value)

    def _show(self, position: int | None) -> None:
        if position is None:
            self.inspector = None
            self._panel.children = (ipywidgets.HTML("<i>no run matches these filters</i>"),)
            return
        run = self._run_at(position)
        if self.inspector is not None and self.inspector.run is run:
            return
        self.inspector = inspect(run)
        self._panel.children = (self.inspector,)

    def pick(self, index: int) -> Any:
        """Show the run of input `index` (clearing the filters if they hide it); returns its
        inspector."""
        if index not in self._indexes:
            raise IndexError(f"no run of input {index} in this batch; inputs: {self._indexes}")
        self.status.value, self.path.value = _ALL, _ALL
        self.run.value = self._indexes.index(index)
        return self.inspector

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        """Saved: the picked run's inspector as a snapshot too (`views.inspector.snapshot`)."""
        bundle = super()._repr_mimebundle_(**kwargs)
        return with_snapshot(bundle, self.inspector, "A batch's run picker")


def _matches(picked: Any, value: str) -> bool:
    """Whether a run's status (path) passes its picker: "any" (or nothing picked) or it."""
    return picked is _ALL or picked is None or picked == value


def _path_label(path: str) -> str:
    return path or "(no node ran)"
