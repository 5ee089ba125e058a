"""url_match: the run's final URL against the reference, per variant.

WebArena's rule (``webarena`` and, lower-cased and with ``eval.or`` groups, ``agentoccam``):
the trailing ``/`` is stripped from each whole URL; a URL's "base path" is its host (with
port) and path as ``urllib.parse.urlparse`` splits them (``;params`` dropped); the final URL
matches when one reference base path is a *substring* of its base path ("GOLD in PRED", so
``/viewed`` matches ``/viewedasdf``) and every query key of the references has one of their
values (`` |OR| `` alternatives pool their values; ``parse_qs`` drops blank values).

``strict`` compares parsed URLs instead: host and path equal after percent-decoding and a
trailing slash, every reference query parameter present with one of its values.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from urllib.parse import parse_qs, unquote, urlparse, urlsplit

from pagelens.evaluation.tasks import TaskConfig
from pagelens.evaluation.variants import Variant, get_variant

__all__ = ["UrlEvaluator", "url_match", "webarena_url_match"]


def _webarena_clean(url: str, lower: bool) -> str:
    url = str(url).rstrip("/")
    return url.lower() if lower else url


def _webarena_parse(url: str) -> tuple[str, dict[str, list[str]]]:
    parsed = urlparse(url)
    return parsed.netloc + parsed.path, parse_qs(parsed.query)


def webarena_url_match(reference: str, prediction: str, lower: bool = False) -> float:
    """WebArena's "GOLD in PRED" rule for one ``reference_url`` (alternatives split on `` |OR| ``)."""
    refs = [_webarena_clean(u, lower) for u in reference.split(" |OR| ")]
    bases: list[str] = []
    queries: dict[str, set[str]] = defaultdict(set)
    for ref in refs:
        base, query = _webarena_parse(ref)
        bases.append(base)
        for key, values in query.items():
            queries[key].update(values)
    pred_base, pred_query = _webarena_parse(_webarena_clean(prediction, lower))
    score = float(any(base in pred_base for base in bases))
    for key, wanted in queries.items():
        score *= float(any(v in pred_query.get(key, []) for v in wanted))
    return score


def _parts(url: str, lower: bool) -> tuple[str, str, dict[str, list[str]]]:
    url = url.strip()
    if lower:
        url = url.lower()
    parts = urlsplit(url)
    host = (parts.netloc or "").lower()
    path = unquote(parts.path).rstrip("/") or "/"
    return host, path, parse_qs(parts.query, keep_blank_values=True)


def url_match(references: list[str], prediction: str, lower: bool = False) -> float:
    """The strict rule: the final URL's host and path equal one reference's, and every
    reference query parameter has one of its reference values (alternatives pool them)."""
    host, path, query = _parts(prediction, lower)
    refs = [_parts(r, lower) for r in references]
    if not any(h == host and p == path for h, p, _ in refs):
        return 0.0
    wanted: dict[str, set[str]] = defaultdict(set)
    for _, _, q in refs:
        for key, values in q.items():
            wanted[key].update(values)
    for key, accepted in wanted.items():
        if not accepted & set(query.get(key, [])):
            return 0.0
    return 1.0


@dataclass
class UrlEvaluator:
    variant: Variant | str = "webarena"
    details: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.variant = get_variant(self.variant)

    def score(self, task: TaskConfig, final_url: str | None) -> float:
        """``task`` has its site placeholders resolved; ``final_url`` is the URL the run ended on."""
        v = get_variant(self.variant)
        self.details = []
        if not final_url:
            self.details.append("no final URL recorded")
            return 0.0
        groups = [task.reference_url, *(task.url_alternatives if v.url_or else ())]
        best = 0.0
        for group in groups:
            if v.url_rule == "parsed":
                s = url_match([u.strip() for u in group.split(" |OR| ") if u.strip()], final_url, lower=v.url_lower)
            else:
                s = webarena_url_match(group, final_url, lower=v.url_lower)
            self.details.append(f"url_match {group!r} vs {final_url!r}: {s:g}")
            best = max(best, s)
        return best
