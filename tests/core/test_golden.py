"""Golden renderings of a few corpus pages, each read line by line by a person before it
was committed. Regenerate with PAGELENS_UPDATE_GOLDEN=1 and read the diff before committing."""

from __future__ import annotations

import os

import pytest

import pagelens
from support.corpus import ax_bytes, html_bytes
from support.paths import GOLDEN as GOLDEN_DIR

GOLDEN = GOLDEN_DIR
CASES = [
    ("001", "occam"),
    ("001", "webarena"),
    ("mozilla-2", "occam"),
    ("topicseed-1", "occam"),
    ("links-in-tables", "occam"),
]


@pytest.mark.parametrize("page, mode", CASES)
def test_golden(page, mode):
    text = pagelens.AXTree.from_cdp(ax_bytes(page)).render(mode).text + "\n"
    path = GOLDEN / f"{page}.{mode}.txt"
    if os.environ.get("PAGELENS_UPDATE_GOLDEN"):
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8")


@pytest.mark.parametrize("page", ["001", "mozilla-2"])
def test_golden_scribe_dom(page):
    text = pagelens.Dom.parse(html_bytes(page, "source")).clean().html() + "\n"
    path = GOLDEN / f"{page}.scribe.html"
    if os.environ.get("PAGELENS_UPDATE_GOLDEN"):
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8")
