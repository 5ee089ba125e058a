"""Reading only what changed (issue 40, item 5): after a change, pagelens' capture copies the
rows of every subtree nothing touched and reads the rest, and its text equals a reading of the
whole page. Every observation of the suite runs with ``check_incremental`` (tests/conftest.py):
each incremental reading is compared with a full one and a difference raises. These tests make
every kind of change a page makes, from outside the watch's sight too, and check both that the
reading is right and that it was incremental where it can be."""

from __future__ import annotations

import random
import re

import pytest

from pagelens.browser.capture import CaptureCheckFailed
from support.corpus import PAGES

# (what the page does, whether the next reading can copy rows, words it must then show or not)
CHANGES: list[tuple[str, bool, str | None, str | None]] = [
    ("document.getElementById('heading').textContent = 'Open orders'", True, "Open orders", None),
    # A list item before the others: their numbers move.
    (
        "document.getElementById('steps').prepend(Object.assign(document.createElement('li'), {textContent: 'Plan'}))",
        True,
        "Plan",
        None,
    ),
    ("document.getElementById('panel').classList.add('hide')", True, None, "Panel"),
    ("document.getElementById('panel').classList.remove('hide')", True, "Panel", None),
    ("document.getElementById('panel').classList.add('shout')", True, "PANEL", None),
    # An inline style the capture does not read changes nothing; one it reads does.
    ("document.body.style.paddingLeft = '3px'", True, None, None),
    ("document.getElementById('quiet').style.display = 'none'", True, None, "quiet"),
    # Values, ticks and choices set by script: no mutation, no event.
    ("document.getElementById('who').value = 'Ada'", True, "Ada", None),
    ("document.getElementById('agree').checked = true", True, "checked", None),
    ("document.getElementById('size').selectedIndex = 1", True, "Large", None),
    ("document.getElementById('go').focus()", True, None, None),  # a row's property: the check compares it
    # A name read from elsewhere: the referenced element changes.
    ("document.getElementById('named-by').textContent = 'Delete item'", True, "Delete item", None),
    ("document.querySelector('label[for=who]').textContent = 'Customer'", True, "Customer", None),
    # Words made inert name nothing: the name read through them is read again.
    ("document.getElementById('inert-wrap').inert = true", True, "] 'y'", "Keep item"),
    ("document.getElementById('cell').textContent = 'Desk lamp'", True, "Desk lamp", None),
    # An element with an id goes: a label names another control (ids written twice), a
    # reference names nothing.
    ("document.getElementById('promo').remove()", True, None, "Promo code"),
    ("document.getElementById('gone-name').remove()", True, "Box", "Archive"),
    # A listener added to an element already shown (the hook tells it).
    ("document.getElementById('plain').addEventListener('click', () => {})", True, None, None),
    ("document.getElementById('more').open = true", True, "Hidden details", None),
    ("document.getElementById('tip').showPopover()", True, "A tip", None),
    # Shadow trees: a child shown by another slot, a text inside the tree.
    ("document.getElementById('slotted').slot = 'b'", True, "slotted words", None),
    ("document.getElementById('host').shadowRoot.querySelector('h2').textContent = 'Primary'", True, "Primary", None),
    # A class on the body shows an element far below it: read whole.
    ("document.body.classList.add('ready')", False, "Shown when ready", None),
    # A custom element defined after it was read: it may have a shadow tree now.
    (
        "customElements.define('my-widget', class extends HTMLElement { connectedCallback() {"
        " this.attachShadow({mode: 'open'}).innerHTML = '<b>from its shadow</b>'; } });"
        " document.getElementById('widget').replaceWith(document.getElementById('widget'))",
        True,
        "from its shadow",
        None,
    ),
    ("document.getElementById('rows').lastElementChild.remove()", True, None, "Row 199"),
]


def test_every_kind_of_change_reads_as_a_whole_reading(browser, site):
    browser.reset(site.url("site/incremental.html"))
    assert browser.config.check_incremental  # tests/conftest.py: every reading below is compared
    browser.observe()
    for script, copies, shown, gone in CHANGES:
        browser.run(lambda aenv, s=script: aenv.page.evaluate(s))
        obs = browser.observe()
        assert (obs.reused_rows > 0) == copies, (script, obs.reused_rows)
        if shown:
            assert shown in obs.text, (script, obs.text)
        if gone:
            assert gone not in obs.text, (script, obs.text)


def test_a_hover_where_a_rule_shows_on_it_reads_the_page_whole(browser, site):
    browser.reset(site.url("site/incremental.html"))
    before = browser.observe()
    assert "Settings" not in before.text
    menu = re.search(r"\[(\d+)\][^\n]*Menu", before.text).group(1)
    result = browser.step(f"hover [{menu}]")
    assert result.ok, result.error
    assert "Settings" in result.observation.text
    assert result.observation.reused_rows == 0


def test_nothing_changed_copies_everything_but_the_root(browser, site):
    browser.reset(site.url("site/incremental.html"))
    first = browser.observe()
    again = browser.observe()
    assert again.text == first.text
    assert again.reused_rows == len(again.tree) - 1  # the document's own row is always read


async def _observed_with_answer_sizes(aenv):
    """An observation and the sizes of the capture's answers it received (bytes)."""
    socket = await aenv._raw_socket()
    sizes = []
    call = socket.target_call

    async def spy(target, method, params=None, *args, **kwargs):
        answer = await call(target, method, params, *args, **kwargs)
        if method == "Runtime.evaluate" and ".capture(" in (params or {}).get("expression", ""):
            sizes.append(len(answer))
        return answer

    socket.target_call = spy
    try:
        return await aenv.observe(), sizes
    finally:
        del socket.target_call


def test_a_reading_of_nothing_changed_is_not_sent_again(browser, site):
    """A pass whose answer would be, byte for byte, the one pagelens holds says so instead of
    sending it (a large page's answer costs more to send than its pass): the observation is
    the same; a change is read and sent; an answer pagelens does not hold is sent whole."""
    browser.reset(site.url("site/incremental.html"), observe=False)
    first, sizes = browser.run(_observed_with_answer_sizes)
    assert sizes[-1] > 4_000  # (the first is "no capture installed yet")
    again, sizes = browser.run(_observed_with_answer_sizes)
    assert sizes == [sizes[0]] and sizes[0] < 400 and again.text == first.text
    assert again.tree is first.tree  # built once from the bytes held
    assert again.reused_rows == len(again.tree) - 1
    browser.run(lambda aenv: aenv.page.evaluate("document.getElementById('heading').textContent = 'Open orders'"))
    changed, sizes = browser.run(_observed_with_answer_sizes)
    assert sizes[-1] > 4_000 and "Open orders" in changed.text and changed.tree is not again.tree

    async def lose_answers(aenv):  # as after its own failure: a pass names an answer not held
        aenv._capture._answers.clear()

    browser.run(lose_answers)
    lost, sizes = browser.run(_observed_with_answer_sizes)
    assert sizes[-1] > 4_000 and lost.text == changed.text

    async def hold_another_documents(aenv):  # numbered alike, as a new document's world numbers
        ((key, (number, _, _)),) = aenv._capture._answers.items()
        other = b'{"result": {"type": "object", "value": {"x": [], "v": 2, "s": ["Elsewhere"], "r": ""}}}'
        aenv._capture._answers[key] = (number, -1.0, other)

    browser.run(hold_another_documents)
    kept, sizes = browser.run(_observed_with_answer_sizes)
    assert kept.text == changed.text and sizes[-1] > 4_000  # asked again for the bytes


def test_a_change_the_watch_cannot_see_is_caught_by_the_check(browser, site):
    """The check is what the suite relies on: a style rule changed through the CSSOM (no
    mutation, no event, the same number of rules) is not seen, and the check says so."""
    browser.reset(site.url("site/incremental.html"))
    browser.observe()
    browser.run(lambda aenv: aenv.page.evaluate("document.getElementById('heading').textContent = 'Loud'"))
    browser.run(
        lambda aenv: aenv.page.evaluate(
            "for (const r of document.styleSheets[0].cssRules) if (r.selectorText === '.hide') r.selectorText = '#plain'"
        )
    )
    with pytest.raises(CaptureCheckFailed, match="incremental reading differs"):
        browser.observe()
    browser.config.incremental = False
    try:
        assert "Plain text" not in browser.observe().text
    finally:
        browser.config.incremental = True


def test_reading_whole_when_told_not_to_copy(browser, site):
    browser.reset(site.url("site/incremental.html"))
    browser.config.incremental = False
    try:
        browser.observe()
        assert browser.observe().reused_rows == 0
    finally:
        browser.config.incremental = True


MUTATE = """(seed) => {
  let x = seed;
  const rnd = (n) => { x = (x * 1103515245 + 12345) % 2147483648; return x % n; };
  const els = Array.from(document.body.querySelectorAll('*')).filter((e) => !['SCRIPT', 'STYLE', 'LINK'].includes(e.tagName));
  for (let k = 0; k < 3 && els.length; k++) {
    const el = els[rnd(els.length)];
    const op = rnd(8);
    if (op === 0) el.remove();
    else if (op === 1) el.appendChild(Object.assign(document.createElement('p'), {textContent: 'inserted ' + seed}));
    else if (op === 2) el.style.display = el.style.display === 'none' ? '' : 'none';
    else if (op === 3) el.classList.toggle((el.parentElement && el.parentElement.classList[0]) || 'other');
    else if (op === 4) { const t = Array.from(el.childNodes).find((n) => n.nodeType === 3); if (t) t.data = 'text ' + seed; }
    else if (op === 5) el.setAttribute('aria-label', 'label ' + seed);
    else if (op === 6) el.style.paddingTop = rnd(5) + 'px';
    else { const s = els[rnd(els.length)]; if (!s.contains(el) && !el.contains(s) && s.parentNode) s.parentNode.insertBefore(el, s); }
  }
}"""


@pytest.mark.parametrize("page", random.Random(40).sample(PAGES, 6))
def test_random_changes_on_corpus_pages_read_as_whole_readings(browser, site, page):
    """Random removals, insertions, moves, class, style, text and label changes on corpus pages:
    every reading after them equals a full one (the check raises otherwise)."""
    browser.reset(site.url(f"corpus/{page}/"))
    for i in range(6):
        browser.run(lambda aenv, s=i: aenv.page.evaluate(MUTATE, s * 7919 + len(page)))
        browser.observe()


def test_a_sheet_of_another_origin_is_read_through_devtools(browser, site):
    """No page script can read another origin's rules; until pagelens has read them through
    DevTools any change is a whole reading, then only a hover (the state its rule answers to)."""
    browser.reset(site.url("site/incremental-other-origin.html"))
    first = browser.observe()
    assert "Settings" not in first.text

    async def sheet_read(aenv):  # the reading of the sheet, started by the first observation
        assert aenv._capture._learning is not None
        await aenv._capture._learning

    browser.run(sheet_read)
    browser.run(lambda aenv: aenv.page.evaluate("document.getElementById('note').textContent = 'A new note'"))
    changed = browser.observe()
    assert "A new note" in changed.text and changed.reused_rows > 0
    menu = re.search(r"\[(\d+)\][^\n]*Menu", changed.text).group(1)
    hovered = browser.step(f"hover [{menu}]")
    assert hovered.ok, hovered.error
    assert "Settings" in hovered.observation.text
    assert hovered.observation.reused_rows == 0


def test_reading_sheets_leaves_the_pages_session_alone(browser, site):
    """The sheets of another origin are read on a session of their own: the DOM and CSS domains
    that reading turns on and off do not drop the node ids held on the page's session."""
    from pagelens.browser.frames import cdp

    browser.reset(site.url("site/incremental-other-origin.html"), observe=False)

    async def held_through_a_reading(aenv):
        session = await aenv.sessions_for(aenv.page).main()
        root = (await cdp(session, "DOM.getDocument", {"depth": 0}))["root"]["nodeId"]
        await aenv.observe()
        assert aenv._capture._learning is not None
        await aenv._capture._learning
        return (await cdp(session, "DOM.querySelector", {"nodeId": root, "selector": "#note"}))["nodeId"]

    assert browser.run(held_through_a_reading) > 0
