"""MiniWoB++ as a real, offline benchmark on the live browser environment.

The task pages come from the PyPI package ``miniwob`` (its wheel ships every task's HTML);
they are opened over ``file://``, seeded, and an episode is started and scored through the
page's own ``core`` object and ``WOB_*`` globals, exactly as the package's Selenium driver
does, but observed and acted on with pagelens' AX-tree observations and actions.

Reward: MiniWoB++ scales a success by the time it took (``WOB_REWARD_GLOBAL``); ``reward``
here is the raw outcome (``WOB_RAW_REWARD_GLOBAL``: 1 success, -1 failure), and the
time-scaled one is ``discounted_reward``.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pagelens import settle
from pagelens.actions import Action
from pagelens.browser.config import BrowserConfig
from pagelens.browser.env import AsyncBrowserEnv
from pagelens.browser.records import PageObservation, StepResult
from pagelens.browser.sync import BrowserEnv
from pagelens.errors import ArgumentError

# Tasks checked end to end in this project's tests (scripted policies reach reward 1).
TESTED_TASKS: tuple[str, ...] = (
    "click-test",
    "click-button",
    "enter-text",
    "login-user",
    "click-checkboxes",
    "choose-list",
    "click-tab",
    "use-autocomplete",
)


def html_dir() -> Path:
    """The MiniWoB++ task pages inside the installed ``miniwob`` package."""
    try:
        import miniwob
    except ImportError as e:  # pragma: no cover - depends on the installation
        raise ImportError("MiniWoB++ needs the `miniwob` package: pip install 'pagelens[miniwob]'") from e
    path = Path(miniwob.__file__).parent / "html" / "miniwob"
    if not path.is_dir():
        raise FileNotFoundError(f"the miniwob package has no task pages at {path}")
    return path


def available_tasks() -> list[str]:
    """Every task page the installed package ships (not all are solvable with element actions:
    the drawing and dragging tasks need coordinates)."""
    return sorted(p.stem for p in html_dir().glob("*.html"))


def task_url(task: str) -> str:
    path = html_dir() / f"{task}.html"
    if not path.is_file():
        raise ArgumentError(f"unknown MiniWoB++ task {task!r}; see pagelens.envs.miniwob.available_tasks()")
    return path.as_uri()


@dataclass
class EpisodeState:
    done: bool
    reward: float
    discounted_reward: float
    reason: str | None


@dataclass
class MiniWoBStep:
    result: StepResult
    state: EpisodeState

    @property
    def observation(self) -> PageObservation | None:
        return self.result.observation


@dataclass
class MiniWoBConfig:
    # MiniWoB++'s default episode limit is 10 s; an LLM agent needs far longer per step.
    episode_seconds: float = 600.0
    data_mode: str = "train"
    browser: BrowserConfig = field(
        default_factory=lambda: BrowserConfig(settle_ms=settle.SELF_CONTAINED_MS, block_other_hosts=True)
    )


class AsyncMiniWoBEnv:
    """``obs = await env.reset("click-test", seed=0)``; ``step = await env.step("click [5]")``."""

    def __init__(self, config: MiniWoBConfig | None = None, browser: AsyncBrowserEnv | None = None):
        self.config = config or MiniWoBConfig()
        self.browser = browser or AsyncBrowserEnv(self.config.browser)
        self.task: str | None = None
        self.utterance: str = ""

    async def __aenter__(self) -> AsyncMiniWoBEnv:
        await self.browser.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        await self.browser.close()

    async def reset(self, task: str, seed: int | str | None = None) -> PageObservation:
        url = task_url(task)
        self.task = task
        await self.browser.reset(url, observe=False)
        page = self.browser.page
        timeout = self.browser.config.action_timeout_ms
        await page.wait_for_function(
            "() => typeof core !== 'undefined' && typeof genProblem !== 'undefined'", timeout=timeout
        )
        if seed is not None:
            await page.evaluate("s => Math.seedrandom(s)", str(seed))
        await page.evaluate(
            """([ms, mode]) => { core.EPISODE_MAX_TIME = ms; core.setDataMode(mode); core.startEpisodeReal(); }""",
            [int(self.config.episode_seconds * 1000), self.config.data_mode],
        )
        await page.wait_for_function("() => WOB_TASK_READY === true", timeout=timeout)
        self.utterance = await page.evaluate("() => core.getUtterance()")
        await asyncio.sleep(self.browser.config.settle_ms / 1e3)
        return await self.browser.observe()

    async def state(self) -> EpisodeState:
        raw = await self.browser.page.evaluate(
            "() => ({done: WOB_DONE_GLOBAL, env: WOB_REWARD_GLOBAL, raw: WOB_RAW_REWARD_GLOBAL, "
            "reason: WOB_REWARD_REASON})"
        )
        return EpisodeState(
            bool(raw["done"]),
            float(raw["raw"]),
            float(raw["env"]),
            None if raw["reason"] is None else str(raw["reason"]),
        )

    async def step(self, action: Action | str) -> MiniWoBStep:
        result = await self.browser.step(action)
        return MiniWoBStep(result, await self.state())


class MiniWoBEnv:
    """The blocking form of :class:`AsyncMiniWoBEnv`, sharing :class:`BrowserEnv`'s loop thread."""

    def __init__(self, config: MiniWoBConfig | None = None):
        self.config = config or MiniWoBConfig()
        self._browser = BrowserEnv(self.config.browser)
        self.aenv = AsyncMiniWoBEnv(self.config, browser=self._browser.aenv)

    @property
    def utterance(self) -> str:
        return self.aenv.utterance

    def reset(self, task: str, seed: int | str | None = None) -> PageObservation:
        return self._browser._run(self.aenv.reset(task, seed))

    def step(self, action: Action | str) -> MiniWoBStep:
        return self._browser._run(self.aenv.step(action))

    def state(self) -> EpisodeState:
        return self._browser._run(self.aenv.state())

    def close(self) -> None:
        self._browser.close()

    def __enter__(self) -> MiniWoBEnv:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
