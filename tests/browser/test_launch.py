"""How the browser is started: Playwright's driver keeps its compiled code between starts."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from pagelens.browser.launch import cache_driver_code, find_chromium, start_driver


@pytest.fixture
def no_node_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    # Set, then removed: monkeypatch puts back whatever was there before, also what
    # cache_driver_code sets itself.
    for name in ("NODE_COMPILE_CACHE", "NODE_DISABLE_COMPILE_CACHE"):
        monkeypatch.setenv(name, "placeholder")
        monkeypatch.delenv(name)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    return tmp_path / "pagelens" / "node-compile-cache"


def test_the_driver_keeps_its_compiled_code_in_pagelens_cache(no_node_cache: Path) -> None:
    async def start_and_stop() -> None:
        driver = await start_driver()  # how every browser pagelens launches starts
        await driver.stop()

    asyncio.run(start_and_stop())
    assert os.environ["NODE_COMPILE_CACHE"] == str(no_node_cache)
    # The real driver wrote its compiled bundle there (Node names the files, not pagelens).
    assert sum(f.stat().st_size for f in no_node_cache.rglob("*") if f.is_file()) > 10_000


def test_a_cache_the_user_named_or_turned_off_is_left_as_it_is(
    no_node_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NODE_COMPILE_CACHE", "/elsewhere")
    cache_driver_code()
    assert os.environ["NODE_COMPILE_CACHE"] == "/elsewhere"
    monkeypatch.delenv("NODE_COMPILE_CACHE")
    monkeypatch.setenv("NODE_DISABLE_COMPILE_CACHE", "1")
    cache_driver_code()
    assert "NODE_COMPILE_CACHE" not in os.environ


def test_a_relative_cache_home_is_no_place_and_no_home_names_no_cache(
    no_node_cache: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")  # the XDG spec: ignored, as if unset
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    cache_driver_code()
    assert os.environ["NODE_COMPILE_CACHE"] == str(tmp_path / "home" / ".cache" / "pagelens" / "node-compile-cache")
    monkeypatch.delenv("NODE_COMPILE_CACHE")
    monkeypatch.setattr(os.path, "expanduser", lambda path: path)  # no HOME, no password entry
    cache_driver_code()
    assert "NODE_COMPILE_CACHE" not in os.environ


@pytest.mark.skipif(not os.path.exists("/usr/lib/chromium/chromium"), reason="Debian's Chromium is not installed")
def test_debians_launcher_script_is_passed_by_and_a_chosen_browser_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PAGELENS_CHROMIUM", raising=False)
    found = find_chromium()
    assert found == "/usr/lib/chromium/chromium"
    with open(found, "rb") as f:
        assert f.read(4) == b"\x7fELF"  # the browser itself, not a script in front of it
    monkeypatch.setenv("PAGELENS_CHROMIUM", "/usr/bin/chromium")
    assert find_chromium() == "/usr/bin/chromium"  # the user's choice, as given
