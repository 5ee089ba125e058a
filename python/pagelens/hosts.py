"""What an allow-list entry may be, and what an address an agent writes means, in a module that
imports nothing of pagelens: `pagelens browser`'s client checks its arguments with it at every
step of a shell agent, the allow-list itself refuses what it refuses
(:class:`pagelens.browser.allowlist.HostAllowList`), and every way of opening a page reads an
address without a scheme alike (:func:`web_address`)."""

from __future__ import annotations

import re

FORMS = "example.com, example.com:8080, *.example.com, file or file:/a/dir"


def host_entry_problem(entry: str) -> str | None:
    """Why ``entry`` cannot be an allow-list entry (None: it can). A URL where a host was meant
    would match nothing and so refuse every page, without saying why."""
    text = entry.strip()
    if not text:
        return f"an empty host (an allow-list entry is {FORMS})"
    if text == "file" or text.startswith("file:/"):
        return None
    if "://" in text or "/" in text or text.startswith("file:"):
        return f"{entry!r} is not a host: an allow-list entry is {FORMS}, not a URL"
    if any(c.isspace() or c in "?#@\\" for c in text):
        return f"{entry!r} is not a host (an allow-list entry is {FORMS})"
    return None


# A scheme as URLs write it (``javascript:``, ``about:``), not a host and its port
# (``localhost:8080``, whose "scheme" would be followed by a digit).
_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*:(?!\d)", re.IGNORECASE)


def web_address(text: str) -> str:
    """What an agent wrote to open, as a URL: ``example.com/a`` or ``localhost:8080`` is an
    http address (as a browser's address bar reads it; a site that has https sends one there);
    anything with a scheme stays as it is, to be refused or opened as it says."""
    url = text.strip()
    if "://" in url or _SCHEME.match(url) or not url:
        return url
    return "http://" + url


__all__ = ["FORMS", "host_entry_problem", "web_address"]
