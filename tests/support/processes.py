"""Processes a test starts and must see gone: what this environment installed, and what a
process left running."""

from __future__ import annotations

import contextlib
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


@cache
def executable(name: str) -> str:
    """A command this environment installed (``ray``, ``pagelens``): next to the running
    Python, never from PATH (a fresh clone's ./.venv is not on PATH). Not resolved through
    links: a venv's python is a link to the base interpreter, its scripts are not."""
    path = Path(sys.executable).parent / name
    if not path.exists():
        raise AssertionError(f"{name} is not installed next to {sys.executable}")
    return str(path)
