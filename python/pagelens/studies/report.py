"""A study's results for people: ``DIR/report.html`` (self-contained: the settings and how far
the study got, success per task and per site with 95% Wilson intervals, every episode's reward
linked to its step viewer, infrastructure and episode failures by kind, histograms of steps
and tokens drawn as inline SVG, the journal of its runs) and the comparison of two studies
(paired by task and seed, with a 95% interval; per task: success rates and which flipped)."""

from __future__ import annotations

import html
import math
import os
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from pagelens._io import read_json, write_atomically
from pagelens.rates import Rate, rate_of, rates_by
from pagelens.studies.settings import plan_of
from pagelens.studies.store import episode_id, read_results, study_folder, summarize, tally


def _rate_rows(groups: dict[str, list[dict[str, Any]]], link: bool, lost: Counter[str] | None = None) -> str:
    """A row per group (a task keeps its row when all its episodes were lost: 0 finished, and
    how many were lost, said in its row)."""
    rows = []
    lost = lost or Counter()
    for name in sorted({*groups, *lost}):
        items = groups.get(name, [])
        if not items:
            rows.append(
                f"<tr><td>{html.escape(name)}</td><td>0</td><td>0</td><td>–</td><td>–</td>"
                + (f"<td>{lost[name]} lost</td>" if link else "")
                + "</tr>"
            )
            continue
        rate = rate_of(name, (bool(r["success"]) for r in items))
        wins = rate.successes
        lo, hi = rate.interval()
        episodes = ""
        if link:
            episodes = " ".join(
                f'<a href="episodes/{html.escape(r["id"])}/report.html" class="{"ok" if r["success"] else "bad"}">'
                f"{r['seed']}</a>"
                for r in sorted(items, key=lambda r: r["seed"])
            )
        last = f"<td>{episodes}</td>" if link else ""
        rows.append(
            f"<tr><td>{html.escape(name)}</td><td>{len(items)}</td><td>{wins}</td>"
            f"<td>{wins / len(items):.0%}</td><td>{lo:.0%}–{hi:.0%}</td>{last}</tr>"
        )
    return "".join(rows)


def histogram_svg(values: list[float], title: str, bins: int = 12, width: int = 420, height: int = 160) -> str:
    """A bar chart of ``values`` as inline SVG (no script, no network)."""
    if not values:
        return (
            f"<svg role='img' aria-label='{html.escape(title)}' width='{width}' height='30'><text x='4' y='20'>"
            f"{html.escape(title)}: no data</text></svg>"
        )
    lo, hi = min(values), max(values)
    span = (hi - lo) or 1.0
    counts = [0] * bins
    for v in values:
        counts[min(bins - 1, int((v - lo) / span * bins))] += 1
    top = max(counts)
    bar_w = (width - 40) / bins
    bars = []
    for k, c in enumerate(counts):
        h = (height - 50) * c / top if top else 0
        x, y = 30 + k * bar_w, height - 25 - h
        bars.append(
            f"<rect x='{x:.1f}' y='{y:.1f}' width='{bar_w - 2:.1f}' height='{h:.1f}' fill='#4a7bd0'>"
            f"<title>{c}</title></rect>"
        )
    return (
        f"<svg role='img' aria-label='{html.escape(title)}' width='{width}' height='{height}' "
        f"xmlns='http://www.w3.org/2000/svg'><text x='4' y='14' font-size='13'>{html.escape(title)}</text>"
        + "".join(bars)
        + f"<line x1='30' y1='{height - 25}' x2='{width - 10}' y2='{height - 25}' stroke='#333'/>"
        f"<text x='30' y='{height - 8}' font-size='11'>{lo:,.0f}</text>"
        f"<text x='{width - 60}' y='{height - 8}' font-size='11'>{hi:,.0f}</text>"
        f"<text x='4' y='{height - (height - 50) - 20}' font-size='11'>{top}</text>"
        f"<text x='4' y='{height - 26}' font-size='11'>0</text></svg>"
    )


def _settings_rows(study: dict[str, Any]) -> str:
    shown = [
        ("benchmark", study.get("benchmark")),
        ("agent", study.get("agent")),
        ("model", study.get("model")),
        ("endpoint", study.get("base_url") or "(OPENAI_BASE_URL)"),
        ("tasks", f"{len(study.get('tasks') or [])}: {', '.join(map(str, study.get('tasks') or []))}"),
        ("seeds", ", ".join(map(str, study.get("seeds") or []))),
        ("max steps", study.get("max_steps")),
        ("episode limit", f"{study.get('episode_seconds')} s"),
    ]
    return "".join(f"<tr><th>{html.escape(k)}</th><td>{html.escape(str(v))}</td></tr>" for k, v in shown)


def _journal_rows(study: dict[str, Any]) -> str:
    rows = []
    for entry in study.get("journal") or []:
        if not isinstance(entry, dict):
            continue
        versions, git = entry.get("versions"), entry.get("git")
        versions = versions if isinstance(versions, dict) else {}
        git = git if isinstance(git, dict) else {}
        described = "; ".join(f"{k} {v}" for k, v in versions.items())
        commits = "; ".join(f"{k} {v}" for k, v in git.items() if v) or "no git checkout"
        rows.append(
            f"<tr><td>{html.escape(str(entry.get('started')))}</td><td>{html.escape(described)}</td>"
            f"<td>{html.escape(commits)}</td><td><code>{html.escape(str(entry.get('settings_hash'))[:16])}</code></td></tr>"
        )
    return "".join(rows) or "<tr><td colspan='4'>no journal (a study from before pagelens kept one)</td></tr>"


def _episode_rows(results: list[dict[str, Any]]) -> str:
    rows = []
    for r in sorted(results, key=lambda r: (r["task"], r["seed"])):
        cls = "ok" if r["success"] else "bad"
        ident = html.escape(r["id"])
        rows.append(
            f"<tr><td><a href='episodes/{ident}/report.html'>{html.escape(r['task'])}</a></td><td>{r['seed']}</td>"
            f"<td class='{cls}'>{r['reward']:g}</td><td>{r['steps']}</td><td>{html.escape(r.get('reason') or '')}</td>"
            f"<td>{html.escape(r.get('error_kind') or '')}</td></tr>"
        )
    return "".join(rows)


def _lost_rows(lost: list[dict[str, Any]]) -> str:
    """Every planned episode with no result: its task, seed, what lost it and why."""
    rows = "".join(
        f"<tr><td>{html.escape(str(e['task']))}</td><td>{e['seed']}</td><td>{html.escape(str(e['kind']))}</td>"
        f"<td>{html.escape(str(e['cause']))}</td></tr>"
        for e in lost
    )
    return rows or "<tr><td colspan='4'>none</td></tr>"


_KILLED = "its run was killed or interrupted"


def _running(summary: dict[str, Any]) -> bool:
    """Whether the study's last run is still running (its process alive)."""
    pid = summary.get("pid")
    return summary.get("status") == "running" and isinstance(pid, int) and _alive(pid)


def _status(summary: dict[str, Any], finished: int, planned: int, pending: int = 0) -> str:
    """How far the study's last run got: running (its process alive), or how it ended."""
    status = summary.get("status")
    if status == "running":
        pid = summary.get("pid")
        if isinstance(pid, int) and _alive(pid):
            return f"running (process {pid}): {finished} of {planned} episodes finished so far, {pending} pending"
        return f"stopped: {_KILLED} (rerun the same command to continue)"
    if summary.get("stopped") == _KILLED:
        return f"stopped: {_KILLED} (rerun the same command to continue)"
    if status == "stopped" or summary.get("stopped"):
        return f"stopped: {summary.get('stopped')}"
    if finished >= planned:
        return "ran to its end"
    if status in ("ended", "incomplete"):
        return "ended with episodes lost (listed below; rerun the same command to run them)"
    return "not finished (rerun the same command to continue)"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process holds the number
    return True


def write_report(directory: str | os.PathLike[str]) -> Path:
    """``DIR/report.html`` for a person to read first: the settings, finished of planned and
    why the study stopped, success per site and task with intervals, every episode's reward
    linked to its step viewer, failures of the infrastructure and of the episodes by kind,
    and the journal of the runs (versions, commits, settings hash)."""
    directory = study_folder(directory)
    study = read_json(directory / "study.json", "study settings file")
    study = study if isinstance(study, dict) else {}
    summary_path = directory / "summary.json"
    summary = read_json(summary_path, "study summary") if summary_path.is_file() else {}
    summary = summary if isinstance(summary, dict) else {}
    planned_ids = [
        (episode_id(str(study.get("benchmark")), task, seed, str(study.get("agent"))), task, seed)
        for task, seed in plan_of(study)
    ] or [(r["id"], r["task"], r["seed"]) for r in read_results(directory)]  # no plan kept: its results'
    running = _running(summary)
    counts = tally(directory, planned_ids, running=running)
    if not running and summary.get("status") == "running":
        # Its run was killed: summary.json said running since; made again from the results.
        summary = summarize(directory, planned_ids, "stopped", _KILLED)
    planned = counts["episodes"]
    results = counts["results"]
    lost = counts["lost"]
    status = _status(summary, len(results), planned, counts["pending"])
    by_task: dict[str, list[dict[str, Any]]] = defaultdict(list)
    by_site: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in results:
        by_task[r["task"]].append(r)
        by_site[r.get("site") or r["benchmark"]].append(r)
    overall = rate_of("all", (bool(r["success"]) for r in results))
    wins = overall.successes
    lo, hi = overall.interval()
    # Every failed episode by its kind — an error's, else how it ended (a wrong answer, the step
    # limit): the kinds add up to the failures.
    errors = Counter(counts["failures"])
    reasons = Counter(r.get("reason", "") for r in results)
    failures = (
        "".join(f"<tr><td>{html.escape(k)}</td><td>{n}</td></tr>" for k, n in errors.most_common())
        or "<tr><td colspan='2'>none</td></tr>"
    )
    infrastructure = Counter(e["kind"] for e in lost if e["kind"] != "not run")
    infrastructure_rows = (
        "".join(f"<tr><td>{html.escape(k)}</td><td>{n}</td></tr>" for k, n in infrastructure.most_common())
        or "<tr><td colspan='2'>none</td></tr>"
    )
    endings = "".join(f"<tr><td>{html.escape(k)}</td><td>{n}</td></tr>" for k, n in reasons.most_common())
    cost = sum(r.get("cost", 0.0) for r in results)
    task_extra = "<th>episodes (by seed)</th>"
    head = "<tr><th>{}</th><th>episodes</th><th>successes</th><th>success</th><th>95% interval</th>{}</tr>"
    page = f"""<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Study report: {html.escape(directory.name)}</title>
<style>body{{font:14px sans-serif;margin:2em;max-width:70em}}table{{border-collapse:collapse;margin:1em 0}}
td,th{{border:1px solid #ccc;padding:3px 8px;text-align:left}}a.ok,.ok{{color:#070}}a.bad,.bad{{color:#b00}}
.plots svg{{margin-right:2em}}</style></head><body>
<h1>Study {html.escape(directory.name)}</h1>
<table id="settings">{_settings_rows(study)}
<tr><th>finished</th><td id="finished">{len(results)} of {planned} episodes planned</td></tr>
<tr><th>status</th><td id="status">{html.escape(status)}</td></tr></table>
<p id="overall">{len(results)} episodes finished: {wins} successes ({wins / len(results) if results else 0:.1%};
95% interval {lo:.1%}–{hi:.1%}); {
        sum(r.get("prompt_tokens", 0) + r.get("completion_tokens", 0) for r in results):,} tokens; ${cost:.4f}.</p>
<h2>Per site</h2><table id="per-site">{head.format("site", "")}{_rate_rows(by_site, False)}</table>
<h2>Per task</h2><table id="per-task">{head.format("task", task_extra)}{
        _rate_rows(by_task, True, Counter(str(e["task"]) for e in lost))
    }</table>
<h2>Episodes</h2><table id="episodes"><tr><th>task</th><th>seed</th><th>reward</th><th>steps</th><th>ended</th>
<th>error</th></tr>{_episode_rows(results)}</table>
<h2>Episodes lost ({len(lost)} of {planned} planned; a rerun runs them{
        f"; {counts['pending']} pending, not begun yet" if counts["pending"] else ""
    })</h2>
<table id="lost"><tr><th>task</th><th>seed</th><th>lost to</th><th>cause (the last attempt's)</th></tr>
{_lost_rows(lost)}</table>
<h2>Infrastructure failures by kind (episodes, each counted once)</h2>
<table id="infrastructure"><tr><th>kind</th><th>episodes</th></tr>{infrastructure_rows}</table>
<h2>Steps and tokens</h2><div class="plots">
{histogram_svg([float(r.get("steps", 0)) for r in results], "steps per episode")}
{
        histogram_svg(
            [float(r.get("prompt_tokens", 0) + r.get("completion_tokens", 0)) for r in results], "tokens per episode"
        )
    }</div>
<h2>Failures by kind ({sum(errors.values())} episodes failed)</h2>
<table id="failures"><tr><th>kind</th><th>episodes</th></tr>{failures}</table>
<h2>How episodes ended</h2><table><tr><th>reason</th><th>episodes</th></tr>{endings}</table>
<h2>Journal</h2><table id="journal"><tr><th>run started</th><th>versions</th><th>git</th><th>settings hash</th></tr>
{_journal_rows(study)}</table>
</body></html>
"""
    out = directory / "report.html"
    write_atomically(out, page)
    return out


# Student's t at 97.5% for 1..30 degrees of freedom (beyond: the normal's 1.96).
_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
         2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048,
         2.045, 2.042)  # fmt: skip


def paired_interval(differences: list[float]) -> tuple[float, float] | None:
    """The 95% interval of the mean of paired differences (Student's t), None under two pairs."""
    n = len(differences)
    if n < 2:
        return None
    mean = sum(differences) / n
    sd = math.sqrt(sum((d - mean) ** 2 for d in differences) / (n - 1))
    half = (_T975[n - 2] if n - 1 <= len(_T975) else 1.96) * sd / math.sqrt(n)
    # A difference of two success rates lies in [-1, 1]; so does what can be said of it.
    return max(-1.0, mean - half), min(1.0, mean + half)


def compare(first: str | os.PathLike[str], second: str | os.PathLike[str]) -> dict[str, Any]:
    """Two studies, episode for episode: pairs of the same task and seed, the mean of their
    success differences (second minus first) with its 95% interval; per task, the success rate
    in each and whether it flipped (succeeded in every episode of one and none of the other);
    warnings when the studies differ in benchmark, agent or model (the difference is then
    not the agent's alone) and for the episodes only one of them has."""
    a_dir, b_dir = study_folder(first), study_folder(second)
    a_results, b_results = read_results(a_dir), read_results(b_dir)

    def rates(results: list[dict[str, Any]]) -> dict[str, Rate]:
        return rates_by(results, lambda r: r["task"], lambda r: bool(r["success"]))

    by_episode_a = {(r["task"], r["seed"]): bool(r["success"]) for r in a_results}
    by_episode_b = {(r["task"], r["seed"]): bool(r["success"]) for r in b_results}
    paired = sorted(set(by_episode_a) & set(by_episode_b))
    # Per task, the same episodes (task and seed) on both sides: a seed only one study ran
    # would make a difference of seeds, not of agents.
    pairs = set(paired)
    a = rates([r for r in a_results if (r["task"], r["seed"]) in pairs])
    b = rates([r for r in b_results if (r["task"], r["seed"]) in pairs])
    rows: list[dict[str, Any]] = []
    for task in sorted(set(a) & set(b)):
        ra, rb = a[task].rate or 0.0, b[task].rate or 0.0
        # ("lost" is the report's word for episodes the infrastructure lost: never a result's)
        flipped = "gained" if ra == 0 and rb == 1 else "regressed" if ra == 1 and rb == 0 else ""
        rows.append({"task": task, "first": ra, "second": rb, "difference": rb - ra, "flipped": flipped})
    differences = [float(by_episode_b[k]) - float(by_episode_a[k]) for k in paired]
    warnings = []
    settings_a, settings_b = (read_json(d / "study.json", "study settings file") for d in (a_dir, b_dir))
    for key in ("benchmark", "agent", "model"):
        va = settings_a.get(key) if isinstance(settings_a, dict) else None
        vb = settings_b.get(key) if isinstance(settings_b, dict) else None
        if va != vb:
            warnings.append(f"the studies differ in {key} ({va} and {vb})")
    unpaired = len(set(by_episode_a) ^ set(by_episode_b))
    if unpaired:
        warnings.append(f"{unpaired} episodes are in one study only (left out of the paired difference)")
    interval = paired_interval(differences)
    return {
        "tasks": rows,
        "pairs": len(paired),
        "mean_difference": sum(differences) / len(differences) if differences else 0.0,
        "interval": list(interval) if interval else None,
        "warnings": warnings,
        "only_first": sorted({r["task"] for r in a_results} - {r["task"] for r in b_results}),
        "only_second": sorted({r["task"] for r in b_results} - {r["task"] for r in a_results}),
    }


def format_comparison(result: dict[str, Any], first: str, second: str) -> str:
    lines = [f"| task | {first} | {second} | difference | flipped |", "| --- | ---: | ---: | ---: | --- |"]
    for r in result["tasks"]:
        lines.append(
            f"| {r['task']} | {r['first']:.0%} | {r['second']:.0%} | {r['difference']:+.0%} | {r['flipped']} |"
        )
    interval = result.get("interval")
    shown = f" (95% interval {interval[0]:+.1%} to {interval[1]:+.1%})" if interval else ""
    lines.append(
        f"\nmean paired difference: {result['mean_difference']:+.1%}{shown} over {result['pairs']} episodes "
        f"(task and seed) of {len(result['tasks'])} tasks"
    )
    gained = [r["task"] for r in result["tasks"] if r["flipped"] == "gained"]
    regressed = [r["task"] for r in result["tasks"] if r["flipped"] == "regressed"]
    lines.append(
        f"flipped to success: {', '.join(gained) or 'none'}; regressed (flipped to failure): "
        f"{', '.join(regressed) or 'none'}"
    )
    if result["only_first"] or result["only_second"]:
        lines.append(f"not in both: {', '.join(result['only_first'] + result['only_second'])}")
    lines.extend(f"warning: {w}" for w in result.get("warnings", ()))
    return "\n".join(lines)
