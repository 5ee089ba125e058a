"""MiniWoB++ as a study benchmark: task pages from the ``miniwob`` wheel, one seed an episode,
MiniWoB's own reward."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import TYPE_CHECKING

from pagelens.agents.runner import run_agent
from pagelens.browser.records import PageObservation

if TYPE_CHECKING:
    from pagelens.studies.benchmarks import EpisodeTask, TaskSelection
    from pagelens.studies.episodes import Worker
    from pagelens.studies.settings import EpisodeSpec, StudySettings
    from pagelens.studies.store import EpisodeResult


class MiniWoB:
    name = "miniwob"
    summary = "MiniWoB++ (offline task pages, reward from the page)"

    def task_names(self, selection: TaskSelection) -> tuple[str, ...]:
        from pagelens.envs.miniwob import available_tasks
        from pagelens.errors import ArgumentError

        if selection.subset is not None:
            raise ArgumentError(f"MiniWoB++ has no task subsets (--subset {selection.subset}); name them with --tasks")
        return tuple(available_tasks())

    def resolve(self, settings: StudySettings, task: str) -> EpisodeTask:
        from pagelens.envs.miniwob import available_tasks
        from pagelens.studies.benchmarks import EpisodeSetupError, EpisodeTask

        known = available_tasks()
        if task not in known:
            near = difflib.get_close_matches(task, known, n=3)
            hint = f"; did you mean {', '.join(near)}?" if near else ""
            raise EpisodeSetupError(f"no MiniWoB++ task {task!r}{hint}")
        return EpisodeTask(task)

    def reset(self, settings: StudySettings, task: EpisodeTask) -> None:
        return None  # every episode starts its own page

    async def run_episode(
        self, worker: Worker, task: EpisodeTask, spec: EpisodeSpec, out: Path, result: EpisodeResult, restarts: int
    ) -> None:
        from pagelens.envs.miniwob import AsyncMiniWoBEnv, EpisodeState, MiniWoBConfig

        assert worker.browser is not None
        settings = worker.settings
        mw = AsyncMiniWoBEnv(MiniWoBConfig(episode_seconds=settings.episode_seconds), browser=worker.browser)
        # The episode starts once: its utterance (the agent's objective) is read from the started
        # page, and that first observation is the run's.
        first: list[PageObservation] = [await mw.reset(task.name, spec.seed)]

        async def start() -> PageObservation:
            return first.pop() if first else await mw.reset(task.name, spec.seed)

        # MiniWoB's done ends the episode with its reward: what the agent does afterwards (a
        # click on START begins another episode) does not count.
        final: list[EpisodeState] = []

        async def ended() -> bool:
            state = await mw.state()
            if state.done:
                final.append(state)
            return state.done

        url = f"miniwob:{task.name}"
        agent = worker.agent(mw.utterance, url)
        run = await run_agent(
            worker.browser,
            agent,
            mw.utterance,
            url,
            out,
            max_steps=settings.max_steps,
            reset=start,
            max_failed_decisions=settings.max_failed_decisions,
            header={"episode": spec.id, "seed": spec.seed, "restarts": restarts},
            ended=ended,
            report=False,  # the worker writes the step viewer once, with the score
        )
        state = final[0] if final else await mw.state()
        result.reward, result.success = state.reward, state.done and state.reward > 0
        result.evaluation = {"done": state.done, "reason": state.reason, "discounted": state.discounted_reward}
        result.ended(run)
