"""Malformed HTML of any kind gives a result (or DomError for non-text), never a crash or hang."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pagelens


def test_unclosed_and_misnested_tags():
    dom = pagelens.Dom.parse("<div><p>one<b>two<i>three</b>four</p><table><td>x<tr>y")
    html = dom.clean().html()
    for word in ("one", "two", "three", "four", "x", "y"):
        assert word in html


def test_deep_nesting_is_flattened_not_slow():
    dom = pagelens.Dom.parse("<div>" * 100_000 + "deep text" + "</div>" * 100_000)
    assert dom.flattened_tags == 100_000 - 1024
    assert "deep text" in dom.html()
    assert "deep text" in dom.clean().html()


def test_binary_junk_nul_bytes_and_empty():
    junk = bytes(range(256)) * 2000 + b"\x00<p>\x00after nul</p>"
    html = pagelens.Dom.parse(junk).clean().html()
    assert "after nul" in html
    assert pagelens.Dom.parse(b"").html().startswith("<html")
    assert len(pagelens.Dom.parse("")) == 3  # html, head, body


def test_fifty_megabyte_page():
    row = "<tr><td class='c'>cell</td><td><a href='/x'>link</a></td></tr>"
    page = ("<table>" + row * (50_000_000 // len(row)) + "</table>").encode()
    assert len(page) > 49_000_000
    dom = pagelens.Dom.parse(page)
    cleaned = dom.clean()
    assert len(cleaned) > 2_000_000
    chunks = pagelens.chunk(cleaned.html()[:2_000_000], 4000)
    assert chunks and all(c.token_count <= 4000 for c in chunks)


def test_not_text():
    with pytest.raises(pagelens.ArgumentTypeError, match="str or bytes"):  # a TypeError and a PagelensError
        pagelens.Dom.parse(42)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="<>/=\"' abcdivpspantrdl!-&;#x0\u00a0中\n", max_size=300))
def test_generated_html_invariants(html):
    dom = pagelens.Dom.parse(html)
    ids = dom.node_ids()
    assert ids == sorted(ids, reverse=True) and len(set(ids)) == len(ids)
    clean = dom.clean()
    for i in clean.node_ids():
        assert clean.element(i).tag == dom.element(i).tag
    out = clean.html()
    assert pagelens.Dom.parse(out, keep_ids=True).clean().html() == out
