"""Files written so that a crash never leaves half of one behind."""

from __future__ import annotations

import os
import threading
from pathlib import Path


def write_atomically(path: str | os.PathLike[str], data: str | bytes) -> None:
    """Write to a temporary file beside ``path``, flush it to disk, then rename it over ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    with open(tmp, "wb") as f:
        f.write(data.encode() if isinstance(data, str) else data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
