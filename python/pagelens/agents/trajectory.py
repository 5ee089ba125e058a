"""Trajectories as JSONL: a ``run`` header, one ``step`` record per step, an ``end`` record.

Each record is one line written with a single write, flushed and fsync'ed before the next
step starts: a crash loses at most the step in progress, and a torn last line (a crash in the
middle of a write) is detected and cut off when the run is resumed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from pagelens.errors import TrajectoryError


class TrajectoryWriter:
    def __init__(self, path: str | os.PathLike[str]):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)

    def append(self, record: dict[str, Any]) -> None:
        line = json.dumps(record, ensure_ascii=False, default=str) + "\n"
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(line)
            f.flush()
            os.fsync(f.fileno())


def read_trajectory(path: str | os.PathLike[str], repair: bool = False) -> list[dict[str, Any]]:
    """The records of a trajectory. A last line that is not complete JSON is a torn write:
    with ``repair`` it is cut from the file, else ignored. A bad line elsewhere is an error."""
    path = Path(path)
    data = path.read_bytes()
    lines = data.split(b"\n")
    records = []
    good_end = 0
    offset = 0
    for i, line in enumerate(lines):
        end = offset + len(line) + 1
        if line.strip():
            try:
                records.append(json.loads(line))
                good_end = min(end, len(data))
            except json.JSONDecodeError as e:
                if i < len(lines) - 2 or (i == len(lines) - 2 and data.endswith(b"\n") and lines[-1]):
                    raise TrajectoryError(f"{path}:{i + 1}: not JSON: {e}") from None
                if repair:
                    with open(path, "r+b") as f:
                        f.truncate(good_end)
                break
        else:
            good_end = min(end, len(data))
        offset = end
    return records
