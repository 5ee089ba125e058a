"""Where the tests' own files are, wherever a test module sits under tests/."""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent
ROOT = TESTS.parent  # the repository
DATA = TESTS / "data"
GOLDEN = TESTS / "golden"
