"""The ``verified`` variant: WebArena-Verified's own evaluators score WebArena-Verified's tasks.

WebArena-Verified (ServiceNow, Apache-2.0) publishes its evaluator as a library: answers are
JSON objects (``task_type``, ``status``, ``retrieved_data``) normalised by type (dates,
currency, durations, distances, booleans, numbers, addresses...) and compared with
alternatives, regex patterns and nested objects; mutations and navigations are checked on the
run's network events (a HAR file), several evaluators all required, ``should_not_exist``
events forbidden. Rather than approximate that, this variant runs the library itself:
``pip install 'pagelens[verified]'`` (Python 3.11 or later; ``make setup`` installs it). The
libraries that parse values are pinned to the versions WebArena-Verified pins, so values
normalise exactly as in its own runs.

A run gives its final answer (the ``stop [...]`` text, JSON or a fenced JSON block, as
WebArena-Verified's agents write it) and, for tasks checked on network events, the HAR file
``pagelens run --har`` records next to the trajectory. A task that needs events from a run
without a HAR is not scored (never scored 0).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pagelens.evaluation.errors import EvaluationSetupError, NotScored
from pagelens.evaluation.tasks import PLACEHOLDERS, SiteConfig, TaskConfig

__all__ = ["VerifiedResult", "VerifiedScorer"]


@dataclass
class VerifiedResult:
    score: float
    evaluators: dict[str, float] = field(default_factory=dict)
    details: list[str] = field(default_factory=list)


class VerifiedScorer:
    """WebArena-Verified's ``evaluate_task``, with the sites' URLs from a :class:`SiteConfig`.

    The library wants a URL for every site of a task, even when its checks never mention one;
    a site not given gets an unroutable stand-in (``http://<site>.invalid``, RFC 6761), and a
    task whose expected values do mention a site without a URL is not scored."""

    def __init__(self, sites: SiteConfig):
        try:
            from webarena_verified import WebArenaVerified
            from webarena_verified.types.config import EnvironmentConfig, WebArenaVerifiedConfig
            from webarena_verified.types.tracing import NetworkTrace
        except ImportError as e:
            raise EvaluationSetupError(
                "the verified variant runs WebArena-Verified's own evaluators: pip install 'pagelens[verified]' "
                f"(Python 3.11 or later; make setup does it) [{e}]"
            ) from None
        environments = {
            placeholder: EnvironmentConfig(urls=[sites.base(placeholder) or f"http://{name.replace('_', '-')}.invalid"])
            for placeholder, name in PLACEHOLDERS.items()
            if placeholder != "__HOMEPAGE__"
        }
        self._wa = WebArenaVerified(config=WebArenaVerifiedConfig(environments=environments))
        # A run without recorded network events: the answer's checks need none.
        self._no_events = NetworkTrace.model_construct(
            is_playwright=False, src_file=Path("no-network-events"), events=()
        )
        self._sites = sites

    def score(self, task: TaskConfig, answer: str | None, har: str | None) -> VerifiedResult:
        checks = task.raw.get("eval", [])
        if any(ev.get("evaluator") == "NetworkEventEvaluator" for ev in checks):
            if not har:
                raise NotScored(
                    "this task is checked on the run's network events: record them with "
                    "`pagelens run --har` (no network.har next to the trajectory)"
                )
            missing = [s for s in task.sites if self._sites.base(_placeholder(s)) is None]
            if missing:
                raise NotScored(f"network events are matched on the sites' URLs: give {', '.join(missing)} in --sites")
        unknown = sorted({p for p in PLACEHOLDERS if p in json.dumps(checks) and self._sites.base(p) is None})
        if unknown:
            raise NotScored(f"its expected values name {', '.join(unknown)}: give their URLs in --sites")
        trace: Any = Path(har) if har else self._no_events
        result = self._wa.evaluate_task(task_id=task.task_id, agent_response=answer, network_trace=trace)
        status = str(getattr(result.status, "value", result.status)).lower()
        if status == "error" and not result.evaluators_results:
            # The run's files could not be read (a HAR that is not one...): nothing was judged.
            raise NotScored(f"WebArena-Verified could not evaluate it: {result.error_msg}")
        # An evaluator that fails on the answer (e.g. data where the task expects none) scores
        # 0, as in WebArena-Verified's own results; its message is kept in the details.
        out = VerifiedResult(float(result.score))
        for ev in result.evaluators_results:
            name = ev.evaluator_name
            out.evaluators[name] = out.evaluators.get(name, 1.0) * float(ev.score)
            for assertion in ev.assertions or ():
                messages = "; ".join(assertion.assertion_msgs or ())
                out.details.append(
                    f"{name} {assertion.assertion_name}: {assertion.status}" + (f" ({messages})" if messages else "")
                )
            if ev.error_msg:
                out.details.append(f"{name}: {ev.error_msg}")
        return out


def _placeholder(site: str) -> str:
    return next((p for p, name in PLACEHOLDERS.items() if name == site), f"__{site.upper()}__")
