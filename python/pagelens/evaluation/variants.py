r"""Which published scoring a success rate follows, and every place the variants differ.

A success rate is only comparable with a paper's when it is computed the way the paper's was.
Each variant reproduces one peer, quirks included; ``strict`` is pagelens' own reading that
fixes the known defects. ``original`` and ``rectified`` are kept as names for ``webarena`` and
``agentoccam``.

Sources (read with the search tool; behaviour written down as facts in the tests, no code
copied): WebArena ``web-arena-x/webarena@f62e0b9`` ``evaluation_harness/evaluators.py`` (WA-E),
``evaluation_harness/helper_functions.py`` (WA-H), ``scripts/generate_test_data.py`` (WA-G);
AgentOccam ``amazon-science/AgentOccam@c078ba6`` ``evaluation_harness/evaluators.py`` (AO-E),
``evaluation_harness/helper_functions.py`` (AO-H), ``config_files/test.raw.json`` (AO-T);
WebArena-Verified ``ServiceNow/webarena-verified`` (its own library does the scoring).

| behaviour | webarena | agentoccam | strict |
| --- | --- | --- | --- |
| task file | WebArena's 812 tasks | WebArena's with AgentOccam's 81 changed tasks (AO-T) | as agentoccam |
| site placeholders | replaced across the whole config, the six of WA-G:11-16 (not `__HOMEPAGE__`) | as webarena | all seven |
| answer cleaning | strip, one pair of quotes, lower (WA-E:80), applied again inside each check | as webarena | as webarena |
| one-character must_include (only when it is the only reference) | a token of NLTK `word_tokenize` (WA-E:106-108) | as webarena | as webarena |
| ` \|OR\| ` in must_include | literal text | alternatives; a one-character alternative always matches when tokenizing (AO-E:106-115) | alternatives |
| several must_include | all required (WA-E:142-148) | fraction found (AO-E:170) | all required |
| several fuzzy_match references | each graded, all required (WA-E:167) | joined with "; ", graded once (AO-E:188) | as agentoccam |
| fuzzy_match prompt | WA-H:146 | AO-H:150-155 ("key points", "explain why") | WA-H's, with a verdict line |
| grader verdict | 0 if the reply contains "partially correct" or "incorrect", else 1 if "correct"; "different" -> 0, else "same" -> 1 (WA-H:169, 204); neither: the task is not scored (WebArena's assert) | as webarena | the reply's verdict line, else as webarena |
| N/A (unachievable) | "n/a" exactly, else the ua grader's verdict replaces the score (WA-E:159) | as webarena | as webarena |
| url_match | reference host+path a *substring* of the final URL's (WA-E:223), queries by `parse_qs` (blank values dropped, WA-E:196), trailing `/` stripped from the whole URL (WA-E:189), ` \|OR\| ` alternatives pool their values (WA-E:213) | as webarena, lower-cased (AO-E:215), `eval.or` groups, best of them (AO-E:242) | parsed URLs: host and path equal, every reference parameter present; lower-cased; `eval.or` |
| program_html `or` targets | ignored | best of them (AO-E:296, 375) | best of them |
| program_html ` \|OR\| ` in must_include | alternatives (WA-E:302) | alternatives, and a lower-case ` \|or\| ` inside one too (AO-E:106, 360) | alternatives, ` \|or\| ` in either case |
| program_html several must_include | all required | fraction found (AO-E:370) | all required |
| program_html locator returning null | the text "None" (`str(None)`, WA-E:289) | as webarena | nothing |
| program_html prep actions | the first that throws ends the others (one try, WA-E:284) | as webarena | as webarena |
| `func:` helpers | `eval` of the config text (WA-E:266, 299) | as webarena | -- |

In every variant, a `func:` expression is parsed and may only call WebArena's helpers with
literal arguments (never `eval`): anything else is that task's error, the others are scored.

``verified`` scores WebArena-Verified's task file with WebArena-Verified's own evaluators (the
``webarena-verified`` library: typed normalisation of values, status and task type, network
events from a HAR file); see :mod:`pagelens.evaluation.verified`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pagelens.errors import PagelensError

__all__ = ["ALIASES", "COMBINE", "Combine", "VARIANTS", "Variant", "VariantName", "get_variant"]

VariantName = Literal["webarena", "agentoccam", "verified", "strict"]
# How several checks make one score: all must pass (their product, WebArena's) or their mean
# (BrowserGym's, AgentOccam's partial credit). The one spelling of the concept.
Combine = Literal["all", "mean"]
COMBINE: tuple[Combine, ...] = ("all", "mean")


@dataclass(frozen=True)
class Variant:
    """How one published evaluator scores (see the module's table)."""

    name: VariantName
    reproduces: str
    task_file: Literal["webarena", "agentoccam", "webarena-verified"]
    placeholders: Literal["webarena", "all"] = "webarena"
    must_include_or: Literal["literal", "agentoccam", "alternatives"] = "literal"
    must_include_combine: Combine = "all"
    fuzzy_references: Literal["each", "joined"] = "each"
    prompts: Literal["webarena", "agentoccam", "strict"] = "webarena"
    url_rule: Literal["webarena", "parsed"] = "webarena"
    url_lower: bool = False
    url_or: bool = False
    html_or: bool = False
    html_must_combine: Combine = "all"
    html_null_text: str = "None"


VARIANTS: dict[str, Variant] = {
    "webarena": Variant(
        name="webarena",
        reproduces="WebArena's released evaluators and task configs (Zhou et al. 2024)",
        task_file="webarena",
    ),
    "agentoccam": Variant(
        name="agentoccam",
        reproduces="AgentOccam's released evaluators and task file (Yang et al. 2024)",
        task_file="agentoccam",
        must_include_or="agentoccam",
        must_include_combine="mean",
        fuzzy_references="joined",
        prompts="agentoccam",
        url_lower=True,
        url_or=True,
        html_or=True,
        html_must_combine="mean",
    ),
    "verified": Variant(
        name="verified",
        reproduces="WebArena-Verified's evaluators on its task file (ServiceNow, 2025)",
        task_file="webarena-verified",
    ),
    "strict": Variant(
        name="strict",
        reproduces="pagelens: AgentOccam's corrected tasks, with the evaluators' known defects fixed",
        task_file="agentoccam",
        placeholders="all",
        must_include_or="alternatives",
        fuzzy_references="joined",
        prompts="strict",
        url_rule="parsed",
        url_lower=True,
        url_or=True,
        html_or=True,
        html_null_text="",
    ),
}
ALIASES = {"original": "webarena", "rectified": "agentoccam"}


def get_variant(name: str | Variant) -> Variant:
    """A variant by name (``original``/``rectified`` are the old names of two of them)."""
    if isinstance(name, Variant):
        return name
    key = ALIASES.get(name, name)
    if key not in VARIANTS:
        known = ", ".join([*VARIANTS, *ALIASES])
        raise PagelensError(f"unknown evaluator variant {name!r}; known: {known}")
    return VARIANTS[key]
