from __future__ import annotations

import os

import pytest

from support.corpus import PAGES

# Every observation of the suite (in this process, and in the MCP servers and shell daemons it
# starts) that re-read only what changed is checked against a reading of the whole page: a
# difference raises CaptureCheckFailed (see BrowserConfig.check_incremental).
os.environ["PAGELENS_CHECK_INCREMENTAL"] = "1"


@pytest.fixture(params=PAGES)
def page(request) -> str:
    return request.param


@pytest.fixture(scope="session")
def site():
    """The local test-page server (see tests/support/site_server.py)."""
    from support.site_server import SiteServer

    server = SiteServer()
    yield server
    server.close()


@pytest.fixture(scope="module")
def browser():
    """One Chromium for a test module; every test starts with a fresh context via reset()."""
    from pagelens.browser import BrowserEnv

    env = BrowserEnv(allowed_hosts=("127.0.0.1", "localhost"), block_other_hosts=True, settle_ms=50)
    yield env
    env.close()


@pytest.fixture
def ax_source(browser):
    """The module's browser reading Chromium's accessibility tree (``source="ax"``) for one
    test: what is asserted there is that source's own machinery (its DOM snapshot, its frames)."""
    browser.config.source = "ax"
    yield browser
    browser.config.source = "dom"


@pytest.fixture
def refuse_element_input(monkeypatch):
    """Makes the named methods of Playwright's element handles fail for one test: an action
    that passes went pagelens' short way, not Playwright's."""
    from playwright.async_api import ElementHandle

    async def refused(self, *args, **kwargs):
        raise AssertionError("Playwright's element input was used")

    def refuse(*names: str) -> None:
        for name in names:
            monkeypatch.setattr(ElementHandle, name, refused)

    return refuse


@pytest.fixture(scope="module")
def browsergym(tmp_path_factory):
    """BrowserGym's gymnasium registry, its browsers pointed at Debian's Chromium through a
    PLAYWRIGHT_BROWSERS_PATH of links, and MiniWoB++'s pages from the wheel."""
    from pagelens.browsergym import link_playwright_browsers
    from pagelens.envs.miniwob import html_dir

    saved = {k: os.environ.get(k) for k in ("PLAYWRIGHT_BROWSERS_PATH", "MINIWOB_URL")}
    os.environ["PLAYWRIGHT_BROWSERS_PATH"] = str(link_playwright_browsers(tmp_path_factory.mktemp("browsers")))
    os.environ["MINIWOB_URL"] = html_dir().as_uri() + "/"
    import browsergym.core  # noqa: F401  (registers the open-ended task)
    import browsergym.miniwob  # noqa: F401  (registers the MiniWoB++ tasks)
    import gymnasium

    yield gymnasium
    # BrowserGym keeps one sync Playwright for the process, whose event loop stays current in
    # this thread: stopped here, or every later asyncio.run() of the session would refuse.
    import browsergym.core as core

    if core._PLAYWRIGHT is not None:
        core._PLAYWRIGHT.stop()
        core._set_global_playwright(None)
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value
