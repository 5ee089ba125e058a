"""url_match: the final URL against the reference, compared as parsed URLs.

WebArena tested ``reference_host_and_path in predicted_host_and_path`` as strings, so a
reference ``/viewed`` matched ``/viewedasdf`` and ``/f/nyc`` matched ``/f/nyc-cars``. Here the
host (with port) must be equal and the path equal after removing a trailing slash and
percent-decoding; every query parameter of the reference must be present in the final URL with
one of the values the reference alternatives give it (extra parameters are allowed: "gold in
pred"). `` |OR| `` separates alternatives in both variants.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from urllib.parse import parse_qs, unquote, urlsplit

from pagelens.evaluation.errors import NotScored
from pagelens.evaluation.tasks import SiteConfig, TaskConfig
from pagelens.evaluation.variants import Variant, check_variant

__all__ = ["UrlEvaluator", "url_match"]


def _parts(url: str, lower: bool) -> tuple[str, str, dict[str, list[str]]]:
    url = url.strip()
    if lower:
        url = url.lower()
    parts = urlsplit(url)
    host = (parts.netloc or "").lower()
    path = unquote(parts.path).rstrip("/") or "/"
    return host, path, parse_qs(parts.query, keep_blank_values=True)


def url_match(references: list[str], prediction: str, lower: bool = False) -> float:
    """1 when the final URL's host and path equal one reference's and every reference query
    parameter has one of its reference values (alternatives pool their values, as WebArena)."""
    host, path, query = _parts(prediction, lower)
    refs = [_parts(r, lower) for r in references]
    if not any(h == host and p == path for h, p, _ in refs):
        return 0.0
    wanted: dict[str, set[str]] = defaultdict(set)
    for _, _, q in refs:
        for key, values in q.items():
            wanted[key].update(values)
    for key, values in wanted.items():
        if not values & set(query.get(key, [])):
            return 0.0
    return 1.0


@dataclass
class UrlEvaluator:
    variant: Variant = "original"
    sites: SiteConfig = field(default_factory=SiteConfig)
    details: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        check_variant(self.variant)

    def score(self, task: TaskConfig, final_url: str | None) -> float:
        self.details = []
        if not final_url:
            self.details.append("no final URL recorded")
            return 0.0
        groups = [task.reference_url]
        if self.variant == "rectified":
            groups += list(task.url_alternatives)
        best = 0.0
        for group in groups:
            missing = self.sites.unresolved(group)
            if missing:
                raise NotScored(f"url_match needs the URL of {', '.join(missing)} (--sites)")
            refs = [self.sites.resolve(u.strip()) for u in group.split(" |OR| ") if u.strip()]
            s = url_match(refs, self.sites.resolve(final_url), lower=self.variant == "rectified")
            self.details.append(f"url_match {group!r} vs {final_url!r}: {s:g}")
            best = max(best, s)
        return best
