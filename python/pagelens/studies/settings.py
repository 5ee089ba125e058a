"""What a study is: the settings that decide its results (kept in ``DIR/study.json``; a rerun
with other ones is refused) and how it is run (workers, engine, budget: free to change
between reruns), and the episodes it is made of."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
import subprocess
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from pagelens._io import read_json, write_atomically
from pagelens.agents.factory import AGENTS, AgentSettings
from pagelens.agents.runner import MAX_STEPS
from pagelens.engines import ENGINES
from pagelens.errors import ArgumentError, PagelensError
from pagelens.llm import LLM_RETRIES, LLM_TIMEOUT
from pagelens.studies import benchmarks
from pagelens.studies.protocol import make_options
from pagelens.studies.store import episode_id

# Fields of study.json files written before benchmarks had options of their own.
_LEGACY_WEBARENA = ("sites_file", "reset_cmd", "storage_dir", "task_file")


class StudyMismatch(PagelensError, ValueError):
    """``DIR/study.json`` holds other settings than this run's."""


@dataclass(frozen=True)
class StudySettings:
    """Everything that decides an episode's outcome."""

    benchmark: str
    agent: str
    model: str
    tasks: tuple[str, ...]
    seeds: tuple[int, ...] = (0,)
    max_steps: int = MAX_STEPS
    episode_seconds: float = 600.0  # wall-clock limit per episode
    max_failed_decisions: int = 3  # steps in a row without a valid action that end an episode
    base_url: str | None = None
    temperature: float | None = 0.0
    new_marks: bool = True  # the observation marks elements new since the last step (`*[id]`)
    # The benchmark's own settings (its options dataclass's fields: WebArena's sites file...).
    benchmark_options: dict[str, Any] = field(default_factory=dict)
    # The agent's own settings (see pagelens.agents.factory.AgentSettings: SteP's policies,
    # ScribeAgent's budget and tokenizer, its planner).
    agent_options: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.benchmark not in benchmarks.BENCHMARKS:
            raise ArgumentError(f"benchmark must be one of {', '.join(benchmarks.BENCHMARKS)}, not {self.benchmark!r}")
        if self.agent not in AGENTS:
            raise ArgumentError(f"agent must be one of {', '.join(AGENTS)}, not {self.agent!r}")
        if not self.tasks:
            raise ArgumentError("a study needs at least one task")
        if not self.seeds:
            raise ArgumentError("a study needs at least one seed")
        self.options()  # a benchmark option it does not have is refused here, naming it
        AgentSettings.from_json(self.agent_options)
        for flag, value in (
            ("--max-steps", self.max_steps),
            ("--episode-seconds", self.episode_seconds),
            ("--max-failed-decisions", self.max_failed_decisions),
        ):
            if not value > 0 or not math.isfinite(value):
                raise ArgumentError(f"{flag} must be positive, not {value:g}")

    def options(self) -> Any:
        """The benchmark's options, as its own dataclass."""
        benchmark = benchmarks.get_benchmark(self.benchmark)
        return make_options(benchmark.options_type, self.benchmark_options, self.benchmark)

    def agent_settings(self) -> AgentSettings:
        return AgentSettings.from_json(self.agent_options)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["tasks"], data["seeds"] = list(self.tasks), list(self.seeds)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> StudySettings:
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        values["tasks"], values["seeds"] = tuple(values["tasks"]), tuple(values["seeds"])
        # A study.json from before benchmarks had options of their own kept WebArena's at the top.
        legacy = {k: data[k] for k in _LEGACY_WEBARENA if data.get(k) is not None}
        if legacy:
            values["benchmark_options"] = {**legacy, **(values.get("benchmark_options") or {})}
        return cls(**values)

    def episodes(self) -> list[EpisodeSpec]:
        return [EpisodeSpec(self.benchmark, t, s, self.agent) for t in self.tasks for s in self.seeds]


@dataclass(frozen=True)
class EpisodeSpec:
    benchmark: str
    task: str
    seed: int
    agent: str

    @property
    def id(self) -> str:
        return episode_id(self.benchmark, self.task, self.seed, self.agent)


@dataclass
class RunOptions:
    """How a study is run; may differ between reruns of the same study."""

    workers: int = 1
    engine: str = "local"  # "local" (processes) or "ray"
    address: str | None = None  # Ray: an existing cluster
    budget_usd: float | None = None  # stop starting episodes once the spend reaches it
    prices: tuple[float, float] | None = None  # USD per 1M prompt / completion tokens
    max_infra_failures: int = 3  # consecutive episodes lost to the endpoint or the browser
    backoff: float = 1.0  # the model client's first retry delay (seconds; doubled each retry)
    llm_timeout: float = LLM_TIMEOUT  # seconds one model call may take before it is retried
    llm_retries: int = LLM_RETRIES  # retries of a failed or timed-out call
    screenshots: bool = True  # a screenshot per step, for the episodes' step viewers

    def __post_init__(self) -> None:
        if self.workers < 1:
            raise ArgumentError(f"--workers must be at least 1, not {self.workers}")
        if self.engine not in ENGINES:
            raise ArgumentError(f"engine must be one of {', '.join(ENGINES)}, not {self.engine!r}")
        if self.llm_timeout <= 0 or self.llm_retries < 0:
            raise ArgumentError("llm_timeout must be positive and llm_retries at least 0")
        # Each named as `study run` spells it: a setting that cannot be is refused before the
        # study's folder is made.
        if self.budget_usd is not None and not (self.budget_usd >= 0 and math.isfinite(self.budget_usd)):
            raise ArgumentError(f"--budget-usd is a spend in USD, 0 or more, not {self.budget_usd:g}")
        if self.max_infra_failures < 1:
            raise ArgumentError(f"--max-infra-failures must be at least 1, not {self.max_infra_failures}")
        if self.prices is not None and not all(p >= 0 and math.isfinite(p) for p in self.prices):
            raise ArgumentError(f"--prices are USD per 1M tokens, 0 or more, not {self.prices}")
        if self.backoff < 0:
            raise ArgumentError(f"backoff must be 0 or more, not {self.backoff:g}")


def parse_seeds(text: str) -> tuple[int, ...]:
    """``"0-4"`` -> 0..4, ``"1,3,5"`` -> those."""
    seeds: list[int] = []
    try:
        for part in text.split(","):
            part = part.strip()
            if "-" in part[1:]:
                lo, hi = part.split("-", 1)
                seeds.extend(range(int(lo), int(hi) + 1))
            elif part:
                seeds.append(int(part))
    except ValueError:
        raise ArgumentError(f"seeds are numbers and ranges such as 0-4 or 1,3, not {text!r}") from None
    return tuple(dict.fromkeys(seeds))


def check_study(directory: str | os.PathLike[str], settings: StudySettings) -> list[EpisodeSpec]:
    """Writes ``study.json`` on the first run; on a rerun, refuses other settings, naming them.
    Either way the run is added to the study's journal (see :func:`journal_entry`), and the
    study's plan — the union of the (task, seed) pairs every command asked for, never their
    cross product — grows by this command's; returns that plan, every count's base."""
    path = Path(directory) / "study.json"
    journal: list[Any] = []
    before_plan: list[tuple[str, int]] = []
    if not path.exists():
        planned = settings
    else:
        data = read_json(path, "study settings file")
        try:
            if not isinstance(data, dict):
                raise TypeError(f"a JSON object, not {type(data).__name__}")
            before = StudySettings.from_json(data)
        except (ValueError, KeyError, TypeError) as e:
            raise StudyMismatch(f"{path} cannot be read ({e}): remove it to start the study over") from None
        earlier = data.get("journal")
        journal = earlier if isinstance(earlier, list) else []
        before_plan = plan_of(data)
        old, new = _meaning(before), _meaning(settings)
        diff = [
            f"{k}: {before.to_json()[k]!r} in study.json, {settings.to_json()[k]!r} now"
            for k in old
            if old[k] != new[k]
        ]
        if diff:
            raise StudyMismatch(
                f"{path} is a study with other settings ({'; '.join(diff)}); use another "
                "directory, or the same settings to resume it"
            )
        # The same study: more tasks or seeds extend it (study.json plans them all).
        tasks = tuple(dict.fromkeys((*before.tasks, *settings.tasks)))
        seeds = tuple(sorted({*before.seeds, *settings.seeds}))
        planned = dataclasses.replace(before, tasks=tasks, seeds=seeds)
    pairs = list(dict.fromkeys([*before_plan, *((e.task, e.seed) for e in settings.episodes())]))
    record = {**planned.to_json(), "plan": [list(p) for p in pairs], "journal": [*journal, journal_entry(planned)]}
    write_atomically(path, json.dumps(record, indent=1))
    return [EpisodeSpec(planned.benchmark, task, seed, planned.agent) for task, seed in pairs]


def plan_of(study: dict[str, Any]) -> list[tuple[str, int]]:
    """The (task, seed) pairs a ``study.json`` plans: its ``plan``; a study written before
    pagelens kept one planned its tasks' and seeds' cross product (one command made it)."""
    kept = study.get("plan")
    if isinstance(kept, list):
        return [
            (str(p[0]), int(p[1]))
            for p in kept
            if isinstance(p, list) and len(p) == 2 and isinstance(p[1], int) and not isinstance(p[1], bool)
        ]
    tasks, seeds = study.get("tasks") or [], study.get("seeds") or []
    if not isinstance(tasks, list) or not isinstance(seeds, list):
        return []
    return [(str(t), int(s)) for t in tasks for s in seeds if isinstance(s, int) and not isinstance(s, bool)]


def settings_hash(settings: StudySettings) -> str:
    """A hash of what decides the study's results (its meaning, tasks and seeds as sets)."""
    meaning = {**_meaning(settings), "tasks": sorted(settings.tasks), "seeds": sorted(settings.seeds)}
    return hashlib.sha256(json.dumps(meaning, sort_keys=True).encode()).hexdigest()


def journal_entry(settings: StudySettings) -> dict[str, Any]:
    """What one run of a study ran on, for reproducing it: when, the versions of pagelens, its
    core, Playwright, Chromium, Python and the OS, the git commit of pagelens' source and of
    the working directory's project (when they are git checkouts, with a flag when they
    have uncommitted changes; pagelens' from its build when it is a wheel), and the settings'
    hash."""
    from pagelens.versions import versions

    return {
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "versions": versions(),
        "git": {"pagelens": pagelens_commit(), "project": _git_commit(Path.cwd())},
        "settings_hash": settings_hash(settings),
    }


def pagelens_commit(source: Path | None = None) -> str | None:
    """The commit of the pagelens that runs (``source``: this module's file): its checkout's
    when it runs from that checkout's own source tree (this file tracked there; ``+dirty``
    with uncommitted changes), else the one its extension was built from (``BUILD_COMMIT``: a
    wheel, even one installed in a venv inside some git checkout, this one's or another
    project's), marked ``built`` (the Python files beside it may have been changed since)."""
    from pagelens._core import BUILD_COMMIT

    source = (source or Path(__file__)).resolve()
    if _tracked(source):
        checkout = _git_commit(source.parent)
        if checkout is not None:
            return checkout
    return f"{BUILD_COMMIT} (built)" if BUILD_COMMIT else None


def _tracked(path: Path) -> bool:
    """Whether ``path`` is a file of the git checkout it is in (tracked by it, not an ignored
    or untracked file under it: a venv's site-packages inside a project)."""
    try:
        found = subprocess.run(
            ["git", "-C", str(path.parent), "ls-files", "--error-unmatch", "--", path.name],
            capture_output=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return False  # no git here
    return found.returncode == 0


def _git_commit(folder: Path) -> str | None:
    """The commit checked out where ``folder`` is (``+dirty`` with uncommitted changes), or
    None outside a git work tree (an installed wheel)."""
    try:
        head = subprocess.run(
            ["git", "-C", str(folder), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10
        )
        if head.returncode != 0:
            return None
        dirty = subprocess.run(
            ["git", "-C", str(folder), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError):
        return None  # no git here
    return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")


def _meaning(settings: StudySettings) -> dict[str, Any]:
    """What decides results, spelling aside: the endpoint's URL without a trailing slash; the
    tasks and seeds are not compared (a rerun with more of them extends the study)."""
    data = settings.to_json()
    data.pop("tasks"), data.pop("seeds")
    # Options as their dataclasses read them: a default left out is the default written out.
    data["benchmark_options"] = dataclasses.asdict(settings.options())
    data["agent_options"] = settings.agent_settings().to_json()
    if data.get("base_url"):
        data["base_url"] = str(data["base_url"]).rstrip("/")
    return data
