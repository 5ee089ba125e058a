"""The live page as HTML (issue: ScribeAgent on the live browser): every frame in one
document, ids numbered as `pagelens prep` numbers the same markup, and actions on those ids
carried out on the live element (same-process and cross-site frames, native selects)."""

from __future__ import annotations

import random
import unicodedata

import pytest
from playwright.async_api import ElementHandle

import pagelens
from pagelens.browser.capture import registry_element
from pagelens.browser.devtools import cdp
from pagelens.browser.html import capture_html, fetch_html, live_nodes
from support.corpus import PAGES


def element(obs, tag: str, text: str = "", **attrs: str) -> int:
    """The id of the element with this tag whose text holds ``text`` and with ``attrs``."""
    for node_id in obs.dom.node_ids():
        el = obs.dom.element(node_id)
        if el.tag == tag and text in el.text and all(el.attributes.get(k) == v for k, v in attrs.items()):
            return node_id
    raise AssertionError(f"no <{tag}> with {text!r} {attrs} in:\n{obs.dom.html()}")


def test_every_frame_is_in_the_one_document_with_live_targets(browser, site):
    browser.reset(site.url("site/frames.html"))
    obs = browser.observe_html()
    html = obs.dom.html()
    for text in (
        "Top document",
        "Text inside the same-origin frame",
        "Grandchild link",
        "Text inside the cross-site frame",
    ):
        assert text in html, text
    assert obs.frame_count == 4 and not obs.frame_errors
    assert "data-pagelens" not in html
    # Every element has a live target but the <div> that holds each frame's body. An id is the
    # registry's of the pass that read it: the same-origin frame's elements are the top
    # document's pass's, the cross-site frame's its own pass's.
    unmarked = set(obs.dom.node_ids()) - set(obs.targets)
    assert len(unmarked) == 3 and {obs.dom.element(i).tag for i in unmarked} == {"div"}
    main, child, cross = (
        obs.targets[element(obs, "button", b)][1] for b in ("Main button", "Child button", "Cross button")
    )
    assert main == child != cross and not obs.notes
    # The ids are the ones `pagelens prep` gives the same markup.
    again = pagelens.Dom.parse(html)
    assert again.html() == html
    assert obs.timings_ms["read"] > 0 and obs.timings_ms["total"] >= obs.timings_ms["parse"]


def test_actions_on_html_ids_reach_elements_in_every_frame(browser, site):
    browser.reset(site.url("site/frames.html"))
    for button, title in (("Main button", "main clicked"), ("Child button", "child clicked")):
        obs = browser.observe_html()
        step = browser.step(f"click [{element(obs, 'button', button)}]", observe=False)
        assert step.ok, step.error
        assert browser.observe_html().title == title
    obs = browser.observe_html()
    assert browser.step(f"click [{element(obs, 'a', 'Grandchild link')}]", observe=False).ok
    assert browser.observe_html().title == "grandchild clicked"
    obs = browser.observe_html()
    typed = browser.step(f"type [{element(obs, 'input', id='q')}] [hello] [0]", observe=False)
    assert typed.ok, typed.error
    assert "echo: hello" in browser.observe_html().dom.html()
    obs = browser.observe_html()
    assert browser.step(f"click [{element(obs, 'button', 'Cross button')}]", observe=False).ok
    assert "cross clicked" in browser.observe_html().dom.html()


def test_native_select_hover_and_press_by_html_id(browser, site):
    browser.reset(site.url("site/form.html"))
    obs = browser.observe_html()
    assert browser.step(f"click [{element(obs, 'option', 'Blue')}]", observe=False).ok
    assert "colour is blue" in browser.observe_html().dom.html()
    obs = browser.observe_html()
    assert browser.step(f"type [{element(obs, 'select', id='color')}] [Green] [0]", observe=False).ok
    assert "colour is green" in browser.observe_html().dom.html()
    obs = browser.observe_html()
    assert browser.step(f"hover [{element(obs, 'div', id='hover-target')}]", observe=False).ok
    assert "hovered" in browser.observe_html().dom.element(element(obs, "p", id="hover-echo")).text
    obs = browser.observe_html()
    assert browser.step(f"click [{element(obs, 'input', id='keys')}]", observe=False).ok
    assert browser.step("press [Control+b]", observe=False).ok
    assert "key Control+b" in browser.observe_html().dom.html()


def test_ids_of_a_stale_or_other_observation_are_clear_errors(browser, site):
    browser.reset(site.url("site/form.html"))
    obs = browser.observe_html()
    vanish = element(obs, "button", "Vanish")
    assert browser.step(f"click [{vanish}]", observe=False).ok
    again = browser.step(f"click [{vanish}]", observe=False)
    assert not again.ok and "no longer on the page" in again.error
    missing = browser.step("click [987654]", observe=False)
    assert not missing.ok and "no element [987654]" in missing.error


def test_markup_writer_on_cdp_shapes():
    """Shadow roots, templates, raw text, void elements, comments and frames, as CDP gives them."""

    def el(tag, backend, children=(), attrs=(), **extra):
        return {
            "nodeType": 1,
            "localName": tag,
            "nodeName": tag.upper(),
            "backendNodeId": backend,
            "attributes": list(attrs),
            "children": list(children),
            **extra,
        }

    def text(value):
        return {"nodeType": 3, "nodeValue": value}

    frame_doc = {
        "nodeType": 9,
        "children": [el("html", 50, [el("head", 51), el("body", 52, [el("b", 53, [text("in frame")])])])],
    }
    doc = {
        "nodeType": 9,
        "children": [
            {"nodeType": 10, "nodeName": "html"},
            el(
                "html",
                1,
                [
                    el("head", 2, [el("style", 3, [text("a</b>{}")])]),
                    el(
                        "body",
                        4,
                        [
                            el(
                                "x-host",
                                5,
                                [text("light")],
                                shadowRoots=[{"nodeType": 11, "children": [el("i", 6, [text("shadow")])]}],
                            ),
                            el("img", 7, attrs=["alt", 'say "hi" <now>']),
                            {"nodeType": 8, "nodeValue": "a -- comment"},
                            el("p", 8, [text("1 < 2 & 3")]),
                            el("iframe", 9, frameId="F2"),
                        ],
                    ),
                ],
            ),
        ],
    }
    frame_ids, owners = ["F1"], {}
    nodes, live = live_nodes(doc, frame_ids, {"F2": frame_doc}, owners)
    assert frame_ids == ["F1", "F2"] and owners == {"F2": 9}
    dom, ids = pagelens.Dom.from_nodes(nodes)
    by_mark = {f"{m[0]}.{m[1]}": i for i, m in zip(ids, live, strict=True) if m is not None and i is not None}
    assert set(by_mark) == {f"0.{b}" for b in range(1, 10)} | {"1.53"}
    html = dom.html()
    assert "<i" in html and "shadow" in html and "light" in html
    assert "a&lt;/b&gt;{}</style>" in html  # raw text escaped like any text: it closes nothing
    assert 'alt="say &quot;hi&quot; &lt;now&gt;"' in html and "1 &lt; 2 &amp; 3" in html
    assert dom.element(by_mark["1.53"]).text == "in frame"
    # Each live element is one element of the document, with its own id.
    assert len(set(by_mark.values())) == len(by_mark)


def test_the_page_cannot_forge_clone_or_hide_an_element_id(browser, site):
    """Hardening: marks set by the page in any spelling (HTML and SVG, setAttributeNS) are
    plain attributes, and structures a parser repairs (p > b > div, nested forms, elements after
    <plaintext>) map each live element to exactly one id. A click lands where the id says."""
    browser.reset(site.url("site/forged.html"))
    obs = browser.observe_html()
    live = browser.run(lambda env: env.page.evaluate("document.querySelectorAll('*').length"))
    assert len(obs.targets) == live  # every live element, once
    assert len(set(obs.targets.values())) == len(obs.targets)
    html = obs.dom.html()
    assert len(obs.dom.select("b")) == 1 and len(obs.dom.select("p > b > div")) == 1  # not cloned
    assert len(obs.dom.select("form form button")) == 1
    # Nothing the page wrote became an element: the only <a> elements are the page's own.
    assert [obs.dom.element(i).attributes.get("id") for i in obs.dom.select("a")] == ["svg-link"]
    for node_id in obs.dom.node_ids():
        assert "node" not in obs.dom.element(node_id).attributes  # a page's `node` is never an id
    # A re-read of what the model is shown finds the same elements (the chunker's view).
    assert pagelens.Dom.parse(html).select("a") and len(pagelens.Dom.parse(html).select("a")) == 1
    for tag, text, expect in (
        ("a", "SVG link", "svg link clicked"),
        ("button", "Inner form button", "inner button clicked"),
        ("button", "After plaintext", "after clicked"),
    ):
        obs = browser.observe_html()
        step = browser.step(f"click [{element(obs, tag, text)}]", observe=False)
        assert step.ok, step.error
        out = browser.run(lambda env: env.page.evaluate("document.getElementById('out').textContent"))
        assert out == expect, (text, out)


# DevTools' reading of a text node (InspectorDOMAgent): one longer than this is cut there and
# ends in an ellipsis; one of only white space is left out.
_DEVTOOLS_TEXT_MAX = 10_000


def _devtools_blank(text: str) -> bool:
    """Blink's IsSpaceOrNewline: ASCII white space, or a character whose bidirectional class is
    white space (a thin space, not a no-break space)."""
    return all(c in " \t\n\v\f\r" if ord(c) < 128 else unicodedata.bidirectional(c) == "WS" for c in text)


def _as_devtools_reads(nodes):
    """The capture's nodes as DevTools' DOM.getDocument gives them: its cut texts, its blank
    texts left out, no namespaces (it does not say them)."""
    kept, index = [], {}
    for i, (parent, kind, name, attrs, _foreign) in enumerate(nodes):
        if kind == 3 and _devtools_blank(name):
            continue
        if kind == 3 and len(name) > _DEVTOOLS_TEXT_MAX:
            name = name[:_DEVTOOLS_TEXT_MAX] + "\u2026"
        index[i] = len(kept)
        kept.append((index.get(parent, -1), kind, name, list(attrs), False))
    return kept


@pytest.mark.parametrize(
    "path", ["site/frames.html", "site/forged.html", "site/form.html", *(f"corpus/{p}/" for p in PAGES[::9])]
)
def test_the_capture_reads_the_nodes_devtools_reads_and_names_the_same_elements(browser, site, path):
    """Node for node what DOM.getDocument gives (save its three quirks: texts cut at 10,000
    characters, blank texts by Unicode's white space left out, no namespaces, so that SVG's
    `linearGradient` was lower-cased); each id's registry element is the element DevTools
    names for the same node."""
    browser.reset(site.url(path), observe=False)

    async def both(aenv):
        sessions = aenv.sessions_for(aenv.page)
        ours = await capture_html(aenv._capture, sessions, True, 60, await aenv._raw_socket())
        theirs = await fetch_html(sessions, True, 60)
        return ours, theirs

    ours, theirs = browser.run(both)
    assert not ours.notes and not ours.frame_errors
    assert all(r.source == "dom" for r in ours.frames.values())
    # The documents' nodes, compared as DevTools reads them.
    assert _as_devtools_reads(ours.nodes) == theirs.nodes
    assert len(ours.targets) == len(theirs.targets) and ours.dom.node_ids() == theirs.dom.node_ids()
    # A sample of ids: the registry's element is DevTools' element of the same id.
    rng = random.Random(path)
    sample = rng.sample(sorted(ours.targets), min(40, len(ours.targets)))

    async def same_elements(aenv):
        wrong = []
        for node_id in sample:
            registry_id, frame_id = ours.targets[node_id]
            found = await registry_element(aenv._capture, ours.frames[frame_id], registry_id, 30)
            assert found is not None, node_id
            backend, _ = found
            expected = theirs.targets[node_id][0]
            if backend != expected:
                described = await cdp(ours.frames[frame_id].session, "DOM.describeNode", {"backendNodeId": backend})
                wrong.append((node_id, described["node"]["nodeName"]))
        return wrong

    assert browser.run(same_elements) == []


def test_a_closed_shadow_root_is_read_by_devtools_and_said(browser, site):
    """A page script cannot see into a closed shadow root: DevTools reads the page, the
    observation says why, and its ids (Chromium's backend ids) still act."""
    browser.reset(site.url("site/second.html"), observe=False)

    async def closed(aenv):
        await aenv.page.evaluate(
            """() => { const host = document.createElement('div'); document.body.append(host);
               const root = host.attachShadow({mode: 'closed'});
               root.innerHTML = '<button onclick="document.title = \\'closed clicked\\'">Inside closed root</button>'; }"""
        )

    browser.run(closed)
    obs = browser.observe_html()
    assert "Inside closed root" in obs.dom.html()
    assert any("DOM.getDocument" in n and "closed shadow roots" in n for n in obs.notes), obs.notes
    assert browser.step(f"click [{element(obs, 'button', 'Inside closed root')}]", observe=False).ok
    assert browser.observe_html().title == "closed clicked"


def test_an_html_id_is_clicked_the_short_way(browser, site, monkeypatch):
    """The HTML view's ids are the registry's: a click on one is the browser's own input at
    the element's centre, as for the AX view's ids (Playwright's element input refuses here)."""
    browser.reset(site.url("site/pointer.html"), observe=False)
    obs = browser.observe_html()

    async def refused(self, *args, **kwargs):
        raise AssertionError("Playwright's element input was used")

    for name in ("click", "hover"):
        monkeypatch.setattr(ElementHandle, name, refused)
    result = browser.step(f"click [{element(obs, 'button', 'Plain')}]", observe=False)
    assert result.ok, result.error
    log = browser.observe_html().dom.html()
    assert "plain:pointermove,pointerdown,mousedown,pointerup,mouseup,click:trusted=true:at=0,0" in log


def test_long_text_is_kept_whole_and_only_code_is_cut(browser, site):
    """DevTools cut every text at 10,000 characters; the capture keeps what the page shows
    whole and cuts only a script's or a style sheet's code (never shown) there."""
    browser.reset(site.url("site/second.html"), observe=False)

    async def long_texts(aenv):
        await aenv.page.evaluate(
            """() => { const pre = document.createElement('pre'); pre.textContent = 'shown '.repeat(4000) + 'END';
               document.body.append(pre); const s = document.createElement('script'); s.type = 'text/plain';
               s.textContent = 'code '.repeat(4000); document.body.append(s); }"""
        )

    browser.run(long_texts)
    obs = browser.observe_html()
    [pre] = obs.dom.select("pre")
    assert obs.dom.element(pre).text == "shown " * 4000 + "END"
    html = obs.dom.html()
    assert "code " * 2000 + "\u2026</script>" in html and "code " * 2001 not in html
