"""The page's tree: every frame's payload (rows of pagelens' capture, or Chromium's tree) built
into one by the core, on the event loop for a small page and in a worker thread for a large one."""

from __future__ import annotations

import asyncio
import functools
import time
from typing import Any

from pagelens._core import AXTree

# The core's work on a small page costs less than a hop to a worker thread and back (0.5-1.4 ms
# an observation, measured here): done on the event loop up to these sizes (~1 ms of work each).
INLINE_PAYLOAD_BYTES = 128 << 10
INLINE_RENDER_NODES = 10_000


async def build_tree(
    payload: Any, frames: list[dict[str, Any]], max_depth: int | None, clickable: dict[int, str | None] | None = None
) -> tuple[AXTree, float]:
    """The tree of a page's payloads (either source) and its build time in ms, built off the
    event loop but for a small page. A hidden <iframe> has no node: its frame cannot be shown
    and is left out."""
    t0 = time.perf_counter()
    options: dict[str, Any] = {} if max_depth is None else {"max_depth": max_depth}
    payloads = [payload, *(f["payload"] for f in frames)]
    small = all(isinstance(p, bytes) for p in payloads) and sum(map(len, payloads)) <= INLINE_PAYLOAD_BYTES
    build = functools.partial(
        AXTree.from_cdp, payload, frames=frames, skip_orphan_frames=True, clickable=clickable, **options
    )
    tree = build() if small else await asyncio.to_thread(build)
    return tree, (time.perf_counter() - t0) * 1e3
