"""A click, the short way (pagelens' world finds the point, the browser's own input presses
it) and the long way it falls back to (Playwright's waits), on tests/sites/pointer.html."""

from __future__ import annotations

import re

import pytest

from pagelens.browser import PageObservation
from support.observed import find


def logged(obs: PageObservation) -> str:
    found = re.search(r"log:[^\n]*", obs.text)
    return found.group(0) if found else ""


@pytest.fixture
def pointer(browser, site):
    return browser.reset(site.url("site/pointer.html"))


@pytest.fixture
def no_playwright_click(refuse_element_input):
    """Playwright's own element input refuses: a click that passes went the short way."""
    refuse_element_input("click", "hover", "dblclick", "tap")


def test_a_plain_click_is_the_browsers_own_input_at_the_centre(browser, pointer, no_playwright_click):
    result = browser.step(f"click [{find(pointer, 'button', 'Plain')}]")
    assert result.ok, result.error
    # Trusted events, the pointer arriving first, then pressed and released, at the centre.
    assert "plain:pointermove,pointerdown,mousedown,pointerup,mouseup,click:trusted=true:at=0,0" in logged(
        result.observation
    )
    box = result.target_box
    assert box is not None and box[2] == pytest.approx(120, abs=1) and box[3] == pytest.approx(40, abs=1)


def test_a_hover_is_the_pointer_arriving_and_nothing_pressed(browser, pointer, no_playwright_click):
    result = browser.step(f"hover [{find(pointer, 'button', 'Plain')}]")
    assert result.ok, result.error
    log = logged(result.observation)
    assert "plain-entered:trusted=true" in log and "plain:" not in log


def test_an_element_out_of_view_is_scrolled_to_and_clicked(browser, pointer, no_playwright_click):
    result = browser.step(f"click [{find(pointer, 'button', 'Far')}]")
    assert result.ok, result.error
    assert "far-clicked" in logged(result.observation)
    x, y, w, h = result.target_box
    assert 0 <= y and y + h <= browser.aenv.page.viewport_size["height"]


def test_an_element_in_an_open_shadow_root_is_hit(browser, pointer, no_playwright_click):
    result = browser.step(f"click [{find(pointer, 'button', 'Shadowed')}]")
    assert result.ok, result.error
    assert "shadowed-clicked" in logged(result.observation)


_PATCHES = """() => {
  const zero = () => new DOMRect(0, 0, 0, 0);
  Element.prototype.getBoundingClientRect = zero;
  Element.prototype.getClientRects = () => [];
  Document.prototype.elementFromPoint = () => document.getElementById('overlay');
  ShadowRoot.prototype.elementFromPoint = () => null;
  window.requestAnimationFrame = () => 0;
  Element.prototype.scrollIntoViewIfNeeded = () => {};
  Object.defineProperty(Performance.prototype, 'timeOrigin', { get: () => 1 });
  Object.defineProperty(window, 'innerWidth', { get: () => 1 });
}"""


def test_what_the_page_patches_does_not_steer_the_click(browser, pointer, no_playwright_click):
    """The page redefines what a script would measure and hit-test with (and the document's
    identity, and rendering frames that never come): the click still lands on the button."""
    browser.run(lambda env: env.page.evaluate(_PATCHES))
    obs = browser.observe()
    result = browser.step(f"click [{find(obs, 'button', 'Plain')}]")
    assert result.ok, result.error
    assert "trusted=true:at=0,0" in logged(result.observation)
    result = browser.step(f"click [{find(result.observation, 'button', 'Far')}]")
    assert result.ok, result.error
    assert "far-clicked" in logged(result.observation) and "overlay-clicked" not in logged(result.observation)


def test_a_page_that_redefines_its_documents_identity_is_still_acted_on(browser, pointer):
    """Which document the tab shows is read in pagelens' world: a page's getter for it
    neither refuses the ids of its own document nor passes those of another."""
    browser.run(lambda env: env.page.evaluate(_PATCHES))
    obs = browser.observe()
    assert browser.step(f"hover [{find(obs, 'button', 'Plain')}]").ok
    plain = find(obs, "button", "Plain")
    browser.run(lambda env: env.page.reload())
    browser.run(lambda env: env.page.evaluate(_PATCHES))
    result = browser.step(f"hover [{plain}]")
    assert not result.ok and "another document" in result.error


def test_an_element_that_moves_when_the_pointer_arrives_is_followed_not_missed(browser, pointer):
    """The button runs away from the pointer; what was under it then is not clicked."""
    result = browser.step(f"click [{find(pointer, 'button', 'Runaway')}]")
    assert result.ok, result.error
    log = logged(result.observation)
    assert "runaway-clicked" in log and "trap-clicked" not in log


def test_a_covered_element_is_not_clicked_nor_what_covers_it(browser, pointer):
    browser.config.action_timeout_ms = 700
    try:
        result = browser.step(f"click [{find(pointer, 'button', 'Covered')}]")
    finally:
        browser.config.action_timeout_ms = 5000
    assert not result.ok and "intercepts pointer events" in result.error
    log = logged(result.observation)
    assert "covered-clicked" not in log and "overlay-clicked" not in log


@pytest.mark.parametrize(
    ("clicks", "button", "modifiers", "name", "reads"),
    [
        (2, "left", (), "Click me twice", "double-clicked"),
        (1, "right", (), "Click me twice", "right-clicked"),
        (1, "left", ("Shift",), "Shift-click me", "clicked with shift"),
        (1, "left", (), "Shift-click me", "clicked without shift"),
    ],
)
def test_every_kind_of_click_is_an_action_of_the_one_path(browser, site, clicks, button, modifiers, name, reads):
    """A double click, a right click, a click with keys held (Playwright MCP's browser_click
    offers them) are Actions the executor carries out like any other: through env.step, with
    the select handling, the settle and the observation that every action has."""
    from pagelens.actions import Action

    obs = browser.reset(site.url("site/tools.html"))
    target = find(obs, "button", name)
    result = browser.step(Action("click", target=target, clicks=clicks, button=button, modifiers=modifiers))
    assert result.ok, result.error
    assert result.observation is not None and reads in result.observation.text
