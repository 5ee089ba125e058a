"""Reading a model's answer by its section names ("Reason:", "Action:" ...)."""

from __future__ import annotations

import re


def split_sections(text: str, names: list[str]) -> dict[str, str]:
    """``{"reason": "...", "action": "..."}`` for the named sections found (keys lower-cased,
    spaces as underscores). A section runs to the next known name; markdown decorations
    (``**Action:**``, ``### Action``) are tolerated."""
    alternation = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    header = re.compile(rf"^[ \t>*#-]*\**\s*({alternation})\s*\**\s*[:：]\s*\**", re.I | re.M)
    found = list(header.finditer(text))
    out: dict[str, str] = {}
    for i, m in enumerate(found):
        end = found[i + 1].start() if i + 1 < len(found) else len(text)
        key = m.group(1).lower().replace(" ", "_")
        if key not in out:  # the first occurrence wins; models sometimes repeat a name in prose
            out[key] = text[m.end() : end].strip()
    return out


def parse_ids(text: str) -> list[int]:
    """The element ids of an "Observation highlight" section, in order, without repeats."""
    seen: dict[int, None] = {}
    for m in re.finditer(r"\d+", text or ""):
        seen.setdefault(int(m.group()), None)
    return list(seen)
