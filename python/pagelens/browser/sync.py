"""A blocking front for :class:`AsyncBrowserEnv`, usable from scripts and notebooks.

The async environment runs on an event loop in a thread of its own, so the sync API works
even where a loop is already running (Jupyter), and Playwright objects stay on one loop.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

from pagelens.actions import Action
from pagelens.browser.config import BrowserConfig
from pagelens.browser.env import AsyncBrowserEnv, BrowserStateError
from pagelens.browser.records import HtmlObservation, PageObservation, StepResult

T = TypeVar("T")


class BrowserEnv:
    """``with BrowserEnv() as env: obs = env.reset(url); result = env.step("click [12]")``."""

    def __init__(self, config: BrowserConfig | None = None, **overrides: Any):
        self.aenv = AsyncBrowserEnv(config, **overrides)  # a config it refuses starts no thread
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="pagelens-browser", daemon=True)
        self._thread.start()

    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        if self._loop.is_closed():
            raise BrowserStateError("this BrowserEnv is closed")
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    @property
    def config(self) -> BrowserConfig:
        return self.aenv.config

    @property
    def alive(self) -> bool:
        return self.aenv.alive

    @property
    def browser_lost(self) -> bool:
        return self.aenv.browser_lost

    def browser_died(self) -> bool:
        return self._run(self.aenv.browser_died())

    @property
    def last_observation(self) -> PageObservation | None:
        return self.aenv.last_observation

    def start(self) -> None:
        """Launch the browser now (reset() does it when needed)."""
        self._run(self.aenv.start())

    def set_allow_list(self, hosts: tuple[str, ...]) -> None:
        self.aenv.set_allow_list(hosts)

    def reset(self, url: str, observe: bool = True) -> PageObservation | None:
        return self._run(self.aenv.reset(url, observe=observe))

    def observe(self) -> PageObservation:
        return self._run(self.aenv.observe())

    def observe_html(self) -> HtmlObservation:
        return self._run(self.aenv.observe_html())

    def step(self, action: Action | str, observe: bool = True) -> StepResult:
        return self._run(self.aenv.step(action, observe=observe))

    def perform(self, description: str, operation: Callable[[], Awaitable[Any]], observe: bool = True) -> StepResult:
        """:meth:`AsyncBrowserEnv.perform`: ``operation`` is called (and awaited) on the
        environment's loop."""
        return self._run(self.aenv.perform(description, operation, observe=observe))

    def answer_dialog(self, accept: bool, prompt_text: str | None = None) -> str:
        return self._run(self.aenv.answer_dialog(accept, prompt_text))

    def ids_in_view(self) -> tuple[list[int], list[int]]:
        return self._run(self.aenv.ids_in_view())

    def screenshot(self, with_ids: bool = False) -> bytes:
        return self._run(self.aenv.screenshot(with_ids=with_ids))

    def navigate(self, url: str, settle: bool = True) -> None:
        self._run(self.aenv.navigate(url, settle=settle))

    def run(self, coro_fn: Any, *args: Any) -> Any:
        """Run ``await coro_fn(async_env, *args)`` on the environment's loop (for Playwright
        calls the environment does not wrap)."""
        return self._run(coro_fn(self.aenv, *args))

    def close(self) -> None:
        if self._loop.is_closed():
            return
        try:
            self._run(self.aenv.close())
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=10)
            self._loop.close()

    def __enter__(self) -> BrowserEnv:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:  # a forgotten env must not leave a Chromium behind
        try:
            self.close()
        except Exception:
            pass
