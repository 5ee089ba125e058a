"""Running a study's episodes: worker processes on this machine (``local``) or Ray actors
(``ray``), one browser each, fed one episode at a time by a single dispatcher that writes
every result. Both engines run the same :class:`~pagelens.studies.episodes.Worker`, so a
deterministic model gives the same results file on either.

The dispatcher skips finished episodes (``results.jsonl``), starts no episode once the spend
reaches the budget, runs ``--reset-cmd`` before a WebArena task that changes its site (with
no other episode on that site meanwhile), and stops after several infrastructure failures in
a row. A worker process that dies is replaced and its episode begun once more."""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import multiprocessing.connection
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from pagelens._io import write_atomically
from pagelens.errors import PagelensError
from pagelens.studies.episodes import INFRASTRUCTURE, Worker
from pagelens.studies.settings import EpisodeSpec, RunOptions, StudySettings, check_study
from pagelens.studies.store import EpisodeResult, ResultsLog, read_results, summarize


class StudyStopped(PagelensError, RuntimeError):
    """The study stopped before its end (infrastructure failures, budget); finished episodes
    are kept and a rerun continues."""


class Pool(Protocol):
    def submit(self, slot: int, spec: EpisodeSpec) -> None: ...
    def next_done(self) -> tuple[int, dict[str, Any] | None]: ...  # None: the worker died
    def restart(self, slot: int) -> None: ...
    def close(self) -> None: ...


# -- local: worker processes ---------------------------------------------------------------------

def _process_main(conn: Any, settings: dict[str, Any], directory: str, prices: tuple[float, float] | None,
                  backoff: float) -> None:
    loop = asyncio.new_event_loop()
    worker = Worker(StudySettings.from_json(settings), Path(directory), prices, backoff)
    try:
        while True:
            message = conn.recv()
            if message is None:
                break
            result = loop.run_until_complete(worker.run(EpisodeSpec(**message)))
            conn.send(result.to_json())
    except (EOFError, KeyboardInterrupt):
        pass
    finally:
        loop.run_until_complete(worker.close())


class ProcessPool:
    def __init__(self, workers: int, settings: StudySettings, directory: Path, options: RunOptions):
        self._ctx = multiprocessing.get_context("spawn")
        self._args = (settings.to_json(), str(directory), options.prices, options.backoff)
        self._procs: list[Any] = [None] * workers
        self._conns: list[Any] = [None] * workers
        self._busy: set[int] = set()
        for slot in range(workers):
            self._start(slot)

    def _start(self, slot: int) -> None:
        parent, child = self._ctx.Pipe()
        proc = self._ctx.Process(target=_process_main, args=(child, *self._args), daemon=True,
                                 name=f"pagelens-study-{slot}")
        proc.start()
        child.close()
        self._procs[slot], self._conns[slot] = proc, parent

    def submit(self, slot: int, spec: EpisodeSpec) -> None:
        self._conns[slot].send({"benchmark": spec.benchmark, "task": spec.task, "seed": spec.seed,
                                "agent": spec.agent})
        self._busy.add(slot)

    def next_done(self) -> tuple[int, dict[str, Any] | None]:
        busy: dict[Any, int] = {self._conns[s]: s for s in self._busy}
        conn: Any = multiprocessing.connection.wait(list(busy))[0]
        slot = busy[conn]
        self._busy.discard(slot)
        try:
            result: dict[str, Any] = conn.recv()
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

    def __init__(self, settings: dict[str, Any], directory: str, prices: tuple[float, float] | None,
                 backoff: float):
        self.loop = asyncio.new_event_loop()
        self.worker = Worker(StudySettings.from_json(settings), Path(directory), prices, backoff)

    def run(self, spec: dict[str, Any]) -> dict[str, Any]:
        return self.loop.run_until_complete(self.worker.run(EpisodeSpec(**spec))).to_json()

    def close(self) -> None:
        self.loop.run_until_complete(self.worker.close())


class RayPool:
    def __init__(self, workers: int, settings: StudySettings, directory: Path, options: RunOptions):
        import ray

        self._ray: Any = ray
        self._started_here = not self._ray.is_initialized()
        if self._started_here:
            if options.address:
                self._ray.init(address=options.address, log_to_driver=False)
            else:
                self._ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False, configure_logging=False)
        free = float(self._ray.available_resources().get("CPU", 0.0))
        # A browser actor mostly waits on the model and the page: a share of what is free each.
        cpus = max(0.01, min(1.0, free / workers))
        self._cls = self._ray.remote(num_cpus=cpus, max_restarts=0)(_RayWorker)
        self._args = (settings.to_json(), str(directory.resolve()), options.prices, options.backoff)
        self._actors: list[Any] = [self._cls.remote(*self._args) for _ in range(workers)]
        self._running: dict[Any, int] = {}

    def submit(self, slot: int, spec: EpisodeSpec) -> None:
        ref = self._actors[slot].run.remote({"benchmark": spec.benchmark, "task": spec.task, "seed": spec.seed,
                                             "agent": spec.agent})
        self._running[ref] = slot

    def next_done(self) -> tuple[int, dict[str, Any] | None]:
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
        if self._started_here:
            self._ray.shutdown()


# -- the dispatcher ---------------------------------------------------------------------------------------

def run_study(directory: str | Path, settings: StudySettings, options: RunOptions | None = None,
              on_result: Callable[[dict[str, Any], dict[str, Any]], None] | None = None) -> dict[str, Any]:
    """Runs every unfinished episode of the study in ``directory``; returns the summary (also
    in ``summary.json``). Raises :class:`StudyStopped` when it had to stop early."""
    options = options or RunOptions()
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    check_study(directory, settings)
    finished = {r["id"]: r for r in read_results(directory)}
    pending = deque(s for s in settings.episodes() if s.id not in finished)
    log = ResultsLog(directory)
    spent = sum(r.get("cost", 0.0) for r in finished.values())
    state = {"total": len(settings.episodes()), "done": len(finished),
             "successes": sum(bool(r["success"]) for r in finished.values()), "running": 0, "spent": spent,
             "started": time.monotonic(), "done_here": 0}
    stopped: str | None = None
    pool: Pool | None = None
    if pending:
        workers = min(options.workers, len(pending))
        pool = (RayPool(workers, settings, directory, options) if options.engine == "ray"
                else ProcessPool(workers, settings, directory, options))
    running: dict[int, tuple[EpisodeSpec, str | None]] = {}  # slot -> episode, its site
    free = list(range(min(options.workers, len(pending)))) if pending else []
    begun_again: set[str] = set()
    infra_streak = 0
    busy_sites: dict[str, int] = {}
    exclusive: set[str] = set()
    try:
        while pending or running:
            while free and pending and stopped is None:
                if options.budget_usd is not None and state["spent"] >= options.budget_usd:
                    stopped = f"budget reached: ${state['spent']:.4f} spent of ${options.budget_usd:g}"
                    break
                spec = _next_dispatchable(pending, settings, busy_sites, exclusive)
                if spec is None:
                    break
                try:
                    site = _prepare_site(settings, spec, busy_sites, exclusive)
                except PagelensError as e:  # the reset command failed: the site's state is unknown
                    _append_failure(directory, EpisodeResult(
                        spec.id, spec.benchmark, spec.task, spec.seed, spec.agent, settings.model, reason="error",
                        error_kind="reset", error=str(e)).to_json())
                    infra_streak += 1
                    if infra_streak >= options.max_infra_failures:
                        stopped = (f"stopped after {infra_streak} infrastructure failures in a row; the last: "
                                   f"reset: {e}")
                        pending.clear()
                    continue
                slot = free.pop()
                assert pool is not None
                pool.submit(slot, spec)
                running[slot] = (spec, site)
                if site:
                    busy_sites[site] = busy_sites.get(site, 0) + 1
                state["running"] = len(running)
            if not running:
                break
            assert pool is not None
            slot, raw = pool.next_done()
            spec, site = running.pop(slot)
            if site:
                _release_site(site, busy_sites, exclusive)
            if raw is None:  # the worker process or actor died with the episode
                pool.restart(slot)
                if spec.id not in begun_again:
                    begun_again.add(spec.id)
                    pending.appendleft(spec)
                    free.append(slot)
                    continue
                raw = EpisodeResult(spec.id, spec.benchmark, spec.task, spec.seed, spec.agent, settings.model,
                                    reason="error", error_kind="worker",
                                    error="the worker died twice running this episode").to_json()
            free.append(slot)
            state["running"] = len(running)
            state["spent"] += raw.get("cost", 0.0)
            if raw.get("error_kind") in INFRASTRUCTURE:
                infra_streak += 1
                _append_failure(directory, raw)
                if infra_streak >= options.max_infra_failures and stopped is None:
                    stopped = (f"stopped after {infra_streak} infrastructure failures in a row; the last: "
                               f"{raw.get('error_kind')}: {raw.get('error')}")
                    pending.clear()
            else:
                infra_streak = 0
                log.append(EpisodeResult(**raw))
                state["done"] += 1
                state["done_here"] += 1
                state["successes"] += bool(raw.get("success"))
            if on_result is not None:
                on_result(raw, state)
    finally:
        log.close()
        if pool is not None:
            pool.close()
    summary = summarize(directory, settings.to_json(), stopped)
    if stopped is not None:
        raise StudyStopped(f"{stopped} ({summary['finished']} of {summary['episodes']} episodes finished; "
                           "rerun the same command to continue)")
    return summary


def _next_dispatchable(pending: deque[EpisodeSpec], settings: StudySettings, busy_sites: dict[str, int],
                       exclusive: set[str]) -> EpisodeSpec | None:
    """The first pending episode that may start now (a site being reset, or running a task
    that changes it, takes no other episode)."""
    if settings.benchmark == "miniwob":
        return pending.popleft()
    from pagelens.studies.webarena import changes_state, task_of

    for k, spec in enumerate(pending):
        try:
            task = task_of(settings, spec.task)
        except PagelensError:
            del pending[k]
            return spec  # the worker reports it as a setup error
        if task.site in exclusive:
            continue
        if settings.reset_cmd and changes_state(task) and busy_sites.get(task.site):
            continue
        del pending[k]
        return spec
    return None


def _prepare_site(settings: StudySettings, spec: EpisodeSpec, busy_sites: dict[str, int],
                  exclusive: set[str]) -> str | None:
    if settings.benchmark == "miniwob":
        return None
    from pagelens.studies.webarena import changes_state, reset_site, task_of

    try:
        task = task_of(settings, spec.task)
    except PagelensError:
        return None
    if settings.reset_cmd and changes_state(task):
        # The dispatcher waits for the reset, so nothing starts on the site meanwhile; while
        # the episode runs, the site takes no other.
        reset_site(settings.reset_cmd, task.site)
        exclusive.add(task.site)
    return task.site


def _release_site(site: str, busy_sites: dict[str, int], exclusive: set[str]) -> None:
    busy_sites[site] = max(0, busy_sites.get(site, 0) - 1)
    if not busy_sites[site]:
        exclusive.discard(site)


def _append_failure(directory: Path, raw: dict[str, Any]) -> None:
    path = directory / "failures.jsonl"
    old = path.read_text() if path.exists() else ""
    write_atomically(path, old + json.dumps(raw, ensure_ascii=False) + "\n")
