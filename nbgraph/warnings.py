"""LangGraph's `langgraph.warnings`: its deprecation-warning classes, so that a program's
`warnings.filterwarnings("ignore", category=LangGraphDeprecatedSinceV10)` imports and works.

nbgraph warns with them where it gives LangGraph's deprecated names (`NodeInterrupt`).

>>> str(LangGraphDeprecatedSinceV10("Use interrupt() instead."))
'Use interrupt() instead. Deprecated in LangGraph V1.0 to be removed in V2.0.'
"""

from __future__ import annotations

__all__ = [
    "LangGraphDeprecatedSinceV05",
    "LangGraphDeprecatedSinceV10",
    "LangGraphDeprecatedSinceV11",
    "LangGraphDeprecationWarning",
]


class LangGraphDeprecationWarning(DeprecationWarning):
    """A deprecation of LangGraph's API: `since` the version that deprecated it, and the one
    `expected_removal` will remove it in."""

    def __init__(
        self,
        message: str,
        *args: object,
        since: tuple[int, int],
        expected_removal: tuple[int, int] | None = None,
    ) -> None:
        super().__init__(message, *args)
        self.message = message.rstrip(".")
        self.since = since
        self.expected_removal = expected_removal or (since[0] + 1, 0)

    def __str__(self) -> str:
        (major, minor), (gone, gone_minor) = self.since, self.expected_removal
        return (
            f"{self.message}. Deprecated in LangGraph V{major}.{minor} to be removed in "
            f"V{gone}.{gone_minor}."
        )


class LangGraphDeprecatedSinceV05(LangGraphDeprecationWarning):
    def __init__(self, message: str, *args: object) -> None:
        super().__init__(message, *args, since=(0, 5), expected_removal=(2, 0))


class LangGraphDeprecatedSinceV10(LangGraphDeprecationWarning):
    def __init__(self, message: str, *args: object) -> None:
        super().__init__(message, *args, since=(1, 0), expected_removal=(2, 0))


class LangGraphDeprecatedSinceV11(LangGraphDeprecationWarning):
    def __init__(self, message: str, *args: object) -> None:
        super().__init__(message, *args, since=(1, 1), expected_removal=(3, 0))
