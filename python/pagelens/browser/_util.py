"""Small helpers shared by the browser modules."""

from __future__ import annotations

from typing import Any


async def quietly(awaitable: Any) -> None:
    """Await a cleanup step whose failure changes nothing (closing what is already closed)."""
    try:
        await awaitable
    except Exception:
        pass
