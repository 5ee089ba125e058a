"""What every agent shares: the decision record, prompt files, internal actions, and model
calls with the invalid-action loop (the parser's error goes back to the model, at most N times)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from pagelens.actions import Action, ActionError, Internal, internal_outcome
from pagelens.llm import LLMClient


def load_prompt(name: str) -> str:
    return resources.files("pagelens.agents").joinpath("prompts").joinpath(f"{name}.txt").read_text()


@dataclass
class Decision:
    """What the agent chose this step and everything that led to it."""

    action: Action | None
    reason: str = ""
    sections: dict[str, str] = field(default_factory=dict)
    highlights: list[int] = field(default_factory=list)
    prompts: list[list[dict[str, str]]] = field(default_factory=list)
    responses: list[str] = field(default_factory=list)
    invalid: list[str] = field(default_factory=list)  # parser errors shown back to the model
    error: str | None = None  # the step failed: no valid action after the retries
    candidates: list[str] = field(default_factory=list)  # with a judge
    judge: dict[str, Any] | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    meta: dict[str, Any] = field(default_factory=dict)  # agent-specific (SteP's stack...)

    def to_json(self) -> dict[str, Any]:
        return {
            "action": str(self.action) if self.action else None,
            "reason": self.reason,
            "sections": self.sections,
            "highlights": self.highlights,
            "prompts": self.prompts,
            "responses": self.responses,
            "invalid": self.invalid,
            "error": self.error,
            "candidates": self.candidates,
            "judge": self.judge,
            "tokens": {"prompt": self.prompt_tokens, "completion": self.completion_tokens},
            "meta": self.meta,
        }


def apply_internal(agent: Any, action: Any, url: str) -> Internal | None:
    """The one place an agent's step becomes an internal outcome: a table action by what the
    table says it means (:func:`pagelens.actions.internal_outcome`, with the agent's own
    ``on_<effect>`` where it has one), an action of the agent's own kind (SteP's policy
    calls) by its ``on_own_action``. None: a page action, for the browser."""
    if isinstance(action, Action):
        return internal_outcome(action, agent, url)
    outcome: Internal = agent.on_own_action(action, url)
    return outcome


def ask_for_action(
    llm: LLMClient,
    messages: list[dict[str, str]],
    decision: Decision,
    extract: Callable[[str], tuple[str, Any]],  # reply text -> (action text, extra); raises ActionError
    max_invalid: int,
) -> tuple[str, Any] | None:
    """Ask, parse, and on an invalid action show the error and ask again (``max_invalid`` times).
    Returns what ``extract`` gave for the first valid answer, or None (``decision.error`` set)."""
    messages = list(messages)
    for _ in range(max_invalid + 1):
        decision.prompts.append(list(messages))
        reply = llm.chat(messages)
        decision.responses.append(reply.text)
        decision.prompt_tokens += reply.prompt_tokens
        decision.completion_tokens += reply.completion_tokens
        try:
            return extract(reply.text)
        except ActionError as e:
            decision.invalid.append(str(e))
            # The bad reply goes back shortened: a runaway answer must not grow every retry's prompt.
            messages = [
                *messages,
                {"role": "assistant", "content": shorten(reply.text)},
                {
                    "role": "user",
                    "content": f"That action is not valid: {e}\nAnswer again in the same format with one valid action.",
                },
            ]
    decision.error = f"no valid action after {max_invalid + 1} answers; last error: {decision.invalid[-1]}"
    return None


def shorten(text: str, limit: int = 600) -> str:
    """``text`` cut to ``limit`` characters, keeping its start and end (where the action is)."""
    if len(text) <= limit:
        return text
    half = (limit - 40) // 2
    return f"{text[:half]}\n[... {len(text) - 2 * half:,} characters left out ...]\n{text[-half:]}"
