"""The inspector: the widget a person steps through a run with, its picture, step list, playback,
subruns and the snapshot kept for untrusted copies."""

import importlib
from typing import Any

_FORMER = ("inspect",)
"""What `nbgraph.views.inspector` held when it was a module, not this folder: read on first use
from `nbgraph.views.inspector.inspector` (importing this folder stays light)."""


def __getattr__(name: str) -> Any:
    if name in _FORMER:
        return getattr(importlib.import_module(f"{__name__}.inspector"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
