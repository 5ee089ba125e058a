"""Where batch work runs, for ``prep`` and ``study run`` alike: the one registry of engines."""

from __future__ import annotations

ENGINES: dict[str, str] = {
    "local": "this machine: threads (prep) or worker processes (studies)",
    "ray": "a Ray cluster: the local one started here, or --address to join one (needs pagelens[datasets])",
}
