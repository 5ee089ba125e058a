"""``DIR/results.jsonl``: one line per finished episode, the study's commit log. A line is
written (flushed and synced) only once its episode is over, by the one process that
dispatches, so a SIGKILL at any moment loses no finished episode and duplicates none; a torn
last line is cut on the next run and that episode run again."""

from __future__ import annotations

import json
import math
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pagelens._io import JsonlLog, read_json_lines, write_atomically
from pagelens.errors import InputFileError
from pagelens.rates import rate_of

if TYPE_CHECKING:
    from pagelens.agents.runner import RunResult


@dataclass
class EpisodeResult:
    id: str
    benchmark: str
    task: str
    seed: int
    agent: str
    model: str
    reward: float = 0.0  # the benchmark's raw reward (MiniWoB: 1 / -1; WebArena: the score)
    success: bool = False
    steps: int = 0
    reason: str = ""  # how the episode ended: stop, max_steps, no_valid_action, error
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    seconds: float = 0.0
    error_kind: str | None = None  # model, browser, timeout, agent, setup
    error: str | None = None
    site: str | None = None
    restarts: int = 0  # times the episode was begun again (a killed study, a browser lost)
    evaluation: dict[str, Any] = field(default_factory=dict)  # evaluator details
    model_seconds: float = 0.0  # of `seconds`, waiting for the model
    step_seconds: float = 0.0  # of `seconds`, in the agent's steps (model, browser, observation)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def ended(self, run: RunResult) -> None:
        """What the agent's run says of the episode: its steps, how it ended, where time went."""
        self.steps, self.reason = run.steps, run.reason
        self.model_seconds, self.step_seconds = run.model_seconds, run.step_seconds


def episode_id(benchmark: str, task: str, seed: int, agent: str) -> str:
    """An episode's id: its folder's name and its key in ``results.jsonl``."""
    return f"{benchmark}.{task}.{seed}.{agent}"


def episode_dir(directory: str | os.PathLike[str], episode_id: str) -> Path:
    return Path(directory) / "episodes" / episode_id


_NUMBERS = ("reward", "cost", "seconds", "model_seconds", "step_seconds")
_COUNTS = ("steps", "prompt_tokens", "completion_tokens", "restarts")


def valid_result(record: Any) -> dict[str, Any] | None:
    """A results line as the reports read it, or None when it is not one (a damaged file):
    strings where strings belong, a JSON boolean for success (``"false"`` is not a success),
    finite numbers."""
    if not isinstance(record, dict):
        return None
    if not all(isinstance(record.get(k), str) for k in ("id", "task", "benchmark", "agent")):
        return None
    if not isinstance(record.get("success"), bool):
        return None
    seed = record.get("seed")
    if not isinstance(seed, int) or isinstance(seed, bool):
        return None
    out = dict(record)
    for k in _NUMBERS:
        v = out.setdefault(k, 0.0)
        if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v):
            return None
    for k in _COUNTS:
        v = out.setdefault(k, 0)
        if not isinstance(v, int) or isinstance(v, bool) or v < 0:
            return None
    for k in ("site", "error_kind", "error", "model", "reason"):
        if out.get(k) is not None and not isinstance(out[k], str):
            return None
    out["model"], out["reason"] = out.get("model") or "", out.get("reason") or ""
    if not isinstance(out.get("evaluation", {}), dict):
        return None
    return out


def read_results(directory: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Finished episodes, first valid line per id (a torn last line, or a damaged one, is
    skipped: its episode runs again on the next run)."""
    path = Path(directory) / "results.jsonl"
    if not path.exists():
        return []
    seen: dict[str, dict[str, Any]] = {}
    for record in read_json_lines(path).records:
        valid = valid_result(record)
        if valid is not None:
            seen.setdefault(valid["id"], valid)
    return list(seen.values())


def study_folder(directory: str | os.PathLike[str]) -> Path:
    """``directory`` when it holds a study (its ``study.json``), else an error naming it."""
    path = Path(directory)
    if not path.is_dir():
        raise InputFileError(f"no such study folder: {path}")
    if not (path / "study.json").is_file():
        raise InputFileError(f"{path} is not a study folder (no study.json)")
    return path


class ResultsLog:
    """Appends finished episodes to ``results.jsonl`` (a :class:`pagelens._io.JsonlLog`)."""

    def __init__(self, directory: str | os.PathLike[str]):
        self._log = JsonlLog(Path(directory) / "results.jsonl")
        self.path = self._log.path

    def append(self, result: EpisodeResult) -> None:
        self._log.append(result.to_json())

    def close(self) -> None:
        pass  # every append is on disk already


def last_failures(directory: str | os.PathLike[str]) -> dict[str, dict[str, Any]]:
    """Each episode's last infrastructure failure (``failures.jsonl``: one line per attempt), by
    episode id: an episode is counted once however often it was tried."""
    path = Path(directory) / "failures.jsonl"
    last: dict[str, dict[str, Any]] = {}
    if path.is_file():
        for record in read_json_lines(path).records:
            if isinstance(record, dict) and isinstance(record.get("id"), str):
                last[record["id"]] = record
    return last


def lost_episodes(
    directory: str | os.PathLike[str], planned: list[tuple[str, str, int]], finished: set[str], running: bool = False
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The planned episodes (id, task, seed) with no result, as (lost, pending): lost — task,
    seed, what lost it and why (``not run`` for one a study that no longer runs never began);
    pending — those not begun while the study ``running`` (never called lost)."""
    failures = last_failures(directory)
    lost, pending = [], []
    for episode_id, task, seed in planned:
        if episode_id in finished:
            continue
        failure = failures.get(episode_id) or {}
        kind = failure.get("error_kind") if isinstance(failure.get("error_kind"), str) else None
        if kind is None and running:
            pending.append({"id": episode_id, "task": task, "seed": seed})
            continue
        cause = " ".join(str(failure.get("error") or "").split())[:300] if kind else "the study stopped before it began"
        lost.append({"id": episode_id, "task": task, "seed": seed, "kind": kind or "not run", "cause": cause})
    return lost, pending


def tally(
    directory: str | os.PathLike[str],
    planned: list[tuple[str, str, int]],
    running: bool = False,
    results: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Every count of a study, from its plan (``planned``: id, task and seed of each episode
    its commands asked for, see ``check_study``) and ``results.jsonl`` — the one place counts
    are made (the run's output, ``summary.json``, the report and ``compare`` read them here):
    finished of planned (never more), successes, spend, failed episodes by kind (an error's,
    else how it ended: they add up to the failures), the episodes lost and, while the study
    ``running``, those pending; per task (every planned task) and per site. ``results``: the
    file's records when the caller holds them (a running study: not read again per episode)."""
    ids = {p[0] for p in planned}
    results = [r for r in (read_results(directory) if results is None else results) if r["id"] in ids]
    lost, pending = lost_episodes(directory, planned, {r["id"] for r in results}, running)
    per_task: dict[str, list[dict[str, Any]]] = {task: [] for _, task, _ in planned}
    per_site: dict[str, list[dict[str, Any]]] = {}
    failures: dict[str, int] = {}
    for r in results:
        per_task.setdefault(r["task"], []).append(r)
        per_site.setdefault(r.get("site") or r["benchmark"], []).append(r)
        if not r["success"]:
            kind = r.get("error_kind") or f"no error: {r.get('reason') or 'ended'}"
            failures[kind] = failures.get(kind, 0) + 1
    lost_by_task: dict[str, int] = {}
    for e in lost:
        lost_by_task[e["task"]] = lost_by_task.get(e["task"], 0) + 1

    def rate(rows: list[dict[str, Any]]) -> dict[str, Any]:
        counted = rate_of("", (bool(r["success"]) for r in rows))
        return {"episodes": counted.runs, "successes": counted.successes, "success_rate": counted.rate or 0.0}

    return {
        "episodes": len(planned),
        "finished": len(results),
        **{k: v for k, v in rate(results).items() if k != "episodes"},
        "cost_usd": sum(r.get("cost", 0.0) for r in results),
        "tokens": sum(r.get("prompt_tokens", 0) + r.get("completion_tokens", 0) for r in results),
        "failures": dict(sorted(failures.items(), key=lambda kv: (-kv[1], kv[0]))),
        "lost": lost,
        "pending": len(pending),
        "tasks": sorted(per_task),
        "per_task": {t: {**rate(rows), "lost": lost_by_task.get(t, 0)} for t, rows in sorted(per_task.items())},
        "per_site": {site: rate(rows) for site, rows in sorted(per_site.items())},
        "results": results,
    }


def summarize(
    directory: str | os.PathLike[str],
    planned: list[tuple[str, str, int]],
    status: str,
    stopped: str | None = None,
    pid: int | None = None,
    results: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """``DIR/summary.json``, whole and atomically: the study's :func:`tally` and the status of
    its last run — ``running`` (with its process id: this one's unless ``pid`` says),
    ``ended`` (every planned episode finished), ``incomplete`` or ``stopped`` (why)."""
    counts = tally(directory, planned, running=status == "running", results=results)
    counts.pop("results")
    summary = {
        **counts,
        "errors": counts["failures"],  # (the name earlier summaries used)
        "status": status,
        "pid": (pid or os.getpid()) if status == "running" else None,
        "stopped": stopped,
    }
    write_atomically(Path(directory) / "summary.json", json.dumps(summary, indent=1))
    return summary
