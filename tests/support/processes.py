"""Processes a test starts and must see gone: what this environment installed, and what a
process left running."""

from __future__ import annotations

import contextlib
import re
import sys
from functools import cache
from pathlib import Path


def descendants(pid: int) -> list[int]:
    """Every live process descended from ``pid``, read from /proc."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError):
            # "pid (comm) state ppid ...": comm may hold spaces and parentheses.
            fields = stat.read_text().rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def browsers_below(pid: int) -> list[int]:
    """The Chromium browser processes below process ``pid`` (not their renderers or helpers:
    Chromium names those by ``--type=``)."""
    found = []
    for child in descendants(pid):
        try:
            args = Path(f"/proc/{child}/cmdline").read_bytes()
        except OSError:
            continue
        # Chromium rewrites its argv (spaces, not NULs, between its arguments).
        if b"chrom" in re.split(rb"[\0 ]", args, maxsplit=1)[0] and b"--type=" not in args:
            found.append(child)
    return found


def daemon_pids(folder: Path) -> list[int]:
    """Running shell daemons (``pagelens.browser.daemon``) whose environment names ``folder``
    (their runtime directory's), read from /proc."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            args = (entry / "cmdline").read_bytes().split(b"\0")
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if b"pagelens.browser.daemon" in args and str(folder).encode() in environ:
            pids.append(int(entry.name))
    return pids


@cache
def executable(name: str) -> str:
    """A command this environment installed (``ray``, ``pagelens``): next to the running
    Python, never from PATH (a fresh clone's ./.venv is not on PATH). Not resolved through
    links: a venv's python is a link to the base interpreter, its scripts are not."""
    path = Path(sys.executable).parent / name
    if not path.exists():
        raise AssertionError(f"{name} is not installed next to {sys.executable}")
    return str(path)
