"""Debian's Chromium where Playwright looks for its own builds: BrowserGym launches
Playwright's default browser (its chat window), and pagelens never downloads one."""

from __future__ import annotations

import os
import re
from pathlib import Path

from pagelens.errors import ArgumentError


def link_playwright_browsers(folder: str | os.PathLike[str], executable: str | None = None) -> Path:
    """A folder for ``PLAYWRIGHT_BROWSERS_PATH`` in which Playwright's own Chromium builds (the
    full one and the headless shell) are links to ``executable`` (Debian's Chromium by
    default). A library that launches Playwright's default browser (BrowserGym's chat window
    does) then starts Debian's; pagelens itself never needs it. The paths are the ones this
    Playwright asks for, read from Playwright itself."""
    from playwright.sync_api import sync_playwright

    from pagelens.browser.launch import find_chromium

    target = Path(executable or find_chromium()).resolve()
    root = Path(folder).expanduser().resolve()
    root.mkdir(parents=True, exist_ok=True)
    saved = os.environ.get("PLAYWRIGHT_BROWSERS_PATH")
    os.environ["PLAYWRIGHT_BROWSERS_PATH"] = str(root)
    try:
        with sync_playwright() as p:
            wanted = {Path(p.chromium.executable_path)}
            # The headless shell's path is only said by a launch that cannot find it.
            try:
                p.chromium.launch(headless=True).close()
            except Exception as e:
                missing = re.search(r"Executable doesn't exist at (\S+)", str(e))
                if missing is None:
                    raise
                wanted.add(Path(missing.group(1)))
    finally:
        if saved is None:
            del os.environ["PLAYWRIGHT_BROWSERS_PATH"]
        else:
            os.environ["PLAYWRIGHT_BROWSERS_PATH"] = saved
    for path in wanted:
        if root not in path.parents:
            raise ArgumentError(f"Playwright asks for {path}, outside {root}: PLAYWRIGHT_BROWSERS_PATH was not read")
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.is_symlink() or path.exists():
            path.unlink()
        path.symlink_to(target)
    return root
