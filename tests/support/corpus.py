"""The test corpus (``tests/corpus``): its pages, and each page's saved accessibility tree
and HTML."""

from __future__ import annotations

import gzip
import json
from functools import cache
from pathlib import Path

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
PAGES = sorted(p.name for p in CORPUS.iterdir() if (p / "axtree.json.gz").exists())


def ax_bytes(page: str) -> bytes:
    return gzip.decompress((CORPUS / page / "axtree.json.gz").read_bytes())


@cache
def ax_nodes(page: str) -> tuple:
    return tuple(json.loads(ax_bytes(page))["nodes"])


@cache
def html_bytes(page: str, kind: str) -> bytes:
    """kind: 'source' (as saved from the site) or 'dom' (after Chromium ran its scripts)."""
    return gzip.decompress((CORPUS / page / f"{kind}.html.gz").read_bytes())
