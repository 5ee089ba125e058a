"""WebArena and WebArena-Verified as study benchmarks: the task's start URL from the sites
file, the sites' logins (``STORAGE_DIR/<site>.json``, or WebArena's login recipe with the
sites file's account, once per worker), and the score at the end of the episode while the
site is as the agent left it (program_html reads the live site), in the worker's own browser
with the episode's login. Its settings (:class:`WebArenaOptions`) are its own: the study's
flags for them are made from the dataclass."""

from __future__ import annotations

import functools
import json
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from pagelens.errors import ArgumentError
from pagelens.evaluation import Harness, SiteConfig, TaskConfig, load_tasks
from pagelens.evaluation.harness import RunOutcome
from pagelens.evaluation.tasks import PLACEHOLDERS, packaged_subsets
from pagelens.studies.protocol import EpisodeContext, EpisodeSetupError, EpisodeTask, Goal, Score, TaskSelection

if TYPE_CHECKING:
    from pagelens.agents.runner import RunResult
    from pagelens.browser.env import AsyncBrowserEnv


@dataclass(frozen=True)
class WebArenaOptions:
    """WebArena's settings of a study (each a `study run` flag)."""

    sites_file: str | None = field(default=None, metadata={"help": "site URLs (and accounts), as for `pagelens eval`"})
    reset_cmd: str | None = field(
        default=None,
        metadata={
            "help": "shell command run before a task that changes its site ({site} is replaced by the site's name)"
        },
    )
    storage_dir: str | None = field(default=None, metadata={"help": "<site>.json Playwright storage states (logins)"})
    task_file: str | None = field(default=None, metadata={"help": "tasks from this file instead of the packaged ones"})


@dataclass
class _Episode:
    sites: SiteConfig
    login: dict[str, Any] | None
    har: Path | None


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
    options_type = WebArenaOptions

    def __init__(self, name: str, summary: str, variant: str):
        self.name, self.summary, self.variant = name, summary, variant

    def _source(self, options: WebArenaOptions) -> str:
        return options.task_file or self.name

    def task_names(self, selection: TaskSelection, options: WebArenaOptions) -> tuple[str, ...]:
        tasks = _tasks_of(self._source(options)).values()
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

    def resolve(self, task: str, options: WebArenaOptions) -> EpisodeTask:
        source = self._source(options)
        try:
            config = _tasks_of(source)[int(task)]
        except (KeyError, ValueError):
            raise EpisodeSetupError(f"no task {task!r} in {source}") from None
        # A site with no URL is known before anything runs: refused here, not 258 setup errors.
        sites = SiteConfig.load(options.sites_file)
        missing = sites.unresolved(config.resolved(sites, tuple(PLACEHOLDERS)).start_url)
        if missing:
            where = f"the sites file {options.sites_file}" if options.sites_file else "--sites-file (none given)"
            raise EpisodeSetupError(f"task {task}: no URL for {', '.join(missing)} in {where}")
        # Reset first and run alone: a task whose check reads the site afterwards, where the
        # study was given a way to reset the site.
        return EpisodeTask(task, config.site, changes_state(config) and bool(options.reset_cmd), config)

    def reset(self, task: EpisodeTask, options: WebArenaOptions) -> None:
        """``--reset-cmd``, with ``{site}`` replaced by the site's name."""
        if not options.reset_cmd or not task.site:
            return
        command = options.reset_cmd.replace("{site}", task.site)
        done = subprocess.run(command, shell=True, capture_output=True, text=True, timeout=1800)
        if done.returncode != 0:
            raise EpisodeSetupError(
                f"reset command for {task.site} failed ({done.returncode}): {done.stderr.strip()[-500:]}"
            )

    async def setup(self, browser: AsyncBrowserEnv, task: EpisodeTask, episode: EpisodeContext) -> Goal:
        options: WebArenaOptions = episode.options
        config: TaskConfig = task.config
        sites = SiteConfig.load(options.sites_file)
        resolved = config.resolved(sites, tuple(PLACEHOLDERS))  # every URL it needs: checked by resolve()
        hosts = {urlsplit(u).hostname for u in sites.urls.values() if urlsplit(u).hostname}
        browser.config.allowed_hosts = tuple(sorted(h for h in hosts if h)) or None
        login = await self._login_state(browser, config, sites, episode) if config.require_login else None
        browser.config.storage_state = login
        har = episode.out / "network.har" if self.variant == "verified" else None
        browser.config.har_path = str(har) if har else None
        return Goal(
            resolved.intent,
            resolved.start_url,
            task_id=config.task_id,
            site=config.site,
            state=_Episode(sites, login, har),
        )

    async def score(
        self, browser: AsyncBrowserEnv, task: EpisodeTask, goal: Goal, run: RunResult, episode: EpisodeContext
    ) -> Score:
        """Scored from the run in memory, in this browser with the episode's login."""
        config: TaskConfig = task.config
        state: _Episode = goal.state
        harness = Harness(
            {config.task_id: config},
            self.variant,
            sites=state.sites,
            auth_dir=episode.options.storage_dir,
            browser=browser._browser,
            storage_state=state.login,
        )
        har = str(state.har) if state.har else None
        outcome = RunOutcome(config.task_id, run.answer, run.final_url, source=str(run.trajectory), har=har)
        try:
            score = await harness.score(outcome)
        finally:
            await harness.close()
        evaluation = {
            "scored": score.scored,
            "evaluators": score.evaluators,
            "reason": score.reason,
            "details": score.details[:20],
        }
        return Score(float(score.score or 0.0), bool(score.success), evaluation)

    async def _login_state(
        self, browser: AsyncBrowserEnv, task: TaskConfig, sites: SiteConfig, episode: EpisodeContext
    ) -> dict[str, Any]:
        """The storage state for a task that needs its sites logged in: ``STORAGE_DIR/<site>.json``
        when there is one, else WebArena's login recipe with the sites file's account, run once
        per worker and site (kept in the worker's ``episode.kept``)."""
        from pagelens.studies.login import LoginError, log_in, merge_states

        storage_dir = episode.options.storage_dir
        logins: dict[str, dict[str, Any]] = episode.kept.setdefault("logins", {})
        states = []
        for site in task.sites:
            if site not in logins:
                given = Path(storage_dir) / f"{site}.json" if storage_dir else None
                if given is not None and given.is_file():
                    logins[site] = json.loads(given.read_text())
                else:
                    account, url = sites.accounts.get(site), site_url(sites, site)
                    if account is None or url is None:
                        raise EpisodeSetupError(
                            f"task {task.task_id} needs a login on {site}: give its account in "
                            f'the sites file ("accounts") or STORAGE_DIR/{site}.json'
                        )
                    assert browser._browser is not None
                    try:
                        logins[site] = await log_in(
                            browser._browser, site, url, account, browser.config.navigation_timeout_ms
                        )
                    except LoginError as e:
                        raise EpisodeSetupError(str(e)) from e
            states.append(logins[site])
        return merge_states(states)
