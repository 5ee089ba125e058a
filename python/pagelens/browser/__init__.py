"""The live browser: Playwright on Debian's Chromium, AX-tree observations of every frame,
and actions carried out through the element an id names.

``AsyncBrowserEnv`` is the asyncio API; ``BrowserEnv`` the same, blocking. Importing this
package loads nothing: each name is imported from its module when first used, so that a light
module of it (``tools``, which a shell command reads) does not load Playwright.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pagelens._lazy import lazy_names

# Where each public name lives.
_HOMES = {
    "HostAllowList": "pagelens.browser.allowlist",
    "BrowserConfig": "pagelens.browser.config",
    "AsyncBrowserEnv": "pagelens.browser.env",
    "CHROMIUM_FLAGS": "pagelens.browser.launch",
    "LaunchOptions": "pagelens.browser.launch",
    "find_chromium": "pagelens.browser.launch",
    "HtmlObservation": "pagelens.browser.records",
    "PageObservation": "pagelens.browser.records",
    "StepResult": "pagelens.browser.records",
    "Tab": "pagelens.browser.records",
    "BrowserEnv": "pagelens.browser.sync",
}

if TYPE_CHECKING:
    from pagelens.browser.allowlist import HostAllowList
    from pagelens.browser.config import BrowserConfig
    from pagelens.browser.env import AsyncBrowserEnv
    from pagelens.browser.launch import CHROMIUM_FLAGS, LaunchOptions, find_chromium
    from pagelens.browser.records import HtmlObservation, PageObservation, StepResult, Tab
    from pagelens.browser.sync import BrowserEnv


__getattr__ = lazy_names(__name__, _HOMES, globals())


__all__ = [
    "CHROMIUM_FLAGS",
    "AsyncBrowserEnv",
    "BrowserConfig",
    "BrowserEnv",
    "HostAllowList",
    "HtmlObservation",
    "LaunchOptions",
    "PageObservation",
    "StepResult",
    "Tab",
    "find_chromium",
]
