"""Scoring saved runs: every evaluator of a task, combined, and a per-site table."""

from __future__ import annotations

import json
import os
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from pagelens.evaluation.errors import NotScored
from pagelens.evaluation.grader import Grader
from pagelens.evaluation.program_html import ProgramHtmlEvaluator
from pagelens.evaluation.strings import StringEvaluator
from pagelens.evaluation.tasks import SiteConfig, TaskConfig
from pagelens.evaluation.urls import UrlEvaluator
from pagelens.evaluation.variants import Variant, check_variant

__all__ = ["Harness", "RunOutcome", "TaskScore", "load_outcome", "find_outcomes", "site_table"]

Combine = Literal["all", "mean"]


@dataclass(frozen=True)
class RunOutcome:
    """What scoring needs from a finished run."""

    task_id: int
    answer: str | None
    final_url: str | None
    source: str = ""


def load_outcome(path: str | os.PathLike[str]) -> RunOutcome:
    """A run's outcome from a pagelens trajectory (``.jsonl``: the last record that names the
    answer / final URL wins) or a ``.json`` object ``{"task_id", "answer", "final_url"}``."""
    path = Path(path)
    text = path.read_text()
    if path.suffix == ".jsonl":
        records = []
        for n, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    records.append(json.loads(line))
                except json.JSONDecodeError as e:
                    raise ValueError(f"{path}:{n}: not JSON: {e}") from None
    else:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise ValueError(f"{path}: not JSON: {e}") from None
        records = [data] if isinstance(data, dict) else []
    task_id = answer = final_url = None
    for r in records:
        if not isinstance(r, dict):
            continue
        if r.get("task_id") is not None:
            task_id = r["task_id"]
        if r.get("answer") is not None:
            answer = r["answer"]
        url = r.get("final_url") or r.get("url")
        if url:
            final_url = url
    if not isinstance(task_id, int) or isinstance(task_id, bool):
        raise ValueError(f"{path}: no integer task_id in the run")
    if answer is not None and not isinstance(answer, str):
        raise ValueError(f"{path}: the answer must be a string, not {type(answer).__name__}")
    return RunOutcome(task_id, answer, final_url, str(path))


def find_outcomes(target: str | os.PathLike[str]) -> tuple[list[RunOutcome], list[str]]:
    """Outcomes of a file or of every run file under a folder, and a message per unreadable one."""
    target = Path(target)
    if target.is_file():
        return [load_outcome(target)], []
    if not target.is_dir():
        raise FileNotFoundError(f"no such trajectory file or folder: {target}")
    outcomes, problems = [], []
    for path in sorted(p for p in target.rglob("*") if p.suffix in (".json", ".jsonl") and p.is_file()):
        try:
            outcomes.append(load_outcome(path))
        except (ValueError, OSError) as e:
            problems.append(str(e))
    return outcomes, problems


@dataclass
class TaskScore:
    task_id: int
    site: str
    scored: bool
    score: float | None = None
    success: bool | None = None
    reason: str = ""
    evaluators: dict[str, float] = field(default_factory=dict)
    details: list[str] = field(default_factory=list)
    source: str = ""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Harness:
    """Scores runs of ``tasks``. ``combine``: "all" multiplies the evaluators' scores
    (WebArena: every check must pass), "mean" averages them (BrowserGym)."""

    tasks: dict[int, TaskConfig]
    variant: Variant = "original"
    combine: Combine = "all"
    grader: Grader | None = None
    sites: SiteConfig = field(default_factory=SiteConfig)
    auth_dir: str | None = None
    settle_ms: float = 1000

    def __post_init__(self) -> None:
        check_variant(self.variant)
        if self.combine not in ("all", "mean"):
            raise ValueError(f"combine is 'all' or 'mean', not {self.combine!r}")
        self._playwright = None
        self._browser = None

    async def close(self) -> None:
        if self._browser is not None:
            await self._browser.close()
            self._browser = None
        if self._playwright is not None:
            await self._playwright.stop()
            self._playwright = None

    async def _page(self, task: TaskConfig):
        from playwright.async_api import async_playwright

        from pagelens.browser.launch import LaunchOptions

        if self._browser is None:
            self._playwright = await async_playwright().start()
            self._browser = await self._playwright.chromium.launch(**LaunchOptions().playwright_kwargs())
        state = None
        if task.require_login and task.storage_state:
            if self.auth_dir is None:
                raise NotScored(f"task {task.task_id} checks a logged-in page: give --auth-dir with its "
                                f"storage state ({Path(task.storage_state).name})")
            state = Path(self.auth_dir) / Path(task.storage_state).name
            if not state.is_file():
                raise NotScored(f"task {task.task_id}: no storage state {state}")
        context = await self._browser.new_context(storage_state=str(state) if state else None)
        return context, await context.new_page()

    async def score(self, outcome: RunOutcome) -> TaskScore:
        task = self.tasks.get(outcome.task_id)
        if task is None:
            return TaskScore(outcome.task_id, "?", False, reason="no such task in the task file",
                             source=outcome.source)
        result = TaskScore(task.task_id, task.site, False, source=outcome.source)
        try:
            for kind in task.eval_types:
                if kind == "string_match":
                    ev = StringEvaluator(self.variant, self.grader)
                    s = ev.score(task, outcome.answer)
                elif kind == "url_match":
                    ev = UrlEvaluator(self.variant, self.sites)
                    s = ev.score(task, outcome.final_url)
                else:
                    ev = ProgramHtmlEvaluator(self.variant, self.sites, settle_ms=self.settle_ms)
                    context, page = await self._page(task)
                    try:
                        s = await ev.score(task, outcome.final_url, page)
                    finally:
                        await context.close()
                result.evaluators[kind] = s
                result.details.extend(ev.details)
        except NotScored as e:
            result.reason = str(e)
            result.evaluators = {}
            return result
        scores = list(result.evaluators.values())
        if self.combine == "all":
            total = 1.0
            for s in scores:
                total *= s
        else:
            total = sum(scores) / len(scores)
        result.scored, result.score, result.success = True, total, total == 1.0
        return result


def site_table(scores: list[TaskScore]) -> dict[str, Any]:
    """Per-site success rates over the scored tasks, as the papers' tables report them."""
    groups: dict[str, list[TaskScore]] = defaultdict(list)
    for s in scores:
        groups[s.site].append(s)
    rows = []
    for site in sorted(groups):
        rows.append(_row(site, groups[site]))
    return {"sites": rows, "total": _row("total", scores)}


def _row(name: str, items: list[TaskScore]) -> dict[str, Any]:
    scored = [s for s in items if s.scored]
    ok = sum(1 for s in scored if s.success)
    return {
        "site": name,
        "runs": len(items),
        "scored": len(scored),
        "not_scored": len(items) - len(scored),
        "successes": ok,
        "success_rate": ok / len(scored) if scored else None,
        "mean_score": sum(s.score or 0.0 for s in scored) / len(scored) if scored else None,
    }


def format_table(table: dict[str, Any]) -> str:
    lines = ["| site | runs | scored | not scored | successes | success rate | mean score |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for row in [*table["sites"], table["total"]]:
        rate = "–" if row["success_rate"] is None else f"{100 * row['success_rate']:.1f}%"
        mean = "–" if row["mean_score"] is None else f"{row['mean_score']:.3f}"
        name = f"**{row['site']}**" if row["site"] == "total" else row["site"]
        lines.append(f"| {name} | {row['runs']} | {row['scored']} | {row['not_scored']} | {row['successes']} | "
                     f"{rate} | {mean} |")
    return "\n".join(lines)
