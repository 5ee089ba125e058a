"""MiniWoB++ as a study benchmark: task pages from the ``miniwob`` wheel, one seed an episode,
MiniWoB's own reward (the episode ends at MiniWoB's done)."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pagelens.errors import ArgumentError
from pagelens.studies.protocol import EpisodeContext, EpisodeSetupError, EpisodeTask, Goal, NoOptions, Score

if TYPE_CHECKING:
    from pagelens.agents.runner import RunResult
    from pagelens.browser.env import AsyncBrowserEnv
    from pagelens.browser.records import PageObservation
    from pagelens.envs.miniwob import AsyncMiniWoBEnv, EpisodeState
    from pagelens.studies.protocol import TaskSelection


@dataclass
class _Episode:
    env: AsyncMiniWoBEnv
    final: list[EpisodeState]  # MiniWoB's state when it said done


class MiniWoB:
    name = "miniwob"
    summary = "MiniWoB++ (offline task pages, reward from the page)"
    options_type = NoOptions

    def task_names(self, selection: TaskSelection, options: Any) -> tuple[str, ...]:
        from pagelens.envs.miniwob import available_tasks

        if selection.subset is not None:
            raise ArgumentError(f"MiniWoB++ has no task subsets (--subset {selection.subset}); name them with --tasks")
        if selection.sites is not None:
            raise ArgumentError("MiniWoB++ tasks run on no site (--sites); name them with --tasks")
        return tuple(available_tasks())

    def resolve(self, task: str, options: Any) -> EpisodeTask:
        from pagelens.envs.miniwob import available_tasks

        known = available_tasks()
        if task not in known:
            near = difflib.get_close_matches(task, known, n=3)
            hint = f"; did you mean {', '.join(near)}?" if near else ""
            raise EpisodeSetupError(f"no MiniWoB++ task {task!r}{hint}")
        return EpisodeTask(task)

    def reset(self, task: EpisodeTask, options: Any) -> None:
        return None  # every episode starts its own page

    async def setup(self, browser: AsyncBrowserEnv, task: EpisodeTask, episode: EpisodeContext) -> Goal:
        from pagelens.envs.miniwob import AsyncMiniWoBEnv, MiniWoBConfig

        env = AsyncMiniWoBEnv(MiniWoBConfig(episode_seconds=episode.seconds), browser=browser)
        # The episode starts once: its utterance (the agent's objective) is read from the started
        # page, and that first observation is the run's.
        first: list[PageObservation] = [await env.reset(task.name, episode.seed)]
        state = _Episode(env, [])

        async def start() -> PageObservation:
            return first.pop() if first else await env.reset(task.name, episode.seed)

        # MiniWoB's done ends the episode with its reward: what the agent does afterwards (a
        # click on START begins another episode) does not count.
        async def ended() -> bool:
            now = await env.state()
            if now.done:
                state.final.append(now)
            return now.done

        return Goal(env.utterance, f"miniwob:{task.name}", start=start, ended=ended, state=state)

    async def score(
        self, browser: AsyncBrowserEnv, task: EpisodeTask, goal: Goal, run: RunResult, episode: EpisodeContext
    ) -> Score:
        state: _Episode = goal.state
        final = state.final[0] if state.final else await state.env.state()
        return Score(
            final.reward,
            final.done and final.reward > 0,
            {"done": final.done, "reason": final.reason, "discounted": final.discounted_reward},
        )
