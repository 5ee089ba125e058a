"""A WebArena episode in a study: the task's start URL from the sites file, the site's login
(a Playwright storage state, ``STORAGE_DIR/<site>.json``, made once by whoever runs the
sites), the agent's run, and the evaluation harness's score at the end of the episode, while
the site is as the agent left it (program_html reads the live page)."""

from __future__ import annotations

import functools
import json
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from pagelens.agents.runner import run_agent
from pagelens.errors import PagelensError
from pagelens.evaluation import Harness, SiteConfig, TaskConfig, load_outcome, load_tasks
from pagelens.evaluation.tasks import PLACEHOLDERS

if TYPE_CHECKING:
    from pagelens.studies.episodes import Worker
    from pagelens.studies.settings import EpisodeSpec, StudySettings
    from pagelens.studies.store import EpisodeResult


class EpisodeSetupError(PagelensError, RuntimeError):
    """The episode cannot begin: unknown task, a site with no URL, a reset command that failed."""


@functools.lru_cache(maxsize=4)
def tasks_of(source: str) -> dict[int, TaskConfig]:
    return {t.task_id: t for t in load_tasks(source)}


def task_source(settings: StudySettings) -> str:
    return settings.task_file or settings.benchmark


def task_of(settings: StudySettings, task: str) -> TaskConfig:
    try:
        return tasks_of(task_source(settings))[int(task)]
    except (KeyError, ValueError):
        raise EpisodeSetupError(f"no task {task!r} in {task_source(settings)}") from None


def changes_state(task: TaskConfig) -> bool:
    """Tasks checked by reading the site afterwards change it (WebArena's program_html)."""
    return "program_html" in task.eval_types or any(
        e.get("evaluator") in ("NetworkEventEvaluator",) for e in task.raw.get("eval", []) if isinstance(e, dict))


def reset_site(command: str, site: str) -> None:
    """``--reset-cmd``, with ``{site}`` replaced by the site's name."""
    done = subprocess.run(command.replace("{site}", site), shell=True, capture_output=True, text=True, timeout=1800)
    if done.returncode != 0:
        raise EpisodeSetupError(f"reset command for {site} failed ({done.returncode}): {done.stderr.strip()[-500:]}")


def site_url(sites: SiteConfig, site: str) -> str | None:
    """A site's base URL, given in the sites file under its name or its placeholder."""
    placeholder = next((p for p, name in PLACEHOLDERS.items() if name == site), None)
    url = sites.urls.get(site) or (sites.base(placeholder) if placeholder else None)
    return url.rstrip("/") if url else None


async def login_state(worker: Worker, task: TaskConfig, sites: SiteConfig) -> dict[str, Any]:
    """The storage state for a task that needs its sites logged in: ``STORAGE_DIR/<site>.json``
    when there is one, else WebArena's login recipe with the sites file's account, run once
    per worker and site."""
    from pagelens.studies.login import LoginError, log_in, merge_states

    states = []
    for site in task.sites:
        if site not in worker.logins:
            given = Path(worker.settings.storage_dir) / f"{site}.json" if worker.settings.storage_dir else None
            if given is not None and given.is_file():
                worker.logins[site] = json.loads(given.read_text())
            else:
                account, url = sites.accounts.get(site), site_url(sites, site)
                if account is None or url is None:
                    raise EpisodeSetupError(f"task {task.task_id} needs a login on {site}: give its account in the "
                                            f"sites file (\"accounts\") or STORAGE_DIR/{site}.json")
                assert worker.browser is not None and worker.browser._browser is not None
                try:
                    worker.logins[site] = await log_in(worker.browser._browser, site, url, account,
                                                       worker.browser.config.navigation_timeout_ms)
                except LoginError as e:
                    raise EpisodeSetupError(str(e)) from e
        states.append(worker.logins[site])
    return merge_states(states)


async def run_webarena_episode(worker: Worker, spec: EpisodeSpec, out: Path, result: EpisodeResult,
                               restarts: int) -> None:
    settings = worker.settings
    task = task_of(settings, spec.task)
    sites = SiteConfig.load(settings.sites_file)
    resolved = task.resolved(sites, tuple(PLACEHOLDERS))
    missing = sites.unresolved(resolved.start_url)
    if missing:
        raise EpisodeSetupError(f"task {spec.task}: no URL for {', '.join(missing)} in the sites file")
    result.site = task.site
    browser = worker.browser
    assert browser is not None
    hosts = {urlsplit(u).hostname for u in sites.urls.values() if urlsplit(u).hostname}
    browser.config.allowed_hosts = tuple(sorted(h for h in hosts if h)) or None
    browser.config.storage_state = await login_state(worker, task, sites) if task.require_login else None
    browser.config.har_path = str(out / "network.har") if spec.benchmark == "webarena-verified" else None
    from pagelens.studies.episodes import make_agent

    agent = make_agent(settings, worker.client(), resolved.intent, resolved.start_url)
    run = await run_agent(browser, agent, resolved.intent, resolved.start_url, out, max_steps=settings.max_steps,
                          task_id=task.task_id, max_failed_decisions=settings.max_failed_decisions,
                          header={"episode": spec.id, "seed": spec.seed, "restarts": restarts})
    result.steps, result.reason = run.steps, run.reason
    harness = Harness({task.task_id: task}, "verified" if spec.benchmark == "webarena-verified" else "webarena",
                      sites=sites, auth_dir=settings.storage_dir)
    try:
        score = await harness.score(load_outcome(out / "trajectory.jsonl"))
    finally:
        await harness.close()
    result.reward, result.success = float(score.score or 0.0), bool(score.success)
    result.evaluation = {"scored": score.scored, "evaluators": score.evaluators, "reason": score.reason,
                         "details": score.details[:20]}
