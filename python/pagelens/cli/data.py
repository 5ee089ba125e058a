"""``prep``, ``predict-steps`` and ``score-steps``: ScribeAgent-style training data and
Mind2Web's step metrics."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pagelens
from pagelens import engines
from pagelens.cli.common import choices_help, default, llm_call_arguments, model_arguments
from pagelens.datasets import cluster, local, output, shards, steps, transform
from pagelens.errors import ArgumentError
from pagelens.llm import LLMClient

if TYPE_CHECKING:
    from rich.progress import TaskID


def _prep_local(inputs: list[str], out: str, config: Any, args: argparse.Namespace, common: dict[str, Any]) -> Any:
    return local.run_local(inputs, out, config, **common)


def _prep_ray(inputs: list[str], out: str, config: Any, args: argparse.Namespace, common: dict[str, Any]) -> Any:
    return cluster.run_ray(inputs, out, config, address=args.address, stall_seconds=args.stall_seconds, **common)


# Each engine of the registry (pagelens.engines.ENGINES) and how `prep` runs on it.
PREP_ENGINES = {"local": _prep_local, "ray": _prep_ray}


def _prep(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    if len(args.paths) < 2:
        raise ArgumentError("give at least one INPUT and the OUTPUT folder")
    *inputs, out = args.paths
    config = transform.PrepConfig(
        tokenizer=args.tokenizer, max_tokens=args.max_tokens, profile=args.profile, chunks=args.chunks
    )
    console = Console(stderr=True)
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=console, disable=not console.is_terminal) as bar:
        tasks: dict[str, TaskID] = {}

        def progress(file: str, done: int, total: int) -> None:
            if file not in tasks:
                tasks[file] = bar.add_task(Path(file).name, total=total)
            bar.update(tasks[file], completed=done)

        # Each engine has its own shard size unless one is given (a rerun resumes with the same).
        sizing = {"shard_size": args.shard_size} if args.shard_size is not None else {}
        common: dict[str, Any] = {
            "workers": args.workers,
            "fmt": args.format,
            "overwrite": args.overwrite,
            "on_progress": progress,
            **sizing,
        }
        summary = PREP_ENGINES[args.engine](inputs, out, config, args, common)
    console.print(
        f"{summary['examples_out']:,} examples from {summary['steps_out']:,} steps; {summary['rejected']:,} rejected "
        f"(see {Path(out) / 'rejects'}); tokens {summary['tokens_before']:,} -> {summary['tokens_after']:,}; "
        f"{summary['html_mb_per_s']} MB/s of HTML",
        highlight=False,
        markup=False,
    )
    print(json.dumps(summary, indent=2))
    return 0


def _predict_steps(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    llm = LLMClient(
        model=args.model,
        base_url=args.base_url,
        cache_dir=args.cache,
        temperature=args.temperature,
        timeout=args.llm_timeout,
        max_retries=args.llm_retries,
    )
    console = Console(stderr=True)
    columns = (TextColumn("predicting"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console, disable=not console.is_terminal) as bar:
        task = bar.add_task("", total=None)
        counts = steps.predict_steps(
            args.prep_out,
            args.predictions,
            llm,
            workers=args.workers,
            progress=lambda done, total: bar.update(task, completed=done, total=total),
            max_tokens=args.max_answer_tokens,
        )
    console.print(
        f"{counts['predicted']} predicted, {counts['already_done']} already there; "
        f"{llm.usage.prompt_tokens + llm.usage.completion_tokens:,} tokens"
    )
    return 0


def _score_steps(args: argparse.Namespace) -> int:
    scores = steps.score_steps(args.prep_out, args.predictions)
    if args.json:
        print(json.dumps(scores if args.per_step else {k: v for k, v in scores.items() if k != "per_step"}, indent=1))
        return 0
    print("| website | steps | element accuracy | operation F1 | step success |")
    print("| --- | ---: | ---: | ---: | ---: |")
    rows = [*scores["per_website"].items(), ("all", scores)]
    for site, t in rows:
        print(
            f"| {site} | {t['steps']} | {t['element_accuracy']:.1%} | {t['operation_f1']:.1%} | "
            f"{t['step_success_rate']:.1%} |"
        )
    counts = scores["counts"]
    problems = {k: v for k, v in counts.items() if k not in ("examples", "predictions") and v}
    if problems:
        print("not used: " + ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in problems.items()), file=sys.stderr)
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    prep = sub.add_parser(
        "prep",
        help="turn workflow recordings into ScribeAgent-style training examples (local threads or Ray)",
        description="Read workflow steps (JSONL/JSON/Parquet; step layout or Mind2Web's) and write next-step "
        "examples: cleaned DOM chunk holding the target, previous steps, and the next step as label. Bad records "
        "go to OUTPUT/rejects; a rerun of the same command resumes. Schema: docs/datasets.md.",
    )
    prep.add_argument(
        "paths", nargs="+", metavar="INPUT... OUTPUT", help="input files or folders, then the output folder"
    )
    names = list(engines.ENGINES)
    prep.add_argument(
        "--engine", choices=names, default=names[0], help="; ".join(f"{k}: {v}" for k, v in engines.ENGINES.items())
    )
    prep.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="threads (local) or Ray actors")
    prep.add_argument("--address", help="Ray cluster to join ('auto', 'ray://host:10001'); default: start a local one")
    prep.add_argument(
        "--stall-seconds",
        type=float,
        default=cluster.STALL_SECONDS,
        help="Ray: stop with an error after this many seconds without progress (default %(default)g)",
    )
    prep.add_argument(
        "--tokenizer",
        default=default(transform.PrepConfig, "tokenizer"),
        help=choices_help(pagelens.TOKENIZERS) + " or a tokenizer.json",
    )
    prep.add_argument(
        "--max-tokens",
        type=int,
        default=default(transform.PrepConfig, "max_tokens"),
        help="token budget of the observation (DOM chunk)",
    )
    prep.add_argument("--profile", choices=pagelens.CLEAN_PROFILES, default=default(transform.PrepConfig, "profile"))
    prep.add_argument(
        "--chunks",
        choices=transform.CHUNK_MODES,
        default=default(transform.PrepConfig, "chunks"),
        help="the chunk holding the target (training), every chunk, or the last (evaluation)",
    )
    prep.add_argument(
        "--shard-size",
        type=int,
        default=None,
        help=f"workflows per output shard (default: {shards.SHARD_SIZE} local, {shards.RAY_SHARD_SIZE} on Ray); "
        "a rerun resumes from the shards of the same size",
    )
    prep.add_argument("--format", choices=output.OUTPUT_FORMATS, default=output.OUTPUT_FORMATS[0])
    prep.add_argument("--overwrite", action="store_true", help="discard a previous run in OUTPUT")
    prep.set_defaults(func=_prep)

    predict = sub.add_parser(
        "predict-steps",
        help="ask a model for the next step of every example of a `pagelens prep` output (resumable)",
        description="Writes PREDICTIONS (JSON lines: id, reply) with any OpenAI-compatible model; a rerun asks "
        "only for the examples not yet there. Score them with `pagelens score-steps`.",
    )
    predict.add_argument("prep_out", metavar="PREP_OUT")
    predict.add_argument("predictions", metavar="PREDICTIONS")
    model_arguments(predict)
    llm_call_arguments(predict)
    predict.add_argument("--workers", type=int, default=steps.PREDICT_WORKERS, help="requests in flight")
    predict.add_argument("--temperature", type=float, default=steps.PREDICT_TEMPERATURE)
    predict.add_argument("--max-answer-tokens", type=int, default=steps.PREDICT_MAX_TOKENS)
    predict.add_argument("--cache", help="folder caching the model's replies")
    predict.set_defaults(func=_predict_steps)

    score = sub.add_parser(
        "score-steps",
        help="Mind2Web's step metrics of predictions over a `pagelens prep` output",
        description="Element accuracy, operation F1 and step success rate, overall and per website; predictions "
        "with unknown ids or torn lines are counted and left out.",
    )
    score.add_argument("prep_out", metavar="PREP_OUT")
    score.add_argument("predictions", metavar="PREDICTIONS")
    score.add_argument("--json", action="store_true", help="print the scores as JSON")
    score.add_argument("--per-step", action="store_true", help="with --json: every step's verdict too")
    score.set_defaults(func=_score_steps)
