"""The live browser: Playwright on Debian's Chromium, AX-tree observations of every frame,
and actions carried out through the element an id names.

``AsyncBrowserEnv`` is the asyncio API; ``BrowserEnv`` the same, blocking.
"""

from pagelens.browser.allowlist import HostAllowList
from pagelens.browser.config import BrowserConfig
from pagelens.browser.env import AsyncBrowserEnv
from pagelens.browser.launch import CHROMIUM_FLAGS, LaunchOptions, find_chromium
from pagelens.browser.records import HtmlObservation, PageObservation, StepResult, Tab
from pagelens.browser.sync import BrowserEnv

__all__ = [
    "CHROMIUM_FLAGS",
    "AsyncBrowserEnv",
    "BrowserConfig",
    "BrowserEnv",
    "HostAllowList",
    "LaunchOptions",
    "HtmlObservation",
    "PageObservation",
    "StepResult",
    "Tab",
    "find_chromium",
]
