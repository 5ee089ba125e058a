"""The benchmarks a study can run, behind one protocol: its tasks, the task an episode runs
(resolved once, by the dispatcher), the site a task uses and whether it changes it, and how
one episode runs and is scored in a worker's browser. The registry :data:`BENCHMARKS` is
where ``study run --benchmark`` and the settings read them; :func:`register` adds another
(a module of yours; worker processes import it by name, so it must be importable there)."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pagelens.errors import ArgumentError, PagelensError

if TYPE_CHECKING:
    from pagelens.studies.episodes import Worker
    from pagelens.studies.settings import EpisodeSpec, StudySettings
    from pagelens.studies.store import EpisodeResult


class EpisodeSetupError(PagelensError, RuntimeError):
    """The episode cannot begin: unknown task, a site with no URL, a login that fails."""


@dataclass(frozen=True)
class EpisodeTask:
    """A task as one episode runs it, resolved once by the dispatcher and sent to the worker
    with the episode (picklable: it crosses process and Ray boundaries)."""

    name: str
    site: str | None = None  # the site it runs on (None: a self-contained page)
    changes_state: bool = False  # its check reads the site afterwards: reset first, run alone
    config: Any = None  # what the benchmark needs to run and score it (WebArena: the TaskConfig)


class Benchmark(Protocol):
    name: str
    summary: str

    def task_names(self, selection: TaskSelection) -> tuple[str, ...]:
        """Every task of the benchmark, or those ``selection`` keeps (sites, a task file)."""
        ...

    def resolve(self, settings: StudySettings, task: str) -> EpisodeTask:
        """The task an episode of ``task`` runs; EpisodeSetupError when there is none."""
        ...

    def reset(self, settings: StudySettings, task: EpisodeTask) -> None:
        """Bring ``task``'s site back to its initial state (called before a task that changes
        it, with nothing else running there); a failure is an infrastructure failure."""
        ...

    async def run_episode(
        self, worker: Worker, task: EpisodeTask, spec: EpisodeSpec, out: Path, result: EpisodeResult, restarts: int
    ) -> None:
        """Run the agent on ``task`` in the worker's browser, write the trajectory under
        ``out`` and fill ``result`` (steps, reason, reward, success, evaluation)."""
        ...


@dataclass(frozen=True)
class TaskSelection:
    """What picks a benchmark's tasks when ``--tasks`` does not name them."""

    task_file: str | None = None
    sites: frozenset[str] | None = None
    subset: str | None = None  # a published subset of the benchmark's tasks (WebArena-Verified's "hard")


BENCHMARKS: dict[str, Benchmark] = {}
# Where each registered benchmark is defined, for worker processes to import it.
_MODULES: dict[str, str] = {}


def register(benchmark: Benchmark) -> Benchmark:
    """Adds ``benchmark`` (call it when your module is imported: worker processes import that
    module to find it)."""
    BENCHMARKS[benchmark.name] = benchmark
    _MODULES[benchmark.name] = type(benchmark).__module__
    return benchmark


def module_of(name: str) -> str | None:
    """The module that registers benchmark ``name`` (sent to worker processes and Ray actors,
    which import it: a plugin's module must be importable there too)."""
    return _MODULES.get(name)


def get_benchmark(name: str, module: str | None = None) -> Benchmark:
    """The benchmark registered as ``name`` (importing ``module`` first when given)."""
    if name not in BENCHMARKS and module:
        importlib.import_module(module)
    try:
        return BENCHMARKS[name]
    except KeyError:
        raise ArgumentError(f"unknown benchmark {name!r}; known: {', '.join(BENCHMARKS)}") from None


# The built-in ones.
from pagelens.studies.benchmarks import miniwob as _miniwob  # noqa: E402
from pagelens.studies.benchmarks import webarena as _webarena  # noqa: E402

register(_miniwob.MiniWoB())
register(_webarena.WebArena("webarena", "WebArena (812 tasks on self-hosted sites)", "webarena"))
register(_webarena.WebArena("webarena-verified", "WebArena-Verified (its task file, its own evaluators)", "verified"))

__all__ = [
    "BENCHMARKS",
    "Benchmark",
    "EpisodeSetupError",
    "EpisodeTask",
    "TaskSelection",
    "get_benchmark",
    "module_of",
    "register",
]
