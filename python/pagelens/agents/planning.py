"""AgentOccam's planning tree: ``branch`` opens a sub-plan, ``prune`` goes back to a plan.

The root plan is the objective. History is scoped to the active plan: a step belongs to the
plan that was active when it was taken; after ``prune [k]`` the abandoned sub-plans' steps are
folded into plan k (shown compactly, so the agent knows what was tried) and the agent returns
to the URL where plan k was made.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from pagelens.errors import PagelensError


@dataclass
class Plan:
    id: int
    intent: str
    parent: int | None
    url: str | None  # where the plan was made: prune returns here
    steps: list[int] = field(default_factory=list)  # steps taken under this plan
    folded: list[int] = field(default_factory=list)  # steps of abandoned sub-plans, folded in
    pruned: bool = False
    prune_reason: str | None = None


class PlanError(PagelensError, ValueError):
    pass


@dataclass
class PlanTree:
    plans: list[Plan] = field(default_factory=list)
    active: int = 0

    @classmethod
    def start(cls, objective: str, url: str | None) -> PlanTree:
        return cls([Plan(0, f'Find the solution to "{objective}"', None, url)], 0)

    def branch(self, parent: int, intent: str, url: str | None) -> Plan:
        if not 0 <= parent < len(self.plans) or self.plans[parent].pruned:
            raise PlanError(f"there is no open plan [{parent}]; open plans: {self._open_ids()}")
        plan = Plan(len(self.plans), intent.strip(), parent, url)
        self.plans.append(plan)
        self.active = plan.id
        return plan

    def prune(self, resume: int, reason: str) -> Plan:
        """Back to plan ``resume``: every plan under it is closed and its steps folded into it."""
        if not 0 <= resume < len(self.plans) or self.plans[resume].pruned:
            raise PlanError(f"there is no open plan [{resume}]; open plans: {self._open_ids()}")
        if resume == self.active:
            raise PlanError(f"plan [{resume}] is already the active plan")
        target = self.plans[resume]
        for plan in self.plans:
            if plan.id != resume and self._descends(plan.id, resume) and not plan.pruned:
                plan.pruned = True
                plan.prune_reason = reason
                target.folded.extend(plan.steps + plan.folded)
        target.folded.sort()
        self.active = resume
        return target

    def record_step(self, step: int) -> None:
        self.plans[self.active].steps.append(step)

    def _descends(self, plan_id: int, ancestor: int) -> bool:
        parent = self.plans[plan_id].parent
        while parent is not None:
            if parent == ancestor:
                return True
            parent = self.plans[parent].parent
        return False

    def _open_ids(self) -> list[int]:
        return [p.id for p in self.plans if not p.pruned]

    def render(self) -> str:
        """Open plans as an indented list, the active one marked."""
        lines = []
        depth: dict[int, int] = {}
        for plan in self.plans:
            depth[plan.id] = 0 if plan.parent is None else depth[plan.parent] + 1
            if plan.pruned:
                continue
            mark = " (Active Plan)" if plan.id == self.active else ""
            lines.append(f"{'  ' * depth[plan.id]}[{plan.id}]{mark} {plan.intent}")
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        return {"active": self.active, "plans": [asdict(p) for p in self.plans]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PlanTree:
        return cls([Plan(**p) for p in data["plans"]], data["active"])
