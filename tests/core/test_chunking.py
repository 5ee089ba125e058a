"""Spec dom.md section 4 on real pages and generated text."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pagelens
from support.corpus import PAGES, ax_bytes, html_bytes

START_TAG = re.compile(r"<[A-Za-z]")


def check(text: str, chunks, budget: int, kind: str) -> None:
    assert "".join(c.text for c in chunks) == text
    pos = 0
    for c in chunks:
        assert text.encode()[c.start : c.end].decode() == c.text and c.start == pos
        pos = c.end
        assert c.token_count == pagelens.count_tokens(c.text)
        if not c.oversized:
            assert c.token_count <= budget
            if c.start > 0:
                if kind == "dom":
                    assert START_TAG.match(c.text), c.text[:40]
                else:
                    assert text.encode()[c.start - 1 : c.start] == b"\n"


@pytest.mark.parametrize("page", PAGES[::4])
@pytest.mark.parametrize("from_end", [False, True])
def test_dom_chunks(page, from_end):
    cleaned = pagelens.Dom.parse(html_bytes(page, "dom")).clean()
    html = cleaned.html()
    ids = [int(i) for i in re.findall(r' node="(\d+)"', html)]
    for budget in (256, 2048):
        chunks = pagelens.chunk(html, budget, kind="dom", from_end=from_end)
        check(html, chunks, budget, "dom")
        # The document's own chunks: its HTML chunked, without it becoming a str.
        held = cleaned.chunks(budget, from_end=from_end)
        assert [(c.start, c.end, c.text, c.token_count, c.node_ids, c.oversized) for c in held] == [
            (c.start, c.end, c.text, c.token_count, c.node_ids, c.oversized) for c in chunks
        ]
        found = [i for c in chunks for i in c.node_ids]
        assert found == ids
        target = ids[len(ids) // 2]
        k = pagelens.find_chunk(chunks, target)
        assert f' node="{target}"' in chunks[k].text


@pytest.mark.parametrize("page", PAGES[::4])
def test_observation_chunks(page):
    obs = pagelens.AXTree.from_cdp(ax_bytes(page)).render()
    chunks = pagelens.chunk(obs.text, 500, kind="text")
    check(obs.text, chunks, 500, "text")
    assert {i for c in chunks for i in c.node_ids} >= set(obs.ids)


@settings(max_examples=150, deadline=None)
@given(
    st.text(alphabet="ab <div>\n\u00e9\u4e2d🙂x", max_size=400),
    st.integers(1, 60),
    st.sampled_from(["dom", "text"]),
    st.booleans(),
)
def test_generated_text(text, budget, kind, from_end):
    chunks = pagelens.chunk(text, budget, kind=kind, from_end=from_end)
    check(text, chunks, budget, kind)
    for c in chunks:
        if c.oversized:
            # Split at token boundaries: each piece within budget unless one character is larger.
            assert c.token_count <= budget or len(c.text) == 1


def test_chunk_arguments():
    with pytest.raises(ValueError, match="at least 1"):
        pagelens.chunk("x", 0)
    with pytest.raises(ValueError, match="unknown chunk kind"):
        pagelens.chunk("x", 5, kind="xml")
    assert pagelens.chunk("", 5) == []
    with pytest.raises(ValueError, match="at least 1"):
        pagelens.Dom.parse("<p>x</p>").chunks(0)
