"""``run`` and ``report``: one agent on a live site, and its trajectory's report."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from pagelens.agents import factory, runner
from pagelens.cli.common import (
    agent_arguments,
    agent_settings,
    choices_help,
    default,
    llm_call_arguments,
    model_arguments,
    own_host,
    param_default,
)
from pagelens.cli.types import host_entry, positive_int
from pagelens.studies.settings import StudySettings

if TYPE_CHECKING:
    from pagelens.agents.runner import RunResult
    from pagelens.agents.trajectory import StepRecord


def _run(args: argparse.Namespace) -> int:
    import asyncio

    from rich.console import Console
    from rich.markup import escape

    from pagelens.agents import run_agent
    from pagelens.browser import AsyncBrowserEnv
    from pagelens.llm import LLMClient

    console = Console(stderr=True)

    def say(text: str) -> None:
        console.print(text, markup=False, highlight=False)

    llm = LLMClient(
        model=args.model,
        base_url=args.base_url,
        cache_dir=args.cache,
        timeout=args.llm_timeout,
        max_retries=args.llm_retries,
        on_retry=say,
    )
    agent_options = agent_settings(args)
    planner = None
    if agent_options.planner_model:
        planner = LLMClient(
            model=agent_options.planner_model,
            base_url=agent_options.planner_base_url or args.base_url,
            cache_dir=args.cache,
        )
    options = agent_options.options(planner)
    agent = factory.make_agent(args.agent, llm, args.task, args.url, options)
    hosts = tuple(args.allow_host) or None

    def progress(step: int, record: StepRecord) -> None:
        # Model and page text printed as they are: brackets are not markup.
        status = "[green]ok[/]" if record.ok else f"[red]{escape(str(record.failure))}[/]"
        console.print(
            f"step {step + 1}/{args.max_steps}: [bold]{escape(str(record.action))}[/] {status}", highlight=False
        )

    async def waiting_notices() -> None:
        """A line every 15 s while the model has not answered: a hung endpoint is never silence."""
        while True:
            await asyncio.sleep(15)
            waited = llm.waiting_for
            if waited is not None and waited >= 15:
                say(f"waiting for the model at {llm.base_url}: {waited:.0f} s (--llm-timeout {llm.timeout:g})")

    async def main() -> RunResult:
        notices = asyncio.ensure_future(waiting_notices())
        try:
            return await run()
        finally:
            notices.cancel()

    async def run() -> RunResult:
        har = str(Path(args.out) / "network.har") if args.har else None
        async with AsyncBrowserEnv(
            allowed_hosts=(*hosts, *own_host(args.url)) if hosts else None,
            screenshots=args.screenshots,
            har_path=har,
            mark_new=not args.no_new_marks,
        ) as env:
            return await run_agent(
                env,
                agent,
                args.task,
                args.url,
                args.out,
                max_steps=args.max_steps,
                resume=args.resume,
                task_id=args.task_id,
                model=llm.model,
                progress=progress,
                max_failed_decisions=args.max_failed_decisions,
            )

    result = asyncio.run(main())
    console.print(
        f"{result.reason}: answer {result.answer!r}, final URL {result.final_url}; "
        f"{llm.usage.prompt_tokens + llm.usage.completion_tokens:,} tokens",
        markup=False,
    )
    print(result.trajectory)
    if result.report:
        print(result.report)
    return 0


def _report(args: argparse.Namespace) -> int:
    from pagelens.agents import write_report

    out = write_report(args.trajectory, args.output or Path(args.trajectory).parent / "report.html")
    print(out)
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    run = sub.add_parser(
        "run",
        help="run an agent on a live site; every step goes to a resumable JSONL trajectory",
        description="Run an agent on a page with any OpenAI-compatible model (OPENAI_BASE_URL, OPENAI_API_KEY, "
        "PAGELENS_MODEL). Writes OUT/trajectory.jsonl and OUT/report.html. Agents: "
        + "; ".join(f"{a.name}: {a.summary}" for a in factory.AGENTS.values())
        + ".",
    )
    run.add_argument("--url", required=True)
    run.add_argument("--task", required=True, help="the objective, in words")
    agents = list(factory.AGENTS)
    run.add_argument("--agent", choices=agents, default=agents[0], help=choices_help(agents))
    model_arguments(run)
    llm_call_arguments(run)
    run.add_argument("--max-steps", type=positive_int, default=param_default(runner.run_agent, "max_steps"))
    run.add_argument("--out", default="run", help="folder for the trajectory and report")
    run.add_argument("--resume", action="store_true", help="continue the run in --out where it stopped")
    run.add_argument("--task-id", type=int, help="WebArena task id, recorded for `pagelens eval`")
    run.add_argument("--allow-host", action="append", type=host_entry, default=[], help="also allow navigation to HOST")
    run.add_argument("--screenshots", action="store_true", help="save a screenshot per step (in the report)")
    run.add_argument(
        "--no-new-marks",
        action="store_true",
        help="do not mark the elements that are new since the last step (*[id]) in the observations",
    )
    run.add_argument(
        "--har",
        action="store_true",
        help="record the run's network traffic to OUT/network.har (WebArena-Verified checks it)",
    )
    run.add_argument("--cache", help="folder caching the model's replies (reproducible reruns)")
    run.add_argument(
        "--max-failed-decisions",
        type=positive_int,
        default=default(StudySettings, "max_failed_decisions"),
        help="steps in a row without a valid action that end the run (default %(default)d)",
    )
    agent_arguments(run)
    run.set_defaults(func=_run)

    rep = sub.add_parser("report", help="write the HTML report of a trajectory")
    rep.add_argument("trajectory")
    rep.add_argument("-o", "--output")
    rep.set_defaults(func=_report)
