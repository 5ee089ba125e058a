"""``study run | report | compare``: an agent on a whole benchmark."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from pagelens import engines
from pagelens.agents import factory
from pagelens.cli.common import agent_arguments, agent_settings, default, llm_call_arguments, model_arguments
from pagelens.errors import ArgumentError
from pagelens.llm import default_model
from pagelens.studies import benchmarks
from pagelens.studies import settings as study_settings
from pagelens.studies.protocol import make_options, option_fields
from pagelens.studies.store import EpisodeResult


def _benchmark_option_fields() -> dict[str, tuple[str, ...]]:
    """Every registered benchmark's options, by field name: the benchmarks that have it."""
    owners: dict[str, tuple[str, ...]] = {}
    for benchmark in benchmarks.BENCHMARKS.values():
        for f in option_fields(benchmark.options_type):
            owners[f.name] = (*owners.get(f.name, ()), benchmark.name)
    return owners


def _option_dest(name: str) -> str:
    return f"benchmark_option_{name}"


def _benchmark_options(args: argparse.Namespace) -> dict[str, Any]:
    """The options of --benchmark the flags give; a flag of another benchmark's options is
    refused, naming it (a study must not look narrowed by a flag that changed nothing)."""
    benchmark = benchmarks.get_benchmark(args.benchmark)
    own = {f.name for f in option_fields(benchmark.options_type)}
    flags: dict[str, str] = getattr(args, "benchmark_option_flags", {})
    given = {
        name: getattr(args, _option_dest(name)) for name in flags if getattr(args, _option_dest(name), None) is not None
    }
    for name in given:
        if name not in own:
            takes = ", ".join(flags.get(n, _flag(n)) for n in sorted(own)) or "none"
            raise ArgumentError(f"{flags[name]} does not apply to {args.benchmark} (its own options: {takes})")
    return given


def _add_benchmark_options(parser: argparse.ArgumentParser) -> None:
    """Each registered benchmark's options as flags, typed by their defaults (int, float, a
    yes/no for a bool, else text), named with the benchmarks that read them."""
    taken = {s for a in parser._actions for s in a.option_strings}
    group = parser.add_argument_group("benchmarks' own options")
    # A benchmark option's flag, by option name: its own name, or the first benchmark's name
    # before it where that flag is taken (a plugin's `seeds`); kept with the parsed arguments.
    flags: dict[str, str] = {}
    parser.set_defaults(benchmark_option_flags=flags)
    for name, owners in _benchmark_option_fields().items():
        field = next(f for b in owners for f in option_fields(benchmarks.BENCHMARKS[b].options_type) if f.name == name)
        flag = _flag(name) if _flag(name) not in taken else _flag(f"{owners[0]}_{name}")
        flags[name] = flag
        kind: dict[str, Any] = {}
        default = field.default
        if isinstance(default, bool):
            kind["action"] = argparse.BooleanOptionalAction
        else:
            kind["metavar"] = name.upper()
            if isinstance(default, (int, float)):
                kind["type"] = type(default)
        help_text = f"{', '.join(owners)}: {field.metadata.get('help', name)}"
        group.add_argument(flag, dest=_option_dest(name), default=None, help=help_text, **kind)


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _study_tasks(args: argparse.Namespace, options: Any) -> tuple[str, ...]:
    if args.tasks:
        for name in ("subset", "sites"):
            if getattr(args, name):
                raise ArgumentError(f"give --tasks or {_flag(name)}, not both")
        return tuple(t.strip() for t in args.tasks.split(",") if t.strip())
    sites = frozenset(s.strip() for s in args.sites.split(",")) if args.sites else None
    selection = benchmarks.TaskSelection(sites=sites, subset=args.subset)
    tasks = benchmarks.get_benchmark(args.benchmark).task_names(selection, options)
    if not tasks:
        raise ArgumentError(f"no {args.benchmark} task is on those sites and in that subset")
    return tasks


def _study_run(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from pagelens.studies import RunOptions, StudySettings, StudyStopped, parse_seeds, run_study

    benchmark_options = _benchmark_options(args)
    benchmark = benchmarks.get_benchmark(args.benchmark)
    options_now = make_options(benchmark.options_type, benchmark_options, args.benchmark)
    settings = StudySettings(
        benchmark=args.benchmark,
        agent=args.agent,
        model=args.model or default_model(),
        tasks=_study_tasks(args, options_now),
        seeds=parse_seeds(args.seeds),
        max_steps=args.max_steps,
        episode_seconds=args.episode_seconds,
        max_failed_decisions=args.max_failed_decisions,
        base_url=args.base_url,
        new_marks=not args.no_new_marks,
        benchmark_options=benchmark_options,
        agent_options=agent_settings(args).to_json(),
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
        task = bar.add_task("episodes", total=len(settings.episodes()))

        def on_result(result: EpisodeResult, state: dict[str, Any]) -> None:
            total = state["total"]  # the study's plan: every command's episodes, this one's with them
            bar.update(
                task,
                total=total,
                completed=state["done"],
                description=(
                    f"running {state['running']} | success {state['successes']}/{state['done']} | ${state['spent']:.4f}"
                ),
            )
            if not console.is_terminal:
                outcome = "success" if result.success else (result.error_kind or "failure")
                console.print(f"{result.id}: {outcome} ({state['done']}/{total})", highlight=False, markup=False)

        try:
            summary = run_study(args.dir, settings, options, on_result=on_result)
        except StudyStopped as e:
            summary = e.summary
            console.print(f"pagelens: {e}", markup=False, highlight=False, soft_wrap=True)
    console.print(
        f"{summary['finished']}/{summary['episodes']} episodes, success {summary['success_rate']:.1%}, "
        f"${summary['cost_usd']:.4f}",
        markup=False,
        highlight=False,
    )
    tasks = summary.get("tasks", ())
    shown = ", ".join(tasks[:20]) + (f" and {len(tasks) - 20} more" if len(tasks) > 20 else "")
    console.print(f"tasks planned ({len(tasks)}): {shown}", markup=False, highlight=False, soft_wrap=True)
    for lost in summary.get("lost", ()):
        # One line each, never wrapped: a script greps them.
        console.print(
            f"lost: {lost['task']} seed {lost['seed']}: {lost['kind']}: {lost['cause']}",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
    print(Path(args.dir) / "report.html")
    return 2 if summary.get("lost") else 0


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
    agent_arguments(srun)
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
    _add_benchmark_options(srun)  # last: a plugin's option never takes a flag the study has
    srun.set_defaults(func=_study_run)
    srep = study_sub.add_parser("report", help="write DIR/report.html")
    srep.add_argument("dir", metavar="DIR")
    srep.set_defaults(func=_study_report)
    scmp = study_sub.add_parser("compare", help="paired per-task differences of two studies")
    scmp.add_argument("first", metavar="DIR1")
    scmp.add_argument("second", metavar="DIR2")
    scmp.set_defaults(func=_study_compare)
