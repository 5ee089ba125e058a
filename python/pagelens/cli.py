"""The ``pagelens`` command line."""

from __future__ import annotations

import argparse
import gzip
import os
import sys
import zlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pagelens import DEFAULT_TOKENIZER, AXTree, Dom, chunk, load_tokenizer
from pagelens.corpus import BUILTIN_NAME, builtin_page
from pagelens.errors import ArgumentError, PagelensError
from pagelens.llm import LLMClient

if TYPE_CHECKING:
    from rich.progress import TaskID

    from pagelens.agents.runner import RunResult


def _read_file(path: Path) -> bytes:
    """A file's bytes, gunzipped when it is gzip (by name or by its magic bytes)."""
    if not path.is_file():
        raise FileNotFoundError(f"no such file: {path}")
    data = path.read_bytes()
    if path.suffix == ".gz" or data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (EOFError, OSError, zlib.error) as e:
            raise ArgumentError(f"{path}: not a complete gzip file ({e})") from None
    return data


def _read_source(source: str | None) -> tuple[bytes, str]:
    if source is None:
        return builtin_page(), f"built-in page {BUILTIN_NAME!r}"
    return _read_file(Path(source)), source


def _stats(tree: AXTree, label: str, tokenizer: str) -> str:
    occam = tree.render("occam", tokenizer=tokenizer)
    webarena = tree.render("webarena", tokenizer=tokenizer)
    reduction = 1 - occam.token_count / webarena.token_count if webarena.token_count else 0.0
    rows = [
        ("source", label),
        ("nodes", f"{len(tree):,}"),
        ("frames", f"{len(tree.frames)}"),
        ("webarena lines", f"{webarena.line_count:,}"),
        ("webarena tokens", f"{webarena.token_count:,} ({tokenizer})"),
        ("occam lines", f"{occam.line_count:,}"),
        ("occam tokens", f"{occam.token_count:,} ({tokenizer})"),
        ("action targets", f"{len(occam.ids):,}"),
        ("reduction", f"{reduction:.1%} fewer tokens in occam form"),
    ]
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"{k:<{width}}  {v}" for k, v in rows)


def _is_live(source: str | None) -> bool:
    if source is None:
        return False
    if "://" in source:
        return True
    return Path(source).suffix.lower() in (".html", ".htm", ".xhtml")


def _observe_live(source: str, args: argparse.Namespace) -> tuple[AXTree, str, str]:
    """Open a URL or a local .html file in Chromium; returns the tree, a label and a header."""
    from pagelens.browser import BrowserEnv

    if "://" in source:
        url = source
    else:
        path = Path(source)
        if not path.is_file():
            raise FileNotFoundError(f"no such file: {source}")
        url = path.resolve().as_uri()
    allowed = tuple(args.allow_host) or None
    with BrowserEnv(
        mode=args.mode,
        include_frames=not args.no_frames,
        settle_ms=args.wait_ms,
        allowed_hosts=(*allowed, *_own_host(url)) if allowed else None,
        navigation_timeout_ms=args.timeout * 1000,
    ) as env:
        obs = env.reset(url)
        assert obs is not None
        header = f"# {obs.title} <{obs.url}>"
        extra = obs.header()
        if extra:
            header += "\n" + extra
        for error in obs.frame_errors:
            print(f"pagelens: warning: {error}", file=sys.stderr)
        return obs.tree, obs.url, header


def _own_host(url: str) -> tuple[str, ...]:
    from pagelens.browser import HostAllowList

    return HostAllowList.for_start_url(url).hosts


def _observe(args: argparse.Namespace) -> int:
    header = None
    if _is_live(args.source):
        tree, label, header = _observe_live(args.source, args)
    else:
        data, label = _read_source(args.source)
        tree = AXTree.from_cdp(data)
    if args.stats:
        print(_stats(tree, label, args.tokenizer))
        return 0
    obs = tree.render(args.mode, max_tokens=args.max_tokens, tokenizer=args.tokenizer, show_urls=args.show_urls)
    if header and args.header:
        print(header)
    print(obs.text)
    return 0


def _clean(args: argparse.Namespace) -> int:
    path = Path(args.file)
    data = _read_file(path)
    tokenizer = load_tokenizer(args.tokenizer)
    dom = Dom.parse(data, encoding=args.encoding)
    cleaned = dom.clean(args.profile, tokenizer=tokenizer)
    before = tokenizer.count(dom.html())
    html = cleaned.html()
    after = tokenizer.count(html)
    if args.max_tokens is not None:
        chunks = chunk(html, args.max_tokens, tokenizer=tokenizer, kind="dom", from_end=args.from_end)
        for i, c in enumerate(chunks):
            flag = ", oversized" if c.oversized else ""
            print(f"<!-- chunk {i + 1}/{len(chunks)}: {c.token_count} tokens, {len(c.node_ids)} elements{flag} -->")
            print(c.text)
    else:
        print(html)
    print(
        f"{path.name}: {len(dom)} elements -> {len(cleaned)}; {before:,} -> {after:,} tokens "
        f"({tokenizer.name}, profile {args.profile})",
        file=sys.stderr,
    )
    return 0


def _eval(args: argparse.Namespace) -> int:
    import asyncio
    import json

    from pagelens.evaluation import (
        Grader,
        Harness,
        SiteConfig,
        find_outcomes,
        format_table,
        get_variant,
        load_tasks,
        site_table,
    )
    from pagelens.evaluation.harness import TaskScore

    variant = get_variant(args.variant)
    source = args.tasks or ("webarena-verified" if variant.name == "verified" else "webarena")
    tasks = {t.task_id: t for t in load_tasks(source, agentoccam=variant.task_file == "agentoccam")}
    outcomes, problems = find_outcomes(args.runs)
    for problem in problems:
        print(f"pagelens: skipped: {problem}", file=sys.stderr)
    grader = None
    if args.grader_model or os.environ.get("PAGELENS_GRADER_MODEL"):
        from pagelens.llm import LLMClient

        grader = Grader(LLMClient(model=args.grader_model or os.environ["PAGELENS_GRADER_MODEL"],
                                  base_url=args.grader_base_url, cache_dir=args.grader_cache))
    harness = Harness(tasks, variant=variant, combine=args.combine, grader=grader,
                      sites=SiteConfig.load(args.sites), auth_dir=args.auth_dir)

    async def run() -> list[TaskScore]:
        try:
            return [await harness.score(o) for o in outcomes]
        finally:
            await harness.close()

    scores = asyncio.run(run())
    table = site_table(scores)
    report = {"variant": variant.name, "reproduces": variant.reproduces, "combine": args.combine,
              "tasks_file": str(source), "table": table, "runs": [s.as_dict() for s in scores]}
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


def _model_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", help="model name (or PAGELENS_MODEL)")
    parser.add_argument("--base-url", help="OpenAI-compatible endpoint (or OPENAI_BASE_URL)")


def _run(args: argparse.Namespace) -> int:
    import asyncio

    from rich.console import Console

    from pagelens.agents import run_agent
    from pagelens.browser import AsyncBrowserEnv
    from pagelens.llm import LLMClient

    console = Console(stderr=True)
    from pagelens.agents import ScribeConfig
    from pagelens.agents.factory import make_agent

    llm = LLMClient(model=args.model, base_url=args.base_url, cache_dir=args.cache)
    planner = None
    if args.planner_model:
        planner = LLMClient(model=args.planner_model, base_url=args.planner_base_url or args.base_url,
                            cache_dir=args.cache)
    scribe = ScribeConfig(max_tokens=args.max_tokens, samples=args.samples, tokenizer=args.tokenizer)
    agent = make_agent(args.agent, llm, args.task, args.url, policies=args.policies, max_invalid=args.max_invalid,
                       scribe=scribe, planner=planner)
    hosts = tuple(args.allow_host) or None

    def progress(step: int, record: dict[str, Any]) -> None:
        status = "[green]ok[/]" if record["result"]["ok"] else f"[red]{record['result']['error']}[/]"
        console.print(f"step {step + 1}/{args.max_steps}: [bold]{record['action']}[/] {status}", highlight=False)

    async def main() -> RunResult:
        har = str(Path(args.out) / "network.har") if args.har else None
        async with AsyncBrowserEnv(allowed_hosts=(*hosts, *_own_host(args.url)) if hosts else None,
                                   screenshots=args.screenshots, har_path=har) as env:
            return await run_agent(env, agent, args.task, args.url, args.out, max_steps=args.max_steps,
                                   resume=args.resume, task_id=args.task_id, model=llm.model, progress=progress)

    result = asyncio.run(main())
    console.print(f"{result.reason}: answer {result.answer!r}, final URL {result.final_url}; "
                  f"{llm.usage.prompt_tokens + llm.usage.completion_tokens:,} tokens")
    print(result.trajectory)
    if result.report:
        print(result.report)
    return 0


def _report(args: argparse.Namespace) -> int:
    from pagelens.agents import write_report

    out = write_report(args.trajectory, args.output or Path(args.trajectory).with_name("report.html"))
    print(out)
    return 0


def _predict_steps(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from pagelens.datasets.steps import predict_steps

    llm = LLMClient(model=args.model, base_url=args.base_url, cache_dir=args.cache, temperature=args.temperature)
    console = Console(stderr=True)
    columns = (TextColumn("predicting"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console, disable=not console.is_terminal) as bar:
        task = bar.add_task("", total=None)
        counts = predict_steps(args.prep_out, args.predictions, llm, workers=args.workers,
                               progress=lambda done, total: bar.update(task, completed=done, total=total),
                               max_tokens=args.max_answer_tokens)
    console.print(f"{counts['predicted']} predicted, {counts['already_done']} already there; "
                  f"{llm.usage.prompt_tokens + llm.usage.completion_tokens:,} tokens")
    return 0


def _score_steps(args: argparse.Namespace) -> int:
    import json

    from pagelens.datasets.steps import score_steps

    scores = score_steps(args.prep_out, args.predictions)
    if args.json:
        print(json.dumps(scores if args.per_step else {k: v for k, v in scores.items() if k != "per_step"},
                         indent=1))
        return 0
    print("| website | steps | element accuracy | operation F1 | step success |")
    print("| --- | ---: | ---: | ---: | ---: |")
    rows = [*scores["per_website"].items(), ("all", scores)]
    for site, t in rows:
        print(f"| {site} | {t['steps']} | {t['element_accuracy']:.1%} | {t['operation_f1']:.1%} | "
              f"{t['step_success_rate']:.1%} |")
    counts = scores["counts"]
    problems = {k: v for k, v in counts.items() if k not in ("examples", "predictions") and v}
    if problems:
        print("not used: " + ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in problems.items()), file=sys.stderr)
    return 0


def _study_tasks(args: argparse.Namespace) -> tuple[str, ...]:
    if args.tasks:
        return tuple(t.strip() for t in args.tasks.split(",") if t.strip())
    if args.benchmark == "miniwob":
        from pagelens.envs.miniwob import available_tasks

        return tuple(available_tasks())
    from pagelens.evaluation import load_tasks

    tasks = load_tasks(args.task_file or args.benchmark)
    sites = {s.strip() for s in args.sites.split(",")} if args.sites else None
    return tuple(str(t.task_id) for t in tasks if sites is None or set(t.sites) & sites)


def _study_run(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from pagelens.studies import RunOptions, StudySettings, parse_seeds, run_study

    settings = StudySettings(
        benchmark=args.benchmark, agent=args.agent, model=args.model or os.environ.get("PAGELENS_MODEL", ""),
        tasks=_study_tasks(args), seeds=parse_seeds(args.seeds), max_steps=args.max_steps,
        episode_seconds=args.episode_seconds, max_failed_decisions=args.max_failed_decisions,
        base_url=args.base_url, sites_file=args.sites_file, reset_cmd=args.reset_cmd,
        storage_dir=args.storage_dir, task_file=args.task_file)
    if not settings.model:
        raise ArgumentError("no model: give --model or set PAGELENS_MODEL")
    prices = None
    if args.prices:
        try:
            prompt_price, completion_price = (float(x) for x in args.prices.split(","))
        except ValueError:
            raise ArgumentError(f"--prices is two numbers such as 2.5,10, not {args.prices!r}") from None
        prices = (prompt_price, completion_price)
    options = RunOptions(workers=args.workers, engine=args.engine, address=args.address, budget_usd=args.budget_usd,
                         prices=prices, max_infra_failures=args.max_infra_failures)
    console = Console(stderr=True)
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    with Progress(*columns, console=console, disable=not console.is_terminal) as bar:
        total = len(settings.episodes())
        task = bar.add_task("episodes", total=total)

        def on_result(raw: dict[str, Any], state: dict[str, Any]) -> None:
            bar.update(task, completed=state["done"], description=(
                f"running {state['running']} | success {state['successes']}/{state['done']} | "
                f"${state['spent']:.4f}"))
            if not console.is_terminal:
                outcome = "success" if raw.get("success") else (raw.get("error_kind") or "failure")
                console.print(f"{raw['id']}: {outcome} ({state['done']}/{total})", highlight=False)

        summary = run_study(args.dir, settings, options, on_result=on_result)
    console.print(f"{summary['finished']}/{summary['episodes']} episodes, success {summary['success_rate']:.1%}, "
                  f"${summary['cost_usd']:.4f}")
    return 0


def _study_report(args: argparse.Namespace) -> int:
    from pagelens.studies import write_report

    print(write_report(args.dir))
    return 0


def _study_compare(args: argparse.Namespace) -> int:
    from pagelens.studies import compare, format_comparison

    print(format_comparison(compare(args.first, args.second), Path(args.first).name, Path(args.second).name))
    return 0


def _prep(args: argparse.Namespace) -> int:
    import json

    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from pagelens.datasets import PrepConfig, run_local, run_ray

    if len(args.paths) < 2:
        raise ArgumentError("give at least one INPUT and the OUTPUT folder")
    *inputs, out = args.paths
    config = PrepConfig(tokenizer=args.tokenizer, max_tokens=args.max_tokens, profile=args.profile, chunks=args.chunks)
    console = Console(stderr=True)
    if args.engine == "ray":
        summary = run_ray(inputs, out, config, address=args.address, workers=args.workers, fmt=args.format,
                          stall_seconds=args.stall_seconds)
    else:
        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
        with Progress(*columns, console=console, disable=not console.is_terminal) as bar:
            tasks: dict[str, TaskID] = {}

            def progress(file: str, done: int, total: int) -> None:
                if file not in tasks:
                    tasks[file] = bar.add_task(Path(file).name, total=total)
                bar.update(tasks[file], completed=done)

            summary = run_local(inputs, out, config, workers=args.workers, shard_size=args.shard_size,
                                fmt=args.format, overwrite=args.overwrite, on_progress=progress)
    console.print(
        f"{summary['examples_out']:,} examples from {summary['steps_out']:,} steps; {summary['rejected']:,} rejected "
        f"(see {Path(out) / 'rejects'}); tokens {summary['tokens_before']:,} -> {summary['tokens_after']:,}; "
        f"{summary['html_mb_per_s']} MB/s of HTML",
        highlight=False,
    )
    print(json.dumps(summary, indent=2))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="pagelens", description="What an LLM web agent should read.")
    sub = parser.add_subparsers(dest="command", required=True)
    observe = sub.add_parser(
        "observe",
        help="render a page's accessibility tree as agent text",
        description="Render a page for a model: a live URL or a local .html file (opened in "
        "Chromium, every frame included), or a saved CDP accessibility tree (.json or .json.gz); "
        "with no SOURCE, a real page shipped inside the package.",
    )
    observe.add_argument(
        "source", nargs="?", help="a URL, an .html file, or an Accessibility.getFullAXTree result (.json, .json.gz)"
    )
    observe.add_argument("--mode", choices=["occam", "webarena"], default="occam")
    observe.add_argument("--stats", action="store_true", help="print node, line and token counts of both modes")
    observe.add_argument("--max-tokens", type=int, default=None, help="cut the text to this many tokens")
    observe.add_argument("--tokenizer", default=DEFAULT_TOKENIZER, help="gpt2 (default), cl100k_base or o200k_base")
    observe.add_argument("--show-urls", action="store_true", help="print links' URLs in occam form")
    live = observe.add_argument_group("live pages (a URL or an .html file)")
    live.add_argument("--allow-host", action="append", default=[], metavar="HOST",
                      help="also allow navigation to HOST (repeatable; the page's own host always is)")
    live.add_argument("--wait-ms", type=float, default=500, help="quiet time after load before observing")
    live.add_argument("--timeout", type=float, default=30, help="seconds to wait for the page to load")
    live.add_argument("--no-frames", action="store_true", help="leave iframes' content out")
    live.add_argument("--no-header", dest="header", action="store_false", help="omit the title/URL line")
    observe.set_defaults(func=_observe)
    clean = sub.add_parser(
        "clean",
        help="clean an HTML page for a model (ScribeAgent-style) and show the token savings",
        description="Parse HTML, give every element a node id, clean it with a profile, print the "
        "result (or its chunks with --max-tokens); token counts before/after go to stderr.",
    )
    clean.add_argument("file", help="an .html (or .html.gz) file")
    clean.add_argument("--profile", choices=["scribe", "minimal"], default="scribe")
    clean.add_argument("--max-tokens", type=int, default=None, help="print chunks of at most this many tokens")
    clean.add_argument("--from-end", action="store_true", help="pack chunks from the end of the page")
    clean.add_argument("--tokenizer", default=DEFAULT_TOKENIZER,
                       help="gpt2, cl100k_base, o200k_base or a tokenizer.json")
    clean.add_argument("--encoding", default=None, help="override the page's declared encoding")
    clean.set_defaults(func=_clean)
    ev = sub.add_parser(
        "eval",
        help="score saved runs with WebArena's evaluators and print per-site success rates",
        description="Score trajectories (a .jsonl run, a .json {task_id, answer, final_url}, or a folder of "
        "them) against WebArena task configs. Tasks that need a live site, a login or a grader this run "
        "does not have are reported as not scored.",
    )
    ev.add_argument("runs", metavar="TRAJECTORY_OR_DIR")
    ev.add_argument("--tasks", help="task JSON (file or folder), or 'webarena' / 'webarena-verified' "
                    "(default: the variant's own task file)")
    ev.add_argument("--variant", choices=["webarena", "agentoccam", "verified", "strict", "original", "rectified"],
                    default="webarena",
                    help="whose scoring to reproduce: WebArena's, AgentOccam's, WebArena-Verified's, or pagelens' "
                    "strict reading (original = webarena, rectified = agentoccam); see docs/evaluation.md")
    ev.add_argument("--combine", choices=["all", "mean"], default="all",
                    help="all checks must pass (WebArena) or their mean (BrowserGym)")
    ev.add_argument("--sites", help="JSON mapping placeholders (__GITLAB__...) or site names to URLs")
    ev.add_argument("--auth-dir", help="folder of Playwright storage states for logged-in checks")
    ev.add_argument("--grader-model", help="model for fuzzy_match/ua_match (or PAGELENS_GRADER_MODEL)")
    ev.add_argument("--grader-base-url", help="OpenAI-compatible endpoint (or OPENAI_BASE_URL)")
    ev.add_argument("--grader-cache", help="folder caching the grader's replies")
    ev.add_argument("--json", help="also write the full report (every run's checks) to this file")
    ev.set_defaults(func=_eval)
    run = sub.add_parser(
        "run",
        help="run an agent on a live site; every step goes to a resumable JSONL trajectory",
        description="Run AgentOccam (optionally with its judge) or SteP on a page, with any OpenAI-compatible "
        "model (OPENAI_BASE_URL, OPENAI_API_KEY, PAGELENS_MODEL). Writes OUT/trajectory.jsonl and OUT/report.html.",
    )
    run.add_argument("--url", required=True)
    run.add_argument("--task", required=True, help="the objective, in words")
    run.add_argument("--agent", choices=["occam", "occam-judge", "step", "scribe"], default="occam",
                     help="scribe: a model fine-tuned on `pagelens prep` data, reading the page as HTML chunks")
    _model_arguments(run)
    run.add_argument("--max-steps", type=int, default=20)
    run.add_argument("--out", default="run", help="folder for the trajectory and report")
    run.add_argument("--resume", action="store_true", help="continue the run in --out where it stopped")
    run.add_argument("--task-id", type=int, help="WebArena task id, recorded for `pagelens eval`")
    run.add_argument("--policies", help="folder of SteP policy files (*.md); default: the built-in ones")
    run.add_argument("--allow-host", action="append", default=[], help="also allow navigation to HOST")
    run.add_argument("--screenshots", action="store_true", help="save a screenshot per step (in the report)")
    run.add_argument("--har", action="store_true",
                     help="record the run's network traffic to OUT/network.har (WebArena-Verified checks it)")
    run.add_argument("--cache", help="folder caching the model's replies (reproducible reruns)")
    run.add_argument("--max-invalid", type=int, default=3, help="invalid actions shown back before a step fails")
    scribe = run.add_argument_group("scribe agent")
    scribe.add_argument("--max-tokens", type=int, default=4096,
                        help="chunk budget: the `pagelens prep --max-tokens` the model was trained with")
    scribe.add_argument("--tokenizer", default=DEFAULT_TOKENIZER, help="the tokenizer chunks are counted in")
    scribe.add_argument("--samples", type=int, default=5, help="answers sampled per chunk, then voted")
    scribe.add_argument("--planner-model", help="a general model that rewrites the objective and decides when to stop")
    scribe.add_argument("--planner-base-url", help="its endpoint (default: --base-url)")
    run.set_defaults(func=_run)
    prep = sub.add_parser(
        "prep",
        help="turn workflow recordings into ScribeAgent-style training examples (local threads or Ray)",
        description="Read workflow steps (JSONL/JSON/Parquet; step layout or Mind2Web's) and write next-step "
        "examples: cleaned DOM chunk holding the target, previous steps, and the next step as label. Bad records "
        "go to OUTPUT/rejects; a rerun of the same command resumes. Schema: docs/datasets.md.",
    )
    prep.add_argument("paths", nargs="+", metavar="INPUT... OUTPUT",
                      help="input files or folders, then the output folder")
    prep.add_argument("--engine", choices=["local", "ray"], default="local")
    prep.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="threads (local) or Ray actors")
    prep.add_argument("--address", help="Ray cluster to join ('auto', 'ray://host:10001'); default: start a local one")
    prep.add_argument("--stall-seconds", type=float, default=600.0,
                      help="Ray: stop with an error after this long without progress (default 600)")
    prep.add_argument("--tokenizer", default=DEFAULT_TOKENIZER,
                      help="gpt2, cl100k_base, o200k_base or a tokenizer.json")
    prep.add_argument("--max-tokens", type=int, default=4096, help="token budget of the observation (DOM chunk)")
    prep.add_argument("--profile", choices=["scribe", "minimal"], default="scribe")
    prep.add_argument("--chunks", choices=["target", "all", "last"], default="target",
                      help="the chunk holding the target (training), every chunk, or the last (evaluation)")
    prep.add_argument("--shard-size", type=int, default=64, help="workflows per output shard (local engine)")
    prep.add_argument("--format", choices=["parquet", "jsonl"], default="parquet")
    prep.add_argument("--overwrite", action="store_true", help="discard a previous run in OUTPUT")
    prep.set_defaults(func=_prep)

    study = sub.add_parser("study", help="evaluate an agent on a whole benchmark: run, report, compare")
    study_sub = study.add_subparsers(dest="study_command", required=True)
    srun = study_sub.add_parser(
        "run", help="run (or resume) a study in DIR",
        description="Tasks x seeds, each an episode with its own trajectory and report under DIR/episodes; "
        "DIR/results.jsonl gets a line per finished episode. Rerun the same command to resume.")
    srun.add_argument("dir", metavar="DIR")
    srun.add_argument("--benchmark", choices=["miniwob", "webarena", "webarena-verified"], required=True)
    srun.add_argument("--agent", choices=["occam", "occam-judge", "step", "scribe"], default="occam")
    _model_arguments(srun)
    srun.add_argument("--tasks", help="comma-separated task names (MiniWoB++) or ids (WebArena); default: all")
    srun.add_argument("--sites", help="WebArena: only tasks on these sites (comma-separated)")
    srun.add_argument("--task-file", help="WebArena: tasks from this file instead of the packaged ones")
    srun.add_argument("--seeds", default="0", help="e.g. 0-4 or 1,3 (default 0)")
    srun.add_argument("--max-steps", type=int, default=20)
    srun.add_argument("--episode-seconds", type=float, default=600.0, help="wall-clock limit per episode")
    srun.add_argument("--max-failed-decisions", type=int, default=3,
                      help="steps in a row without a valid action that end an episode")
    srun.add_argument("--workers", type=int, default=1, help="browsers at once")
    srun.add_argument("--engine", choices=["local", "ray"], default="local")
    srun.add_argument("--address", help="Ray cluster to join (default: a local one)")
    srun.add_argument("--sites-file", help="WebArena: site URLs (and accounts), as for `pagelens eval`")
    srun.add_argument("--reset-cmd", help="WebArena: shell command run before a task that changes its site "
                      "({site} is replaced by the site's name)")
    srun.add_argument("--storage-dir", help="WebArena: <site>.json Playwright storage states (logins)")
    srun.add_argument("--budget-usd", type=float, help="start no episode once the spend reaches this")
    srun.add_argument("--prices", help="USD per 1M prompt and completion tokens, e.g. 2.5,10 (for the budget)")
    srun.add_argument("--max-infra-failures", type=int, default=3,
                      help="stop after this many episodes in a row lost to the endpoint or the browser")
    srun.set_defaults(func=_study_run)
    srep = study_sub.add_parser("report", help="write DIR/report.html")
    srep.add_argument("dir", metavar="DIR")
    srep.set_defaults(func=_study_report)
    scmp = study_sub.add_parser("compare", help="paired per-task differences of two studies")
    scmp.add_argument("first", metavar="DIR1")
    scmp.add_argument("second", metavar="DIR2")
    scmp.set_defaults(func=_study_compare)

    predict = sub.add_parser(
        "predict-steps",
        help="ask a model for the next step of every example of a `pagelens prep` output (resumable)",
        description="Writes PREDICTIONS (JSON lines: id, reply) with any OpenAI-compatible model; a rerun asks "
        "only for the examples not yet there. Score them with `pagelens score-steps`.",
    )
    predict.add_argument("prep_out", metavar="PREP_OUT")
    predict.add_argument("predictions", metavar="PREDICTIONS")
    _model_arguments(predict)
    predict.add_argument("--workers", type=int, default=4, help="requests in flight")
    predict.add_argument("--temperature", type=float, default=0.0)
    predict.add_argument("--max-answer-tokens", type=int, default=200)
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
    rep = sub.add_parser("report", help="write the HTML report of a trajectory")
    rep.add_argument("trajectory")
    rep.add_argument("-o", "--output")
    rep.set_defaults(func=_report)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except BrokenPipeError:
        # `pagelens observe | head`: the reader left; not an error.
        sys.stdout = None
        return 0
    except (PagelensError, OSError, ImportError) as e:
        print(f"pagelens: error: {e}", file=sys.stderr)
        return 2
    except Exception as e:
        # The browser's failures (a page that does not load...) are the user's to fix, not a bug.
        if type(e).__module__.startswith("playwright"):
            print(f"pagelens: error: {str(e).splitlines()[0]}", file=sys.stderr)
            return 2
        raise


if __name__ == "__main__":
    sys.exit(main())
