from __future__ import annotations

import contextlib
import gzip
import json
import os
import sys
from functools import cache
from pathlib import Path

import pytest

CORPUS = Path(__file__).parent / "corpus"
PAGES = sorted(p.name for p in CORPUS.iterdir() if (p / "axtree.json.gz").exists())


def descendants(pid: int) -> list[int]:
    """Every live process descended from ``pid``, read from /proc."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError):
            # "pid (comm) state ppid ...": comm may hold spaces and parentheses.
            fields = stat.read_text().rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


@cache
def executable(name: str) -> str:
    """A command this environment installed (``ray``, ``pagelens``): next to the running
    Python, never from PATH (a fresh clone's ./.venv is not on PATH). Not resolved through
    links: a venv's python is a link to the base interpreter, its scripts are not."""
    path = Path(sys.executable).parent / name
    if not path.exists():
        raise AssertionError(f"{name} is not installed next to {sys.executable}")
    return str(path)


def ax_bytes(page: str) -> bytes:
    return gzip.decompress((CORPUS / page / "axtree.json.gz").read_bytes())


@cache
def ax_nodes(page: str) -> tuple:
    return tuple(json.loads(ax_bytes(page))["nodes"])


@pytest.fixture(params=PAGES)
def page(request) -> str:
    return request.param


@cache
def html_bytes(page: str, kind: str) -> bytes:
    """kind: 'source' (as saved from the site) or 'dom' (after Chromium ran its scripts)."""
    return gzip.decompress((CORPUS / page / f"{kind}.html.gz").read_bytes())


@pytest.fixture(scope="session")
def site():
    """The local test-page server (see tests/site_server.py)."""
    from site_server import SiteServer

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
