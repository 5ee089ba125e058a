"""String answers: exact_match, must_include, and fuzzy_match / ua_match through a grader."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from pagelens.evaluation.errors import NotScored
from pagelens.evaluation.grader import Grader
from pagelens.evaluation.tasks import TaskConfig
from pagelens.evaluation.variants import Variant, check_variant

__all__ = ["StringEvaluator", "clean_answer", "exact_match", "must_include", "alternatives"]

_OR = re.compile(r"\s\|or\|\s", re.I)
# Words and single punctuation marks, as a word tokenizer splits them.
_TOKENS = re.compile(r"\w+|[^\w\s]", re.U)


def clean_answer(answer: str) -> str:
    """WebArena's normalisation: strip, drop one pair of surrounding quotes, lower-case."""
    answer = answer.strip()
    if len(answer) >= 2 and answer[0] == answer[-1] and answer[0] in "'\"":
        answer = answer[1:-1]
    return answer.lower()


def alternatives(reference: str) -> list[str]:
    """``"778m |OR| 778 m"`` -> ``["778m", "778 m"]``."""
    return [part.strip() for part in _OR.split(reference) if part.strip()]


def exact_match(reference: str, prediction: str) -> float:
    """The whole answer equals the reference (after :func:`clean_answer`). Plain string
    equality: a reference or an answer is never read as a pattern."""
    return float(clean_answer(prediction) == clean_answer(reference))


def must_include(reference: str, prediction: str, as_word: bool = False) -> float:
    """The reference occurs in the answer. With ``as_word`` a one-character reference must be a
    whole token (so "0" is not found in "10 items")."""
    ref = clean_answer(reference)
    pred = clean_answer(prediction)
    if as_word and len(ref) == 1:
        return float(ref in _TOKENS.findall(pred))
    return float(ref in pred)


@dataclass
class StringEvaluator:
    """Scores the final answer against ``eval.reference_answers``."""

    variant: Variant = "original"
    grader: Grader | None = None
    details: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        check_variant(self.variant)

    def _any(self, fn, reference: str, prediction: str, **kw) -> float:
        if self.variant == "rectified":
            return max((fn(alt, prediction, **kw) for alt in alternatives(reference)), default=0.0)
        return fn(reference, prediction, **kw)

    def score(self, task: TaskConfig, answer: str | None) -> float:
        self.details = []
        if answer is None:
            self.details.append("no answer (the run did not stop with one)")
            return 0.0
        pred = clean_answer(answer)
        score = 1.0
        if task.exact_match is not None:
            s = self._any(exact_match, task.exact_match, pred)
            self.details.append(f"exact_match {task.exact_match!r}: {s:g}")
            score *= s
        if task.must_include is not None:
            refs = task.must_include
            found = [self._any(must_include, r, pred, as_word=len(refs) == 1) for r in refs]
            for r, s in zip(refs, found):
                self.details.append(f"must_include {r!r}: {s:g}")
            if self.variant == "rectified":
                score *= sum(found) / len(found) if found else 1.0
            else:
                for s in found:
                    score *= s
        if task.fuzzy_match is not None:
            score *= self._fuzzy(task, pred)
        return score

    def _fuzzy(self, task: TaskConfig, pred: str) -> float:
        if task.fuzzy_match == "N/A":
            # Unachievable: "N/A" itself, or a reason the grader finds equivalent to the note.
            if exact_match("N/A", pred):
                self.details.append("ua: answered N/A: 1")
                return 1.0
            grader = self._need_grader()
            s = grader.ua_match(task.intent, task.string_note, pred)
            self.details.append(f"ua_match (grader): {s:g}")
            return s
        grader = self._need_grader()
        refs = list(task.fuzzy_match or [])
        if self.variant == "rectified":
            refs = ["; ".join(refs)]
        score = 1.0
        for ref in refs:
            s = grader.fuzzy_match(task.intent, ref, pred, lenient=self.variant == "rectified")
            self.details.append(f"fuzzy_match {ref!r} (grader): {s:g}")
            score *= s
        return score

    def _need_grader(self) -> Grader:
        if self.grader is None:
            raise NotScored("fuzzy_match and ua_match need an LLM grader (--grader-model or PAGELENS_GRADER_MODEL)")
        return self.grader

