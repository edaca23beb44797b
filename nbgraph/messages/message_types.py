"""The classes that are nbgraph messages, known without building them: `MESSAGE_TYPES`.

The `Message` model (pydantic) is built on first use; until then no message exists, and the
set is empty. `model` fills it; `merge`, the codec and the copy policy read it.
"""

from __future__ import annotations

__all__ = ["MESSAGE_TYPES"]

MESSAGE_TYPES: set[type] = set()
"""`Message` and `RemoveMessage` once the model is built; empty before (no message exists
yet), so `type(value) in MESSAGE_TYPES` tells a message without building the model."""
