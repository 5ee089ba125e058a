"""One episode in a worker: the benchmark sets it up, the worker runs the agent on the page
with its browser under the episode's wall-clock limit (the one ``run_agent`` call of a
study), the benchmark scores it, and the worker describes it as an :class:`EpisodeResult`.

A worker keeps one browser for all its episodes. A browser that crashes or hangs is replaced
and the episode begun once more on the fresh one; a second loss is recorded as the
episode's error. Errors are sorted into kinds: ``model`` (the endpoint failed after the
client's retries, or the episode ran out of time while most of the agent's run was spent
waiting for it: a hung or a slow endpoint),
``browser_start`` (no browser to run on) and ``setup`` (the task could not begin: a login or a
site that fails) are infrastructure failures: the episode is left for a rerun and several
in a row stop the study; ``browser`` (lost twice), ``timeout`` (the agent used its time) and
``agent`` are the episode's own outcome.

The model client makes its requests on the worker's event loop, so an episode cut short
cancels its call there and then: no thread is left waiting on a hung endpoint.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pagelens import settle
from pagelens.agents.factory import make_agent
from pagelens.agents.report import write_report
from pagelens.agents.runner import Agent, run_agent
from pagelens.browser.config import BrowserConfig
from pagelens.browser.env import AsyncBrowserEnv, PageCrashed
from pagelens.errors import PagelensError
from pagelens.llm import LLMClient, LLMError
from pagelens.studies.benchmarks import get_benchmark
from pagelens.studies.protocol import EpisodeContext, EpisodeSetupError, EpisodeTask
from pagelens.studies.settings import EpisodeSpec, RunOptions, StudySettings
from pagelens.studies.store import EpisodeResult, episode_dir

# Failures of what the study runs on, not of the episode: such an episode is not recorded as
# finished (a rerun runs it), and several in a row stop the study.
INFRASTRUCTURE = ("model", "browser_start", "worker", "reset", "setup")
# An episode out of time is the endpoint's failure when waiting for it took most of the agent's
# time *and* its calls were slow. Calls answered faster than this on average were not slow, however
# many the agent made (a loop of quick steps against a local model): the time was the agent's.
SLOW_CALL_S = 0.5


@dataclass
class Worker:
    """A worker's browser and model client, kept across its episodes."""

    settings: StudySettings
    directory: Path
    options: RunOptions = field(default_factory=RunOptions)  # the model client's prices, timeout, retries
    browser: AsyncBrowserEnv | None = None
    llm: LLMClient | None = None
    kept: dict[str, Any] = field(default_factory=dict)  # the benchmark's, across episodes (logins)
    current: str | None = None  # the episode running now
    run_started: float | None = None  # when the episode's agent was made (its setup done)
    planner: LLMClient | None = None  # the agent's planning model, when it has one

    def agent(self, objective: str, url: str) -> Agent:
        """The study's agent for one episode, on this worker's model client, with its options."""
        self.run_started = time.monotonic()
        options = self.settings.agent_settings().options(self.planner_client())
        return make_agent(self.settings.agent, self.client(), objective, url, options)

    async def episode(
        self, task: EpisodeTask, spec: EpisodeSpec, out: Path, result: EpisodeResult, restarts: int
    ) -> None:
        """The benchmark sets the episode up, the agent runs, the benchmark scores it."""
        benchmark = get_benchmark(spec.benchmark)
        browser = self.browser
        assert browser is not None
        context = EpisodeContext(spec.seed, out, self.settings.options(), self.settings.episode_seconds, self.kept)
        goal = await benchmark.setup(browser, task, context)
        settings = self.settings
        run = await run_agent(
            browser,
            self.agent(goal.intent, goal.start_url),
            goal.intent,
            goal.start_url,
            out,
            max_steps=settings.max_steps,
            reset=goal.start,
            task_id=goal.task_id,
            max_failed_decisions=settings.max_failed_decisions,
            header={"episode": spec.id, "seed": spec.seed, "restarts": restarts},
            ended=goal.ended,
            report=False,  # the worker writes the step viewer once, with the score
        )
        result.ended(run)
        result.site = goal.site
        score = await benchmark.score(browser, task, goal, run, context)
        result.reward, result.success, result.evaluation = score.reward, score.success, score.evaluation

    def client(self) -> LLMClient:
        if self.llm is None:
            self.llm = self._new_client(self.settings.model, self.settings.base_url, self.settings.temperature)
        return self.llm

    def planner_client(self) -> LLMClient | None:
        """The agent's planning model (ScribeAgent's --planner-model), when it has one."""
        agent_settings = self.settings.agent_settings()
        if agent_settings.planner_model and self.planner is None:
            base_url = agent_settings.planner_base_url or self.settings.base_url
            self.planner = self._new_client(agent_settings.planner_model, base_url, self.settings.temperature)
        return self.planner

    def _clients(self) -> list[LLMClient]:
        """Every model client an episode calls: its spend, waits and cancels are the episode's."""
        planner = self.planner_client()
        return [self.client(), *([planner] if planner is not None else [])]

    def _new_client(self, model: str, base_url: str | None, temperature: float | None) -> LLMClient:
        o = self.options
        return LLMClient(
            model=model,
            base_url=base_url,
            prices=o.prices,
            temperature=temperature,
            backoff=o.backoff,
            timeout=o.llm_timeout,
            max_retries=o.llm_retries,
            on_retry=self._retrying,
        )

    def _retrying(self, message: str) -> None:
        """A model call being retried is said as it happens (the worker shares the study's
        stderr; a Ray actor's goes to the driver's log): a slow endpoint is never silence."""
        print(f"{self.current or 'worker'}: {message}", file=sys.stderr, flush=True)

    async def fresh_browser(self) -> AsyncBrowserEnv:
        await self.close()
        self.browser = AsyncBrowserEnv(
            BrowserConfig(
                settle_ms=settle.SELF_CONTAINED_MS,
                block_other_hosts=True,
                screenshots=self.options.screenshots,
                mark_new=self.settings.new_marks,
            )
        )
        await self.browser.start()
        return self.browser

    async def close(self) -> None:
        if self.browser is not None:
            try:
                await asyncio.wait_for(self.browser.close(), 30)
            except Exception:  # a crashed browser may not close cleanly; its processes go with it
                pass
            self.browser = None

    async def run(self, spec: EpisodeSpec, task: EpisodeTask) -> EpisodeResult:
        """The episode of ``task`` (as the dispatcher resolved it), begun at most twice (a
        lost browser or a hang is retried once)."""
        started = time.perf_counter()
        self.current = spec.id
        out = episode_dir(self.directory, spec.id)
        restarts = _begin(out)
        result = EpisodeResult(
            spec.id, spec.benchmark, spec.task, spec.seed, spec.agent, self.settings.model, restarts=restarts
        )
        for attempt in (0, 1):
            clients = self._clients()
            llm = clients[0]
            for c in clients:
                c.attach(asyncio.get_running_loop())
                c.resume()
            before = _spent(clients)
            waited_before, began, before_calls = _waited(clients), time.monotonic(), _calls(clients)
            self.run_started = None
            if self.browser is None:
                try:
                    await asyncio.wait_for(self.fresh_browser(), 120)
                except Exception as e:
                    result.error_kind, result.error = "browser_start", f"the browser cannot start: {e}"
                    self.browser = None
                    break
            try:
                await asyncio.wait_for(self.episode(task, spec, out, result, restarts), self.settings.episode_seconds)
                result.error_kind = result.error = None
                break
            except asyncio.TimeoutError:
                limit = self.settings.episode_seconds
                # Measured before the cancel: how long the agent's run (its setup aside: a slow
                # page reset is nobody's fault here) spent waiting for the endpoint.
                model_seconds = _waited(clients) - waited_before
                run_seconds = time.monotonic() - (self.run_started or began)
                answered = _calls(clients) - before_calls
                in_flight = sum(1 for c in clients if c.waiting_for is not None)
                for c in clients:
                    c.cancel()  # the agent's thread stops waiting now...
                for c in clients:
                    await asyncio.to_thread(c.wait_idle, 30)  # ...and has unwound before the next episode
                _record_progress(out, result, model_seconds, run_seconds)
                per_call = model_seconds / max(1, answered + in_flight)
                if model_seconds >= run_seconds / 2 and per_call >= SLOW_CALL_S:
                    result.error_kind = "model"
                    result.error = (
                        f"{llm.base_url}: the endpoint was too slow: the episode ran out of its {limit:g} s "
                        f"with {model_seconds:.0f} s of its agent's {run_seconds:.0f} s spent waiting for it "
                        f"({answered} calls answered, --llm-timeout {llm.timeout:g})"
                    )
                    break  # the endpoint's failure: the episode is left for a rerun
                result.error_kind, result.error = "timeout", f"over the {limit:g} s limit"
                await self.close()  # a hung browser is not reused
            except LLMError as e:
                result.error_kind, result.error = "model", str(e)
                _record_progress(
                    out, result, _waited(clients) - waited_before, time.monotonic() - (self.run_started or began)
                )
                break  # the client has retried already
            except EpisodeSetupError as e:
                result.error_kind, result.error = "setup", str(e)
                break
            except Exception as e:
                # A tab whose renderer died is the browser's loss as much as a dead browser.
                lost = isinstance(e, PageCrashed) or self.browser is None or not _alive(self.browser)
                result.error_kind = "browser" if lost else "agent"
                result.error = f"{type(e).__name__}: {e}"
                await self.close()
                if not lost:
                    break
            finally:
                after = _spent(clients)
                result.prompt_tokens += after[0] - before[0]
                result.completion_tokens += after[1] - before[1]
                result.cost += after[2] - before[2]
            if attempt == 0:
                restarts += 1
                result.restarts = restarts
                _begin(out)  # from scratch, on a fresh browser
        if result.error_kind is not None:
            result.reason = "error"
        _write_viewer(out, result)
        result.seconds = time.perf_counter() - started
        return result


def _write_viewer(out: Path, result: EpisodeResult) -> None:
    """The episode's step viewer, written once (the benchmarks' runs write none), with how it
    was scored when it was; a report that cannot be written leaves the episode's outcome alone."""
    trajectory = out / "trajectory.jsonl"
    if not trajectory.is_file():
        return
    scored = None
    if result.error_kind is None:
        scored = {"reward": result.reward, "success": result.success, "evaluation": result.evaluation}
    try:
        write_report(trajectory, out / "report.html", scored)
    except (PagelensError, OSError) as e:
        print(f"{result.id}: its report was not written: {e}", file=sys.stderr, flush=True)


def _spent(clients: list[LLMClient]) -> tuple[int, int, float]:
    """Prompt tokens, completion tokens and cost of every client so far."""
    return (
        sum(c.usage.prompt_tokens for c in clients),
        sum(c.usage.completion_tokens for c in clients),
        sum(c.usage.cost for c in clients),
    )


def _waited(clients: list[LLMClient]) -> float:
    return sum(c.seconds_waited for c in clients)


def _calls(clients: list[LLMClient]) -> int:
    return sum(c.usage.calls for c in clients)


def _record_progress(out: Path, result: EpisodeResult, model_seconds: float, run_seconds: float) -> None:
    """An episode cut short (its time, the endpoint) keeps what happened before: the steps its
    trajectory holds and the time its agent spent, waiting for the model and in all."""
    from pagelens.agents.trajectory import read_trajectory

    try:
        records = read_trajectory(out / "trajectory.jsonl")
    except (PagelensError, OSError):
        records = []
    result.steps = sum(1 for r in records if r.get("type") == "step")
    result.model_seconds, result.step_seconds = round(model_seconds, 3), round(run_seconds, 3)


def _alive(browser: AsyncBrowserEnv) -> bool:
    b = browser._browser
    return b is not None and b.is_connected()


def _begin(out: Path) -> int:
    """Prepares the episode's folder, from scratch; returns how many times it was begun before
    (an unfinished folder from a killed study counts as one)."""
    marker = out / "attempts.json"
    attempts = 0
    if marker.exists():
        try:
            attempts = int(json.loads(marker.read_text()).get("attempts", 0))
        except (ValueError, AttributeError):
            attempts = 1
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    marker.write_text(json.dumps({"attempts": attempts + 1}))
    return attempts
