"""Browser contexts sharing a Chromium (pagelens.browser.pool): each held to its own allow-list
by the browser's one guard, a renderer's crash kept to its context, a browser's crash leaving
the pool and a new browser for the next reset; and the pool's own bookkeeping (browsers started
ahead of need, an empty one closed)."""

from __future__ import annotations

import asyncio

import pytest

from pagelens.browser.env import AsyncBrowserEnv, PageCrashed
from pagelens.browser.pool import BrowserPool

BOTH = ("127.0.0.1", "localhost")


def off_list(site, since: int) -> list[tuple[str, str, str]]:
    return [r for r in site.requests[since:] if r[0].startswith("localhost")]


def element(obs, name: str) -> int:
    return next(i for i in obs.ids if name in obs.tree.node(i).name)


def pair(pool: BrowserPool) -> tuple[AsyncBrowserEnv, AsyncBrowserEnv]:
    """Two contexts of one pool: one allowed both hosts, one held to 127.0.0.1 (both sealed)."""
    wide = AsyncBrowserEnv(pool=pool, allowed_hosts=BOTH, block_other_hosts=True, settle_ms=50)
    narrow = AsyncBrowserEnv(pool=pool, allowed_hosts=("127.0.0.1",), block_other_hosts=True, settle_ms=50)
    return wide, narrow


async def close_all(envs: list[AsyncBrowserEnv], pool: BrowserPool) -> None:
    """Every environment, then the pool: no browser is left."""
    for env in envs:
        await env.close()
    await pool.close()
    assert pool.browsers == 0


def test_each_context_of_a_shared_browser_is_held_to_its_own_list(site):
    async def run() -> None:
        pool = BrowserPool(contexts_per_browser=4, ready=0)
        wide, narrow = pair(pool)
        try:
            url = site.url("site/redirects.html")
            since = len(site.requests)
            # At once: frames, an image and their redirect hops of both contexts in flight together.
            wide_obs, narrow_obs = await asyncio.gather(wide.reset(url), narrow.reset(url))
            assert pool.browsers == 1 and pool.leases == 2
            assert wide_obs is not None and narrow_obs is not None
            assert "The second page" in wide_obs.text  # the frame's hop to localhost: wide's to take
            assert "The second page" not in narrow_obs.text  # refused in narrow's frame
            reached = off_list(site, since)
            assert len([r for r in reached if "second.html?frame" in r[2]]) == 1, reached
            assert len([r for r in reached if "pixel.png?image" in r[2]]) == 1, reached

            # A same-process frame sent away by a click, and a redirected popup, in each.
            since = len(site.requests)
            moved = await narrow.step(f"click [{element(narrow_obs, 'Move the frame away')}]")
            assert moved.ok and moved.observation is not None
            assert "The second page" not in moved.observation.text
            popup = await narrow.step(f"click [{element(narrow_obs, 'Redirected popup')}]")
            assert not popup.ok and "localhost" in popup.error and "a redirect from" in popup.error
            assert off_list(site, since) == []
            opened = await wide.step(f"click [{element(wide_obs, 'Redirected popup')}]")
            assert opened.ok, opened.error
            assert opened.observation is not None and "The second page" in opened.observation.text
            assert narrow._refused and all("popup" in r.url for r in narrow._refused)  # told its own only
        finally:
            await wide.close()
            await narrow.close()
            await pool.close()

    asyncio.run(run())


def test_a_crash_stays_in_its_context_and_a_dead_browser_is_replaced(site):
    async def run() -> None:
        pool = BrowserPool(contexts_per_browser=4, ready=0)
        wide, narrow = pair(pool)
        try:
            url = site.url("site/form.html")
            await asyncio.gather(wide.reset(url), narrow.reset(url))
            # A renderer killed in one context: that tab is lost, the other context goes on.
            session = await narrow.context.new_cdp_session(narrow.page)
            crashed = asyncio.ensure_future(narrow.page.wait_for_event("crash"))
            asyncio.ensure_future(session.send("Page.crash")).add_done_callback(lambda f: f.exception())
            await crashed
            with pytest.raises(PageCrashed):
                await narrow.observe()
            assert wide.alive and not narrow.alive
            assert (await wide.observe()).text
            assert await narrow.reset(url) is not None  # a new context of the same browser
            assert pool.launches == 1

            # The browser itself crashes: it leaves the pool at once, both contexts are told
            # (not alive), and the next reset of each works in a browser started for it.
            lost = wide._shared
            assert lost is not None
            asyncio.ensure_future(lost.cdp.send("Browser.crash")).add_done_callback(lambda f: f.exception())
            await lost.lost.wait()
            assert not wide.alive and not narrow.alive
            assert pool.browsers == 0 and pool.crashes == 1
            for env in (wide, narrow):
                obs = await env.reset(url)
                assert obs is not None and obs.text
            assert pool.launches == 2 and pool.browsers == 1 and pool.leases == 2
        finally:
            await wide.close()
            await narrow.close()
            await pool.close()

    asyncio.run(run())


def test_the_pool_starts_browsers_ahead_and_closes_the_empty_ones(site):
    async def run() -> None:
        pool = BrowserPool(contexts_per_browser=2, ready=1)
        envs = [AsyncBrowserEnv(pool=pool, allowed_hosts=BOTH, settle_ms=50) for _ in range(3)]
        try:
            pool.warm()
            await envs[0].start()  # the browser warm() started: the lease waited for it alone
            assert pool.launches == 1
            for env in envs:
                await env.reset(site.url("site/second.html"))
            # 3 contexts of 2 per browser: a second browser was started when the room ran out.
            assert pool.leases == 3 and pool.browsers == 2 and pool.launches == 2
            await asyncio.sleep(0)
            assert pool.browsers * 2 - pool.leases >= 1  # room for one more, started ahead
            for env in envs:
                await env.close()
            assert pool.leases == 0
            assert pool.browsers == 1  # the empty one beyond the room kept ready closed
        finally:
            await close_all(envs, pool)

    asyncio.run(run())


@pytest.fixture
def busy_cpus():
    """Two processes that keep both cores busy for the test (as another build or suite would)."""
    import subprocess
    import sys

    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    yield
    for burner in burners:
        burner.kill()
        burner.wait()


def test_contexts_leased_at_once_on_busy_cpus_each_read_their_own_page(site, busy_cpus):
    """Eight environments reset at once in a pool of three contexts a browser while both cores
    are busy: every lease is served (three browsers, none more), each context reads the page it
    loaded, and the typing of one is in no other."""

    async def run() -> None:
        pool = BrowserPool(contexts_per_browser=3, ready=0)
        envs = [AsyncBrowserEnv(pool=pool, allowed_hosts=("127.0.0.1",), settle_ms=50) for _ in range(8)]
        pages = ["site/paragraphs.html" if i % 2 else "site/form.html" for i in range(8)]
        try:
            observed = await asyncio.gather(*(env.reset(site.url(p)) for env, p in zip(envs, pages, strict=True)))
            assert pool.leases == 8 and pool.browsers == pool.launches == 3
            for obs, p in zip(observed, pages, strict=True):
                assert obs is not None and obs.url.endswith(p)
            # What one context types stays in it.
            note = envs[1]
            field = next(i for i in observed[1].ids if observed[1].tree.node(i).role == "textbox")
            typed = await note.step(f"type [{field}] [only in one context] [0]")
            assert typed.ok and "only in one context" in typed.observation.text
            others = await asyncio.gather(*(env.observe() for env in envs if env is not note))
            assert not any("only in one context" in o.text for o in others)
        finally:
            await close_all(envs, pool)

    asyncio.run(run())


def test_a_context_close_that_never_ends_is_bounded_and_the_context_still_goes(site, monkeypatch):
    """Playwright's close of a context once waited for minutes in CI (the context still in the
    browser, the browser answering): the next reset waited with it. Here the close never ends:
    after CONTEXT_CLOSE_S the context is disposed through Chromium and the reset goes on."""
    from pagelens.browser import env as env_module

    monkeypatch.setattr(env_module, "CONTEXT_CLOSE_S", 0.5)

    async def run() -> None:
        pool = BrowserPool(contexts_per_browser=2, ready=0)
        env = AsyncBrowserEnv(pool=pool, allowed_hosts=("127.0.0.1",), settle_ms=50)
        try:
            await env.reset(site.url("site/form.html"))
            stuck = env.context
            never = asyncio.get_running_loop().create_future()

            async def close_forever(*args, **kwargs) -> None:
                await never

            monkeypatch.setattr(stuck, "close", close_forever)
            obs = await env.reset(site.url("site/second.html"))
            assert obs is not None and obs.url.endswith("second.html") and env.context is not stuck
            assert env._shared is not None
            contexts = (await env._shared.cdp.send("Target.getBrowserContexts"))["browserContextIds"]
            assert len(contexts) == 1  # the stuck one went through Chromium
        finally:
            await close_all([env], pool)

    asyncio.run(run())


@pytest.mark.parametrize("stuck", ["new_context", "new_page"])
def test_a_browser_that_does_not_make_a_context_is_set_aside_not_waited_for(site, monkeypatch, stuck):
    """Playwright waits for a context and its first tab with no limit: here one never comes.
    The reset fails in bounded time saying so, the other context of that browser is told its
    browser is gone, and the next reset works in a browser of its own."""
    from playwright.async_api import Browser, BrowserContext

    from pagelens.browser import env as env_module
    from pagelens.browser.env import BrowserStateError

    monkeypatch.setattr(env_module, "CONTEXT_OPEN_S", 1.0)
    owner = Browser if stuck == "new_context" else BrowserContext
    real = getattr(owner, stuck)

    async def run() -> None:
        pool = BrowserPool(contexts_per_browser=4, ready=0)
        other = AsyncBrowserEnv(pool=pool, allowed_hosts=("127.0.0.1",), settle_ms=50)
        env = AsyncBrowserEnv(pool=pool, allowed_hosts=("127.0.0.1",), settle_ms=50)
        try:
            await other.reset(site.url("site/form.html"))
            never = asyncio.get_running_loop().create_future()

            async def forever(self, *args, **kwargs):
                await never

            monkeypatch.setattr(owner, stuck, forever)
            with pytest.raises(BrowserStateError, match="set aside"):  # (a wait for ever fails at 30 s)
                await asyncio.wait_for(env.reset(site.url("site/second.html")), 30)
            assert other.browser_lost and pool.crashes == 1 and pool.browsers == 0
            monkeypatch.setattr(owner, stuck, real)
            obs = await env.reset(site.url("site/second.html"))
            assert obs is not None and obs.url.endswith("second.html")
            assert pool.launches == 2 and pool.browsers == 1
        finally:
            await close_all([other, env], pool)

    asyncio.run(run())


def test_a_browser_that_ends_as_it_starts_is_started_again_and_said(monkeypatch):
    """Chromium ended before it was ready (Playwright's "Failed to launch the browser process",
    seen in CI): the pool starts it again after each pause, on a port picked again, from a new
    driver when no browser uses the old one (every launch from the driver of a failed one failed
    too), and warns with the whole failure each time; one failure more than the pauses is the
    lease's. A driver that serves a browser is kept: stopping it would end that browser."""
    from playwright.async_api import BrowserType
    from playwright.async_api import Error as PlaywrightError

    from pagelens.browser import pool as pool_module

    monkeypatch.setattr(pool_module, "_RELAUNCH_PAUSES_S", (0.01, 0.02))
    real = BrowserType.launch
    failures = [3]
    ports: list[str] = []
    drivers: list[object] = []
    real_start = pool_module.start_driver

    async def start_driver():
        drivers.append(await real_start())
        return drivers[-1]

    monkeypatch.setattr(pool_module, "start_driver", start_driver)

    async def launch(self, **kwargs):
        ports.extend(a for a in kwargs["args"] if a.startswith("--remote-debugging-port="))
        if failures[0]:
            failures[0] -= 1
            raise PlaywrightError("Failed to launch the browser process.\nBrowser logs:\n[pid=1] the logs")
        return await real(self, **kwargs)

    monkeypatch.setattr(BrowserType, "launch", launch)

    async def run() -> None:
        pool = BrowserPool(contexts_per_browser=2, ready=0)
        try:
            with pytest.raises(PlaywrightError, match="Failed to launch"), pytest.warns(UserWarning) as said:
                await pool.lease()  # three in a row
            assert [str(w.message).split(".")[0] for w in said] == [
                "Chromium ended as it started; starting it again in 0",
                "Chromium ended as it started; starting it again in 0",
            ]
            assert len(ports) == 3 and len(set(ports)) == 3, ports
            assert len(drivers) == 3  # the first, and one before each launch tried again
            failures[0] = 2
            with pytest.warns(UserWarning) as said:
                shared, _ = await pool.lease()
            assert [str(w.message).replace("\n", " ") for w in said] == [
                f"Chromium ended as it started; starting it again in {pause} s. Failed to launch the browser "
                "process. Browser logs: [pid=1] the logs"
                for pause in ("0.01", "0.02")
            ]
            assert pool.launches == 1 and not shared.lost.is_set() and len(drivers) == 5
            pool.release(shared)
        finally:
            await pool.close()
        drivers.clear()
        pool = BrowserPool(contexts_per_browser=1, ready=0)
        try:
            first, _ = await pool.lease()
            failures[0] = 1
            with pytest.warns(UserWarning, match="ended as it started"):
                second, _ = await pool.lease()  # a browser of its own, the first one's driver kept
            assert len(drivers) == 1 and pool.launches == 2 and pool.browsers == 2
            assert not first.lost.is_set() and first.browser.is_connected()
            pool.release(first)
            pool.release(second)
        finally:
            await pool.close()

    asyncio.run(run())
