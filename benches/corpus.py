"""The corpus pages the benchmarks read (the same copy the tests use)."""

from __future__ import annotations

import gzip
from pathlib import Path

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "corpus"


def ax_payloads() -> dict[str, bytes]:
    return {
        p.name: gzip.decompress((p / "axtree.json.gz").read_bytes())
        for p in sorted(CORPUS.iterdir())
        if (p / "axtree.json.gz").exists()
    }
