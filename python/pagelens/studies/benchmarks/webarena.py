"""WebArena and WebArena-Verified as study benchmarks: the task's start URL from the sites
file, the sites' logins (``STORAGE_DIR/<site>.json``, or WebArena's login recipe with the
sites file's account, once per worker), the agent's run, and the score at the end of the
episode while the site is as the agent left it (program_html reads the live site), in the
worker's own browser with the episode's login."""

from __future__ import annotations

import functools
import json
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from pagelens.agents.runner import run_agent
from pagelens.errors import ArgumentError
from pagelens.evaluation import Harness, SiteConfig, TaskConfig, load_tasks
from pagelens.evaluation.harness import RunOutcome
from pagelens.evaluation.tasks import PLACEHOLDERS, packaged_subsets

if TYPE_CHECKING:
    from pagelens.studies.benchmarks import EpisodeTask, TaskSelection
    from pagelens.studies.episodes import Worker
    from pagelens.studies.settings import EpisodeSpec, StudySettings
    from pagelens.studies.store import EpisodeResult


@functools.lru_cache(maxsize=4)
def _tasks_of(source: str) -> dict[int, TaskConfig]:
    return {t.task_id: t for t in load_tasks(source)}


def changes_state(task: TaskConfig) -> bool:
    """Tasks checked by reading the site afterwards change it (WebArena's program_html)."""
    return "program_html" in task.eval_types or any(
        e.get("evaluator") in ("NetworkEventEvaluator",) for e in task.raw.get("eval", []) if isinstance(e, dict)
    )


def site_url(sites: SiteConfig, site: str) -> str | None:
    """A site's base URL, given in the sites file under its name or its placeholder."""
    placeholder = next((p for p, name in PLACEHOLDERS.items() if name == site), None)
    url = sites.urls.get(site) or (sites.base(placeholder) if placeholder else None)
    return url.rstrip("/") if url else None


class WebArena:
    def __init__(self, name: str, summary: str, variant: str):
        self.name, self.summary, self.variant = name, summary, variant

    def _source(self, task_file: str | None) -> str:
        return task_file or self.name

    def task_names(self, selection: TaskSelection) -> tuple[str, ...]:
        tasks = _tasks_of(self._source(selection.task_file)).values()
        keep: frozenset[int] | None = None
        if selection.subset is not None:
            subsets = packaged_subsets()
            if selection.subset not in subsets:
                raise ArgumentError(
                    f"no task subset {selection.subset!r} in WebArena-Verified's data; known: {', '.join(subsets)}"
                )
            keep = subsets[selection.subset]
        return tuple(
            str(t.task_id)
            for t in tasks
            if (selection.sites is None or set(t.sites) & selection.sites) and (keep is None or t.task_id in keep)
        )

    def resolve(self, settings: StudySettings, task: str) -> EpisodeTask:
        from pagelens.studies.benchmarks import EpisodeSetupError, EpisodeTask

        source = self._source(settings.task_file)
        try:
            config = _tasks_of(source)[int(task)]
        except (KeyError, ValueError):
            raise EpisodeSetupError(f"no task {task!r} in {source}") from None
        # A site with no URL is known before anything runs: refused here, not 258 setup errors.
        sites = SiteConfig.load(settings.sites_file)
        missing = sites.unresolved(config.resolved(sites, tuple(PLACEHOLDERS)).start_url)
        if missing:
            where = f"the sites file {settings.sites_file}" if settings.sites_file else "--sites-file (none given)"
            raise EpisodeSetupError(f"task {task}: no URL for {', '.join(missing)} in {where}")
        return EpisodeTask(task, config.site, changes_state(config), config)

    def reset(self, settings: StudySettings, task: EpisodeTask) -> None:
        """``--reset-cmd``, with ``{site}`` replaced by the site's name."""
        from pagelens.studies.benchmarks import EpisodeSetupError

        if not settings.reset_cmd or not task.site:
            return
        command = settings.reset_cmd.replace("{site}", task.site)
        done = subprocess.run(command, shell=True, capture_output=True, text=True, timeout=1800)
        if done.returncode != 0:
            raise EpisodeSetupError(
                f"reset command for {task.site} failed ({done.returncode}): {done.stderr.strip()[-500:]}"
            )

    async def run_episode(
        self, worker: Worker, task: EpisodeTask, spec: EpisodeSpec, out: Path, result: EpisodeResult, restarts: int
    ) -> None:

        settings = worker.settings
        config: TaskConfig = task.config
        sites = SiteConfig.load(settings.sites_file)
        resolved = config.resolved(sites, tuple(PLACEHOLDERS))  # every URL it needs: checked by resolve()
        result.site = config.site
        browser = worker.browser
        assert browser is not None
        hosts = {urlsplit(u).hostname for u in sites.urls.values() if urlsplit(u).hostname}
        browser.config.allowed_hosts = tuple(sorted(h for h in hosts if h)) or None
        login = await self._login_state(worker, config, sites) if config.require_login else None
        browser.config.storage_state = login
        har = out / "network.har" if self.variant == "verified" else None
        browser.config.har_path = str(har) if har else None
        agent = worker.agent(resolved.intent, resolved.start_url)
        run = await run_agent(
            browser,
            agent,
            resolved.intent,
            resolved.start_url,
            out,
            max_steps=settings.max_steps,
            task_id=config.task_id,
            max_failed_decisions=settings.max_failed_decisions,
            header={"episode": spec.id, "seed": spec.seed, "restarts": restarts},
            report=False,  # the worker writes the step viewer once, with the score
        )
        result.ended(run)
        # Scored from the run in memory, in this browser with the episode's login.
        harness = Harness(
            {config.task_id: config},
            self.variant,
            sites=sites,
            auth_dir=settings.storage_dir,
            browser=browser._browser,
            storage_state=login,
        )
        outcome = RunOutcome(
            config.task_id, run.answer, run.final_url, source=str(run.trajectory), har=str(har) if har else None
        )
        try:
            score = await harness.score(outcome)
        finally:
            await harness.close()
        result.reward, result.success = float(score.score or 0.0), bool(score.success)
        result.evaluation = {
            "scored": score.scored,
            "evaluators": score.evaluators,
            "reason": score.reason,
            "details": score.details[:20],
        }

    async def _login_state(self, worker: Worker, task: TaskConfig, sites: SiteConfig) -> dict[str, Any]:
        """The storage state for a task that needs its sites logged in: ``STORAGE_DIR/<site>.json``
        when there is one, else WebArena's login recipe with the sites file's account, run once
        per worker and site."""
        from pagelens.studies.benchmarks import EpisodeSetupError
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
                        raise EpisodeSetupError(
                            f"task {task.task_id} needs a login on {site}: give its account in "
                            f'the sites file ("accounts") or STORAGE_DIR/{site}.json'
                        )
                    assert worker.browser is not None and worker.browser._browser is not None
                    try:
                        worker.logins[site] = await log_in(
                            worker.browser._browser, site, url, account, worker.browser.config.navigation_timeout_ms
                        )
                    except LoginError as e:
                        raise EpisodeSetupError(str(e)) from e
            states.append(worker.logins[site])
        return merge_states(states)
