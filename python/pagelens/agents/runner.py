"""Running an agent on the live browser: one step at a time, each appended to the trajectory."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from pagelens._io import write_atomically
from pagelens.actions import Action
from pagelens.agents.base import Decision, apply_internal
from pagelens.agents.trajectory import EndRecord, RunHeader, StepRecord, TrajectoryWriter, load_trajectory
from pagelens.browser.env import AsyncBrowserEnv
from pagelens.browser.records import Box, HtmlObservation, PageObservation
from pagelens.errors import ArgumentError, TrajectoryError


class Agent(Protocol):
    """An agent reads a :class:`PageObservation` (the accessibility tree), or, with a class
    attribute ``observation = "html"``, an :class:`HtmlObservation` (plus the tree's text in
    ``ax_text`` when it has ``needs_ax = True``)."""

    name: str

    def decide(self, obs: Any, step: int) -> Decision: ...
    def record(self, step: int, decision: Decision, obs: Any, ok: bool, error: str | None) -> Any: ...
    def state(self) -> dict[str, Any]: ...
    def restore(self, state: dict[str, Any]) -> None: ...
    def config_json(self) -> dict[str, Any]: ...


@dataclass
class RunResult:
    answer: str | None
    final_url: str | None
    steps: int
    reason: str  # "stop", "max_steps", "already finished"
    trajectory: Path
    report: Path | None = None
    usage: dict[str, Any] = field(default_factory=dict)
    model_seconds: float = 0.0  # the agent's decisions, over every step of the run (resumed ones too)
    step_seconds: float = 0.0  # whole steps: decision, action and observation


# Steps an episode may take before it ends unfinished (WebArena's and AgentOccam's limit).
MAX_STEPS = 20


async def run_agent(
    env: AsyncBrowserEnv,
    agent: Agent,
    task: str,
    url: str,
    out_dir: str | Path,
    max_steps: int = MAX_STEPS,
    resume: bool = False,
    task_id: int | None = None,
    model: str | None = None,
    progress: Any = None,
    report: bool = True,
    reset: Callable[[], Awaitable[PageObservation]] | None = None,
    max_failed_decisions: int | None = None,
    header: dict[str, Any] | None = None,
    ended: Callable[[], Awaitable[bool]] | None = None,
) -> RunResult:
    """Run ``agent`` on ``task`` from ``url``; the trajectory is ``out_dir/trajectory.jsonl``.
    With ``resume``, a run that stopped (crash, kill) continues at its next step. ``reset``
    replaces ``env.reset(url)`` where starting is more than opening a URL (a MiniWoB episode).
    ``max_failed_decisions``: after that many steps in a row with no valid action the run ends
    (reason "no_valid_action"). ``header`` adds fields to the trajectory's first record.
    ``ended`` is asked after every step whether the benchmark considers the task over (MiniWoB++
    ends its episode on its own): then the run ends there (reason "task_done"), so nothing the
    agent does afterwards counts."""
    # Before anything is opened or written: a run that could take no step is a mistake.
    if max_steps < 1 or (max_failed_decisions is not None and max_failed_decisions < 1):
        raise ArgumentError(
            f"max_steps and max_failed_decisions are at least 1, not {max_steps} and {max_failed_decisions}"
        )
    out = Path(out_dir)
    reads_html = getattr(agent, "observation", "ax") == "html"

    async def look() -> PageObservation | HtmlObservation:
        if not reads_html:
            return await env.observe()
        ax_text = (await env.observe()).text if getattr(agent, "needs_ax", False) else None
        html = await env.observe_html()  # last: actions then name its ids
        html.ax_text = ax_text
        return html

    async def first_observation() -> PageObservation | HtmlObservation:
        first = await reset() if reset is not None else await env.reset(url)
        assert first is not None  # env.reset observes unless told not to
        return await look() if reads_html else first

    llm = getattr(agent, "llm", None)
    model = model or getattr(llm, "model", None)
    path = out / "trajectory.jsonl"
    start = 0
    earlier = None
    if path.exists():
        if not resume:
            raise FileExistsError(f"{path} exists: use --resume to continue it or another --out")
        earlier = load_trajectory(path, repair=True)
    writer = TrajectoryWriter(path)
    if earlier is not None and earlier.end is not None:
        end = earlier.end
        return RunResult(end.answer, end.final_url, end.steps, "already finished", path)
    steps = earlier.steps if earlier is not None else []
    model_s = sum(s.seconds("model_s") for s in steps)
    step_s = sum(s.seconds("total_s") for s in steps)
    if earlier is None or earlier.header is None:
        har = env.config.har_path
        if har and Path(har).parent.resolve() == out.resolve():
            har = Path(har).name  # beside the trajectory
        writer.write(
            RunHeader(
                task=task,
                task_id=task_id,
                url=url,
                har=har,
                agent=agent.name,
                model=model,
                config=agent.config_json(),
                started=time.time(),
                extra=dict(header or {}),
            )
        )
        obs = await first_observation()
    else:
        if earlier.header.task != task or earlier.header.url != url:
            raise TrajectoryError(f"{path} is a run of another task or URL; cannot resume it with this one")
        obs = await first_observation()
        if steps:
            agent.restore(steps[-1].state)
            start = steps[-1].step + 1
            last_url = steps[-1].final_url
            if last_url and last_url != obs.url:
                await env.navigate(last_url)
                obs = await look()
    assert obs is not None
    answer = None
    reason = "max_steps"
    step = start
    failed_in_a_row = 0
    for step in range(start, max_steps):
        t0 = time.perf_counter()
        decision = await asyncio.to_thread(agent.decide, obs, step)
        t_model = time.perf_counter() - t0
        before = obs
        ok, error, done = True, None, False
        box: Box | None = None
        # The picture of the moment the action began (the box measured on it), else the page
        # the model read.
        picture, region = before.screenshot, None
        action = decision.action
        if action is None:
            ok, error = False, decision.error
        else:
            internal = apply_internal(agent, action, before.url)
            if internal is not None:
                ok, error, done = internal.ok, internal.error, internal.done
                answer = internal.answer if internal.done else answer
                if internal.navigate_to:
                    try:
                        await env.navigate(internal.navigate_to)
                    except Exception as e:  # the plan changed all the same
                        error = f"could not return to {internal.navigate_to}: {e}"
                if not done:
                    obs = await look()
            else:
                result = await env.step(action if isinstance(action, Action) else str(action), observe=not reads_html)
                ok, error, box = result.ok, result.error, result.target_box
                if result.picture is not None:
                    picture, region = result.picture, result.picture_box
                obs = result.observation or await look()
        agent.record(step, decision, before, ok, error)
        record = StepRecord(
            step=step,
            url=before.url,
            title=before.title,
            observation=before.text,
            dialogs=list(before.dialogs),
            **decision.to_json(),
            result={"ok": ok, "error": error},
            answer=answer if done else None,
            final_url=obs.url if not done else before.url,
            timing={
                "model_s": t_model,
                "total_s": time.perf_counter() - t0,
                "observe_ms": before.timings_ms.get("total"),
                "observe": dict(before.timings_ms),  # every stage of the observation the step read
            },
            state=agent.state(),
            target_box=list(box) if box is not None else None,
            screenshot_box=list(region) if region is not None else None,
            # The picture is the page the model read (no action pictured its moment): the
            # viewer shows its content, as it shows an action's picture cut to its content.
            content_box=list(before.content_box) if region is None and before.content_box is not None else None,
        )
        model_s += t_model
        step_s += record.seconds("total_s")
        if picture is not None:
            shot = out / f"step-{step:03d}.png"
            write_atomically(shot, picture)
            record.screenshot = shot.name
        writer.write(record)
        if progress is not None:
            progress(step, record)
        if done:
            reason = "stop"
            break
        if ended is not None and await ended():
            reason = "task_done"
            break
        failed_in_a_row = failed_in_a_row + 1 if decision.action is None else 0
        if max_failed_decisions is not None and failed_in_a_row >= max_failed_decisions:
            reason = "no_valid_action"
            break
    final_url = obs.url
    n = step + 1 if max_steps > start else start
    usage = llm.usage.as_dict() if llm is not None else {}
    writer.write(
        EndRecord(
            answer=answer,
            final_url=final_url,
            steps=n,
            reason=reason,
            task_id=task_id,
            usage=usage,
            finished=time.time(),
        )
    )
    report_path = None
    if report:
        from pagelens.agents.report import write_report

        report_path = write_report(path, out / "report.html")
    return RunResult(answer, final_url, n, reason, path, report_path, usage, model_s, step_s)
