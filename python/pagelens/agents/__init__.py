"""Agents over any OpenAI-compatible model: AgentOccam (planning tree, pivotal history), with
an optional Judge, SteP's stacked policies, and ScribeAgent (a fine-tuned model reading
HTML); :func:`run_agent` runs one on the live browser
and writes a resumable JSONL trajectory and an HTML report."""

from pagelens.actions import Internal
from pagelens.agents.base import Decision
from pagelens.agents.occam import OccamAgent, OccamConfig
from pagelens.agents.planning import PlanTree
from pagelens.agents.report import write_report
from pagelens.agents.runner import RunResult, run_agent
from pagelens.agents.scribe import ScribeAgent, ScribeConfig
from pagelens.agents.step import Policy, PolicyCall, StePAgent, StePConfig, load_policies
from pagelens.agents.trajectory import read_trajectory

__all__ = [
    "Decision",
    "Internal",
    "OccamAgent",
    "OccamConfig",
    "PlanTree",
    "Policy",
    "PolicyCall",
    "RunResult",
    "ScribeAgent",
    "ScribeConfig",
    "StePAgent",
    "StePConfig",
    "load_policies",
    "read_trajectory",
    "run_agent",
    "write_report",
]
