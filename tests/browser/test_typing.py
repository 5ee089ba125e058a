"""A type into a text field, the short way (pagelens' world makes the field ready, the browser
inserts the text) against Playwright's fill, the long way it falls back to: the page sees the
same events and ends with the same value; on tests/sites/fields.html."""

from __future__ import annotations

import pytest

from pagelens.actions import Action
from pagelens.browser import BrowserEnv
from support.observed import find

# Field (its label), and whether the short way takes it.
SHORT = ("Name", "Story", "Email", "Secret", "Query", "Phone", "Site", "Weird", "Short", "Shadowed", "Far")
TEXTS = ("héllo wörld ✓ 🙂", "two\nlines", "x" * 600, "  spaced  ")

_SEEN = "() => window.seen"


def _in_order(seen: list[str]) -> list[str]:
    """The events in order, but for ``select``: select() queues it as a task of its own, which
    runs before or after the inserted text's events by the machine's timing, or not at all when
    the text replaced the selection first (measured in Playwright's own fill: a textarea's, on
    a busy machine)."""
    return [e for e in seen if not e.startswith("select@")]


def _value(label: str) -> str:
    return f"""() => {{
  const find = (root) => {{
    for (const l of root.querySelectorAll('label')) if (l.textContent.trim().startsWith({label!r})) return l.control;
    for (const h of root.querySelectorAll('*')) if (h.shadowRoot) {{ const f = find(h.shadowRoot); if (f) return f; }}
    return null;
  }};
  return find(document).value;
}}"""


def field(obs, label: str) -> int:
    return find(obs, "searchbox" if label == "Query" else "textbox", label)


@pytest.fixture
def no_playwright_fill(refuse_element_input):
    """Playwright's element input refuses: a type that passes went the short way."""
    refuse_element_input("fill", "type", "click", "scroll_into_view_if_needed")


def _by_playwright(browser: BrowserEnv, url: str, label: str, text: str) -> tuple[str, str]:
    """What the page saw and holds after Playwright's own fill of the field."""
    browser.reset(url)

    async def fill(env):
        await env.page.get_by_label(label, exact=False).first.fill(text)
        return _in_order(await env.page.evaluate(_SEEN)), await env.page.evaluate(_value(label))

    return browser.run(fill)


@pytest.mark.parametrize("label", SHORT)
@pytest.mark.parametrize("text", TEXTS, ids=("unicode", "lines", "long", "spaces"))
def test_the_short_way_is_playwrights_fill_to_the_page(browser, site, no_playwright_fill, label, text):
    url = site.url("site/fields.html")
    obs = browser.reset(url)
    result = browser.step(Action("type", target=field(obs, label), text=text))
    assert result.ok, result.error
    ours = (
        _in_order(browser.run(lambda env: env.page.evaluate(_SEEN))),
        browser.run(lambda env: env.page.evaluate(_value(label))),
    )
    x, y, w, h = result.target_box
    assert w > 0 and h > 0 and 0 <= y < browser.aenv.page.viewport_size["height"]  # in view, measured
    assert ours == _by_playwright(browser, url, label, text)


@pytest.mark.parametrize(
    "made",
    [
        "",  # the field is read-only
        "document.getElementById('locked').parentElement.setAttribute('inert', '')",
        "document.getElementById('modal').showModal()",  # all but the dialog is inert
    ],
    ids=("readonly", "inert", "modal"),
)
def test_a_field_that_takes_no_typing_now_is_left_to_playwrights_wait_and_nothing_is_typed(browser, site, made):
    """Read-only, or inert since it was read: the short way declines before it selects or
    focuses anything, and Playwright's fill waits for the field and says why it could not."""
    obs = browser.reset(site.url("site/fields.html"))
    if made:
        browser.run(lambda env: env.page.evaluate(made))
    browser.config.action_timeout_ms = 700
    try:
        result = browser.step(Action("type", target=field(obs, "Locked"), text="typed"))
    finally:
        browser.config.action_timeout_ms = 5000
    assert not result.ok
    assert "editable" in result.error or "inert" in result.error, result.error
    seen = browser.run(lambda env: env.page.evaluate(_SEEN))
    assert not any("@locked" in e for e in seen), seen  # not focused, nothing selected or typed
    assert browser.run(lambda env: env.page.evaluate(_value("Locked"))) == "fixed"


def test_a_field_that_sends_the_focus_elsewhere_gets_playwrights_outcome(browser, site):
    """The short way sees the focus leave and inserts nothing; Playwright's fill then types
    where the focus went, as it would have on its own."""
    url = site.url("site/fields.html")
    obs = browser.reset(url)
    result = browser.step(Action("type", target=field(obs, "Redirects"), text="where?"))
    assert result.ok, result.error
    ours = [browser.run(lambda env, f=f: env.page.evaluate(_value(f))) for f in ("Redirects", "Elsewhere")]
    browser.reset(url)
    theirs = browser.run(lambda env: env.page.get_by_label("Redirects").fill("where?"))
    assert theirs is None
    assert ours == [browser.run(lambda env, f=f: env.page.evaluate(_value(f))) for f in ("Redirects", "Elsewhere")]
    assert ours == ["", "where?"]


_PATCHES = """() => {
  HTMLInputElement.prototype.select = function () {};
  HTMLElement.prototype.focus = function () {};
  Element.prototype.checkVisibility = () => false;
  Element.prototype.getBoundingClientRect = () => new DOMRect(0, 0, 0, 0);
  Element.prototype.matches = () => true;
  Element.prototype.closest = () => document.body;
  Document.prototype.querySelector = () => document.body;
  Object.defineProperty(HTMLInputElement.prototype, 'readOnly', { get: () => true });
  Object.defineProperty(HTMLInputElement.prototype, 'type', { get: () => 'date' });
  Object.defineProperty(Performance.prototype, 'timeOrigin', { get: () => 1 });
}"""


def test_what_the_page_patches_does_not_steer_the_short_way(browser, site, no_playwright_fill):
    """The page redefines what a script would check and act with: the short way, in pagelens'
    world, still types into the field it was given, and only there."""
    browser.reset(site.url("site/fields.html"))
    browser.run(lambda env: env.page.evaluate(_PATCHES))
    obs = browser.observe()
    result = browser.step(Action("type", target=field(obs, "Name"), text="patched"))
    assert result.ok, result.error
    assert browser.run(lambda env: env.page.evaluate(_value("Name"))) == "patched"
    assert browser.run(lambda env: env.page.evaluate(_value("Elsewhere"))) == ""
