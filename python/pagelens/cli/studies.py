"""``study run | report | compare``: an agent on a whole benchmark."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from pagelens import engines
from pagelens.agents import factory
from pagelens.cli.common import default, llm_call_arguments, model_arguments
from pagelens.errors import ArgumentError
from pagelens.llm import default_model
from pagelens.studies import benchmarks
from pagelens.studies import settings as study_settings
from pagelens.studies.store import EpisodeResult


def _study_tasks(args: argparse.Namespace) -> tuple[str, ...]:
    if args.tasks:
        if args.subset:
            raise ArgumentError("give --tasks or --subset, not both")
        return tuple(t.strip() for t in args.tasks.split(",") if t.strip())
    sites = frozenset(s.strip() for s in args.sites.split(",")) if args.sites else None
    selection = benchmarks.TaskSelection(task_file=args.task_file, sites=sites, subset=args.subset)
    tasks = benchmarks.get_benchmark(args.benchmark).task_names(selection)
    if not tasks:
        raise ArgumentError(f"no {args.benchmark} task is on those sites and in that subset")
    return tasks


def _study_run(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from pagelens.studies import RunOptions, StudySettings, parse_seeds, run_study

    settings = StudySettings(
        benchmark=args.benchmark,
        agent=args.agent,
        model=args.model or default_model(),
        tasks=_study_tasks(args),
        seeds=parse_seeds(args.seeds),
        max_steps=args.max_steps,
        episode_seconds=args.episode_seconds,
        max_failed_decisions=args.max_failed_decisions,
        base_url=args.base_url,
        sites_file=args.sites_file,
        reset_cmd=args.reset_cmd,
        storage_dir=args.storage_dir,
        task_file=args.task_file,
        new_marks=not args.no_new_marks,
    )
    if not settings.model:
        raise ArgumentError("no model: give --model or set PAGELENS_MODEL")
    prices = None
    if args.prices:
        try:
            prompt_price, completion_price = (float(x) for x in args.prices.split(","))
        except ValueError:
            raise ArgumentError(f"--prices is two numbers such as 2.5,10, not {args.prices!r}") from None
        prices = (prompt_price, completion_price)
    options = RunOptions(
        workers=args.workers,
        engine=args.engine,
        address=args.address,
        budget_usd=args.budget_usd,
        prices=prices,
        max_infra_failures=args.max_infra_failures,
        llm_timeout=args.llm_timeout,
        llm_retries=args.llm_retries,
        screenshots=not args.no_screenshots,
    )
    console = Console(stderr=True)
    console.print(f"report (written as the study goes): {Path(args.dir) / 'report.html'}", markup=False)
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    with Progress(*columns, console=console, disable=not console.is_terminal) as bar:
        total = len(settings.episodes())
        task = bar.add_task("episodes", total=total)

        def on_result(result: EpisodeResult, state: dict[str, Any]) -> None:
            bar.update(
                task,
                completed=state["done"],
                description=(
                    f"running {state['running']} | success {state['successes']}/{state['done']} | ${state['spent']:.4f}"
                ),
            )
            if not console.is_terminal:
                outcome = "success" if result.success else (result.error_kind or "failure")
                console.print(f"{result.id}: {outcome} ({state['done']}/{total})", highlight=False, markup=False)

        summary = run_study(args.dir, settings, options, on_result=on_result)
    console.print(
        f"{summary['finished']}/{summary['episodes']} episodes, success {summary['success_rate']:.1%}, "
        f"${summary['cost_usd']:.4f}"
    )
    print(Path(args.dir) / "report.html")
    return 0


def _study_report(args: argparse.Namespace) -> int:
    from pagelens.studies import write_report

    print(write_report(args.dir))
    return 0


def _study_compare(args: argparse.Namespace) -> int:
    from pagelens.studies import compare, format_comparison

    print(format_comparison(compare(args.first, args.second), Path(args.first).name, Path(args.second).name))
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    settings, options = study_settings.StudySettings, study_settings.RunOptions
    study = sub.add_parser("study", help="evaluate an agent on a whole benchmark: run, report, compare")
    study_sub = study.add_subparsers(dest="study_command", required=True)
    srun = study_sub.add_parser(
        "run",
        help="run (or resume) a study in DIR",
        description="Tasks x seeds, each an episode with its own trajectory and report under DIR/episodes; "
        "DIR/results.jsonl gets a line per finished episode. Rerun the same command to resume.",
    )
    srun.add_argument("dir", metavar="DIR")
    srun.add_argument(
        "--benchmark",
        choices=list(benchmarks.BENCHMARKS),
        required=True,
        help="; ".join(f"{b.name}: {b.summary}" for b in benchmarks.BENCHMARKS.values()),
    )
    agents = list(factory.AGENTS)
    srun.add_argument("--agent", choices=agents, default=agents[0])
    model_arguments(srun)
    srun.add_argument("--tasks", help="comma-separated task names (MiniWoB++) or ids (WebArena); default: all")
    srun.add_argument("--sites", help="WebArena: only tasks on these sites (comma-separated)")
    srun.add_argument("--task-file", help="WebArena: tasks from this file instead of the packaged ones")
    srun.add_argument(
        "--subset",
        help="WebArena: only a subset WebArena-Verified publishes, e.g. hard (its 258 hardest tasks)",
    )
    seeds = ",".join(str(s) for s in default(settings, "seeds"))
    srun.add_argument("--seeds", default=seeds, help=f"e.g. 0-4 or 1,3 (default {seeds})")
    srun.add_argument("--max-steps", type=int, default=default(settings, "max_steps"))
    srun.add_argument(
        "--episode-seconds",
        type=float,
        default=default(settings, "episode_seconds"),
        help="wall-clock limit per episode",
    )
    srun.add_argument(
        "--max-failed-decisions",
        type=int,
        default=default(settings, "max_failed_decisions"),
        help="steps in a row without a valid action that end an episode",
    )
    srun.add_argument("--workers", type=int, default=default(options, "workers"), help="browsers at once")
    srun.add_argument(
        "--engine",
        choices=list(engines.ENGINES),
        default=default(options, "engine"),
        help="; ".join(f"{k}: {v}" for k, v in engines.ENGINES.items()),
    )
    srun.add_argument("--address", help="Ray cluster to join (default: a local one)")
    srun.add_argument("--sites-file", help="WebArena: site URLs (and accounts), as for `pagelens eval`")
    srun.add_argument(
        "--reset-cmd",
        help="WebArena: shell command run before a task that changes its site ({site} is replaced by the site's name)",
    )
    srun.add_argument("--storage-dir", help="WebArena: <site>.json Playwright storage states (logins)")
    srun.add_argument("--budget-usd", type=float, help="start no episode once the spend reaches this")
    llm_call_arguments(srun)
    srun.add_argument(
        "--no-screenshots",
        action="store_true",
        help="no screenshot per step (the episodes' step viewers show the observation text only)",
    )
    srun.add_argument(
        "--no-new-marks",
        action="store_true",
        help="do not mark the elements that are new since the last step (*[id]) in the observations",
    )
    srun.add_argument("--prices", help="USD per 1M prompt and completion tokens, e.g. 2.5,10 (for the budget)")
    srun.add_argument(
        "--max-infra-failures",
        type=int,
        default=default(options, "max_infra_failures"),
        help="stop after this many episodes in a row lost to the endpoint or the browser",
    )
    srun.set_defaults(func=_study_run)
    srep = study_sub.add_parser("report", help="write DIR/report.html")
    srep.add_argument("dir", metavar="DIR")
    srep.set_defaults(func=_study_report)
    scmp = study_sub.add_parser("compare", help="paired per-task differences of two studies")
    scmp.add_argument("first", metavar="DIR1")
    scmp.add_argument("second", metavar="DIR2")
    scmp.set_defaults(func=_study_compare)
