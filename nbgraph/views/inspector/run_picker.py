"""The run picker of a batch (`Runs.inspect()`): filter the runs by status and by path, pick
one, and step through it in the inspector below. It imports ipywidgets: `Runs` loads it only
when a picker is made."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import ipywidgets

from nbgraph.record.text import plural
from nbgraph.views.inspector.inspector import inspect
from nbgraph.views.inspector.snapshot import with_snapshot

__all__ = ["PAGE", "PATHS", "RunPicker"]


class _Any:
    """The "any" choice of the status and path pickers. Not None: a Dropdown whose value is
    None has nothing picked, and shows blank (the "any" label was never seen)."""

    def __repr__(self) -> str:
        return "any"

    def __bool__(self) -> bool:
        return False  # (no filter)


_ALL = _Any()


PAGE = 100
"""Runs a page of the run picker offers: a batch of any size makes one page of options."""

PATHS = 50
"""Paths the path picker offers (the most common): a batch of any size keeps them few."""


class RunPicker(ipywidgets.VBox):
    """Dropdowns for a status and a path, then a page of the runs that match (at most `PAGE`
    at a time, turned with `page`), above the inspector of the picked run. However many
    runs the batch holds, the widgets hold a bounded number of options; a run that no page
    shows is reached with `pick(index)`.

    Attributes:
        status, path, run: the three `ipywidgets.Dropdown`s; `run`'s value is the position
            of the picked run in the batch (None when the filters leave none).
        page: the page of matching runs shown (`ipywidgets.BoundedIntText`, from 1).
        matching: the positions of the runs that pass the filters.
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
        self._position = {index: position for position, index in enumerate(self._indexes)}
        self._run_at = run_at
        self.matching: list[int] = []
        self.status = ipywidgets.Dropdown(
            options=_status_options(self._statuses), value=_ALL, description="status"
        )
        self.path = ipywidgets.Dropdown(
            options=_path_options(self._paths),
            value=_ALL,
            description="path",
            layout=ipywidgets.Layout(width="95%"),
        )
        self.page = ipywidgets.BoundedIntText(value=1, min=1, max=1, description="page")
        self._pages = ipywidgets.HTML()
        self.run = ipywidgets.Dropdown(description="run", layout=ipywidgets.Layout(width="95%"))
        self.inspector: Any = None
        self._panel = ipywidgets.Box()
        pages = ipywidgets.HBox([self.page, self._pages])
        super().__init__([self.status, self.path, pages, self.run, self._panel])
        self.status.observe(lambda _: self._filter(), names="value")
        self.path.observe(lambda _: self._filter(), names="value")
        self.page.observe(lambda _: self._turn(), names="value")
        self.run.observe(lambda change: self._show(change["new"]), names="value")
        self._filter()

    def _filter(self, keep: int | None = None) -> None:
        """The runs that pass the filters; the page holding `keep` (a position), else the first."""
        status, path = self.status.value, self.path.value
        self.matching = [
            position
            for position, (s, p) in enumerate(zip(self._statuses, self._paths, strict=True))
            if _matches(status, s) and _matches(path, p)
        ]
        pages = max(1, -(-len(self.matching) // PAGE))
        self._pages.value = f"of {pages} ({plural(len(self.matching), 'matching run')})"
        page = 1 if keep is None else self.matching.index(keep) // PAGE + 1
        with self.page.hold_trait_notifications():
            self.page.max = pages
            self.page.value = page
        self._turn(keep)

    def _turn(self, keep: int | None = None) -> None:
        """Show the page's runs as the run picker's options, and pick `keep` or the first."""
        start = (self.page.value - 1) * PAGE
        options = [
            (f"#{self._indexes[k]} · {self._statuses[k]} · {_path_label(self._paths[k])}", k)
            for k in self.matching[start : start + PAGE]
        ]
        self.run.options = options
        self.run.value = keep if keep is not None else options[0][1] if options else None
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
        """Show the run of input `index` (clearing the filters if they hide it, turning to its
        page); returns its inspector."""
        position = self._position.get(index)
        if position is None:
            shown = self._indexes[:20]
            more = ", ..." if len(self._indexes) > 20 else ""
            raise IndexError(
                f"no run of input {index} in this batch; inputs: {', '.join(map(str, shown))}{more}"
            )
        if not (_matches(self.status.value, self._statuses[position])
                and _matches(self.path.value, self._paths[position])):  # fmt: skip
            with self.status.hold_trait_notifications(), self.path.hold_trait_notifications():
                self.status.value, self.path.value = _ALL, _ALL
        self._filter(keep=position)
        return self.inspector

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        """Saved: the picked run's inspector as a snapshot too (`views.inspector.snapshot`)."""
        bundle = super()._repr_mimebundle_(**kwargs)
        return with_snapshot(bundle, self.inspector, "A batch's run picker")


def _status_options(statuses: list[str]) -> list[tuple[str, Any]]:
    counts = Counter(statuses)
    return [(f"any status ({len(statuses)})", _ALL)] + [
        (f"{status} ({count})", status) for status, count in sorted(counts.items())
    ]


def _path_options(paths: list[str]) -> list[tuple[str, Any]]:
    """ "any path", then the `PATHS` most common paths with their counts."""
    counts = Counter(paths)
    listed = counts.most_common(PATHS)
    first = "any path" if len(counts) <= PATHS else (
        f"any path ({len(counts)} distinct: the {PATHS} most common listed)")  # fmt: skip
    return [(first, _ALL)] + [(f"{count}× {_path_label(path)}", path) for path, count in listed]


def _matches(picked: Any, value: str) -> bool:
    """Whether a run's status (path) passes its picker: "any" (or nothing picked) or it."""
    return picked is _ALL or picked is None or picked == value


def _path_label(path: str) -> str:
    return path or "(no node ran)"
