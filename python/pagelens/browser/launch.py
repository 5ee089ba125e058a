"""Where Chromium is and how to start it."""

from __future__ import annotations

import functools
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from playwright.async_api import Playwright

# Flags for a headless Chromium in a container, often as root: no sandbox (root cannot use
# it), no GPU, /tmp instead of a small /dev/shm, and none of the background traffic a
# sealed machine cannot answer. Scrolls by key and wheel are instant, not animated: an action's
# answer is read where the scroll ends (an animated End is still under way when the page has
# settled, and the answer's view would be a place the page only passed).
CHROMIUM_FLAGS: tuple[str, ...] = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-smooth-scrolling",
)


# Chromium's full browser (Debian's), headless, still builds a browser window's UI for every
# context: its omnibox popup, two WebUI pages in a renderer of their own, never shown. Measured
# (benches/context_cost.py: a context, a tab, a page of 200 paragraphs loaded and read): 0.75
# CPU-s a context with them (0.45 s in renderers), 0.26 s without, and a renderer less.
# Playwright's own builds (its headless shell) have no such UI.
UNSHOWN_UI_FEATURES: tuple[str, ...] = ("WebUIOmniboxPopup", "WebUIOmniboxAimPopup")
_DISABLE_FEATURES = "--disable-features="


@functools.cache
def playwright_disabled_features() -> tuple[str, ...] | None:
    """The features Playwright's driver turns off in every Chromium it launches (its
    ``--disable-features`` switch), read from the driver's own code; None where it cannot be.

    Chromium reads only the last ``--disable-features`` of its command line, and Playwright
    puts the caller's arguments after its own: a caller's switch replaces Playwright's list
    (HTTPS upgrades, paint holding, storage partitioning... turned back on) unless it repeats
    it. The list is read where the driver defines it, so that it follows the driver installed."""
    import playwright  # here: launch.py is read without a browser

    lib = Path(playwright.__file__).parent / "driver" / "package" / "lib"
    for source in (lib / "coreBundle.js", lib / "server" / "chromium" / "chromiumSwitches.js"):
        try:
            listed = features_listed(source.read_text(encoding="utf-8", errors="replace"))
        except OSError:
            continue
        if listed is not None:
            return listed
    return None


_LIST_START = re.compile(r"\bdisabledFeatures = \[")
_LIST_TOKEN = re.compile(r'//[^\n]*|/\*.*?\*/|"((?:[^"\\\n]|\\.)*)"|\'(?:[^\'\\\n]|\\.)*\'|\]', re.S)


def features_listed(code: str) -> tuple[str, ...] | None:
    """The double-quoted names of the array ``disabledFeatures = [...]`` in ``code``, read past
    its comments and other strings (a bracket or a quote in a comment ends nothing); None
    without such an array, or one never closed."""
    start = _LIST_START.search(code)
    if start is None:
        return None
    names: list[str] = []
    for token in _LIST_TOKEN.finditer(code, start.end()):
        if token.group(0) == "]":
            return tuple(names)
        if token.group(1):
            names.append(token.group(1))
    return None


def disable_features_switch(extra_args: tuple[str, ...]) -> tuple[str, ...]:
    """``extra_args`` with one ``--disable-features`` last: Playwright's list, the caller's and
    :data:`UNSHOWN_UI_FEATURES`. Where Playwright's list cannot be read, the arguments as given
    (the UI's cost is paid rather than Playwright's features turned back on)."""
    playwright_list = playwright_disabled_features()
    if playwright_list is None:
        return extra_args
    callers = [a.removeprefix(_DISABLE_FEATURES) for a in extra_args if a.startswith(_DISABLE_FEATURES)]
    named = (*playwright_list, *(n for listed in callers for n in listed.split(",")), *UNSHOWN_UI_FEATURES)
    merged = dict.fromkeys(n for n in named if n)
    rest = tuple(a for a in extra_args if not a.startswith(_DISABLE_FEATURES))
    return (*rest, _DISABLE_FEATURES + ",".join(merged))


# Debian's /usr/bin/chromium is a shell script that sweeps old crash reports, sources
# /etc/chromium.d (a desktop user's flags: system extensions, API keys; one of its scripts
# prints a shell error on machines with a large /dev/shm) and then runs the binary: about ten
# processes and 10-35 ms before every launch (median 135 -> 123 and 157 -> 121 ms, Playwright's
# launch, 8 interleaved each). pagelens starts the binary itself, with its own flags.
_LAUNCHER_BINARIES = {"/usr/bin/chromium": "/usr/lib/chromium/chromium"}


def _past_launcher(path: str) -> str:
    """The binary a distribution's launcher script runs, when ``path`` is that script."""
    binary = _LAUNCHER_BINARIES.get(path)
    if binary is None or not os.access(binary, os.X_OK):
        return path
    try:
        with open(path, "rb") as f:
            script = f.read(2) == b"#!"
    except OSError:
        return path
    return binary if script else path


def find_chromium() -> str:
    """Debian's Chromium (the project's setup installs it; its binary, not the launcher
    script in front of it), or ``PAGELENS_CHROMIUM`` as given."""
    explicit = os.environ.get("PAGELENS_CHROMIUM")
    if explicit:
        return explicit
    for candidate in ("/usr/bin/chromium", "/usr/bin/chromium-browser"):
        if os.path.exists(candidate):
            return _past_launcher(candidate)
    found = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if found:
        return found
    raise FileNotFoundError(
        "no Chromium found: install Debian's package (`apt-get install -y chromium`, done by "
        "`make setup`) or set PAGELENS_CHROMIUM to a Chromium binary"
    )


def cache_driver_code() -> None:
    """Lets Playwright's driver keep its compiled JavaScript from one start to the next.

    The driver is a Node process that compiles Playwright's bundle at every start: ~250 ms of
    a cold ``pagelens browser open`` here, cut to ~180 ms by Node's compile cache (Node >= 22;
    the driver's is). Playwright gives the driver this process' environment, so the cache is
    named here, once, unless the user named one or turned it off (``NODE_DISABLE_COMPILE_CACHE``).
    Node keys what it keeps by its version and each file's contents, and goes without a
    directory it cannot write."""
    if "NODE_COMPILE_CACHE" in os.environ or "NODE_DISABLE_COMPILE_CACHE" in os.environ:
        return
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    base = xdg if os.path.isabs(xdg) else os.path.join(os.path.expanduser("~"), ".cache")  # XDG: relative is unset
    if not os.path.isabs(base):  # no home to name (a bare service account): no cache, not one in the cwd
        return
    os.environ["NODE_COMPILE_CACHE"] = os.path.join(base, "pagelens", "node-compile-cache")


async def start_driver() -> Playwright:
    """Playwright's driver, started with its compile cache (:func:`cache_driver_code`): every
    browser pagelens launches starts here."""
    from playwright.async_api import async_playwright  # here: launch.py is read without a browser

    cache_driver_code()
    return await async_playwright().start()


@dataclass(frozen=True)
class LaunchOptions:
    """How the browser is started. ``executable`` defaults to :func:`find_chromium`."""

    executable: str | None = None
    headless: bool = True
    extra_args: tuple[str, ...] = ()
    viewport: tuple[int, int] = (1280, 1800)
    locale: str = "en-US"
    timezone: str | None = "UTC"
    user_agent: str | None = None
    # A raw DevTools socket (on a local port) for the large AX-tree answers; off: everything
    # goes through Playwright's own connection, at the price of JSON parsed three times.
    devtools_socket: bool = True

    def playwright_kwargs(self) -> dict[str, Any]:
        return {
            "executable_path": self.executable or find_chromium(),
            "headless": self.headless,
            "args": [*CHROMIUM_FLAGS, *disable_features_switch(self.extra_args)],
        }
