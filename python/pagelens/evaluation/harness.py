"""Scoring saved runs: every evaluator of a task, combined, and a per-site table.

Bad input never stops the others: a run file that cannot be read is reported with its name and
skipped; a task whose config cannot be scored as written is that run's error; everything else
is scored. A trajectory whose last line was torn by a crash is scored on what it recorded.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from pagelens import settle
from pagelens._io import parse_json
from pagelens.errors import ArgumentError, TrajectoryError
from pagelens.evaluation.errors import NotScored, TaskError
from pagelens.evaluation.grader import Grader
from pagelens.evaluation.program_html import ProgramHtmlEvaluator
from pagelens.evaluation.strings import StringEvaluator
from pagelens.evaluation.tasks import PLACEHOLDERS, WEBARENA_PLACEHOLDERS, SiteConfig, TaskConfig
from pagelens.evaluation.urls import UrlEvaluator
from pagelens.evaluation.variants import COMBINE, Combine, Variant, get_variant
from pagelens.rates import Rate, rate_of, rates_by

__all__ = ["Harness", "RunOutcome", "TaskScore", "load_outcome", "find_outcomes", "site_table"]

# The part of a task's eval config each evaluator reads.
_PARTS = {"string_match": "reference_answers", "url_match": "reference_url", "program_html": "program_html"}
HAR_NAME = "network.har"


@dataclass(frozen=True)
class RunOutcome:
    """What scoring needs from a finished run."""

    task_id: int
    answer: str | None
    final_url: str | None
    source: str = ""
    har: str | None = None  # the run's network events, for WebArena-Verified's checks
    notes: tuple[str, ...] = ()


def load_outcome(path: str | os.PathLike[str]) -> RunOutcome:
    """A run's outcome from a pagelens trajectory (``.jsonl``: the last record that names the
    answer / final URL wins) or a ``.json`` object ``{"task_id", "answer", "final_url"}``."""
    path = Path(path)
    notes: list[str] = []
    task_id: Any = None
    fields: dict[str, Any] = {}
    try:
        if path.suffix == ".jsonl":
            from pagelens.agents.trajectory import load_trajectory  # only for trajectories

            run = load_trajectory(path)
            if run.torn_tail:
                notes.append("its last line was torn (a crash while writing): scored on what it recorded")
            task_id = run.task_id
            har = run.header.har if run.header is not None else None
            candidates = {"answer": run.answer, "final_url": run.final_url, "har": har}
            fields = {k: v for k, v in candidates.items() if v is not None}
        else:
            data = parse_json(path.read_bytes(), f"{path}:", TrajectoryError)
            if isinstance(data, dict):
                task_id = data.get("task_id")
                fields = {k: data[k] for k in ("answer", "final_url", "har") if data.get(k) not in (None, "")}
                if "final_url" not in fields and data.get("url") not in (None, ""):
                    fields["final_url"] = data["url"]
    except UnicodeDecodeError as e:
        raise TrajectoryError(f"{path}: not UTF-8 text (byte {e.start})") from None
    except json.JSONDecodeError as e:
        raise TrajectoryError(f"{path}: not JSON: {e}") from None
    if not isinstance(task_id, int) or isinstance(task_id, bool):
        raise TrajectoryError(f"{path}: no integer task_id in the run")
    for name, value in fields.items():
        if not isinstance(value, str):
            raise TrajectoryError(
                f"{path} (task {task_id}): field `{name}` must be a string, not {type(value).__name__}"
            )
    answer, final_url, har = fields.get("answer"), fields.get("final_url"), fields.get("har")
    if har is not None:
        har = str(path.parent / har)
    elif (path.parent / HAR_NAME).is_file():
        har = str(path.parent / HAR_NAME)
    return RunOutcome(task_id, answer, final_url, str(path), har, tuple(notes))


def find_outcomes(target: str | os.PathLike[str]) -> tuple[list[RunOutcome], list[str]]:
    """Outcomes of a file or of every run file under a folder, and a one-line message per
    file that could not be read (the others are still scored)."""
    target = Path(target)
    if target.is_file():
        paths = [target]
    elif target.is_dir():
        paths = sorted(p for p in target.rglob("*") if p.suffix in (".json", ".jsonl") and p.is_file())
    else:
        raise FileNotFoundError(f"no such trajectory file or folder: {target}")
    outcomes, problems = [], []
    for path in paths:
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
    error: bool = False  # the task's config could not be scored as written (see reason)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Harness:
    """Scores runs of ``tasks`` as ``variant`` does. ``combine``: "all" multiplies the
    evaluators' scores (WebArena: every check must pass), "mean" averages them (BrowserGym)."""

    tasks: dict[int, TaskConfig]
    variant: Variant | str = "webarena"
    combine: Combine = "all"
    grader: Grader | None = None
    sites: SiteConfig = field(default_factory=SiteConfig)
    auth_dir: str | None = None
    settle_ms: float = settle.CHECK_MS
    # A Playwright Browser to check pages in (a study's worker's own; not closed here), and the
    # login state its contexts start with (the episode's), instead of a browser started here
    # and the task file's storage states from ``auth_dir``.
    browser: Any = None
    storage_state: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        self.variant = get_variant(self.variant)
        verified = sorted(t for t, task in self.tasks.items() if task.source == "webarena-verified")
        if verified and get_variant(self.variant).name != "verified":
            raise ArgumentError(
                f"WebArena-Verified's tasks ({len(verified)}, e.g. {verified[0]}) are scored only by its own "
                "evaluators: use --variant verified, or WebArena's task file with this variant"
            )
        if self.combine not in COMBINE:
            raise ArgumentError(f"combine is one of {', '.join(COMBINE)}, not {self.combine!r}")
        self._playwright: Any = None
        self._browser: Any = None
        self._verified: Any = None

    async def close(self) -> None:
        if self._browser is not None:
            await self._browser.close()
            self._browser = None
        if self._playwright is not None:
            await self._playwright.stop()
            self._playwright = None

    async def _page(self, task: TaskConfig) -> Any:
        from pagelens.browser.launch import LaunchOptions, start_driver

        if self.browser is not None:
            context = await self.browser.new_context(storage_state=self.storage_state)
            return context, await context.new_page()
        if self._browser is None:
            self._playwright = await start_driver()
            self._browser = await self._playwright.chromium.launch(**LaunchOptions().playwright_kwargs())
        state = None
        if task.require_login and task.storage_state:
            if self.auth_dir is None:
                raise NotScored(
                    f"task {task.task_id} checks a logged-in page: give --auth-dir with its "
                    f"storage state ({Path(task.storage_state).name})"
                )
            state = Path(self.auth_dir) / Path(task.storage_state).name
            if not state.is_file():
                raise NotScored(f"task {task.task_id}: no storage state {state}")
        context = await self._browser.new_context(storage_state=str(state) if state else None)
        return context, await context.new_page()

    def _placeholders(self) -> tuple[str, ...]:
        v = get_variant(self.variant)
        return tuple(PLACEHOLDERS) if v.placeholders == "all" else WEBARENA_PLACEHOLDERS

    async def score(self, outcome: RunOutcome) -> TaskScore:
        task = self.tasks.get(outcome.task_id)
        if task is None:
            return TaskScore(outcome.task_id, "?", False, reason="no such task in the task file", source=outcome.source)
        result = TaskScore(task.task_id, task.site, False, source=outcome.source, details=list(outcome.notes))
        try:
            if get_variant(self.variant).name == "verified":
                await self._score_verified(task, outcome, result)
            else:
                await self._score_webarena(task, outcome, result)
        except NotScored as e:
            result.reason, result.evaluators = str(e), {}
            return result
        except TaskError as e:
            result.reason, result.evaluators, result.error = str(e), {}, True
            return result
        except Exception as e:  # noqa: BLE001 - one run's failure to score never loses the others'
            result.reason, result.evaluators, result.error = f"scoring failed: {type(e).__name__}: {e}", {}, True
            return result
        scores = list(result.evaluators.values())
        if self.combine == "all":
            total = 1.0
            for s in scores:
                total *= s
        else:
            total = sum(scores) / len(scores) if scores else 0.0
        result.scored, result.score, result.success = True, total, total == 1.0
        return result

    async def _score_webarena(self, task: TaskConfig, outcome: RunOutcome, result: TaskScore) -> None:
        placeholders = self._placeholders()
        task = task.resolved(self.sites, placeholders)
        for kind in task.eval_types:
            missing = task.unresolved(_PARTS[kind], placeholders)
            if missing:
                raise NotScored(f"{kind} needs the URL of {', '.join(missing)} (--sites)")
            ev: Any
            if kind == "string_match":
                ev = StringEvaluator(self.variant, self.grader)
                s = ev.score(task, outcome.answer)
            elif kind == "url_match":
                ev = UrlEvaluator(self.variant)
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

    async def _score_verified(self, task: TaskConfig, outcome: RunOutcome, result: TaskScore) -> None:
        if task.source != "webarena-verified":
            raise TaskError(
                f"{task.where}: the verified variant scores WebArena-Verified's tasks (--tasks webarena-verified)"
            )
        if self._verified is None:
            from pagelens.evaluation.verified import VerifiedScorer

            self._verified = VerifiedScorer(self.sites)
        scored = self._verified.score(task, outcome.answer, outcome.har)
        result.evaluators.update(scored.evaluators)
        result.details.extend(scored.details)


def site_table(scores: list[TaskScore]) -> dict[str, Any]:
    """Per-site success rates over the scored tasks, as the papers' tables report them."""

    def verdict(s: TaskScore) -> bool | None:
        return bool(s.success) if s.scored else None

    sites = rates_by(scores, lambda s: s.site, verdict, lambda s: s.score)
    total = rate_of("total", map(verdict, scores), (s.score for s in scores))
    return {"sites": [_row(r) for r in sites.values()], "total": _row(total)}


def _row(rate: Rate) -> dict[str, Any]:
    return {
        "site": rate.name,
        "runs": rate.runs,
        "scored": rate.scored,
        "not_scored": rate.not_scored,
        "successes": rate.successes,
        "success_rate": rate.rate,
        "mean_score": rate.mean_score,
    }


def format_table(table: dict[str, Any]) -> str:
    lines = [
        "| site | runs | scored | not scored | successes | success rate | mean score |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for row in [*table["sites"], table["total"]]:
        rate = "–" if row["success_rate"] is None else f"{100 * row['success_rate']:.1f}%"
        mean = "–" if row["mean_score"] is None else f"{row['mean_score']:.3f}"
        name = f"**{row['site']}**" if row["site"] == "total" else row["site"]
        lines.append(
            f"| {name} | {row['runs']} | {row['scored']} | {row['not_scored']} | {row['successes']} | {rate} | {mean} |"
        )
    return "\n".join(lines)
