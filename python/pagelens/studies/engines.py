"""Running a study's episodes: worker processes on this machine (``local``) or Ray actors
(``ray``), one browser each, fed one episode at a time by a single dispatcher that writes
every result. Both engines run the same :class:`~pagelens.studies.episodes.Worker`, so a
deterministic model gives the same results file on either.

The dispatcher skips finished episodes (``results.jsonl``), starts no episode once the spend
reaches the budget, resets a site before a task that changes it (WebArena's ``--reset-cmd``,
with no other episode on that site meanwhile), and stops after several infrastructure failures in
a row. A worker process that dies is replaced and its episode begun once more."""

from __future__ import annotations

import asyncio
import multiprocessing
import multiprocessing.connection
import time
import warnings
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from pagelens._io import JsonlLog
from pagelens.errors import ArgumentError, PagelensError
from pagelens.ray_cluster import RayCluster
from pagelens.studies import benchmarks
from pagelens.studies.benchmarks import Benchmark, EpisodeSetupError, EpisodeTask, get_benchmark
from pagelens.studies.episodes import INFRASTRUCTURE, Worker
from pagelens.studies.report import write_report
from pagelens.studies.settings import EpisodeSpec, RunOptions, StudySettings, check_study
from pagelens.studies.store import EpisodeResult, ResultsLog, read_results, summarize, valid_result


class StudyStopped(PagelensError, RuntimeError):
    """The study ended with planned episodes lost: it stopped (infrastructure failures in a
    row, the budget) or ran to its end with some episodes lost to the infrastructure.
    Finished episodes are kept and a rerun runs the others; ``summary`` is the run's summary
    (its ``lost`` episodes named)."""

    def __init__(self, message: str, summary: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.summary = summary or {}


class Pool(Protocol):
    def submit(self, slot: int, spec: EpisodeSpec, task: EpisodeTask) -> None: ...
    def next_done(self) -> tuple[int, EpisodeResult | None]: ...  # None: the worker died
    def restart(self, slot: int) -> None: ...
    def close(self) -> None: ...


# -- local: worker processes ---------------------------------------------------------------------


def _worker(settings: dict[str, Any], directory: str, options: RunOptions, module: str | None) -> Worker:
    """A worker in its own process, with the study's benchmark registered (``module``
    registers it when imported)."""
    get_benchmark(settings["benchmark"], module)
    return Worker(StudySettings.from_json(settings), Path(directory), options)


def _process_main(conn: Any, *args: Any) -> None:
    loop = asyncio.new_event_loop()
    worker = _worker(*args)
    try:
        while True:
            message = conn.recv()
            if message is None:
                break
            spec, task = message
            conn.send(loop.run_until_complete(worker.run(spec, task)))
    except (EOFError, KeyboardInterrupt):
        pass
    finally:
        loop.run_until_complete(worker.close())


class ProcessPool:
    def __init__(self, workers: int, settings: StudySettings, directory: Path, options: RunOptions):
        self._ctx = multiprocessing.get_context("spawn")
        self._args = (
            settings.to_json(),
            str(directory),
            options,
            benchmarks.module_of(settings.benchmark),
        )
        self._procs: list[Any] = [None] * workers
        self._conns: list[Any] = [None] * workers
        self._busy: set[int] = set()
        for slot in range(workers):
            self._start(slot)

    def _start(self, slot: int) -> None:
        parent, child = self._ctx.Pipe()
        proc = self._ctx.Process(
            target=_process_main, args=(child, *self._args), daemon=True, name=f"pagelens-study-{slot}"
        )
        proc.start()
        child.close()
        self._procs[slot], self._conns[slot] = proc, parent

    def submit(self, slot: int, spec: EpisodeSpec, task: EpisodeTask) -> None:
        self._conns[slot].send((spec, task))
        self._busy.add(slot)

    def next_done(self) -> tuple[int, EpisodeResult | None]:
        busy: dict[Any, int] = {self._conns[s]: s for s in self._busy}
        conn: Any = multiprocessing.connection.wait(list(busy))[0]
        slot = busy[conn]
        self._busy.discard(slot)
        try:
            result: EpisodeResult = conn.recv()
            return slot, result
        except (EOFError, OSError):
            return slot, None

    def restart(self, slot: int) -> None:
        proc = self._procs[slot]
        if proc is not None and proc.is_alive():
            proc.kill()
        if proc is not None:
            proc.join(10)
        self._start(slot)

    def close(self) -> None:
        for conn in self._conns:
            try:
                conn.send(None)
            except (OSError, BrokenPipeError):
                pass
        for proc in self._procs:
            proc.join(60)
            if proc.is_alive():
                proc.kill()


# -- ray: actors ---------------------------------------------------------------------------------------


class _RayWorker:
    """A Ray actor holding one browser (a :class:`Worker`) and its event loop."""

    def __init__(self, *args: Any):
        self.loop = asyncio.new_event_loop()
        self.worker = _worker(*args)

    def run(self, spec: EpisodeSpec, task: EpisodeTask) -> EpisodeResult:
        return self.loop.run_until_complete(self.worker.run(spec, task))

    def close(self) -> None:
        self.loop.run_until_complete(self.worker.close())


class RayPool:
    def __init__(self, workers: int, settings: StudySettings, directory: Path, options: RunOptions):
        self._cluster = RayCluster("the Ray engine of studies", options.address, workers)
        self._ray: Any = self._cluster.ray
        free, _ = self._cluster.cpus()
        # A browser actor mostly waits on the model and the page: a share of what is free each.
        cpus = max(0.01, min(1.0, free / workers))
        self._cls = self._ray.remote(num_cpus=cpus, max_restarts=0)(_RayWorker)
        self._args = (
            settings.to_json(),
            str(directory.resolve()),
            options,
            benchmarks.module_of(settings.benchmark),
        )
        self._actors: list[Any] = [self._cls.remote(*self._args) for _ in range(workers)]
        self._running: dict[Any, int] = {}

    def submit(self, slot: int, spec: EpisodeSpec, task: EpisodeTask) -> None:
        self._running[self._actors[slot].run.remote(spec, task)] = slot

    def next_done(self) -> tuple[int, EpisodeResult | None]:
        ready, _ = self._ray.wait(list(self._running), num_returns=1)
        slot = self._running.pop(ready[0])
        try:
            return slot, self._ray.get(ready[0])
        except self._ray.exceptions.RayActorError:
            return slot, None

    def restart(self, slot: int) -> None:
        self._actors[slot] = self._cls.remote(*self._args)

    def close(self) -> None:
        for actor in self._actors:
            try:
                self._ray.get(actor.close.remote(), timeout=60)
            except Exception:
                pass
        self._cluster.close()


# Each engine of the registry (pagelens.engines.ENGINES) and how a study runs on it.
POOLS: dict[str, Callable[[int, StudySettings, Path, RunOptions], Pool]] = {"local": ProcessPool, "ray": RayPool}


# -- the dispatcher ---------------------------------------------------------------------------------------


def run_study(
    directory: str | Path,
    settings: StudySettings,
    options: RunOptions | None = None,
    on_result: Callable[[EpisodeResult, dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Runs every unfinished episode of the study in ``directory``; returns the summary (also
    in ``summary.json``). Raises :class:`StudyStopped` when it had to stop early."""
    options = options or RunOptions()
    benchmark = get_benchmark(settings.benchmark)
    # Every task resolved before anything is written: a task that does not exist is the
    # command's mistake, refused with its name, never a finished episode.
    resolved: dict[str, EpisodeTask] = {}
    unknown: list[str] = []
    benchmark_options = settings.options()
    for name in dict.fromkeys(settings.tasks):
        try:
            resolved[name] = benchmark.resolve(name, benchmark_options)
        except EpisodeSetupError as e:
            unknown.append(str(e))
    if unknown:
        shown = "; ".join(unknown[:5]) + (f"; and {len(unknown) - 5} more" if len(unknown) > 5 else "")
        raise ArgumentError(f"{len(unknown)} of the study's tasks cannot be run: {shown}")
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    # The study's plan: the union of the pairs every command asked for (this one's added). A
    # run runs every unfinished episode of it, and every count is of it (store.tally).
    plan = check_study(directory, settings)
    for name in dict.fromkeys(s.task for s in plan):
        if name not in resolved:  # a task an earlier command asked for
            try:
                resolved[name] = benchmark.resolve(name, benchmark_options)
            except EpisodeSetupError as e:
                raise ArgumentError(
                    f"the study's task {name!r} (planned by an earlier run) cannot be run: {e}"
                ) from None
    sites = _Sites(benchmark, benchmark_options, resolved)
    planned = [(s.id, s.task, s.seed) for s in plan]
    in_plan = {s.id for s in plan}
    finished = {r["id"]: r for r in read_results(directory) if r["id"] in in_plan}
    pending = deque(s for s in plan if s.id not in finished)
    log = ResultsLog(directory)
    spent = sum(r.get("cost", 0.0) for r in read_results(directory))  # the budget is the study's
    state = {
        "total": len(plan),
        "done": len(finished),
        "successes": sum(bool(r["success"]) for r in finished.values()),
        "running": 0,
        "spent": spent,
        "started": time.monotonic(),
        "done_here": 0,
    }
    stopped: str | None = None
    pool: Pool | None = None
    if pending:
        workers = min(options.workers, len(pending))
        pool = POOLS[options.engine](workers, settings, directory, options)
    running: dict[int, tuple[EpisodeSpec, EpisodeTask]] = {}  # slot -> episode, its task
    free = list(range(min(options.workers, len(pending)))) if pending else []
    begun_again: set[str] = set()
    infra_streak = 0

    def report() -> None:
        """The report as the study goes (a person can open it while it runs)."""
        try:
            write_report(directory)
        except (PagelensError, OSError) as e:  # a report that cannot be written never stops the study
            warnings.warn(f"the study's report was not written: {e}", stacklevel=2)

    def failed(result: EpisodeResult) -> None:
        nonlocal infra_streak, stopped
        infra_streak += 1
        _append_failure(directory, result)
        summarize(directory, planned, "running", results=list(finished.values()))  # whole, as each ends
        report()
        if infra_streak >= options.max_infra_failures and stopped is None:
            stopped = (
                f"stopped after {infra_streak} infrastructure failures in a row; the last: "
                f"{result.error_kind}: {result.error}"
            )
            pending.clear()

    def finished_now(result: EpisodeResult) -> None:
        nonlocal infra_streak
        infra_streak = 0
        log.append(result)
        finished[result.id] = valid_result(result.to_json()) or {}
        summarize(directory, planned, "running", results=list(finished.values()))  # whole, as each ends
        report()
        state["done"] += 1
        state["done_here"] += 1
        state["successes"] += bool(result.success)
        if on_result is not None:
            on_result(result, state)

    summarize(directory, planned, "running")  # a stop of an earlier run is not this run's
    report()  # there from the start: the CLI prints where
    try:
        while pending or running:
            while free and pending and stopped is None:
                if options.budget_usd is not None and state["spent"] >= options.budget_usd:
                    stopped = f"budget reached: ${state['spent']:.4f} spent of ${options.budget_usd:g}"
                    break
                picked = sites.next_dispatchable(pending)
                if picked is None:
                    break
                spec, task = picked
                try:
                    sites.prepare(task)
                except PagelensError as e:  # the reset command failed: the site's state is unknown
                    failed(_error(spec, settings, "reset", str(e)))
                    continue
                slot = free.pop()
                assert pool is not None
                pool.submit(slot, spec, task)
                running[slot] = (spec, task)
                state["running"] = len(running)
            if not running:
                break
            assert pool is not None
            slot, result = pool.next_done()
            spec, task = running.pop(slot)
            sites.release(task)
            if result is None:  # the worker process or actor died with the episode
                pool.restart(slot)
                if spec.id not in begun_again:
                    begun_again.add(spec.id)
                    pending.appendleft(spec)
                    free.append(slot)
                    continue
                result = _error(spec, settings, "worker", "the worker died twice running this episode")
            free.append(slot)
            state["running"] = len(running)
            state["spent"] += result.cost
            if result.error_kind in INFRASTRUCTURE:
                failed(result)
                if on_result is not None:
                    on_result(result, state)
            else:
                finished_now(result)
    finally:
        log.close()
        if pool is not None:
            pool.close()
    lost = len(planned) - len({r["id"] for r in read_results(directory) if r["id"] in in_plan})
    status = "stopped" if stopped is not None else "incomplete" if lost else "ended"
    summary = summarize(directory, planned, status, stopped)
    report()  # with why it stopped, if it did
    if summary["lost"]:
        named = "; ".join(f"{e['task']} seed {e['seed']} ({e['kind']})" for e in summary["lost"][:10])
        more = f"; and {len(summary['lost']) - 10} more" if len(summary["lost"]) > 10 else ""
        why = f"{stopped}; " if stopped else ""
        raise StudyStopped(
            f"{why}{len(summary['lost'])} of {summary['episodes']} planned episodes lost: {named}{more} "
            "(rerun the same command to run them)",
            summary,
        )
    return summary


def _error(spec: EpisodeSpec, settings: StudySettings, kind: str, message: str) -> EpisodeResult:
    return EpisodeResult(
        spec.id,
        spec.benchmark,
        spec.task,
        spec.seed,
        spec.agent,
        settings.model,
        reason="error",
        error_kind=kind,
        error=message,
    )


class _Sites:
    """Which sites are busy: a site being reset, or running a task that changes it, takes no
    other episode. ``resolved``: every task of the study, resolved once before it started;
    each episode's is sent to its worker."""

    def __init__(self, benchmark: Benchmark, options: Any, resolved: dict[str, EpisodeTask]):
        self.benchmark, self.options, self.resolved = benchmark, options, resolved
        self.busy: dict[str, int] = {}
        self.exclusive: set[str] = set()

    def next_dispatchable(self, pending: deque[EpisodeSpec]) -> tuple[EpisodeSpec, EpisodeTask] | None:
        for k, spec in enumerate(pending):
            task = self.resolved[spec.task]
            if task.site is not None:
                if task.site in self.exclusive:
                    continue
                if task.changes_state and self.busy.get(task.site):
                    continue
            del pending[k]
            return spec, task
        return None

    def prepare(self, task: EpisodeTask) -> None:
        if task.site is None:
            return
        if task.changes_state:
            # The dispatcher waits for the reset, so nothing starts on the site meanwhile; while
            # the episode runs, the site takes no other. Marked only once the reset succeeded.
            self.benchmark.reset(task, self.options)
            self.exclusive.add(task.site)
        self.busy[task.site] = self.busy.get(task.site, 0) + 1

    def release(self, task: EpisodeTask) -> None:
        if task.site is None:
            return
        self.busy[task.site] = max(0, self.busy.get(task.site, 0) - 1)
        if not self.busy[task.site]:
            self.exclusive.discard(task.site)


def _append_failure(directory: Path, result: EpisodeResult) -> None:
    """One line per attempt lost to the infrastructure (appended, never rewritten)."""
    JsonlLog(directory / "failures.jsonl").append(result.to_json())
