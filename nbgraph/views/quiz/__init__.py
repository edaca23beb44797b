"""Predict, then see: the quiz over a run's merges and the reducer's fold spelled out."""

import importlib
from typing import Any

_FORMER = ("Quiz",)
"""What `nbgraph.views.quiz` held when it was a module, not this folder: read on first use
from `nbgraph.views.quiz.quiz` (importing this folder stays light). Its function `quiz` is
`nbgraph.views.quiz.quiz.quiz` now: the name `quiz` here is that module's."""


def __getattr__(name: str) -> Any:
    if name in _FORMER:
        return getattr(importlib.import_module(f"{__name__}.quiz"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
