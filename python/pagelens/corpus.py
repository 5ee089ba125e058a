"""The real page shipped inside the package, so that ``pagelens observe`` works offline.

It is one page of the project's test corpus: a saved live page (a test page of the
mozilla/readability project, Apache-2.0; see ``data/NOTICE``) with the accessibility tree
that headless Chromium 156 made of it.
"""

from __future__ import annotations

import gzip

BUILTIN_NAME = "wikipedia-3"


def builtin_page() -> bytes:
    """The CDP ``Accessibility.getFullAXTree`` payload of the built-in page, as JSON bytes."""
    from importlib import resources  # here: a shell command's start-up does not pay for it

    data = resources.files("pagelens") / "data" / f"{BUILTIN_NAME}.axtree.json.gz"
    return gzip.decompress(data.read_bytes())
