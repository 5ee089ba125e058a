"""Names the browser servers offer (``pagelens mcp``, and the shell sessions after it), kept in
the base install so that every ``--help`` shows them without the server's extra."""

from __future__ import annotations

from typing import Literal, get_args

# What an action's answer shows of the page: what changed (the whole text when most of it did,
# or the document did), all of it, or none of it. Playwright MCP's --snapshot-mode names.
SnapshotMode = Literal["incremental", "full", "none"]
SNAPSHOT_MODES: tuple[str, ...] = get_args(SnapshotMode)

# Tools a server offers only when asked (--caps), as Playwright MCP gates its extras.
CAPABILITIES: dict[str, str] = {
    "evaluate": "browser_evaluate: run the client's JavaScript in the page's own world",
}
