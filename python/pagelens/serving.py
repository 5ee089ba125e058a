"""Names the browser servers offer (``pagelens mcp``, and the shell sessions after it), kept in
the base install so that every ``--help`` shows them without the server's extra."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import Any, Literal, get_args

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


_KEPT = "sessions are kept there"


def _own_folder(folder: Path) -> Path:
    """``folder`` made (0700) if missing, and checked without following a link: a directory
    itself (not a link to one, which another user could have planted), owned by this user,
    reachable by nobody else."""
    try:
        folder.mkdir(mode=0o700, parents=True)
    except FileExistsError:
        pass
    except OSError as e:
        raise SessionFilesError(f"{folder} cannot be made: {e.strerror or e}", "browser") from None
    info = folder.lstat()
    if not stat.S_ISDIR(info.st_mode):
        what = "a link" if stat.S_ISLNK(info.st_mode) else "not a directory"
        raise SessionFilesError(f"{folder} is {what}, not a directory of this user's: {_KEPT}", "browser")
    if info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise SessionFilesError(f"{folder} is not this user's alone (owner or mode): {_KEPT}", "browser")
    return folder


def runtime_dir() -> Path:
    """The directory of this user's shell sessions (their sockets, states, logs and files):
    ``$XDG_RUNTIME_DIR/pagelens``, else ``pagelens-UID`` in the temporary directory; made 0700
    and checked to be the user's alone (itself: a link there is refused, never followed)."""
    base = os.environ.get("XDG_RUNTIME_DIR")
    if base and os.path.isabs(base) and Path(base).is_dir():
        root = Path(base) / "pagelens"
    else:
        import tempfile  # here: only where $XDG_RUNTIME_DIR is not set

        root = Path(tempfile.gettempdir()) / f"pagelens-{os.getuid()}"
    return _own_folder(root)


def session_folder(name: str) -> Path:
    """The private folder (0700) of a session's files — long snapshots, downloads, screenshots —
    where the user named none: removed when the session closes."""
    session_files(name)  # the name checked
    return _own_folder(runtime_dir() / f"{name}.files")


def is_session_name(name: str) -> bool:
    return _SESSION_NAME.fullmatch(name) is not None


def session_files(name: str) -> tuple[Path, Path]:
    """A session's socket and kept state."""
    if not is_session_name(name):
        raise SessionFilesError(
            f"session name {name!r}: letters, digits, '.', '_' and '-', at most 64, starting with a letter or digit",
            "usage",
        )
    root = runtime_dir()
    return root / f"{name}.sock", root / f"{name}.state.json"


# What the daemon's sessions read from the environment of the command that started it: a
# command that names another value gets a daemon of its own.
_DAEMON_ENVIRONMENT = ("PAGELENS_CHROMIUM", "PAGELENS_CHECK_INCREMENTAL")


def daemon_files() -> tuple[Path, Path, Path]:
    """The socket, lock and log of this user's daemon of this install (the interpreter and the
    package: two installs never serve each other's sessions) and of the environment its sessions
    read (the Chromium they run). Their names start with a dot, which no session name does."""
    import hashlib
    import sys

    read = "\0".join(f"{name}={os.environ.get(name, '')}" for name in _DAEMON_ENVIRONMENT)
    install = f"{os.path.realpath(sys.executable)}\0{Path(__file__).resolve().parent}\0{read}"
    # Short: a socket's whole path must fit in 107 bytes.
    key = hashlib.sha256(install.encode()).hexdigest()[:10]
    root = runtime_dir()
    return root / f".{key}.sock", root / f".{key}.lock", root / f".{key}.log"


# -- a kept session's cookies and storage ----------------------------------------------------

_SAME_SITE = ("Strict", "Lax", "None")


def storage_state_problem(state: Any) -> str | None:
    """What makes ``state`` no storage state Playwright takes (its cookies and each origin's
    local storage, as ``context.storage_state()`` writes them), in a few words; None when it is
    one. The shape is fixed: read without recursion, whatever the input nests."""
    if not isinstance(state, dict):
        return f"it is {type(state).__name__}, not an object with cookies and origins"
    cookies, origins = state.get("cookies", []), state.get("origins", [])
    if not isinstance(cookies, list) or not isinstance(origins, list):
        return "cookies and origins are lists"
    text = {"name", "value", "domain", "path"}
    for i, cookie in enumerate(cookies):
        if not isinstance(cookie, dict):
            return f"cookie {i} is not an object"
        for key in text:
            if not isinstance(cookie.get(key), str):
                return f"cookie {i}'s {key} is not a string"
        if not isinstance(cookie.get("expires", -1), (int, float)) or isinstance(cookie.get("expires"), bool):
            return f"cookie {i}'s expires is not a number"
        for key in ("httpOnly", "secure"):
            if not isinstance(cookie.get(key, False), bool):
                return f"cookie {i}'s {key} is not true or false"
        if cookie.get("sameSite", "Lax") not in _SAME_SITE:
            return f"cookie {i}'s sameSite is not one of {', '.join(_SAME_SITE)}"
    for i, origin in enumerate(origins):
        if not isinstance(origin, dict) or not isinstance(origin.get("origin"), str):
            return f"origin {i} is not an object with an origin"
        stored = origin.get("localStorage", [])
        if not isinstance(stored, list) or not all(
            isinstance(item, dict) and isinstance(item.get("name"), str) and isinstance(item.get("value"), str)
            for item in stored
        ):
            return f"origin {i}'s localStorage is not a list of names and values"
    return None
