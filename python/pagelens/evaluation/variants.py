"""Which published evaluator a score follows.

| behaviour | ``original`` (WebArena) | ``rectified`` (AgentOccam) |
| --- | --- | --- |
| task configs | as published | the fixes of AgentOccam's appendix E.2 applied |
| ` |OR| ` in string references | literal text | alternatives |
| several must_include references | all required (product) | fraction found (mean) |
| several fuzzy_match references | each graded, all required | joined with "; ", graded once |
| fuzzy_match prompt | strict (``prompts/fuzzy_strict.txt``) | lenient (``prompts/fuzzy_lenient.txt``) |
| url_match ``eval.or`` alternatives | ignored | any may match |
| url_match letter case | as written | lower-cased |
| program_html ``or`` targets | ignored | best of them |
| program_html several must_include | all required | fraction found |

Both variants share pagelens' corrections of outright defects: URLs are compared as parsed
URLs (host, path and query), never as substrings; a one-character must_include reference is
matched as a word; answers are strings, never patterns; program_html never ``eval``s Python
from a config (helpers come from a whitelist).
"""

from __future__ import annotations

from typing import Literal

Variant = Literal["original", "rectified"]
VARIANTS: tuple[Variant, ...] = ("original", "rectified")


def check_variant(variant: str) -> Variant:
    if variant not in VARIANTS:
        raise ValueError(f"unknown evaluator variant {variant!r}; known: {', '.join(VARIANTS)}")
    return variant  # type: ignore[return-value]
