"""An agent by its name, as ``pagelens run --agent`` and studies name them."""

from __future__ import annotations

from pagelens.agents.occam import OccamAgent, OccamConfig
from pagelens.agents.runner import Agent
from pagelens.agents.scribe import ScribeAgent, ScribeConfig
from pagelens.agents.step import StePAgent, StePConfig, load_policies
from pagelens.errors import ArgumentError
from pagelens.llm import LLMClient

AGENTS = ("occam", "occam-judge", "step", "scribe")


def make_agent(kind: str, llm: LLMClient, task: str, url: str, *, policies: str | None = None, max_invalid: int = 3,
               scribe: ScribeConfig | None = None, planner: LLMClient | None = None) -> Agent:
    """``occam`` (AgentOccam), ``occam-judge`` (with its judge), ``step`` (SteP, ``policies``:
    a folder of policy files, default the built-in ones) or ``scribe`` (ScribeAgent, with an
    optional ``planner`` model)."""
    if kind == "scribe":
        return ScribeAgent(llm, task, scribe, planner=planner)
    if kind in ("occam", "occam-judge"):
        return OccamAgent(llm, task, url, OccamConfig(judge=kind == "occam-judge", max_invalid=max_invalid))
    if kind == "step":
        return StePAgent(llm, task, load_policies(policies), StePConfig(max_invalid=max_invalid))
    raise ArgumentError(f"unknown agent {kind!r}; known: {', '.join(AGENTS)}")
