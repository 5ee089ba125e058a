"""Trajectories as JSONL: a ``run`` header, one ``step`` record per step, an ``end`` record.

Each record is one line written with a single write, flushed and fsync'ed before the next
step starts: a crash loses at most the step in progress, and a torn last line (a crash in the
middle of a write) is detected and cut off when the run is resumed.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pagelens._io import JsonlLog, cut_torn_tail, read_json_lines
from pagelens.errors import TrajectoryError


class TrajectoryWriter(JsonlLog):
    """Appends a trajectory's records (see :class:`pagelens._io.JsonlLog`)."""


def read_trajectory(path: str | os.PathLike[str], repair: bool = False) -> list[dict[str, Any]]:
    """The records of a trajectory. A last line that is not complete JSON (even cut inside a
    character) is a torn write: with ``repair`` it is cut from the file, else ignored. A bad
    line elsewhere is an error."""
    path = Path(path)
    found = read_json_lines(path)
    if found.bad_lines:
        line, why = found.bad_lines[0]
        raise TrajectoryError(f"{path}:{line}: not JSON: {why}")
    if found.torn_tail and repair:
        cut_torn_tail(path)
    return [r for r in found.records if isinstance(r, dict)]
