"""``DIR/results.jsonl``: one line per finished episode, the study's commit log. A line is
written (flushed and synced) only once its episode is over, by the one process that
dispatches, so a SIGKILL at any moment loses no finished episode and duplicates none; a torn
last line is cut on the next run and that episode run again."""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pagelens._io import JsonlLog, read_json_lines, write_atomically

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


def episode_dir(directory: str | os.PathLike[str], episode_id: str) -> Path:
    return Path(directory) / "episodes" / episode_id


def read_results(directory: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Finished episodes, first line per id (a torn last line is skipped)."""
    path = Path(directory) / "results.jsonl"
    if not path.exists():
        return []
    seen: dict[str, dict[str, Any]] = {}
    for record in read_json_lines(path).records:
        if isinstance(record, dict) and isinstance(record.get("id"), str):
            seen.setdefault(record["id"], record)
    return list(seen.values())


class ResultsLog:
    """Appends finished episodes to ``results.jsonl`` (a :class:`pagelens._io.JsonlLog`)."""

    def __init__(self, directory: str | os.PathLike[str]):
        self._log = JsonlLog(Path(directory) / "results.jsonl")
        self.path = self._log.path

    def append(self, result: EpisodeResult) -> None:
        self._log.append(result.to_json())

    def close(self) -> None:
        pass  # every append is on disk already


def summarize(directory: str | os.PathLike[str], settings: dict[str, Any], stopped: str | None) -> dict[str, Any]:
    """``DIR/summary.json``: success overall, per task and per site, spend and error kinds."""
    results = read_results(directory)
    per_task: dict[str, list[dict[str, Any]]] = {}
    per_site: dict[str, list[dict[str, Any]]] = {}
    errors: dict[str, int] = {}
    for r in results:
        per_task.setdefault(r["task"], []).append(r)
        per_site.setdefault(r.get("site") or r["benchmark"], []).append(r)
        if r.get("error_kind"):
            errors[r["error_kind"]] = errors.get(r["error_kind"], 0) + 1

    def rate(rows: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "episodes": len(rows),
            "successes": sum(bool(r["success"]) for r in rows),
            "success_rate": sum(bool(r["success"]) for r in rows) / len(rows) if rows else 0.0,
        }

    total = len(settings["tasks"]) * len(settings["seeds"])
    summary = {
        "episodes": total,
        "finished": len(results),
        **{k: v for k, v in rate(results).items() if k != "episodes"},
        "cost_usd": sum(r.get("cost", 0.0) for r in results),
        "tokens": sum(r.get("prompt_tokens", 0) + r.get("completion_tokens", 0) for r in results),
        "errors": errors,
        "stopped": stopped,
        "per_task": {t: rate(rows) for t, rows in sorted(per_task.items())},
        "per_site": {s: rate(rows) for s, rows in sorted(per_site.items())},
    }
    write_atomically(Path(directory) / "summary.json", json.dumps(summary, indent=1))
    return summary
