"""Names the browser servers offer (``pagelens mcp``, and the shell sessions after it), kept in
the base install so that every ``--help`` shows them without the server's extra."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Literal, get_args

from pagelens.errors import PagelensError

# What an action's answer shows of the page: what changed (the whole text when most of it did,
# or the document did), all of it, or none of it. Playwright MCP's --snapshot-mode names.
SnapshotMode = Literal["incremental", "full", "none"]
SNAPSHOT_MODES: tuple[str, ...] = get_args(SnapshotMode)

# Tools a server offers only when asked (--caps), as Playwright MCP gates its extras.
CAPABILITIES: dict[str, str] = {
    "evaluate": "browser_evaluate: run the client's JavaScript in the page's own world",
}


# -- where shell sessions live (read by `pagelens browser`'s client and its daemon) -----------

_SESSION_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


class SessionFilesError(PagelensError):
    """A session name that cannot be one, or a session directory that is not the user's alone."""

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


def runtime_dir() -> Path:
    """The directory of this user's shell sessions (their sockets, states and logs):
    ``$XDG_RUNTIME_DIR/pagelens``, else ``pagelens-UID`` in the temporary directory; made 0700
    and checked to be the user's alone."""
    base = os.environ.get("XDG_RUNTIME_DIR")
    if base and Path(base).is_dir():
        root = Path(base) / "pagelens"
    else:
        import tempfile  # here: only where $XDG_RUNTIME_DIR is not set

        root = Path(tempfile.gettempdir()) / f"pagelens-{os.getuid()}"
    root.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = root.stat()
    if info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise SessionFilesError(f"{root} is not this user's alone (owner or mode): sessions are kept there", "browser")
    return root


def session_files(name: str) -> tuple[Path, Path]:
    """A session's socket and kept state."""
    if not _SESSION_NAME.fullmatch(name):
        raise SessionFilesError(
            f"session name {name!r}: letters, digits, '.', '_' and '-', at most 64, starting with a letter or digit",
            "usage",
        )
    root = runtime_dir()
    return root / f"{name}.sock", root / f"{name}.state.json"
