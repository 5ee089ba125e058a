"""Script-clickable elements on real Chromium: every one gets an id in the occam form, and
clicking it through that id fires the page's own handler. Preformatted text keeps its lines."""

from __future__ import annotations

import re

import pytest

from pagelens.browser import PageObservation


def log_of(browser) -> list[str]:
    async def read(env):
        return await env.page.evaluate("document.getElementById('log').textContent")

    return [x for x in browser.run(read).split(";") if x]


def target(obs: PageObservation, pattern: str) -> int:
    """The id on the line of the occam text that matches ``pattern``."""
    for line in obs.text.split("\n"):
        if re.search(pattern, line):
            ids = re.findall(r"\[(\d+)\]", line)
            assert ids, line
            return int(ids[0])
    raise AssertionError(f"no line matches {pattern!r} in:\n{obs.text}")


@pytest.fixture
def page(browser, site):
    return browser.reset(site.url("site/clickable.html"))


@pytest.mark.parametrize(
    "pattern, handler",
    [
        (r"clickable \[\d+\] 'In'", "w-in"),
        (r"clickable \[\d+\] 'Out'", "w-out"),
        (r"listitem \[\d+\] 'Pictures'", "folder Pictures"),
        (r"clickable \[\d+\] 'Open the panel'", "panel"),
        (r"hint: 'icon trash'", "icon-trash"),
        (r"hint: 'Archive'", "icon-archive"),
        (r"image \[\d+\] hint: 'icon-star'$", "icon-star"),  # a data: URL says nothing: the id's words do
        (r"clickable \[\d+\] hint: 'icon'$", "icon-plain"),
    ],
)
def test_each_clickable_element_has_an_id_and_clicking_it_fires_its_handler(browser, page, pattern, handler):
    result = browser.step(f"click [{target(page, pattern)}]")
    assert result.ok, result.error
    assert log_of(browser) == [handler]


def test_observation_of_the_clickable_page(page):
    text = page.text
    assert "text 'Pick a word:'" in text and "price $12.99" in text  # spans joined as the page has them
    assert "- listitem" in text and "'Documents'" in text
    assert "Hidden clickable" not in text  # not rendered: no id, no text
    node = page.tree.node(target(page, r"hint: 'icon trash'"))
    assert node.clickable and node.hint == "icon trash" and node.backend_dom_node_id is not None
    assert page.notes == [] and page.timings_ms.get("snapshot", page.timings_ms.get("capture", 0)) > 0


def test_preformatted_listing_renders_line_for_line(browser, page):
    lines = page.text.split("\n")
    start = next(i for i, line in enumerate(lines) if line.strip() == "```")
    depth = lines[start].index("`")
    body = [line[depth:] for line in lines[start + 1 : start + 7]]
    assert body == [
        "def greet(name):",
        "    if not name:",
        "",
        "        return default_name()",
        '    return "Hello, " + name',
        "```",
    ]
    link = target(page, r"^\s*link \[\d+\] 'default_name'$")  # listed after the code, with its id
    result = browser.step(f"click [{link}]")
    assert result.ok and result.observation.url.endswith("#docs")


def test_without_clickables_the_observation_is_as_before(browser, site):
    browser.config.clickables = False
    try:
        obs = browser.reset(site.url("site/clickable.html"))
    finally:
        browser.config.clickables = True
    assert "clickable [" not in obs.text and "hint:" not in obs.text
    assert "text 'In'" in obs.text and "- Documents" in obs.text and "image [" not in obs.text


def test_a_snapshot_that_times_out_degrades_with_a_note(ax_source, site):
    browser = ax_source
    browser.config.snapshot_timeout_s = 0.0
    try:
        obs = browser.reset(site.url("site/clickable.html"))
    finally:
        browser.config.snapshot_timeout_s = 10.0
    assert "clickable [" not in obs.text and "Open the panel" in obs.text
    assert len(obs.notes) == 1 and "no DOM snapshot (timed out)" in obs.notes[0]


def test_a_snapshot_that_matches_nothing_degrades_with_a_note(ax_source, site, monkeypatch):
    browser = ax_source
    # The real snapshot is replaced by one naming elements that are not on the page (a page
    # that changed between the two calls); the tree and the browser are real.
    from pagelens.browser import frames
    from pagelens.browser.devtools import cdp

    async def stale(record, timeout, devtools):
        main = await cdp(record.session, "Page.getFrameTree", timeout=timeout)
        return {main["frameTree"]["frame"]["id"]: {987654321: None}}

    monkeypatch.setattr(frames, "clickable_elements", stale)
    obs = browser.reset(site.url("site/clickable.html"))
    assert "clickable [" not in obs.text
    assert any("match no node" in n for n in obs.notes), obs.notes
