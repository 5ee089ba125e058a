"""Spec dom.md section 6 on every corpus page, both as saved and as Chromium left it."""

from __future__ import annotations

import re

import html5lib
import pytest

import pagelens
from support.corpus import PAGES, html_bytes  # noqa: F401  (page fixture)

KINDS = ["source", "dom"]
INTERACTIVE = {"a", "button", "input", "select", "option", "textarea", "label", "img", "iframe"}
REMOVED = {"script", "style", "noscript", "template"}
NODE_RE = re.compile(r' node="(\d+)"')


@pytest.fixture(params=[(p, k) for p in PAGES for k in KINDS], ids=lambda pk: f"{pk[0]}-{pk[1]}")
def parsed(request):
    page, kind = request.param
    dom = pagelens.Dom.parse(html_bytes(page, kind))
    return page, kind, dom, dom.clean()


def test_ids_unique_reverse_order_and_stable(parsed):
    _, _, dom, clean = parsed
    ids = [int(i) for i in NODE_RE.findall(dom.html())]
    assert ids == sorted(ids, reverse=True) and len(set(ids)) == len(ids) == len(dom)
    assert ids[0] == len(dom) - 1 and ids[-1] == 0
    assert dom.flattened_tags == 0, "the parse's limits (nesting, formatting) must never touch a real page"
    kept = [int(i) for i in NODE_RE.findall(clean.html())]
    assert kept == sorted(kept, reverse=True)
    for i in kept:
        assert clean.element(i).tag == dom.element(i).tag


def _inside_removed(dom, node_id) -> bool:
    el = dom.element(node_id)
    while el is not None:
        if el.tag in REMOVED or el.tag == "head":
            return True
        el = dom.element(el.parent) if el.parent is not None else None
    return False


def test_interactive_elements_never_dropped(parsed):
    _, _, dom, clean = parsed
    for i in dom.node_ids():
        if dom.element(i).tag in INTERACTIVE and not _inside_removed(dom, i):
            assert i in clean, dom.element(i)


def _visible_chars(html: bytes) -> str:
    """Independent reference (html5lib, a pure-Python WHATWG parser): the characters of
    the text that rule 1 keeps, whitespace removed."""
    # utf-8-sig: a byte-order mark is not text (the decoder strips it, as browsers do).
    root = html5lib.parse(html.decode("utf-8-sig", "replace"), namespaceHTMLElements=False)
    out: list[str] = []
    stack = [(root, False)]
    while stack:
        el, in_head = stack.pop()
        # Local names: an SVG <style> is CSS like any other.
        tag = el.tag.rsplit("}", 1)[-1] if isinstance(el.tag, str) else None
        dropped = tag is None or tag in REMOVED or (in_head and tag != "title")
        if not dropped:
            out.append(el.text or "")
            stack.extend((c, (in_head or tag == "head") and tag != "title") for c in el)
        out.append(el.tail or "")
    return re.sub(r"\s+", "", "".join(out))


def test_visible_text_kept(page):
    for kind in KINDS:
        data = html_bytes(page, kind)
        clean = pagelens.Dom.parse(data, encoding="utf-8").clean()
        ours = re.sub(r"\s+", "", clean.element(max(clean.node_ids())).text)
        # Same characters; their order may differ where text was misnested.
        assert sorted(ours) == sorted(_visible_chars(data)), kind


def test_idempotent(parsed):
    _, _, _, clean = parsed
    html = clean.html()
    again = pagelens.Dom.parse(html, keep_ids=True).clean()
    assert again.html() == html


@pytest.mark.parametrize("kind", ["source", "dom"])
def test_cleaning_shrinks_the_corpus(kind):
    before = after = 0
    for page in PAGES:
        dom = pagelens.Dom.parse(html_bytes(page, kind))
        before += pagelens.count_tokens(dom.html())
        after += pagelens.count_tokens(dom.clean().html())
    assert after < before / 2


def test_minimal_profile_keeps_attributes_and_tags():
    html = b'<div data-x="1" onclick="f()"><font>t</font><script>s()</script><!--c--></div>'
    out = pagelens.Dom.parse(html).clean("minimal").html()
    assert 'data-x="1"' in out and 'onclick="f()"' in out and "<font" in out
    assert "<script" not in out and "<!--" not in out


def test_options_switch_rules_one_by_one():
    html = b'<div class="x" data-y="2"><span></span><b onclick="z()">t</b></div>'
    dom = pagelens.Dom.parse(html)
    assert 'data-y="2"' in dom.clean(filter_attributes=False, drop_event_handlers=False).html()
    assert "<span" in dom.clean(remove_empty=False).html()
    assert "<span" not in dom.clean().html()
    with pytest.raises(pagelens.DomError, match="frobnicate: unknown field"):
        dom.clean(frobnicate=True)
    with pytest.raises(pagelens.DomError, match="remove_empty: invalid type"):
        dom.clean(remove_empty="yes")
    with pytest.raises(ValueError, match="unknown cleaning profile"):
        dom.clean("aggressive")


def test_element_lookup():
    dom = pagelens.Dom.parse("<p>Hello <a href='/x' class='c'>there</a></p>")
    a = next(dom.element(i) for i in dom.node_ids() if dom.element(i).tag == "a")
    assert a.attributes == {"href": "/x", "class": "c"} and a.text == "there"
    assert dom.element(a.parent).tag == "p"
    with pytest.raises(KeyError):
        dom.element(10_000)
