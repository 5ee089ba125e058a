"""Which hosts a run may navigate to."""

from __future__ import annotations

import posixpath
from collections.abc import Iterable
from urllib.parse import unquote, urlsplit

from pagelens._core import escape_page_text
from pagelens.errors import ArgumentError
from pagelens.hosts import host_entry_problem

# Documents that are not a site: always allowed.
_LOCAL_SCHEMES = frozenset({"about", "data", "blob", "javascript"})


class HostAllowList:
    """Hosts a run may visit: ``example.com`` (any port), ``example.com:8080`` (that port),
    ``*.example.com`` (its subdomains and itself), ``file`` (local files), or ``file:/a/dir``
    (the files under that directory)."""

    def __init__(self, hosts: Iterable[str]):
        entries = list(hosts)
        for entry in entries:
            problem = host_entry_problem(entry)
            if problem is not None:
                raise ArgumentError(problem)
        # Host names are case-blind; a directory's path is not.
        self.hosts: tuple[str, ...] = tuple(
            dict.fromkeys(h.strip() if h.strip().startswith("file:") else h.strip().lower() for h in entries)
        )
        if not self.hosts:
            raise ArgumentError("an allow-list needs at least one host")

    @classmethod
    def for_start_url(cls, url: str, extra: Iterable[str] = ()) -> HostAllowList:
        """The default: the start URL's host (or local files for a ``file://`` start)."""
        parts = urlsplit(url)
        own = "file" if parts.scheme == "file" else (parts.hostname or "")
        if not own:
            raise ArgumentError(f"cannot take a host from the start URL {url!r}")
        return cls([own, *extra])

    def allows(self, url: str) -> bool:
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        if scheme in _LOCAL_SCHEMES or url == "about:blank":
            return True
        if scheme == "file":
            if "file" in self.hosts:
                return True
            path = posixpath.normpath(unquote(parts.path) or "/")
            return any(
                path == d or path.startswith(d.rstrip("/") + "/")
                for d in (posixpath.normpath(h[5:]) for h in self.hosts if h.startswith("file:/"))
            )
        if scheme not in ("http", "https", "ws", "wss"):
            return False
        host = (parts.hostname or "").lower()
        try:
            port = parts.port
        except ValueError:
            return False
        for entry in self.hosts:
            if entry == "file" or entry.startswith("file:"):
                continue
            if entry.startswith("*."):
                base = entry[2:]
                if host == base or host.endswith("." + base):
                    return True
            else:
                name, want = _host_and_port(entry)
                if host == name and (want is None or str(port if port is not None else _default_port(scheme)) == want):
                    return True
        return False

    def refusal(self, url: str, redirected_from: str | None = None) -> str:
        """What an agent is told of a navigation off the list (by an action, by the page, or
        by a redirect hop from ``redirected_from``). The URLs are the page's words, shown to the
        model: escaped as the tree's text is."""
        host = urlsplit(url).hostname or url
        hop = f" (a redirect from {redirected_from})" if redirected_from else ""
        allowed = ", ".join(self.hosts)
        return escape_page_text(
            f"navigation to {url}{hop} was refused: its host {host} is not allowed in this run (allowed: {allowed})"
        )

    def __repr__(self) -> str:
        return f"HostAllowList({list(self.hosts)!r})"


def _host_and_port(entry: str) -> tuple[str, str | None]:
    """An entry's host and port (None: any): ``example.com:8080``; an IPv6 address bare
    (``::1``, as a URL's host reads) or in brackets (``[::1]``, ``[::1]:8080``)."""
    if entry.startswith("["):
        inside, _, rest = entry[1:].partition("]")
        return inside, rest[1:] if rest.startswith(":") else None
    if entry.count(":") == 1:
        name, _, port = entry.partition(":")
        return name, port
    return entry, None


def _default_port(scheme: str) -> int:
    return 443 if scheme in ("https", "wss") else 80
