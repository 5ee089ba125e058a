"""ScribeAgent (Shen et al. 2024) on the live browser: a model fine-tuned on `pagelens prep`
data reads the page as cleaned HTML, one chunk at a time, and writes the next step in its
five-line format; answers are sampled per chunk and voted.

Reproduced from ScribeAgent's WebArena agent (benchmarks/webarena/agent/workflow_agent.py):
the system message; the prompt (objective, URL, one chunk, the previous steps), here made by
the same code as `pagelens prep`; a sample counts only when its four fields are there; its
node is the first word after ``Node:`` when that is a number, else its first ``node="N"``;
votes pool over chunks and samples. The paper breaks ties between elements with GPT-4o;
here the most votes win, ties to the larger id (the element later in the page's ids is the
earlier in document order, ids running backwards), and the longest answer among the
winner's is the step's text. ScribeAgent then needs GPT-4o to map the HTML node to an
accessibility-tree id; pagelens knows every element's live node and acts on it directly.
A click on a text field becomes typing when the step says what to type, as ScribeAgent's
evaluation reads such steps.

With a planner model (ScribeAgent's WebArena wrapper), a general model rewrites the
objective once from the first page and, before each later step, decides whether the task is
done and writes the answer.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import asdict, dataclass
from typing import Any

from pagelens import DEFAULT_TOKENIZER, Chunk, load_tokenizer
from pagelens.actions import Action, ActionError
from pagelens.agents.base import Decision, load_prompt
from pagelens.browser.records import HtmlObservation
from pagelens.llm import LLMClient
from pagelens.stepformat.chunks import check_chunking, page_chunks
from pagelens.stepformat.lines import (
    SYSTEM,
    ParsedStep,
    parse_step,
    prompt_text,
    step_lines,
    vote,
)
from pagelens.stepformat.operations import click_means_typing, to_action

_QUOTED = re.compile(r'"([^"\n]{1,500})"')


@dataclass
class ScribeConfig:
    """What the agent shows the model and how it samples. ``max_tokens`` and ``profile``
    must be the ones the model was trained with (`pagelens prep --max-tokens --profile`)."""

    max_tokens: int = 4096
    profile: str = "scribe"
    tokenizer: str = DEFAULT_TOKENIZER
    samples: int = 5  # answers per chunk (ScribeAgent samples up to 10, stopping at a majority)
    temperature: float = 0.6  # ScribeAgent's sampling
    top_p: float = 0.95
    max_answer_tokens: int = 200
    rounds: int = 2  # sampling rounds before a step with no usable answer fails

    def __post_init__(self) -> None:
        check_chunking(self.profile, self.max_tokens)


@dataclass
class Done:
    """A step carried out, in the form the model reads back."""

    lines: str
    description: str


class ScribeAgent:
    name = "scribe"
    observation = "html"  # the runner gives decide() an HtmlObservation

    def __init__(
        self, llm: LLMClient, objective: str, config: ScribeConfig | None = None, planner: LLMClient | None = None
    ):
        self.llm = llm
        self.planner = planner
        self.config = config or ScribeConfig()
        self.tokenizer = load_tokenizer(self.config.tokenizer)
        self.task = objective
        self.objective = objective  # rewritten by the planner, if there is one
        self.rewritten = planner is None
        self.history: list[Done] = []
        self.last_error: str | None = None
        self.needs_ax = planner is not None  # the planner reads the accessibility tree

    # -- the runner's protocol --------------------------------------------------------------

    def state(self) -> dict[str, Any]:
        return {
            "objective": self.objective,
            "rewritten": self.rewritten,
            "last_error": self.last_error,
            "history": [asdict(d) for d in self.history],
        }

    def restore(self, state: dict[str, Any]) -> None:
        self.objective, self.rewritten = state["objective"], state["rewritten"]
        self.last_error = state.get("last_error")
        self.history = [Done(**d) for d in state["history"]]

    def config_json(self) -> dict[str, Any]:
        return {**asdict(self.config), "planner": getattr(self.planner, "model", None)}

    def prompts_for(self, obs: HtmlObservation, chunks: list[Chunk] | None = None) -> list[str]:
        """The user prompt of every chunk of the page (``chunks``: the page's, if already cut),
        as `pagelens prep` writes them."""
        if chunks is None:
            _, chunks = page_chunks(obs.dom, self.config.profile, self.config.max_tokens, self.tokenizer)
        guide = "\n".join(d.lines for d in self.history)
        prompts = [prompt_text(self.objective, obs.url, c.text, guide) for c in chunks]
        if self.last_error:  # not in prep's prompts: only after a step that failed
            prompts = [p + f"Note: the last step failed: {self.last_error}\n" for p in prompts]
        return prompts

    def decide(self, obs: HtmlObservation, step: int) -> Decision:
        decision = Decision(action=None)
        if self.planner is not None:
            stop = self._plan(obs, decision)
            if stop is not None:
                decision.action = stop
                return decision
        cleaned, chunks = page_chunks(obs.dom, self.config.profile, self.config.max_tokens, self.tokenizer)
        prompts = self.prompts_for(obs, chunks)
        votes: dict[int, list[ParsedStep]] = defaultdict(list)
        for round_ in range(self.config.rounds):
            for prompt in prompts:
                messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt}]
                decision.prompts.append(messages)
                reply = self.llm.chat(
                    messages,
                    n=self.config.samples,
                    temperature=self.config.temperature,
                    top_p=self.config.top_p,
                    max_tokens=self.config.max_answer_tokens,
                    seed=round_,
                )
                decision.prompt_tokens += reply.prompt_tokens
                decision.completion_tokens += reply.completion_tokens
                for text in reply.texts or [reply.text]:
                    decision.responses.append(text)
                    try:
                        parsed = parse_step(text)
                    except ActionError as e:
                        decision.invalid.append(str(e))
                        continue
                    if parsed.action != "stop" and parsed.node not in cleaned:
                        decision.invalid.append(f"node {parsed.node} is not on the page")
                        continue
                    votes[parsed.node].append(parsed)
            if votes:
                break
        if not votes:
            reasons = sorted(set(decision.invalid))[:3]
            decision.error = (
                f"no answer named an element on the page ({len(decision.responses)} answers over "
                f"{len(prompts)} chunks; {'; '.join(reasons) or 'no answers'})"
            )
            return decision
        chosen = vote([p for v in votes.values() for p in v])
        assert chosen is not None  # there are votes
        node = chosen.node
        decision.meta = {
            "votes": {str(n): len(v) for n, v in votes.items()},
            "node": node,
            "chunks": len(prompts),
            "step": chosen.reply,
            "target": cleaned.start_tag(node) if node in cleaned else chosen.target,
        }
        decision.reason = chosen.description
        try:
            decision.action = self._action(chosen, cleaned)
        except ActionError as e:
            decision.error = str(e)
        decision.meta["parsed"] = asdict(chosen)
        return decision

    def record(self, step: int, decision: Decision, obs: HtmlObservation, ok: bool, error: str | None) -> None:
        self.last_error = None if ok else (error or decision.error)
        parsed = decision.meta.get("parsed")
        if not ok or parsed is None or parsed["action"] == "stop":
            return
        number = len(self.history) + 1
        target = decision.meta.get("target", parsed["target"])
        lines = step_lines(number, parsed["description"], parsed["action"], parsed["text"], parsed["node"], target)
        self.history.append(Done(lines, parsed["description"]))

    # -- from a step to an action --------------------------------------------------------------

    def _action(self, step: ParsedStep, cleaned: Any) -> Action:
        if step.action == "stop":
            return Action("stop", text=step.text)
        el = cleaned.element(step.node)
        kind, text = step.action, step.text
        if kind == "mouse_click_action" and click_means_typing(el.tag, el.attributes.get("type", "text")):
            typed = text or next(iter(_QUOTED.findall(step.description)), "")
            if typed:
                kind, text = "keyboard_sequence_action", typed
        return to_action(kind, step.node, text, el.tag)

    # -- the planner ------------------------------------------------------------------------------

    def _plan(self, obs: HtmlObservation, decision: Decision) -> Action | None:
        assert self.planner is not None
        page = obs.ax_text or ""
        if not self.rewritten:
            prompt = load_prompt("scribe_rewrite").format(objective=self.task, url=obs.url, page=page)
            reply = self._ask_planner(prompt, decision)
            specific = " ".join(reply.split())
            if specific:
                self.objective = f"{self.task.rstrip()} Specifically: {specific}"
            self.rewritten = True
            return None
        if not self.history:
            return None
        steps = "\n".join(f"{k}. {d.description}" for k, d in enumerate(self.history, 1))
        prompt = load_prompt("scribe_stop").format(objective=self.task, url=obs.url, page=page, steps=steps)
        reply = self._ask_planner(prompt, decision)
        m = re.search(r"^\s*Stop:\s*(yes|no)\b", reply, flags=re.I | re.M)
        if m is None or m.group(1).lower() != "yes":
            return None
        answer = re.search(r"^\s*Answer:\s*(.*)$", reply, flags=re.I | re.M)
        decision.meta["planner"] = "stop"
        return Action("stop", text=answer.group(1).strip() if answer else "")

    def _ask_planner(self, prompt: str, decision: Decision) -> str:
        assert self.planner is not None
        messages = [{"role": "user", "content": prompt}]
        decision.prompts.append(messages)
        reply = self.planner.chat(messages)
        decision.responses.append(reply.text)
        decision.prompt_tokens += reply.prompt_tokens
        decision.completion_tokens += reply.completion_tokens
        return reply.text
