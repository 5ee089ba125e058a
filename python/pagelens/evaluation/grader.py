"""The LLM grader behind fuzzy_match and ua_match, with each peer's exact prompt and verdict rule.

WebArena's helper functions (and AgentOccam's, which change only the fuzzy prompt) send one user
message under the system message "You are a helpful assistant", at temperature 0, top-p 1,
768 tokens at most (they used ``gpt-4-1106-preview``; the model here is the caller's). The
prompts are the files ``prompts/<webarena|agentoccam|strict>_<fuzzy|ua>.txt``.

Verdicts are read as the peers read them: a fuzzy reply containing "partially correct" or
"incorrect" anywhere scores 0, else one containing "correct" scores 1; a ua reply containing
"different" scores 0, else one containing "same" scores 1. A reply with neither is not scored
(the peers' harness stops on an assertion there). ``strict`` asks for a last ``verdict:`` line
and reads that line, falling back to the peers' rule.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

from pagelens.evaluation.errors import NotScored
from pagelens.llm import LLMClient

__all__ = ["Grader", "load_prompt", "verdict_correct", "verdict_same"]

SYSTEM = "You are a helpful assistant"
PARAMS: dict[str, Any] = {"temperature": 0, "max_tokens": 768, "top_p": 1.0}


@cache
def load_prompt(name: str) -> str:
    return resources.files("pagelens.evaluation").joinpath("prompts").joinpath(f"{name}.txt").read_text()


def _verdict(reply: str, prompts: str, fail: tuple[str, ...], passing: str) -> float:
    """The peers' reading: 0 if the reply contains any ``fail`` word, else 1 if it contains
    ``passing``, else no verdict. ``strict`` first reads a last line ``verdict: <word>``."""
    if prompts == "strict":
        lines = [line.strip(" `*.").lower() for line in reply.strip().splitlines() if line.strip()]
        words = "|".join((*fail, passing))
        found = re.fullmatch(rf"verdict:\s*({words})", lines[-1]) if lines else None
        if found:
            return float(found.group(1) == passing)
    text = reply.lower()
    if any(word in text for word in fail):
        return 0.0
    if passing in text:
        return 1.0
    raise NotScored(f"the grader's reply has no verdict ({'/'.join((passing, *fail))}): {reply[:200]!r}")


def verdict_correct(reply: str, prompts: str = "webarena") -> float:
    """1 for a "correct" verdict; "incorrect" and "partially correct" are 0."""
    return _verdict(reply, prompts, ("partially correct", "incorrect"), "correct")


def verdict_same(reply: str, prompts: str = "webarena") -> float:
    """1 when the agent's reason for giving up is the reference's ("same"), else 0."""
    return _verdict(reply, prompts, ("different",), "same")


@dataclass
class Grader:
    client: LLMClient
    transcripts: list[dict[str, Any]] = field(default_factory=list)

    def _ask(self, prompt: str) -> str:
        reply = self.client.complete(prompt, system=SYSTEM, **PARAMS)
        self.transcripts.append({"prompt": prompt, "reply": reply.text, "cached": reply.cached})
        return reply.text

    def fuzzy_match(self, intent: str, reference: str, answer: str, prompts: str = "webarena") -> float:
        prompt = load_prompt(f"{prompts}_fuzzy").format(intent=intent, reference=reference, answer=answer)
        return verdict_correct(self._ask(prompt), prompts)

    def ua_match(self, intent: str, reference: str, answer: str, prompts: str = "webarena") -> float:
        prompt = load_prompt(f"{prompts}_ua").format(intent=intent, reference=reference, answer=answer)
        return verdict_same(self._ask(prompt), prompts)
