"""stub"""

from __future__ import annotations

from typing import Any

from nbgraph.errors import NbgraphError


class LogShapeError(NbgraphError, ValueError):
    pass


def check_log(log: Any) -> None:
    pass
