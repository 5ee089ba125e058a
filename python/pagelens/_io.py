"""Files written so that a crash never leaves half of one behind: whole files replaced
atomically, and append-only JSON-lines logs (one home for both)."""

from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# A UTF-8 byte order mark, which editors on Windows put at the start of a text file: it is
# no part of the first record, in any reader (JSON itself does not allow one).
BOM = b"\xef\xbb\xbf"


def without_bom(data: bytes) -> bytes:
    return data[len(BOM) :] if data.startswith(BOM) else data


def lenient_text(text: str) -> str:
    """``text`` with each lone surrogate (JSON's ``"\\ud800"`` decodes to one; no UTF-8 holds
    it) read as one U+FFFD, as the core reads it: one odd field must not stop a run."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return text


def utf8(text: str) -> bytes:
    """``text`` as UTF-8, a lone surrogate (a page's title, a model's text) as U+FFFD."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return lenient_text(text).encode("utf-8")


def lenient_strings(value: Any) -> Any:
    """``value`` (parsed JSON) with :func:`lenient_text` applied to every string in it, keys
    included; walked with a stack (no recursion a deep document can blow)."""
    if isinstance(value, str):
        return lenient_text(value)
    root = [value]
    stack: list[Any] = [root]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key in list(item):
                child = item[key]
                if isinstance(key, str) and lenient_text(key) != key:
                    del item[key]
                    key = lenient_text(key)
                if isinstance(child, str):
                    item[key] = lenient_text(child)
                else:
                    item[key] = child
                    stack.append(child)
        elif isinstance(item, list):
            for i, child in enumerate(item):
                if isinstance(child, str):
                    item[i] = lenient_text(child)
                else:
                    stack.append(child)
    return root[0]


def write_atomically(path: str | os.PathLike[str], data: str | bytes, *, private: bool = False) -> None:
    """Write to a temporary file beside ``path``, flush it to disk, then rename it over ``path``.
    ``private``: readable by the user alone (0600) from its first byte (cookies, saved sessions)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")  # see remove_unfinished_writes
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600 if private else 0o666)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(utf8(data) if isinstance(data, str) else data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        # Nothing half-written stays: not the temporary file (a full disk, ``path`` a folder;
        # with cookies in it for a private one), and ``path`` is as it was.
        tmp.unlink(missing_ok=True)
        raise


def remove_unfinished_writes(folder: str | os.PathLike[str]) -> None:
    """Removes the temporary files that ``write_atomically`` calls cut short (a killed process)
    left in ``folder``; never a finished file. Only for a folder no live process is writing to."""
    for tmp in Path(folder).glob(".*.tmp"):
        tmp.unlink(missing_ok=True)


def json_line(record: Any) -> bytes:
    """One JSON-lines record: UTF-8 (a lone surrogate as U+FFFD), one line, its line break."""
    return utf8(json.dumps(record, ensure_ascii=False, default=str) + "\n")


def json_lines(records: Any) -> bytes:
    """Records as a whole JSON-lines file (see :func:`json_line`)."""
    return b"".join(json_line(r) for r in records)


class JsonlLog:
    """An append-only JSON-lines log (trajectories, study results, predictions): each record is
    one line written with a single write, flushed and fsync'ed, so a crash loses at most the
    record being written; opening it cuts a torn last line (a crash mid-write), so that the next
    record starts on a line of its own. Safe to append from several threads."""

    def __init__(self, path: str | os.PathLike[str]):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        cut_torn_tail(self.path)
        self._lock = threading.Lock()

    def append(self, record: Any) -> None:
        line = json_line(record)
        with self._lock, open(self.path, "ab") as f:
            f.write(line)
            f.flush()
            os.fsync(f.fileno())


def cut_torn_tail(path: Path) -> bool:
    """Cuts what follows the last line break (a write cut short); True when it cut anything."""
    if not path.exists() or path.stat().st_size == 0:
        return False
    with open(path, "rb+") as f:
        data = f.read()
        if data.endswith(b"\n"):
            return False
        f.truncate(data.rfind(b"\n") + 1)
    return True


@dataclass
class JsonLines:
    """What a JSON-lines file holds: its records, and the lines that are not one."""

    records: list[Any] = field(default_factory=list)
    torn_tail: bool = False  # the last line is cut short (no line break after it, not JSON)
    bad_lines: list[tuple[int, str]] = field(default_factory=list)  # (1-based line, why) elsewhere


def read_json_lines(path: str | os.PathLike[str]) -> JsonLines:
    """Reads every line as JSON (UTF-8). A line cut short, even inside a character, is reported,
    never raised; so is a line nested too deeply to read."""
    data = without_bom(Path(path).read_bytes())
    out = JsonLines()
    lines = data.split(b"\n")
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        why = None
        try:
            out.records.append(json.loads(line.decode("utf-8")))
        except UnicodeDecodeError as e:
            why = f"not UTF-8 text (byte {e.start})"
        except ValueError as e:  # JSONDecodeError
            why = f"{type(e).__name__}: {e}"[:200]
        except RecursionError:
            why = "nested too deeply to read"
        if why is not None:
            if i == len(lines) - 1:  # no line break after it: a write cut short
                out.torn_tail = True
            else:
                out.bad_lines.append((i + 1, why))
    return out


def read_json(path: str | os.PathLike[str], what: str, error: type[Exception] | None = None) -> Any:
    """A JSON file, or an error (``error``, by default :class:`InputFileError`) naming the file
    and what is wrong with it: missing, a folder, not UTF-8, not JSON, nested too deeply."""
    from pagelens.errors import InputFileError

    fail = error or InputFileError
    path = Path(path)
    try:
        return parse_json(path.read_bytes(), f"{path}: {what} is", fail)
    except FileNotFoundError:
        raise fail(f"no such {what}: {path}") from None
    except IsADirectoryError:
        raise fail(f"{path}: a folder, not a {what}") from None


def parse_json(data: bytes | str, what: str, error: type[Exception] | None = None) -> Any:
    """JSON text (UTF-8 when bytes), or an error naming ``what`` (never a RecursionError):
    "``what`` not JSON: ...", so ``what`` ends with "is" or ":" as the sentence needs."""
    from pagelens.errors import InputFileError

    fail = error or InputFileError
    try:
        text = without_bom(data).decode("utf-8") if isinstance(data, bytes) else data.removeprefix("\ufeff")
        return json.loads(text)
    except UnicodeDecodeError as e:
        raise fail(f"{what} not UTF-8 text (byte {e.start})") from None
    except json.JSONDecodeError as e:
        raise fail(f"{what} not JSON: {e}") from None
    except RecursionError:
        raise fail(f"{what} nested too deeply to read") from None
