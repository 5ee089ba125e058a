"""AgentOccam (Yang et al. 2024): aligned actions, the planning tree, pivotal-node history,
and optionally a judge that picks among several proposed actions.

Every ablation of the paper's Figure 5 is a field of :class:`OccamConfig`: the action space
(``action_space``, ``scrolling``), the observation form (``observation``), the history
(``history``) and planning (``planning``).
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass
from typing import Any

from pagelens._core import DEFAULT_TOKENIZER, RenderMode, escape_page_text
from pagelens.actions import (
    ACTION_SPACES,
    PLANNING,
    Action,
    ActionError,
    Internal,
    describe_actions,
    parse_action,
)
from pagelens.agents.base import Decision, ask_for_action, load_prompt
from pagelens.agents.memory import Notes, StepMemory
from pagelens.agents.planning import PlanError, PlanTree
from pagelens.agents.sections import parse_ids, split_sections
from pagelens.browser.records import PageObservation
from pagelens.llm import LLMClient

SECTIONS = ["Interaction history summary", "Observation description", "Reason", "Action", "Observation highlight"]
JUDGE_SECTIONS = ["Plan progress assessment", "Action assessment", "Action selection"]


@dataclass
class OccamConfig:
    action_space: str = "occam"  # "occam" (aligned) or "webarena" (the full original set)
    scrolling: bool = False  # AgentOccam removes scroll: the whole page is observed
    observation: RenderMode = "occam"  # how the page is rendered for the model
    history: str = "pivotal"  # "none", "actions", "pivotal" (pivotal subtrees) or "full"
    planning: bool = True  # branch / prune and the plan-scoped history
    recent_full: int = 0  # the last K steps replayed with their whole page
    pivotal_max_tokens: int = 800  # above this, a step is replayed by the model's description
    max_invalid: int = 3  # invalid actions shown back to the model before the step fails
    judge: bool = False
    candidates: int = 3  # with a judge: how many actions the model may propose
    tokenizer: str = DEFAULT_TOKENIZER

    def allowed(self) -> frozenset[str]:
        space = set(ACTION_SPACES[self.action_space])
        space |= {"note", "stop"}
        if self.action_space == "occam":
            space.add("go_home")
        if self.scrolling:
            space.add("scroll")
        elif self.action_space == "occam":
            space.discard("scroll")
        if self.planning:
            space |= PLANNING
        else:
            space -= PLANNING
        return frozenset(space)


class OccamAgent:
    name = "occam"

    def __init__(self, llm: LLMClient, objective: str, start_url: str | None = None, config: OccamConfig | None = None):
        self.llm = llm
        self.objective = objective
        self.config = config or OccamConfig()
        self.plans = PlanTree.start(objective, start_url)
        self.notes = Notes()
        self.memory: list[StepMemory] = []
        self._last_obs_digest: str | None = None
        if self.config.judge:
            self.name = "occam-judge"

    # -- state (for --resume) ----------------------------------------------------------------

    def state(self) -> dict[str, Any]:
        return {
            "plans": self.plans.to_json(),
            "notes": self.notes.items,
            "memory": [m.to_json() for m in self.memory],
            "last_obs": self._last_obs_digest,
        }

    def restore(self, state: dict[str, Any]) -> None:
        self.plans = PlanTree.from_json(state["plans"])
        self.notes = Notes([tuple(n) for n in state["notes"]])
        self.memory = [StepMemory(**m) for m in state["memory"]]
        self._last_obs_digest = state.get("last_obs")

    # -- prompting ----------------------------------------------------------------------------

    def _system(self) -> str:
        allowed = self.config.allowed()
        actions = describe_actions(allowed)
        if self.config.planning:
            actions = load_prompt("planning_actions").strip() + "\n" + actions
        action_line = "one action, exactly as specified below."
        if self.config.judge:
            action_line = (
                f"every action worth considering for this step, one per line, best first "
                f"(at most {self.config.candidates})."
            )
        sections = load_prompt("output_sections").strip().format(action_line=action_line)
        return load_prompt("occam_system").strip().format(output_sections=sections, action_instructions=actions)

    def _page_text(self, obs: PageObservation) -> str:
        text = obs.text
        if self.config.observation != obs.mode:
            text = obs.tree.render(self.config.observation).text
        return text

    def history_text(self) -> str:
        mode = self.config.history
        if mode == "none":
            return ""
        active = self.plans.plans[self.plans.active] if self.config.planning else None
        if active is not None:
            shown = set(active.steps)
            folded = set(active.folded)
        else:
            shown, folded = {m.index for m in self.memory}, set()
        visible = [m for m in self.memory if m.index in shown or m.index in folded]
        recent = (
            {m.index for m in [m for m in visible if m.index in shown][-self.config.recent_full :]}
            if self.config.recent_full
            else set()
        )
        out = []
        for m in visible:
            outcome = "done" if m.ok else f"failed: {m.error}"
            if m.index in folded:
                out.append(f"STEP {m.index} (abandoned sub-plan [{m.plan}]): {m.action} -> {outcome}")
                continue
            out.append(f"STEP {m.index}: {m.action} -> {outcome}")
            if m.reason:
                out.append(f"  reason: {m.reason}")
            if mode == "actions":
                continue
            page = m.observation if (mode == "full" or m.index in recent) else m.replay
            if page:
                out.append("  page:\n" + "\n".join("    " + line for line in page.splitlines()))
        return "\n".join(out)

    def user_message(self, obs: PageObservation) -> str:
        parts = [f"OBJECTIVE:\n{self.objective}"]
        if self.config.planning:
            plans = self.plans.render()
            notes = self.notes.render()
            parts.append("PREVIOUS PLANS:\n" + plans + (f"\nNOTES:\n{notes}" if notes else ""))
        elif self.notes.items:
            parts.append("NOTES:\n" + self.notes.render())
        if self.config.history != "none":
            parts.append("INTERACTION HISTORY:\n" + (self.history_text() or "(no steps yet)"))
        header = obs.header()
        page = self._page_text(obs)
        url = escape_page_text(obs.url)
        parts.append(f"CURRENT OBSERVATION:\nURL: {url}\n" + (header + "\n" if header else "") + page)
        return "\n\n".join(parts)

    # -- deciding -----------------------------------------------------------------------------

    def decide(self, obs: PageObservation, step: int) -> Decision:
        decision = Decision(action=None, meta={"plan": self.plans.active})
        messages = [{"role": "system", "content": self._system()}, {"role": "user", "content": self.user_message(obs)}]
        allowed = self.config.allowed()

        def extract(text: str) -> tuple[str, Any]:
            sections = split_sections(text, SECTIONS)
            action_text = sections.get("action") or text  # no "Action:" marker: look everywhere
            if self.config.judge:
                candidates = []
                for line in action_text.splitlines():
                    line = line.strip().lstrip("-*0123456789.) ").strip()
                    if not line:
                        continue
                    try:
                        candidates.append(parse_action(line, allowed))
                    except ActionError:
                        continue
                if not candidates:
                    parse_action(action_text, allowed)  # raises the parser's message
                unique = list(dict.fromkeys(candidates))[: self.config.candidates]
                return "", (sections, unique)
            return "", (sections, [parse_action(action_text, allowed)])

        got = ask_for_action(self.llm, messages, decision, extract, self.config.max_invalid)
        if got is None:
            return decision
        sections, candidates = got[1]
        decision.sections = sections
        decision.reason = sections.get("reason", "")
        decision.highlights = parse_ids(sections.get("observation_highlight", ""))
        decision.candidates = [str(c) for c in candidates]
        if self.config.judge and len(candidates) > 1:
            decision.action = self._judge(obs, candidates, decision)
        else:
            decision.action = candidates[0]
        return decision

    def _judge(self, obs: PageObservation, candidates: list[Action], decision: Decision) -> Action:
        listing = "\n".join(f"{i}: {c}" for i, c in enumerate(candidates))
        messages = [
            {"role": "system", "content": load_prompt("judge_system").strip()},
            {"role": "user", "content": self.user_message(obs) + f"\n\nACTIONS TO CHOOSE FROM:\n{listing}"},
        ]
        reply = self.llm.chat(messages)
        decision.prompt_tokens += reply.prompt_tokens
        decision.completion_tokens += reply.completion_tokens
        sections = split_sections(reply.text, JUDGE_SECTIONS)
        picked = parse_ids(sections.get("action_selection", reply.text.splitlines()[-1] if reply.text else ""))
        index = picked[0] if picked and picked[0] < len(candidates) else 0
        decision.judge = {
            "prompt": messages,
            "response": reply.text,
            "selected": index,
            "fell_back": not (picked and picked[0] < len(candidates)),
        }
        return candidates[index]

    # -- planning actions and memory ----------------------------------------------------------------

    def apply_plan_action(self, action: Action, url: str) -> tuple[bool, str | None, str | None]:
        """(ok, error, url to return to) for branch / prune."""
        try:
            if action.kind == "branch":
                self.plans.branch(action.target or 0, action.text or "", url)
                return True, None, None
            plan = self.plans.prune(action.target or 0, action.text or "")
            return True, None, plan.url
        except PlanError as e:
            return False, str(e), None

    def record(self, step: int, decision: Decision, obs: PageObservation, ok: bool, error: str | None) -> StepMemory:
        """Remember a finished step (the plan it belonged to is the one active before it ran)."""
        page = self._page_text(obs)
        digest = hashlib.sha1(page.encode()).hexdigest()
        if digest == self._last_obs_digest:
            replay = "same page as the step before"
        else:
            replay = self._pivotal(obs, decision)
        self._last_obs_digest = digest
        plan = decision.meta.get("plan", self.plans.active)
        if self.plans.plans[plan].pruned:  # a prune step: it goes with the steps it abandoned
            self.plans.plans[self.plans.active].folded.append(step)
        else:
            self.plans.plans[plan].steps.append(step)
        memory = StepMemory(
            step,
            plan,
            str(decision.action) if decision.action else "(no valid action)",
            decision.reason,
            ok,
            error,
            obs.url,
            replay,
            page,
        )
        self.memory.append(memory)
        return memory

    def _pivotal(self, obs: PageObservation, decision: Decision) -> str:
        ids = [i for i in decision.highlights if i in obs.tree]
        description = decision.sections.get("observation_description", "")
        if not ids:
            return description
        sub = obs.tree.subtree(ids, tokenizer=self.config.tokenizer)
        if sub.token_count > self.config.pivotal_max_tokens and description:
            return description
        return sub.text

    # -- what the internal actions mean to AgentOccam (see pagelens.actions.internal_outcome) --

    def on_plan(self, action: Action, url: str) -> Internal:
        if not self.config.planning:
            return Internal(False, "planning actions are switched off")
        ok, error, back_to = self.apply_plan_action(action, url)
        return Internal(ok, error, navigate_to=back_to)

    def on_note(self, action: Action, url: str) -> Internal:
        self.notes.add(self.plans.active, action.text or "")
        return Internal(True, note=action.text or "")

    def config_json(self) -> dict[str, Any]:
        return asdict(self.config)
