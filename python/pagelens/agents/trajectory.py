"""Trajectories as JSONL: a ``run`` header, one ``step`` record per step, an ``end`` record.

The three records are the dataclasses below; :func:`load_trajectory` is the one reader (the
runner resuming, the report, the evaluation harness), :func:`read_trajectory` the raw lines
under it. Fields a record does not have take their defaults (a trajectory written by hand or
by an older pagelens still reads); a field of the wrong type is a :class:`TrajectoryError`
naming the line and the field.

Each record is one line written with a single write, flushed and fsync'ed before the next
step starts: a crash loses at most the step in progress, and a torn last line (a crash in the
middle of a write) is detected and cut off when the run is resumed.
"""

from __future__ import annotations

import functools
import os
import types
import typing
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from pagelens._io import JsonlLog, cut_torn_tail, read_json_lines
from pagelens.errors import TrajectoryError

__all__ = [
    "EndRecord",
    "RunHeader",
    "StepRecord",
    "Trajectory",
    "TrajectoryWriter",
    "load_trajectory",
    "read_trajectory",
]


def _check(value: Any, expected: tuple[type, ...], name: str, where: str) -> Any:
    if value is None or (isinstance(value, expected) and not (isinstance(value, bool) and bool not in expected)):
        return value
    kinds = " or ".join(t.__name__.replace("str", "a string").replace("dict", "an object") for t in expected)
    raise TrajectoryError(f"{where}: field `{name}` must be {kinds}, not {type(value).__name__}")


_R = TypeVar("_R", bound="_Typed")


@functools.cache
def _kinds(cls: type) -> dict[str, tuple[type, ...]]:
    """Each field's JSON kinds, read from its annotation (``int | None`` -> int, ``list[str]``
    -> list; a float field takes an int too); ``extra`` is not a field of the file."""
    hints = typing.get_type_hints(cls)
    out: dict[str, tuple[type, ...]] = {}
    for f in fields(cls):
        if f.name == "extra":
            continue
        hint = hints[f.name]
        union = isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union
        kinds = tuple(typing.get_origin(a) or a for a in (typing.get_args(hint) if union else (hint,)))
        kinds = tuple(k for k in kinds if k is not type(None))
        out[f.name] = (*kinds, int) if float in kinds else kinds
    return out


@dataclass
class _Typed:
    """A record read from JSON by its fields' declared types, extras kept."""

    RECORD: ClassVar[str]  # the record's "type" in the file
    # Fields the record has beyond its own (a benchmark's header fields: seed, site...).
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls: type[_R], data: dict[str, Any], where: str) -> _R:
        kinds = _kinds(typing.cast(type, cls))
        known = set(kinds)
        values = {
            name: _check(data[name], kinds[name], name, where)
            for name in known
            if name in data and data[name] is not None
        }
        extra = {k: v for k, v in data.items() if k not in known and k != "type"}
        return cls(**values, extra=extra)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        extra = data.pop("extra")
        return {"type": self.RECORD, **data, **extra}


@dataclass
class RunHeader(_Typed):
    """What was run: the task, where it started, the agent and its settings."""

    RECORD: ClassVar[str] = "run"
    task: str = ""
    task_id: int | None = None
    url: str = ""
    har: str | None = None  # the run's network log, beside the trajectory
    agent: str = ""
    model: str | None = None
    config: dict[str, Any] = field(default_factory=dict)
    started: float = 0.0
    version: int = 1


@dataclass
class StepRecord(_Typed):
    """One step: the page the agent saw, its decision, what came of it, and its state after."""

    RECORD: ClassVar[str] = "step"
    step: int = 0
    url: str = ""
    title: str = ""
    observation: str = ""
    dialogs: list[str] = field(default_factory=list)
    action: str | None = None
    reason: str = ""
    sections: dict[str, str] = field(default_factory=dict)
    highlights: list[int] = field(default_factory=list)
    prompts: list[Any] = field(default_factory=list)
    responses: list[str] = field(default_factory=list)
    invalid: list[str] = field(default_factory=list)
    error: str | None = None  # no valid action after the retries
    candidates: list[str] = field(default_factory=list)
    judge: dict[str, Any] | None = None
    tokens: dict[str, int] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)
    result: dict[str, Any] = field(default_factory=dict)  # {"ok": bool, "error": str | None}
    answer: str | None = None  # set on the step that ended the task
    final_url: str | None = None
    timing: dict[str, Any] = field(default_factory=dict)
    state: dict[str, Any] = field(default_factory=dict)  # the agent's, to resume from
    screenshot: str | None = None  # a file beside the trajectory
    target_box: list[float] | None = None  # the acted element in the viewport: x, y, width, height
    # The viewport region the screenshot shows (x, y, width, height; None: the whole viewport,
    # from the top left): the picture is cut to the page's content and the acted element.
    screenshot_box: list[float] | None = None
    # The page's content in the viewport when the picture shows more than it (a step with no
    # element acted on: the picture of the page the model read); the viewer shows that part.
    content_box: list[float] | None = None

    @property
    def ok(self) -> bool:
        return bool(self.result.get("ok"))

    @property
    def failure(self) -> str | None:
        return None if self.ok else str(self.result.get("error"))

    def seconds(self, part: str) -> float:
        """``model_s`` or ``total_s`` of the step's timing (0 when not recorded)."""
        value = self.timing.get(part, 0.0)
        return float(value) if isinstance(value, (int, float)) else 0.0

    def token_count(self) -> int:
        return sum(int(self.tokens.get(k, 0) or 0) for k in ("prompt", "completion"))


@dataclass
class EndRecord(_Typed):
    """How the run ended."""

    RECORD: ClassVar[str] = "end"
    answer: str | None = None
    final_url: str | None = None
    steps: int = 0
    reason: str = ""  # "stop", "max_steps", "task_done", "no_valid_action"
    task_id: int | None = None
    usage: dict[str, Any] = field(default_factory=dict)
    finished: float = 0.0


@dataclass
class Trajectory:
    """A trajectory read back: its header, steps and end (None while the run is unfinished)."""

    path: Path
    header: RunHeader | None
    steps: list[StepRecord]
    end: EndRecord | None
    torn_tail: bool = False  # its last line was cut by a crash (not counted)

    @property
    def task_id(self) -> int | None:
        """The run's task id: the end's, else the header's."""
        for record in (self.end, self.header):
            if record is not None and record.task_id is not None:
                return record.task_id
        return None

    @property
    def answer(self) -> str | None:
        """The answer: the end's, else the last step's that gave one."""
        if self.end is not None and self.end.answer is not None:
            return self.end.answer
        return next((s.answer for s in reversed(self.steps) if s.answer is not None), None)

    @property
    def final_url(self) -> str | None:
        """Where the run ended: the end's URL, else the last step's, else the start URL."""
        if self.end is not None and self.end.final_url:
            return self.end.final_url
        last = next((s.final_url for s in reversed(self.steps) if s.final_url), None)
        return last or (self.header.url if self.header is not None and self.header.url else None)


class TrajectoryWriter(JsonlLog):
    """Appends a trajectory's records (see :class:`pagelens._io.JsonlLog`)."""

    def write(self, record: RunHeader | StepRecord | EndRecord) -> None:
        self.append(record.to_json())


def read_trajectory(path: str | os.PathLike[str], repair: bool = False) -> list[dict[str, Any]]:
    """The records of a trajectory as raw JSON objects. A last line that is not complete JSON
    (even cut inside a character) is a torn write: with ``repair`` it is cut from the file,
    else ignored. A bad line elsewhere is an error."""
    return _read(Path(path), repair)[0]


def _read(path: Path, repair: bool) -> tuple[list[dict[str, Any]], bool]:
    found = read_json_lines(path)
    if found.bad_lines:
        line, why = found.bad_lines[0]
        raise TrajectoryError(f"{path}:{line}: not JSON: {why}")
    if found.torn_tail and repair:
        cut_torn_tail(path)
    return [r for r in found.records if isinstance(r, dict)], bool(found.torn_tail)


def load_trajectory(path: str | os.PathLike[str], repair: bool = False) -> Trajectory:
    """A trajectory as typed records (see :func:`read_trajectory` for torn lines). Records of
    another ``type`` are skipped; a record with no ``type`` is a header when it comes first
    (a hand-written run's summary)."""
    path = Path(path)
    raw, torn = _read(path, repair)
    header: RunHeader | None = None
    steps: list[StepRecord] = []
    end: EndRecord | None = None
    for number, data in enumerate(raw, 1):
        kind = data.get("type", "run" if number == 1 else None)
        where = f"{path}: record {number}"
        if kind == "run" and header is None:
            header = RunHeader.from_json(data, where)
        elif kind == "step":
            steps.append(StepRecord.from_json(data, where))
        elif kind == "end":
            end = EndRecord.from_json(data, where)
    return Trajectory(path, header, steps, end, torn)
