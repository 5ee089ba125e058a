"""string_match: exact_match, must_include, and fuzzy_match / ua_match through a grader, per
variant (see :mod:`pagelens.evaluation.variants` for the peers' rules and their sources)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from pagelens.evaluation.errors import NotScored
from pagelens.evaluation.grader import Grader
from pagelens.evaluation.tasks import TaskConfig
from pagelens.evaluation.variants import Variant, get_variant

__all__ = ["StringEvaluator", "alternatives", "clean_answer", "exact_match", "must_include"]

_OR = re.compile(r" \|or\| ", re.I)


def clean_answer(answer: str) -> str:
    """WebArena's cleaning: strip, drop one pair of surrounding quotes (a lone quote is a
    pair of itself), lower-case."""
    answer = answer.strip()
    if answer.startswith("'") and answer.endswith("'"):
        answer = answer[1:-1]
    elif answer.startswith('"') and answer.endswith('"'):
        answer = answer[1:-1]
    return answer.lower()


def alternatives(reference: str) -> list[str]:
    """``"778m |OR| 778 m"`` -> ``["778m", "778 m"]``."""
    return [part.strip() for part in _OR.split(reference) if part.strip()]


def exact_match(reference: str, prediction: str) -> float:
    """The whole answer equals the reference, both cleaned. Plain string equality: neither
    is ever read as a pattern."""
    return float(clean_answer(prediction) == clean_answer(reference))


def word_tokenize(text: str) -> list[str]:
    # Imported when first needed: `python -m pagelens.evaluation.punkt` installs its tables
    # and must not find itself imported by the package first.
    from pagelens.evaluation.punkt import word_tokenize as nltk_word_tokenize

    return nltk_word_tokenize(text)


def _one_token(reference: str) -> bool:
    return len(reference) == 1 and len(word_tokenize(reference)) == 1


def must_include(reference: str, prediction: str, tokenize: bool = False, rule: str = "literal") -> float:
    """The reference occurs in the answer, both cleaned. With ``tokenize`` (WebArena: when it
    is the task's only must_include reference) a one-character reference must be one of the
    answer's NLTK tokens, so "0" is not found in "0.5" or "6,000". ``rule`` says what
    `` |OR| `` means: ``literal`` text (WebArena), ``agentoccam``'s alternatives (where a
    one-character alternative always matches while tokenizing: it is compared with its own
    tokens), or plain ``alternatives``."""
    ref = clean_answer(reference)
    pred = clean_answer(prediction)
    if rule == "agentoccam" and " |or| " in ref:
        for alt in (r.strip() for r in ref.split(" |or| ")):
            if tokenize and _one_token(alt):
                return 1.0
            if alt in pred:
                return 1.0
        return 0.0
    if rule == "alternatives":
        return max((must_include(alt, pred, tokenize) for alt in alternatives(reference) or [reference]), default=0.0)
    if tokenize and _one_token(ref):
        return float(ref in word_tokenize(pred))
    return float(ref in pred)


@dataclass
class StringEvaluator:
    """Scores the final answer against ``eval.reference_answers``, in the config's order."""

    variant: Variant | str = "webarena"
    grader: Grader | None = None
    details: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.variant = get_variant(self.variant)

    def score(self, task: TaskConfig, answer: str | None) -> float:
        v = get_variant(self.variant)
        self.details = []
        if answer is None:
            self.details.append("no answer (the run did not stop with one)")
            return 0.0
        pred = clean_answer(answer)
        score = 1.0
        for approach in task.reference_order:
            if approach == "exact_match" and task.exact_match is not None:
                s = exact_match(task.exact_match, pred)
                self.details.append(f"exact_match {task.exact_match!r}: {s:g}")
                score *= s
            elif approach == "must_include" and task.must_include is not None:
                refs = task.must_include
                found = [must_include(r, pred, tokenize=len(refs) == 1, rule=v.must_include_or) for r in refs]
                for r, s in zip(refs, found, strict=True):
                    self.details.append(f"must_include {r!r}: {s:g}")
                if v.must_include_combine == "mean":
                    score *= sum(found) / len(found) if found else 0.0
                else:
                    for s in found:
                        score *= s
            elif approach == "fuzzy_match" and task.fuzzy_match is not None:
                score = self._fuzzy(task, pred, score)
        return score

    def _fuzzy(self, task: TaskConfig, pred: str, score: float) -> float:
        v = get_variant(self.variant)
        if task.fuzzy_match == "N/A":
            # "N/A" itself; anything else is the ua grader's call, which replaces the score.
            score *= exact_match("N/A", pred)
            self.details.append(f"N/A exactly: {score:g}")
            if score != 1:
                score = self._need_grader().ua_match(task.intent, task.string_note, pred, v.prompts)
                self.details.append(f"ua_match (grader): {score:g}")
            return score
        refs: list[str] = [task.fuzzy_match] if isinstance(task.fuzzy_match, str) else list(task.fuzzy_match or ())
        if v.fuzzy_references == "joined":
            refs = ["; ".join(refs)]
        for ref in refs:
            s = self._need_grader().fuzzy_match(task.intent, ref, pred, v.prompts)
            self.details.append(f"fuzzy_match {ref!r} (grader): {s:g}")
            score *= s
        return score

    def _need_grader(self) -> Grader:
        if self.grader is None:
            raise NotScored("fuzzy_match and ua_match need an LLM grader (--grader-model or PAGELENS_GRADER_MODEL)")
        return self.grader
