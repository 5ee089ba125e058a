"""The versions a result depends on: pagelens', its Rust core's, Playwright's, Chromium's,
Python's and the OS's (``pagelens --version``; studies record them)."""

from __future__ import annotations

import platform
import subprocess
from importlib import metadata

import pagelens


def chromium_version() -> str:
    """What the Chromium pagelens launches says of itself, or why there is none."""
    from pagelens.browser.launch import find_chromium

    try:
        path = find_chromium()
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30)
    except Exception as e:  # no browser is a fact to report here, not a failure
        return f"unavailable ({str(e).splitlines()[0] if str(e) else type(e).__name__})"
    return out.stdout.strip() or f"unknown ({path})"


def versions() -> dict[str, str]:
    try:
        playwright = metadata.version("playwright")
    except metadata.PackageNotFoundError:
        playwright = "not installed"
    return {
        "pagelens": pagelens.__version__,
        "pagelens-core": pagelens.CORE_VERSION,
        "playwright": playwright,
        "chromium": chromium_version(),
        "python": platform.python_version(),
        "os": platform.platform(),
    }
