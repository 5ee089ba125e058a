"""What a benchmark is to a study: it names its tasks, sets an episode up and scores it; the
worker runs the agent between the two (one ``run_agent`` call, the worker's). A benchmark
never sees the worker or the study's settings: it is given its own options (a dataclass whose
fields ``study run`` offers as flags) and, per episode, the browser and an
:class:`EpisodeContext`.

The order, per episode: the dispatcher resolves the task once (:meth:`Benchmark.resolve`) and
runs :meth:`Benchmark.reset` before a task that changes its site; in the worker,
:meth:`Benchmark.setup` readies the browser and says the :class:`Goal` (the objective, where
the agent starts, how the benchmark tells the task is over); the worker runs the agent;
:meth:`Benchmark.score` reads the outcome while the browser is as the agent left it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pagelens.errors import ArgumentError, PagelensError

if TYPE_CHECKING:
    from pagelens.agents.runner import RunResult
    from pagelens.browser.env import AsyncBrowserEnv
    from pagelens.browser.records import PageObservation


class EpisodeSetupError(PagelensError, RuntimeError):
    """The episode cannot begin: unknown task, a site with no URL, a login that fails."""


@dataclass(frozen=True)
class TaskSelection:
    """What picks a benchmark's tasks when ``--tasks`` does not name them."""

    sites: frozenset[str] | None = None
    subset: str | None = None  # a published subset of the benchmark's tasks (WebArena-Verified's "hard")


@dataclass(frozen=True)
class EpisodeTask:
    """A task as one episode runs it, resolved once by the dispatcher and sent to the worker
    with the episode (picklable: it crosses process and Ray boundaries)."""

    name: str
    site: str | None = None  # the site it runs on (None: a self-contained page)
    changes_state: bool = False  # its check reads the site afterwards: reset first, run alone
    config: Any = None  # what the benchmark needs to run and score it (WebArena: the TaskConfig)


@dataclass
class EpisodeContext:
    """One episode as its benchmark sees it: its seed, its folder, the benchmark's options, its
    time limit, and what the worker keeps for the benchmark across its episodes (logins, made
    once per worker)."""

    seed: int
    out: Path
    options: Any
    seconds: float  # the episode's time limit
    kept: dict[str, Any] = field(default_factory=dict)


@dataclass
class Goal:
    """What :meth:`Benchmark.setup` hands the worker: the agent's objective and start, and the
    benchmark's own state for :meth:`Benchmark.score`."""

    intent: str
    start_url: str
    # Where starting is more than opening start_url (MiniWoB++: the started task page).
    start: Callable[[], Awaitable[PageObservation]] | None = None
    # Asked after every step: the benchmark considers the task over (MiniWoB++'s done).
    ended: Callable[[], Awaitable[bool]] | None = None
    task_id: int | None = None  # recorded in the trajectory, for `pagelens eval`
    site: str | None = None
    state: Any = None  # the benchmark's, for its score


@dataclass
class Score:
    reward: float
    success: bool
    evaluation: dict[str, Any] = field(default_factory=dict)  # how it was scored, for the report


class Benchmark(Protocol):
    name: str
    summary: str
    # The benchmark's own settings (a dataclass; its fields are `study run`'s flags, its
    # defaults theirs). They are part of what a study is: a rerun with others is refused.
    options_type: type[Any]

    def task_names(self, selection: TaskSelection, options: Any) -> tuple[str, ...]:
        """Every task of the benchmark, or those ``selection`` keeps."""
        ...

    def resolve(self, task: str, options: Any) -> EpisodeTask:
        """The task an episode of ``task`` runs; EpisodeSetupError when there is none."""
        ...

    def reset(self, task: EpisodeTask, options: Any) -> None:
        """Bring ``task``'s site back to its initial state (before a task that changes it,
        with nothing else running there); a failure is an infrastructure failure."""
        ...

    async def setup(self, browser: AsyncBrowserEnv, task: EpisodeTask, episode: EpisodeContext) -> Goal:
        """Ready ``browser`` for ``task`` (logins, allowed hosts) and say the goal."""
        ...

    async def score(
        self, browser: AsyncBrowserEnv, task: EpisodeTask, goal: Goal, run: RunResult, episode: EpisodeContext
    ) -> Score:
        """The episode's score, read while the browser is as the agent left it."""
        ...


def option_fields(options_type: type[Any]) -> tuple[dataclasses.Field[Any], ...]:
    """A benchmark's options as fields (``help`` in each field's metadata)."""
    return dataclasses.fields(options_type) if dataclasses.is_dataclass(options_type) else ()


def make_options(options_type: type[Any], values: dict[str, Any], benchmark: str) -> Any:
    """``options_type`` from ``values`` (a study.json's or the flags'); a name it does not have
    is refused, naming it and the ones it has."""
    names = {f.name for f in option_fields(options_type)}
    unknown = sorted(set(values) - names)
    if unknown:
        known = ", ".join(sorted(names)) or "none"
        raise ArgumentError(f"{benchmark} has no option {', '.join(unknown)} (its options: {known})")
    return options_type(**values)


@dataclass(frozen=True)
class NoOptions:
    """A benchmark with no settings of its own."""


__all__ = [
    "Benchmark",
    "EpisodeContext",
    "EpisodeSetupError",
    "EpisodeTask",
    "Goal",
    "NoOptions",
    "Score",
    "TaskSelection",
    "make_options",
    "option_fields",
]
