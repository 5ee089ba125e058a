"""The LLM grader behind fuzzy_match and ua_match; its prompts are files in ``prompts/``.

The strict prompt is WebArena's (its paper, appendix A.6); the lenient one is AgentOccam's
(appendix E.1 ii): both end in correct / incorrect / partially correct, and only "correct"
scores 1. ua_match asks whether the agent's reason for giving up is the reference's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from importlib import resources

from pagelens.llm import LLMClient

__all__ = ["Grader", "load_prompt"]


def load_prompt(name: str) -> str:
    return resources.files("pagelens.evaluation").joinpath("prompts", f"{name}.txt").read_text()


def verdict_correct(text: str) -> float:
    """1 for a verdict of "correct"; "incorrect" and "partially correct" are 0."""
    last = text.strip().lower()
    # The conclusion comes last; earlier words may discuss either.
    for word in reversed(re.findall(r"partially correct|incorrect|correct", last)):
        return 1.0 if word == "correct" else 0.0
    return 0.0


def verdict_same(text: str) -> float:
    words = re.findall(r"\b(same|different)\b", text.lower())
    return 1.0 if words and words[-1] == "same" else 0.0


@dataclass
class Grader:
    client: LLMClient
    transcripts: list[dict] = field(default_factory=list)

    def _ask(self, prompt: str) -> str:
        reply = self.client.complete(prompt, system=load_prompt("system").strip())
        self.transcripts.append({"prompt": prompt, "reply": reply.text, "cached": reply.cached})
        return reply.text

    def fuzzy_match(self, intent: str, reference: str, answer: str, lenient: bool = False) -> float:
        template = load_prompt("fuzzy_lenient" if lenient else "fuzzy_strict")
        return verdict_correct(self._ask(template.format(intent=intent, reference=reference, answer=answer)))

    def ua_match(self, intent: str, reference: str, answer: str) -> float:
        template = load_prompt("ua_match")
        return verdict_same(self._ask(template.format(intent=intent, reference=reference, answer=answer)))
