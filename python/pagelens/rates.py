"""Success rates, counted in one place: the evaluation's per-site table, a study's summary and
report (per site, per task, with Wilson intervals) and the comparison of two studies all
group their runs here, so a run that was not scored, an interval, or a mean score means the
same in each."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TypeVar

_Item = TypeVar("_Item")


def wilson(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a success rate (95% by default)."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(frozen=True)
class Rate:
    """A group's runs: how many, how many have a verdict, how many succeeded."""

    name: str
    runs: int
    scored: int
    successes: int
    score_sum: float = 0.0

    @property
    def not_scored(self) -> int:
        return self.runs - self.scored

    @property
    def rate(self) -> float | None:
        """Successes over scored runs; None when none was scored."""
        return self.successes / self.scored if self.scored else None

    @property
    def mean_score(self) -> float | None:
        return self.score_sum / self.scored if self.scored else None

    def interval(self, z: float = 1.96) -> tuple[float, float]:
        return wilson(self.successes, self.scored, z)


def rate_of(name: str, verdicts: Iterable[bool | None], scores: Iterable[float | None] = ()) -> Rate:
    """The :class:`Rate` of runs given their verdicts (None: not scored) and, optionally, their
    scores (a partial score per run; None counts as 0 for a scored run)."""
    verdicts = list(verdicts)
    scored = [v for v in verdicts if v is not None]
    score_list = list(scores) or [None] * len(verdicts)
    score_sum = sum(s or 0.0 for s, v in zip(score_list, verdicts, strict=True) if v is not None)
    return Rate(name, len(verdicts), len(scored), sum(scored), score_sum)


def rates_by(
    items: Iterable[_Item],
    group: Callable[[_Item], str],
    verdict: Callable[[_Item], bool | None],
    score: Callable[[_Item], float | None] | None = None,
) -> dict[str, Rate]:
    """One :class:`Rate` per group of ``items``, in the groups' sorted order."""
    groups: dict[str, list[_Item]] = {}
    for item in items:
        groups.setdefault(group(item), []).append(item)
    return {
        name: rate_of(name, map(verdict, members), map(score, members) if score else ())
        for name, members in sorted(groups.items())
    }
