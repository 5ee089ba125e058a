"""``eval``: saved runs scored as WebArena's, AgentOccam's or WebArena-Verified's evaluators do."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys

from pagelens.evaluation import variants


def _eval(args: argparse.Namespace) -> int:
    from pagelens.evaluation import Grader, Harness, SiteConfig, find_outcomes, format_table, load_tasks, site_table
    from pagelens.evaluation.harness import TaskScore

    variant = variants.get_variant(args.variant)
    source = args.tasks or ("webarena-verified" if variant.name == "verified" else "webarena")
    tasks = {t.task_id: t for t in load_tasks(source, agentoccam=variant.task_file == "agentoccam")}
    outcomes, problems = find_outcomes(args.runs)
    for problem in problems:
        print(f"pagelens: skipped: {problem}", file=sys.stderr)
    grader = None
    if args.grader_model or os.environ.get("PAGELENS_GRADER_MODEL"):
        from pagelens.llm import LLMClient

        grader = Grader(
            LLMClient(
                model=args.grader_model or os.environ["PAGELENS_GRADER_MODEL"],
                base_url=args.grader_base_url,
                cache_dir=args.grader_cache,
            )
        )
    scorer = Harness(
        tasks,
        variant=variant,
        combine=args.combine,
        grader=grader,
        sites=SiteConfig.load(args.sites),
        auth_dir=args.auth_dir,
    )

    async def run() -> list[TaskScore]:
        try:
            return [await scorer.score(o) for o in outcomes]
        finally:
            await scorer.close()

    scores = asyncio.run(run())
    table = site_table(scores)
    report = {
        "variant": variant.name,
        "reproduces": variant.reproduces,
        "combine": args.combine,
        "tasks_file": str(source),
        "table": table,
        "runs": [s.as_dict() for s in scores],
    }
    if args.json:
        from pagelens._io import write_atomically

        write_atomically(args.json, json.dumps(report, indent=1, ensure_ascii=False) + "\n")
    print(f"variant: {variant.name} ({variant.reproduces}), combine: {args.combine}, {len(scores)} runs")
    print(format_table(table))
    for s in scores:
        if not s.scored:
            kind = "task error" if s.error else "not scored"
            print(f"{kind}: task {s.task_id} ({s.source}): {s.reason}", file=sys.stderr)
    if not any(s.scored for s in scores):
        print("pagelens: error: no run could be scored", file=sys.stderr)
        return 1
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    ev = sub.add_parser(
        "eval",
        help="score saved runs with WebArena's evaluators and print per-site success rates",
        description="Score trajectories (a .jsonl run, a .json {task_id, answer, final_url}, or a folder of "
        "them) against WebArena task configs. Tasks that need a live site, a login or a grader this run "
        "does not have are reported as not scored.",
    )
    ev.add_argument("runs", metavar="TRAJECTORY_OR_DIR")
    ev.add_argument(
        "--tasks",
        help="task JSON (file or folder), or 'webarena' / 'webarena-verified' (default: the variant's own task file)",
    )
    names = [*variants.VARIANTS, *variants.ALIASES]
    aliases = ", ".join(f"{a} = {n}" for a, n in variants.ALIASES.items())
    ev.add_argument(
        "--variant",
        choices=names,
        default=names[0],
        help="whose scoring to reproduce: "
        + "; ".join(f"{v.name}: {v.reproduces}" for v in variants.VARIANTS.values())
        + f" ({aliases}); see docs/evaluation.md",
    )
    ev.add_argument(
        "--combine",
        choices=variants.COMBINE,
        default=variants.COMBINE[0],
        help="all checks must pass (WebArena) or their mean (BrowserGym)",
    )
    ev.add_argument("--sites", help="JSON mapping placeholders (__GITLAB__...) or site names to URLs")
    ev.add_argument("--auth-dir", help="folder of Playwright storage states for logged-in checks")
    ev.add_argument("--grader-model", help="model for fuzzy_match/ua_match (or PAGELENS_GRADER_MODEL)")
    ev.add_argument("--grader-base-url", help="OpenAI-compatible endpoint (or OPENAI_BASE_URL)")
    ev.add_argument("--grader-cache", help="folder caching the grader's replies")
    ev.add_argument("--json", help="also write the full report (every run's checks) to this file")
    ev.set_defaults(func=_eval)
