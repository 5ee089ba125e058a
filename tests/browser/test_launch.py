"""How the browser is started: Playwright's driver keeps its compiled code between starts."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from pagelens.browser import launch
from pagelens.browser.launch import (
    UNSHOWN_UI_FEATURES,
    LaunchOptions,
    cache_driver_code,
    features_listed,
    find_chromium,
    playwright_disabled_features,
    start_driver,
)


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


def test_one_disable_features_switch_keeps_playwrights_list_the_callers_and_ours(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Chromium reads only the last ``--disable-features`` (measured: a second switch brought
    the omnibox UI the first turned off back), and Playwright puts the caller's arguments after
    its own: one switch, last, naming every feature."""
    listed = playwright_disabled_features()
    # Facts of the driver installed (Playwright has turned these off for years): the list is
    # read, not empty.
    assert listed is not None and {"PaintHolding", "HttpsUpgrades", "ThirdPartyStoragePartitioning"} <= set(listed)
    args = LaunchOptions(extra_args=("--lang=fr", "--disable-features=Mine,PaintHolding")).playwright_kwargs()["args"]
    switches = [a for a in args if a.startswith("--disable-features=")]
    assert switches == [args[-1]] and "--lang=fr" in args
    names = args[-1].split("=", 1)[1].split(",")
    assert set(names) == {*listed, "Mine", *UNSHOWN_UI_FEATURES} and len(names) == len(set(names))
    # A driver whose list cannot be read: the caller's arguments as given, Playwright's switch left alone.
    monkeypatch.setattr(launch, "playwright_disabled_features", lambda: None)
    assert launch.disable_features_switch(("--disable-features=Mine",)) == ("--disable-features=Mine",)
    assert not any(a.startswith("--disable-features=") for a in LaunchOptions().playwright_kwargs()["args"])


def test_the_drivers_list_is_read_past_its_comments_and_other_strings() -> None:
    code = """var disabledFeatures, enabledFeatures;
    disabledFeatures = [
      // See [the issue] "quoted" ]
      "First",
      /* a ] in a block */ "Second", 'single ] quoted',
      process.env.X ? "" : "Third", "With \\"escape\\""
    ].filter(Boolean);
    enabledFeatures = ["Not", "These"];"""
    assert features_listed(code) == ("First", "Second", "Third", 'With \\"escape\\"')
    assert features_listed('disabledFeatures = [ "Never closed"') is None
    assert features_listed("enabledFeatures = []") is None


def test_a_context_costs_one_renderer_and_no_window_ui(site) -> None:
    """Debian's full Chromium, headless, built two WebUI pages of omnibox popup for every
    context, in a renderer of their own (~0.7 CPU-s and a renderer per context, measured):
    a context now costs the renderer of its page, and every switch Playwright sets still holds
    in the browser as launched."""
    from pagelens.browser import AsyncBrowserEnv
    from pagelens.browser.pool import BrowserPool

    async def contexts() -> tuple[list[int], list[str], str]:
        pool = BrowserPool(contexts_per_browser=4, ready=0)
        envs = []
        renderers = []
        try:
            for _ in range(3):
                env = AsyncBrowserEnv(pool=pool, allowed_hosts=("127.0.0.1",), block_other_hosts=True)
                envs.append(env)
                await env.reset(site.url("site/paragraphs.html"), observe=False)
                assert env._shared is not None
                processes = (await env._shared.cdp.send("SystemInfo.getProcessInfo"))["processInfo"]
                renderers.append(sum(p["type"] == "renderer" for p in processes))
            assert envs[0]._shared is envs[-1]._shared  # one browser
            targets = (await envs[0]._shared.cdp.send("Target.getTargets"))["targetInfos"]
            browser_pid = next(p["id"] for p in processes if p["type"] == "browser")
            command_line = Path(f"/proc/{browser_pid}/cmdline").read_bytes().decode()
            return renderers, [t["type"] for t in targets], command_line
        finally:
            for env in envs:
                await env.close()
            await pool.close()

    renderers, kinds, command_line = asyncio.run(contexts())
    assert kinds == ["page"] * 3, kinds
    assert renderers[1] - renderers[0] == renderers[2] - renderers[1] == 1, renderers
    # Playwright's own switch, then ours: Chromium reads the last.
    switches = [a for a in command_line.split("\0") if a.startswith("--disable-features=")]
    assert set(switches[-1].split("=", 1)[1].split(",")) >= {
        *(playwright_disabled_features() or ()),
        *UNSHOWN_UI_FEATURES,
    }
