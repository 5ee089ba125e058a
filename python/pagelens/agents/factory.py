"""The agents by name: the one registry ``pagelens run --agent``, studies and the docs read."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, fields
from typing import Any

from pagelens.agents.occam import OccamAgent, OccamConfig
from pagelens.agents.runner import Agent
from pagelens.agents.scribe import ScribeAgent, ScribeConfig
from pagelens.agents.step import StePAgent, StePConfig, load_policies
from pagelens.errors import ArgumentError
from pagelens.llm import LLMClient

# The default of every `max_invalid` (invalid actions shown back before a step fails).
MAX_INVALID = OccamConfig.max_invalid


@dataclass(frozen=True)
class AgentOptions:
    """What a caller may set for any agent; each agent uses what applies to it."""

    policies: str | None = None  # SteP: a folder of policy files (default: the built-in ones)
    max_invalid: int = MAX_INVALID
    scribe: ScribeConfig | None = None
    planner: LLMClient | None = None  # ScribeAgent: a general model that plans and stops


@dataclass(frozen=True)
class AgentSettings:
    """An agent's options as a run or a study keeps them (JSON-able): every agent option
    ``pagelens run`` takes, so that ``study run`` takes them too (flags made by
    ``pagelens.cli.common.agent_arguments``). Each agent uses what applies to it."""

    policies: str | None = None  # SteP: a folder of policy files (default: the built-in ones)
    max_invalid: int = MAX_INVALID  # invalid actions shown back before a step fails
    max_tokens: int = ScribeConfig.max_tokens  # ScribeAgent: its chunk budget (the one it was trained with)
    tokenizer: str = ScribeConfig.tokenizer  # ScribeAgent: what chunks are counted in
    samples: int = ScribeConfig.samples  # ScribeAgent: answers sampled per chunk, then voted
    planner_model: str | None = None  # ScribeAgent: a general model that plans and stops
    planner_base_url: str | None = None  # its endpoint (default: the agent's)

    def __post_init__(self) -> None:
        if self.max_invalid < 0:
            raise ArgumentError(f"--max-invalid must be 0 or more, not {self.max_invalid}")
        if self.max_tokens < 1 or self.samples < 1:
            raise ArgumentError(f"--max-tokens and --samples must be positive, not {self.max_tokens}, {self.samples}")

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> AgentSettings:
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - names)
        if unknown:
            raise ArgumentError(f"no agent option {', '.join(unknown)} (known: {', '.join(sorted(names))})")
        return cls(**data)

    def options(self, planner: LLMClient | None = None) -> AgentOptions:
        """The options an agent is made with; ``planner``: the client of ``planner_model``."""
        scribe = ScribeConfig(max_tokens=self.max_tokens, samples=self.samples, tokenizer=self.tokenizer)
        return AgentOptions(policies=self.policies, max_invalid=self.max_invalid, scribe=scribe, planner=planner)


@dataclass(frozen=True)
class AgentKind:
    name: str
    summary: str
    build: Callable[[LLMClient, str, str, AgentOptions], Agent]  # (llm, task, start URL, options)


AGENTS: dict[str, AgentKind] = {
    a.name: a
    for a in (
        AgentKind(
            "occam",
            "AgentOccam: planning tree, pivotal history",
            lambda llm, task, url, o: OccamAgent(llm, task, url, OccamConfig(max_invalid=o.max_invalid)),
        ),
        AgentKind(
            "occam-judge",
            "AgentOccam with its judge choosing among candidate actions",
            lambda llm, task, url, o: OccamAgent(llm, task, url, OccamConfig(judge=True, max_invalid=o.max_invalid)),
        ),
        AgentKind(
            "step",
            "SteP: a stack of policies, each a Markdown file",
            lambda llm, task, url, o: StePAgent(
                llm, task, load_policies(o.policies), StePConfig(max_invalid=o.max_invalid)
            ),
        ),
        AgentKind(
            "scribe",
            "ScribeAgent: a model fine-tuned on `pagelens prep` data, reading HTML chunks",
            lambda llm, task, url, o: ScribeAgent(llm, task, o.scribe, planner=o.planner),
        ),
    )
}


def make_agent(kind: str, llm: LLMClient, task: str, url: str, options: AgentOptions | None = None) -> Agent:
    """The agent registered as ``kind``."""
    spec = AGENTS.get(kind)
    if spec is None:
        raise ArgumentError(f"unknown agent {kind!r}; known: {', '.join(AGENTS)}")
    return spec.build(llm, task, url, options or AgentOptions())
