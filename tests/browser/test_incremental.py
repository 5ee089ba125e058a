"""Reading only what changed (issue 40, item 5): after a change, pagelens' capture copies the
rows of every subtree nothing touched and reads the rest, and its text equals a reading of the
whole page. Every observation of the suite runs with ``check_incremental`` (tests/conftest.py):
each incremental reading is compared with a full one and a difference raises. These tests make
every kind of change a page makes, from outside the watch's sight too, and check both that the
reading is right and that it was incremental where it can be."""

from __future__ import annotations

import asyncio
import random
import re
import threading

import pytest

from pagelens.browser import capture
from pagelens.browser.capture import CaptureCheckFailed
from support.corpus import PAGES

# (what the page does, whether the next reading can copy rows, words it must then show or not).
# Rows are copied only where Chromium computed no style since the last reading (issue 60): a text,
# a class, a value, a focus, an element added or removed restyle; an attribute no selector reads
# and a listener do not.
CHANGES: list[tuple[str, bool, str | None, str | None]] = [
    ("document.getElementById('heading').textContent = 'Open orders'", False, "Open orders", None),
    # A list item before the others: their numbers move.
    (
        "document.getElementById('steps').prepend(Object.assign(document.createElement('li'), {textContent: 'Plan'}))",
        False,
        "Plan",
        None,
    ),
    ("document.getElementById('panel').classList.add('hide')", False, None, "Panel"),
    ("document.getElementById('panel').classList.remove('hide')", False, "Panel", None),
    ("document.getElementById('panel').classList.add('shout')", False, "PANEL", None),
    # An inline style the capture does not read changes nothing; one it reads does.
    ("document.body.style.paddingLeft = '3px'", False, None, None),
    ("document.getElementById('quiet').style.display = 'none'", False, None, "quiet"),
    # Values, ticks and choices set by script: no mutation, no event.
    ("document.getElementById('who').value = 'Ada'", False, "Ada", None),
    ("document.getElementById('agree').checked = true", False, "checked", None),
    ("document.getElementById('size').selectedIndex = 1", False, "Large", None),
    ("document.getElementById('go').focus()", False, None, None),  # a row's property: the check compares it
    # A name read from elsewhere: the referenced element changes.
    ("document.getElementById('named-by').textContent = 'Delete item'", False, "Delete item", None),
    ("document.querySelector('label[for=who]').textContent = 'Customer'", False, "Customer", None),
    # Words made inert name nothing: the name read through them is read again.
    ("document.getElementById('inert-wrap').inert = true", False, "] 'y'", "Keep item"),
    ("document.getElementById('cell').textContent = 'Desk lamp'", False, "Desk lamp", None),
    # An element with an id goes: a label names another control (ids written twice), a
    # reference names nothing.
    ("document.getElementById('promo').remove()", False, None, "Promo code"),
    ("document.getElementById('gone-name').remove()", False, "Box", "Archive"),
    # A listener added to an element already shown (the hook tells it).
    ("document.getElementById('plain').addEventListener('click', () => {})", True, None, None),
    # Attributes no selector reads restyle nothing: the rows of the rest are copied.
    ("document.getElementById('go').setAttribute('aria-label', 'Proceed')", True, "Proceed", None),
    ("document.getElementById('plain').dataset.note = 'a hint'", True, None, None),
    ("document.getElementById('more').open = true", False, "Hidden details", None),
    ("document.getElementById('tip').showPopover()", False, "A tip", None),
    # Shadow trees: a child shown by another slot, a text inside the tree.
    ("document.getElementById('slotted').slot = 'b'", False, "slotted words", None),
    ("document.getElementById('host').shadowRoot.querySelector('h2').textContent = 'Primary'", False, "Primary", None),
    # A class on the body shows an element far below it: read whole.
    ("document.body.classList.add('ready')", False, "Shown when ready", None),
    # A custom element defined after it was read: it may have a shadow tree now.
    (
        "customElements.define('my-widget', class extends HTMLElement { connectedCallback() {"
        " this.attachShadow({mode: 'open'}).innerHTML = '<b>from its shadow</b>'; } });"
        " document.getElementById('widget').replaceWith(document.getElementById('widget'))",
        False,
        "from its shadow",
        None,
    ),
    ("document.getElementById('rows').lastElementChild.remove()", False, None, "Row 199"),
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


# A style rule edited in place through the CSSOM (no mutation, no event, as many rules): seen only
# through Chromium's style counts.
HIDE_PLAIN_IN_PLACE = (
    "for (const r of document.styleSheets[0].cssRules) if (r.selectorText === '.hide') r.selectorText = '#plain'"
)


async def _counts_that_never_move(*args, **kwargs):
    """Style counts that lie (a gate that never sees a change)."""
    return (0, 0)


def test_a_change_the_watch_cannot_see_is_caught_by_the_check(browser, site, monkeypatch):
    """The check is what the suite relies on. A style rule changed through the CSSOM (no
    mutation, no event, the same number of rules) is seen only through Chromium's style counts;
    with counts that never move (a gate that lies), the reading copies stale rows and the check
    says so."""
    from pagelens.browser import capture

    browser.reset(site.url("site/incremental.html"))
    browser.observe()
    monkeypatch.setattr(capture, "style_counts", _counts_that_never_move)
    browser.observe()  # a baseline of the lying counts
    browser.run(
        lambda aenv: aenv.page.evaluate("document.getElementById('heading').setAttribute('aria-label', 'Loud')")
    )
    browser.run(lambda aenv: aenv.page.evaluate(HIDE_PLAIN_IN_PLACE))
    with pytest.raises(CaptureCheckFailed, match="incremental reading differs"):
        browser.observe()
    monkeypatch.undo()
    assert "Plain text" not in browser.observe().text


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


def test_a_sheet_of_another_origin_is_read_through_devtools(browser, site, monkeypatch, request):
    """No page script can read another origin's rules; until pagelens has read them through
    DevTools any change is a whole reading, then only a hover (the state its rule answers to)."""
    # DevTools' answer is held until the test has read the page while it was unknown: on a busy
    # machine it may come before or after any one reading (CI saw it come first).
    answered = threading.Event()
    texts_of = capture.sheet_texts

    async def held_until_answered(*args, **kwargs):
        await asyncio.to_thread(answered.wait, 120)
        return await texts_of(*args, **kwargs)

    monkeypatch.setattr(capture, "sheet_texts", held_until_answered)
    request.addfinalizer(answered.set)  # a failing test leaves no reading held for the module's browser
    browser.reset(site.url("site/incremental-other-origin.html"))
    first = browser.observe()
    assert "Settings" not in first.text

    async def sheet_read(aenv):  # the reading of the sheet, started by the first observation
        assert aenv._capture._learning is not None
        answered.set()
        await aenv._capture._learning

    browser.observe()  # counts of the styles read, to copy rows by
    label = "document.getElementById('note').setAttribute('aria-label', 'Note %d')"
    browser.run(lambda aenv: aenv.page.evaluate(label % 1))
    assert browser.observe().reused_rows == 0  # what the sheet says is not known yet
    browser.run(sheet_read)
    browser.observe()
    browser.run(lambda aenv: aenv.page.evaluate(label % 2))
    changed = browser.observe()
    assert changed.reused_rows > 0
    menu = re.search(r"\[(\d+)\][^\n]*Menu", changed.text).group(1)
    hovered = browser.step(f"hover [{menu}]")
    assert hovered.ok, hovered.error
    assert "Settings" in hovered.observation.text
    assert hovered.observation.reused_rows == 0


def test_reading_sheets_leaves_the_pages_session_alone(browser, site):
    """The sheets of another origin are read on a session of their own: the DOM and CSS domains
    that reading turns on and off do not drop the node ids held on the page's session."""
    from pagelens.browser.devtools import cdp

    browser.reset(site.url("site/incremental-other-origin.html"), observe=False)

    async def held_through_a_reading(aenv):
        session = await aenv.sessions_for(aenv.page).main()
        root = (await cdp(session, "DOM.getDocument", {"depth": 0}))["root"]["nodeId"]
        await aenv.observe()
        assert aenv._capture._learning is not None
        await aenv._capture._learning
        return (await cdp(session, "DOM.querySelector", {"nodeId": root, "selector": "#note"}))["nodeId"]

    assert browser.run(held_through_a_reading) > 0


# Changes no MutationObserver sees and no event of pagelens' world may tell (issue 60), each made
# by the page's own script after a reading: (what it is, the script or a call on the env, words
# the next reading must show, words it must not). tests/sites/unseen.html, whose script stops
# `toggle` and `resize` on `window` before any listener of pagelens' world hears them.
SHEET = "document.getElementById('main-sheet').sheet"
SHADOW = "document.getElementById('shadow-host').shadowRoot"


async def _narrow(aenv):
    await aenv.page.set_viewport_size({"width": 600, "height": 800})


UNSEEN: list[tuple[str, object, str | None, str | None]] = [
    ("a rule's declaration", f"{SHEET}.cssRules[1].style.display = 'block'", "Promo shown", None),
    ("a rule's selector", f"{SHEET}.cssRules[2].selectorText = '.nothing-here'", "Renamed rule shows me", None),
    ("a custom property of a rule", f"{SHEET}.cssRules[0].style.setProperty('--vip', 'block')", "VIP words", None),
    (
        "a rule deleted and one inserted",
        f"{SHEET}.deleteRule(4); {SHEET}.insertRule('.twice {{ display: block }}', 4)",
        "Inserted again",
        None,
    ),
    (
        "a sheet's media",
        "document.getElementById('print-sheet').sheet.media.mediaText = 'screen'",
        None,
        "Hidden on screen soon",
    ),
    ("an adopted sheet's replaceSync", "window.docSheet.replaceSync('.badge { display: none }')", None, "Badge words"),
    (
        "the document's adopted sheets replaced",
        "const s = new CSSStyleSheet(); s.replaceSync('.badge { display: none }'); document.adoptedStyleSheets = [s]",
        None,
        "Badge words",
    ),
    ("a sheet disabled", f"{SHEET}.disabled = true", "Promo shown", None),
    (
        "a custom property registered (no longer inherited)",
        "CSS.registerProperty({name: '--vip', syntax: '<custom-ident>', inherits: false, initialValue: 'block'})",
        "VIP words",
        None,
    ),
    (
        "a shadow root attached to an element already read",
        "document.getElementById('plain-host').attachShadow({mode: 'open'}).innerHTML = '<button>Pay now</button>'",
        "Pay now",
        "old light text",
    ),
    (
        "a shadow tree's adopted sheets replaced",
        f"const s = new CSSStyleSheet(); s.replaceSync('.y {{ display: none }}'); {SHADOW}.adoptedStyleSheets = [s]",
        None,
        "Shadow visible",
    ),
    (
        "a rule inserted in a shadow tree's sheet",
        f"{SHADOW}.querySelector('style').sheet.insertRule('.y {{ display: none }}')",
        None,
        "Shadow visible",
    ),
    ("a shadow tree's sheet disabled", f"{SHADOW}.querySelector('style').sheet.disabled = true", "Shadow secret", None),
    (
        "a manual slot assigned",
        "document.getElementById('manual-host').shadowRoot.querySelector('slot').assign(document.getElementById('m2'))",
        "Second choice",
        "First choice",
    ),
    (
        "an animation in a shadow tree",
        "document.getElementById('anim-host').shadowRoot.getElementById('anim')"
        ".animate([{visibility: 'hidden'}, {visibility: 'hidden'}], {duration: 1, fill: 'forwards'}).finished.then(() => 0)",
        None,
        "Animated words",
    ),
    ("setCustomValidity", "document.getElementById('v').setCustomValidity('bad')", "Error shown", None),
    (
        "ElementInternals.setValidity",
        "document.getElementById('f').internals.setValidity({customError: true}, 'bad')",
        "Field error shown",
        None,
    ),
    ("a custom state", "document.getElementById('t').internals.states.add('open')", "State text", None),
    ("designMode", "document.designMode = 'on'", "Plain words", None),
    (
        "a popover shown, its toggle stopped",
        "document.getElementById('tip').showPopover()",
        "Confirm: pay 500 EUR?",
        None,
    ),
    ("a media query after a resize, its resize stopped", _narrow, None, "Wide screen words"),
]


@pytest.mark.parametrize("last", ["copied", "whole"])
@pytest.mark.parametrize(("change", "script", "shown", "gone"), UNSEEN, ids=[u[0] for u in UNSEEN])
def test_a_change_no_observer_sees_reads_as_a_whole_reading(browser, site, change, script, shown, gone, last):
    """Each change is read at once and in every reading after it (the check raises on a reading
    that differs from a whole one), whether the reading before it copied rows (its counts asked
    again after it) or read the page whole (its counts checked by the next reading's only)."""
    first = browser.reset(site.url("site/unseen.html"))
    before = browser.observe() if last == "copied" else first
    assert before is not None and (before.reused_rows > 0) == (last == "copied"), before.reused_rows
    if shown:
        assert shown not in before.text or change in ("designMode",), before.text
    if gone:
        assert gone in before.text
    if callable(script):
        browser.run(script)
    else:
        browser.run(lambda aenv: aenv.page.evaluate(f"async () => {{ {script}; }}"))
    for _ in range(2):
        obs = browser.observe()
        if shown:
            assert shown in obs.text, obs.text
        if gone:
            assert gone not in obs.text, obs.text


def test_the_self_check_in_the_field_reads_a_page_whole_after_a_mismatch(browser, site, monkeypatch):
    """Outside tests, every N-th reading that copies rows is also read whole in the same pass;
    a difference (here made by counts that lie, so that a CSSOM edit is missed) is answered with
    the whole reading, said once in the notes, and the page is read whole from then on."""
    from pagelens.browser import capture

    browser.reset(site.url("site/incremental.html"))
    browser.config.check_incremental = False
    try:

        async def every_time(aenv):
            aenv._capture.self_check_every = 1

        browser.run(every_time)
        monkeypatch.setattr(capture, "style_counts", _counts_that_never_move)
        browser.observe()
        browser.observe()  # a copied reading that checked itself: the same
        browser.run(
            lambda aenv: aenv.page.evaluate("document.getElementById('heading').setAttribute('aria-label', 'Loud')")
        )
        browser.run(lambda aenv: aenv.page.evaluate(HIDE_PLAIN_IN_PLACE))
        obs = browser.observe()
        assert "Plain text" not in obs.text  # the whole reading's answer
        assert sum("read whole from now on" in n for n in obs.notes) == 1, obs.notes
        assert obs.timings_ms.get("self_check", 0) > 0
        browser.run(
            lambda aenv: aenv.page.evaluate("document.getElementById('heading').setAttribute('aria-label', 'Again')")
        )
        later = browser.observe()
        assert later.reused_rows == 0 and not any("read whole" in n for n in later.notes)
    finally:
        browser.config.check_incremental = True


def test_a_pass_that_copied_while_a_change_met_it_is_read_again_whole(browser, site, monkeypatch):
    """A change made while a pass copies rows (its counts move during it) makes the pass be read
    again whole, its bytes sent. Made here by counts that move exactly during the pass, after a
    change no observer sees (the copying pass is stale)."""
    from pagelens.browser import capture

    browser.reset(site.url("site/unseen.html"))
    browser.observe()
    browser.observe()
    (baseline,) = browser.run(lambda aenv: _held_counts(aenv))
    browser.run(
        lambda aenv: aenv.page.evaluate(
            "document.getElementById('plain-host').attachShadow({mode: 'open'}).innerHTML = '<button>Pay now</button>'"
        )
    )
    answers = iter([baseline])  # before the pass: as held (it copies); after it: moved

    async def moving(*args, **kwargs):
        return next(answers, (baseline[0] + 1, baseline[1] + 1))

    monkeypatch.setattr(capture, "style_counts", moving)
    browser.config.check_incremental = False  # the stale pass is what this test makes
    try:
        obs = browser.observe()
    finally:
        browser.config.check_incremental = True
    assert "Pay now" in obs.text and "old light text" not in obs.text, obs.text


async def _held_counts(aenv):
    return [c for c in aenv._capture._styles.values() if c is not None]


def test_a_whole_reading_asks_the_style_counts_once_and_a_copying_one_twice(browser, site, monkeypatch):
    """The counts are asked before every pass; again after it only where the pass copied rows
    (a whole pass is checked by the next reading's counts)."""
    from pagelens.browser import capture

    real = capture.style_counts
    asked: list[int] = []

    async def counting(*args, **kwargs):
        asked.append(1)
        return await real(*args, **kwargs)

    browser.reset(site.url("site/incremental.html"))
    monkeypatch.setattr(capture, "style_counts", counting)
    # The body's own style changed, computed at once: the counts have moved (a class no rule
    # reads would restyle nothing, and move nothing).
    browser.run(
        lambda aenv: aenv.page.evaluate(
            "document.body.style.paddingLeft = '3px'; document.body.getBoundingClientRect()"
        )
    )
    whole = browser.observe()
    assert (whole.reused_rows, len(asked)) == (0, 1)
    asked.clear()
    copied = browser.observe()
    assert copied.reused_rows > 0 and len(asked) == 2
    assert copied.text == whole.text
