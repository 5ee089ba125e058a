"""What an allow-list entry may be, in a module that imports nothing: `pagelens browser`'s
client checks its arguments with it at every step of a shell agent, and the allow-list itself
refuses what it refuses (:class:`pagelens.browser.allowlist.HostAllowList`)."""

from __future__ import annotations

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


__all__ = ["FORMS", "host_entry_problem"]
