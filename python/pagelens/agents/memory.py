"""What an agent remembers of its past steps, and how a step is replayed in its history."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class StepMemory:
    index: int
    plan: int  # the plan (or policy frame) active when the step was taken
    action: str
    reason: str = ""
    ok: bool = True
    error: str | None = None
    url: str = ""
    replay: str = ""  # the pivotal subtree, the model's description, or "same page"
    observation: str = ""  # the full page text, for the last K steps shown in full

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Notes:
    items: list[tuple[int, str]] = field(default_factory=list)  # (plan, text)

    def add(self, plan: int, text: str) -> None:
        self.items.append((plan, text))

    def render(self) -> str:
        return "\n".join(f"- {text}" for _, text in self.items)
