"""SteP (Sodhi et al. 2024): a stack of LLM policies. The policy on top acts on the page, calls
another policy (pushed, with a fresh history), or finishes with ``stop [value]`` (popped; the
value goes into the caller's history). The root's ``stop`` ends the run.

Policies are Markdown files in a folder, so users add their own without code::

    name: fill_form
    description: fill in a form's fields and submit it
    argument: the values to enter, e.g. "username keli, password 3hI"

    ## Instructions
    ...
    ## Examples
    ...

Unlike the published code: the action is parsed as a whole (a ``stop`` inside typed text does
not pop), an unknown policy name is an error shown to the model, a reply without an
``Action:`` marker is searched for an action, and the stack depth and each policy's steps are
limited.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from pagelens._core import RenderMode, escape_page_text
from pagelens.actions import (
    ACTION_SPACES,
    PLANNING,
    Action,
    ActionError,
    Internal,
    UnknownActionError,
    describe_actions,
    parse_action,
)
from pagelens.agents.base import Decision, ask_for_action, load_prompt
from pagelens.agents.sections import split_sections
from pagelens.browser.records import PageObservation
from pagelens.errors import PagelensError
from pagelens.llm import LLMClient


@dataclass(frozen=True)
class Policy:
    name: str
    description: str
    argument: str = ""
    instructions: str = ""
    examples: str = ""


class PolicyError(PagelensError, ValueError):
    pass


def load_policies(folder: str | Path | None = None) -> dict[str, Policy]:
    """Every ``*.md`` policy in ``folder`` (default: the built-in ones)."""
    if folder is None:
        files = [
            (p.name, p.read_text())
            for p in resources.files("pagelens.agents").joinpath("policies").iterdir()
            if p.name.endswith(".md")
        ]
    else:
        folder = Path(folder)
        if not folder.is_dir():
            raise PolicyError(f"no policy folder {folder}")
        files = [(p.name, p.read_text()) for p in sorted(folder.glob("*.md"))]
    policies = {}
    for name, text in files:
        policy = parse_policy(text, name)
        if policy.name in policies:
            raise PolicyError(f"{name}: a second policy named {policy.name!r}")
        policies[policy.name] = policy
    if not policies:
        raise PolicyError(f"no policies (*.md) in {folder}")
    return policies


def parse_policy(text: str, where: str = "policy") -> Policy:
    head, _, body = text.partition("\n\n")
    fields: dict[str, str] = {}
    for line in head.splitlines():
        key, sep, value = line.partition(":")
        if not sep:
            raise PolicyError(f"{where}: header lines are `key: value`, got {line!r}")
        fields[key.strip().lower()] = value.strip()
    name = fields.get("name", "")
    if not re.fullmatch(r"[a-z][a-z0-9_]*", name):
        raise PolicyError(f"{where}: `name` must be lower_snake_case, got {name!r}")
    if name in ACTION_SPACES["all"]:
        raise PolicyError(f"{where}: {name!r} is an action's name")
    if not fields.get("description"):
        raise PolicyError(f"{where}: missing `description`")
    sections = re.split(r"^##\s*(Instructions|Examples)\s*$", body, flags=re.M | re.I)
    parts = {sections[i].lower(): sections[i + 1].strip() for i in range(1, len(sections) - 1, 2)}
    return Policy(
        name,
        fields["description"],
        fields.get("argument", ""),
        parts.get("instructions", body.strip()),
        parts.get("examples", ""),
    )


@dataclass(frozen=True)
class PolicyCall:
    name: str
    argument: str

    def __str__(self) -> str:
        return f"{self.name} [{self.argument}]"


@dataclass
class Frame:
    policy: str
    objective: str
    history: list[str] = field(default_factory=list)
    steps: int = 0


@dataclass
class StePConfig:
    root: str = "root"
    max_depth: int = 3
    max_policy_steps: int = 10
    max_invalid: int = 3
    observation: RenderMode = "occam"


class StePAgent:
    name = "step"

    def __init__(
        self,
        llm: LLMClient,
        objective: str,
        policies: dict[str, Policy] | None = None,
        config: StePConfig | None = None,
    ):
        self.llm = llm
        self.objective = objective
        self.policies = policies or load_policies()
        self.config = config or StePConfig()
        if self.config.root not in self.policies:
            raise PolicyError(f"no root policy {self.config.root!r} among {sorted(self.policies)}")
        self.stack: list[Frame] = [Frame(self.config.root, objective)]
        self.allowed = (ACTION_SPACES["webarena"] | {"note", "stop"}) - PLANNING

    def state(self) -> dict[str, Any]:
        return {"stack": [asdict(f) for f in self.stack]}

    def restore(self, state: dict[str, Any]) -> None:
        self.stack = [Frame(**f) for f in state["stack"]]

    def config_json(self) -> dict[str, Any]:
        return {**asdict(self.config), "policies": sorted(self.policies)}

    def _system(self, frame: Frame) -> str:
        policy = self.policies[frame.policy]
        navigation = describe_actions(self.allowed - {"stop"})
        others = "\n".join(
            f"{p.name} [{p.argument or 'argument'}]: {p.description}"
            for p in self.policies.values()
            if p.name != self.config.root
        )
        example = next((f"{p.name} [...]" for p in self.policies.values() if p.name != self.config.root), "none")
        stop_note = (
            " (as root policy: the final answer; N/A if the task cannot be done)"
            if frame.policy == self.config.root
            else " to the policy that called you"
        )
        examples = f"Examples:\n{policy.examples}" if policy.examples else ""
        return (
            load_prompt("step_system")
            .strip()
            .format(
                name=policy.name,
                description=policy.description,
                instructions=policy.instructions,
                navigation_actions=navigation,
                policies=others or "(none)",
                example_call=example,
                stop_note=stop_note,
                examples=examples,
            )
            .strip()
        )

    def decide(self, obs: PageObservation, step: int) -> Decision:
        frame = self.stack[-1]
        decision = Decision(action=None, meta={"policy": frame.policy, "depth": len(self.stack)})
        page = obs.text if obs.mode == self.config.observation else obs.tree.render(self.config.observation).text
        history = "\n".join(frame.history) or "(no steps yet)"
        user = (
            f"OBJECTIVE:\n{frame.objective}\n\nHISTORY OF THIS POLICY:\n{history}\n\n"
            f"CURRENT OBSERVATION:\nURL: {escape_page_text(obs.url)}\n{page}"
        )
        messages = [{"role": "system", "content": self._system(frame)}, {"role": "user", "content": user}]

        def extract(text: str) -> tuple[str, Any]:
            sections = split_sections(text, ["Reason", "Action"])
            action_text = sections.get("action") or text
            return "", (sections, self._parse(action_text))

        got = ask_for_action(self.llm, messages, decision, extract, self.config.max_invalid)
        if got is not None:
            sections, action = got[1]
            decision.sections, decision.reason, decision.action = sections, sections.get("reason", ""), action
        return decision

    def _parse(self, text: str) -> Action | PolicyCall:
        lines = [line.strip().strip("`").strip() for line in text.strip().splitlines() if line.strip()]
        for line in lines or [text]:
            m = re.match(r"^([A-Za-z_][A-Za-z0-9_]*)\s*(\[.*)?$", line, flags=re.S)
            if m and m.group(1).lower() in self.policies and m.group(1).lower() != self.config.root:
                arg = (m.group(2) or "").strip()
                if not (arg.startswith("[") and arg.endswith("]")):
                    raise ActionError(f"a policy call is `{m.group(1)} [argument]`")
                return PolicyCall(m.group(1).lower(), arg[1:-1].strip())
        try:
            return parse_action(text, self.allowed)
        except UnknownActionError as e:
            callable_policies = ", ".join(p for p in self.policies if p != self.config.root)
            raise UnknownActionError(f"{e}; or call a policy: {callable_policies}") from None

    # -- what the internal actions mean to SteP (see pagelens.agents.base.apply_internal) ------

    def on_own_action(self, action: PolicyCall, url: str) -> Internal:
        """A policy call pushes the policy, up to the stack's depth."""
        if len(self.stack) >= self.config.max_depth:
            return Internal(
                False,
                f"cannot call {action.name}: the policy stack is full (at most {self.config.max_depth} policies deep)",
            )
        self.stack.append(Frame(action.name, action.argument))
        return Internal(True)

    def on_answer(self, action: Action, url: str) -> Internal:
        """``stop`` in the root policy ends the task; in a called one it returns to the caller."""
        if len(self.stack) == 1:
            return Internal(True, done=True, answer=action.text or "")
        frame = self.stack.pop()
        self.stack[-1].history.append(f"{frame.policy} [{frame.objective}] returned: {action.text}")
        return Internal(True)

    def record(self, step: int, decision: Decision, obs: PageObservation, ok: bool, error: str | None) -> None:
        depth = decision.meta.get("depth", len(self.stack))
        if depth > len(self.stack) or (
            isinstance(decision.action, Action) and decision.action.kind == "stop" and depth > 1
        ):
            return  # the frame finished this step; its return value is already with the caller
        frame = self.stack[depth - 1]
        outcome = "done" if ok else f"failed: {error}"
        what = str(decision.action) if decision.action else "(no valid action)"
        # A call that went ahead shows up as its return value; a refused one as its error.
        if not isinstance(decision.action, PolicyCall) or not ok:
            frame.history.append(
                f"STEP {step}: {what} -> {outcome}" + (f" (reason: {decision.reason})" if decision.reason else "")
            )
        frame.steps += 1
        top = self.stack[-1]
        if len(self.stack) > 1 and top.steps >= self.config.max_policy_steps:
            self.stack.pop()
            self.stack[-1].history.append(
                f"{top.policy} [{top.objective}] gave up after {top.steps} steps without finishing"
            )
