"""Reading workflow files: JSONL, JSON and Parquet, in the step layout or Mind2Web's.

Step layout, one record per step (see ``docs/datasets.md``)::

    {"workflow_id": "w1", "step": 0, "objective": "...", "url": "...", "html": "<html>...",
     "action": "mouse_click_action", "target_selector": "#login", "description": "Click Log in"}

Mind2Web layout, one record per task: ``annotation_id``, ``confirmed_task``, ``action_reprs``
and ``actions[]`` with ``raw_html``, ``operation`` {``op``, ``value``} and ``pos_candidates``
(whose ``backend_node_id`` is an attribute of the element in ``raw_html``).

A workflow's steps must all be in one file (files are the shards of a dataset). Every bad
record becomes a :class:`Reject` naming the record and field; nothing is fatal but an
unreadable file, which is reported as one reject too.

The Ray engine's driver (and the local engine, for a large file) leaves a JSONL file's pages
undecoded: each step's HTML is then an :class:`UnreadText` (where in the file its JSON string
is) until :func:`read_unread` decodes it where the work happens, so a file's pages are never
all in memory at once, and the driver neither decodes nor ships them. Everything else is read
as usual: the same workflows, rejects and sources as a full read.

Pages that are decoded for the transform (``raw_html=True``, and by :func:`read_unread`) are
decoded by the core into :class:`~pagelens.RawHtml`, never into a Python ``str``: the parser
and the tokenizer read their UTF-8 as it is.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from pagelens._core import RawHtml, long_member_strings, long_member_texts
from pagelens._io import BOM, lenient_strings, lenient_text, parse_json
from pagelens.datasets.records import (
    RecordError,
    Reject,
    Step,
    Workflow,
    WorkflowBuilder,
    step_from_record,
)
from pagelens.errors import ArgumentError, InputFileError
from pagelens.stepformat.operations import MIND2WEB

FORMATS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json", ".parquet": "parquet"}


def input_files(paths: Sequence[str | os.PathLike[str]]) -> list[Path]:
    """The data files named or inside the folders named, in a stable order."""
    files: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            files.extend(sorted(f for f in p.rglob("*") if f.is_file() and f.suffix in FORMATS))
        elif p.is_file():
            if p.suffix not in FORMATS:
                raise ArgumentError(f"{p}: unknown format {p.suffix!r}; expected one of {', '.join(FORMATS)}")
            files.append(p)
        else:
            raise FileNotFoundError(f"no such file or folder: {p}")
    if not files:
        raise ArgumentError(f"no {', '.join(FORMATS)} files in {', '.join(map(str, paths))}")
    return files


# JSON string values at least this long (in bytes, as written) under one of these keys are left
# unread by a reader that asks for it: pages are kilobytes, every other field of a step is short.
UNREAD_MIN_BYTES = 1024
UNREAD_KEYS = frozenset({"html", "raw_html"})  # the step layout's page, Mind2Web's


@dataclasses.dataclass(frozen=True)
class FileStamp:
    """A file as it was when read: byte offsets into it hold while these do."""

    path: str  # absolute: the workers that read it may run elsewhere
    size: int
    mtime_ns: int

    @classmethod
    def of(cls, path: Path) -> FileStamp:
        st = path.stat()
        return cls(str(path.resolve()), st.st_size, st.st_mtime_ns)


class UnreadText(str):
    """A page's JSON string not decoded yet: its file and its bytes' range there (quotes
    included). As a ``str`` it is a short non-blank stand-in, so that the reader's checks of a
    step pass as they pass for the page (a string is unread only when it decodes to
    non-blank text); :func:`read_unread` replaces it with the page."""

    file: FileStamp
    start: int
    end: int

    def __new__(cls, file: FileStamp, start: int, end: int) -> UnreadText:
        text = super().__new__(cls, f"<unread: {file.path} bytes {start}-{end}>")
        text.file, text.start, text.end = file, start, end
        return text

    def __reduce__(self) -> tuple[Any, ...]:
        return (UnreadText, (self.file, self.start, self.end))


def text_bytes(text: str | RawHtml) -> int:
    """How large a page is: its JSON string's bytes when unread, its UTF-8 bytes when decoded
    by the core, else its characters."""
    if isinstance(text, UnreadText):
        return text.end - text.start
    return text.nbytes if isinstance(text, RawHtml) else len(text)


def read_unread(workflows: Sequence[Workflow]) -> list[Workflow]:
    """The workflows with every unread page decoded from its file (each file opened once).
    Raises :class:`InputFileError` when a file cannot be read here or changed since."""
    handles: dict[str, Any] = {}
    try:

        def page(text: UnreadText) -> str | RawHtml:
            stamp = text.file
            f = handles.get(stamp.path)
            if f is None:
                try:
                    f = handles[stamp.path] = open(stamp.path, "rb")  # noqa: SIM115 - closed below
                    st = os.fstat(f.fileno())
                except OSError as e:
                    raise InputFileError(
                        f"{stamp.path}: cannot read the input here ({e.strerror or e}); the input must be "
                        "on a path every worker sees"
                    ) from None
                if (st.st_size, st.st_mtime_ns) != (stamp.size, stamp.mtime_ns):
                    raise InputFileError(f"{stamp.path}: the input file changed while it was being read")
            f.seek(text.start)
            raw = f.read(text.end - text.start)
            # The range was a valid JSON string of non-blank text when the file was read.
            held = RawHtml.from_json(raw)
            if held is not None:
                return held
            try:  # a page with an escaped lone surrogate: read as U+FFFD, as a full read reads it
                value = json.loads(raw.decode("utf-8"))
            except ValueError:
                value = None
            if not isinstance(value, str):
                raise InputFileError(f"{stamp.path}: bytes {text.start}-{text.end} are not the page read before")
            return lenient_text(value)

        return [
            Workflow(
                wf.workflow_id,
                tuple(
                    dataclasses.replace(s, html=page(s.html)) if isinstance(s.html, UnreadText) else s for s in wf.steps
                ),
            )
            if any(isinstance(s.html, UnreadText) for s in wf.steps)
            else wf  # nothing to read: kept as it is
            for wf in workflows
        ]
    finally:
        for f in handles.values():
            f.close()


# Stands in for an unread string while its line is decoded: no record's own value is ever this
# (a NUL and a fresh random token).
_STAND_IN = f"\u0000pagelens-unread-{uuid.uuid4().hex}-"


def _light_record(line: bytes, offset: int, unread: FileStamp | None, what: str) -> Any:
    """A JSONL record decoded with its long ``UNREAD_KEYS`` values left unread (``unread``: the
    file, ``offset``: the line's first byte in it) or, without ``unread``, decoded by the core
    into :class:`RawHtml`. Other long values are decoded as they are; a line that is not valid
    JSON is decoded whole, so that the error names the same place."""
    found: list[tuple[int, int, RawHtml | None]]
    if unread is None:
        found = long_member_texts(line, UNREAD_MIN_BYTES)
    else:
        found = [(start, end, None) for start, end in long_member_strings(line, UNREAD_MIN_BYTES)]
    if not found:
        return parse_json(line, what)
    parts: list[bytes] = []
    stand_ins: dict[str, tuple[int, int, RawHtml | None]] = {}
    last = 0
    for k, (start, end, held) in enumerate(found):
        key = f"{_STAND_IN}{k}"
        parts += [line[last:start], json.dumps(key).encode()]
        stand_ins[key] = (start, end, held)
        last = end
    parts.append(line[last:])
    try:
        record = parse_json(b"".join(parts), what)
    except InputFileError:
        return parse_json(line, what)  # the line's own error
    # Puts each value back: a page's unread or held by the core, others decoded (as a full
    # read decodes them).
    stack = [record]
    while stack:
        item = stack.pop()
        pairs = item.items() if isinstance(item, dict) else enumerate(item) if isinstance(item, list) else ()
        for key, value in list(pairs):
            if isinstance(value, str) and value in stand_ins:
                start, end, held = stand_ins[value]
                if key in UNREAD_KEYS and unread is not None:
                    item[key] = UnreadText(unread, offset + start, offset + end)
                elif key in UNREAD_KEYS and held is not None:
                    item[key] = held
                else:
                    item[key] = json.loads(line[start:end].decode("utf-8"))
            elif isinstance(value, dict | list):
                stack.append(value)
    return record


# A JSON escape of a surrogate (`\ud800`): only such text can decode to a lone one.
_ESCAPED_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]")


def _records(
    name: str, data: bytes, unread: FileStamp | None = None, raw_html: bool = False
) -> Iterator[tuple[str, Any]]:
    """(source, record or an exception) for each record of one file; with ``unread`` (the
    file ``data`` is), a JSONL file's pages are left unread; with ``raw_html``, they are
    decoded by the core."""
    fmt = FORMATS[Path(name).suffix]
    if fmt == "parquet":
        from pagelens.datasets import arrow

        for i, row in enumerate(arrow.parquet_rows(data)):
            yield f"{name}#{i}", row
    elif fmt == "json":
        try:
            doc = parse_json(data, f"{name}:")
        except InputFileError as e:
            yield name, RecordError("", str(e))
            return
        if _ESCAPED_SURROGATE.search(data):
            doc = lenient_strings(doc)
        items = doc if isinstance(doc, list) else [doc]
        for i, item in enumerate(items):
            yield f"{name}[{i}]", item
    else:
        # Line by line, each cut out as it is read (a list of every line would hold the file
        # twice); numbered from 1, blank ones skipped, as `data.split(b"\n")` would give them.
        next_start, i = (len(BOM) if data.startswith(BOM) else 0), 0
        while next_start <= len(data):
            start = next_start
            end = data.find(b"\n", start)
            end = len(data) if end < 0 else end
            line, next_start, i = data[start:end], end + 1, i + 1
            if not line.strip():
                continue
            try:
                if unread is None and not raw_html:
                    record = parse_json(line, "the line is")
                else:
                    record = _light_record(line, start, unread, "the line is")
                yield f"{name}:{i}", lenient_strings(record) if _ESCAPED_SURROGATE.search(line) else record
            except InputFileError as e:  # one bad line is one reject; the file's others are read
                yield f"{name}:{i}", RecordError("", str(e))


def is_mind2web(record: Any) -> bool:
    return isinstance(record, dict) and "confirmed_task" in record and "actions" in record


def _mind2web_steps(record: dict[str, Any], source: str) -> Iterator[Step | Reject]:
    wid = record.get("annotation_id")
    task = record.get("confirmed_task")
    actions = record.get("actions")
    if not isinstance(wid, str) or not wid:
        yield Reject(source, "missing or empty field 'annotation_id'", "annotation_id")
        return
    if not isinstance(task, str) or not task.strip():
        yield Reject(source, "missing or empty field 'confirmed_task'", "confirmed_task", wid)
        return
    if not isinstance(actions, list) or not actions:
        yield Reject(source, "field 'actions' must be a non-empty list", "actions", wid)
        return
    reprs = record.get("action_reprs") or []
    if not isinstance(reprs, list):
        yield Reject(source, "field 'action_reprs' must be a list", "action_reprs", wid)
        return
    for i, act in enumerate(actions):
        src = f"{source}.actions[{i}]"
        try:
            if not isinstance(act, dict):
                raise RecordError("actions", "an action must be an object")
            op = act.get("operation") or {}
            if not isinstance(op, dict):
                raise RecordError("operation", "an action's operation must be an object")
            op_name = str(op.get("op") or op.get("original_op") or "").upper()
            if op_name not in MIND2WEB:
                raise RecordError(
                    "operation.op", f"unknown operation {op_name!r}; expected one of {', '.join(MIND2WEB)}"
                )
            candidates = act.get("pos_candidates") or []
            if not isinstance(candidates, list):
                raise RecordError("pos_candidates", "pos_candidates must be a list")
            backend_id = next(
                (str(c.get("backend_node_id")) for c in candidates if isinstance(c, dict) and c.get("backend_node_id")),
                None,
            )
            if backend_id is None:
                raise RecordError(
                    "pos_candidates", "no positive candidate with a backend_node_id: the target is unknown"
                )
            description = reprs[i] if i < len(reprs) and isinstance(reprs[i], str) else ""
            yield step_from_record(
                {
                    "workflow_id": wid,
                    "step": i,
                    "objective": task,
                    "url": "",
                    "html": act.get("raw_html"),
                    "action": MIND2WEB[op_name],
                    "text": str(op.get("value") or ""),
                    "target_selector": f'[backend_node_id="{backend_id}"]',
                    "description": description,
                },
                src,
                i,
            )
        except RecordError as e:
            field = "raw_html" if e.field == "html" else e.field
            yield Reject(src, e.reason.replace("'html'", "'raw_html'"), field, wid, i)


def _add_record(builder: WorkflowBuilder, position: dict[str, int], source: str, record: Any) -> None:
    rejects = builder.rejects
    if isinstance(record, RecordError):
        rejects.append(Reject(source, record.reason, record.field))
        return
    if is_mind2web(record):
        for item in _mind2web_steps(record, source):
            if isinstance(item, Reject):
                builder.reject(item)
            else:
                builder.add(item)
        return
    wid = record.get("workflow_id") if isinstance(record, dict) else None
    key = str(wid)
    try:
        builder.add(step_from_record(record, source, position.get(key, 0)))
    except RecordError as e:
        given = record.get("step") if isinstance(record, dict) else None
        step = given if isinstance(given, int) and not isinstance(given, bool) else position.get(key, 0)
        builder.reject(Reject(source, e.reason, e.field, str(wid) if wid is not None else "", step))
    position[key] = position.get(key, 0) + 1


def read_workflows(
    name: str, data: bytes, unread: FileStamp | None = None, *, raw_html: bool = False
) -> tuple[list[Workflow], list[Reject]]:
    """The workflows of one file (its name decides the format) and its rejected records. With
    ``unread`` (the file that ``data`` is, as it was read), a JSONL file's pages are left
    unread (see :class:`UnreadText`); with ``raw_html``, a JSONL file's pages are decoded by
    the core into :class:`~pagelens.RawHtml` (what the transform reads fastest)."""
    builder = WorkflowBuilder()
    rejects = builder.rejects
    position: dict[str, int] = {}
    records = _records(name, data, unread, raw_html)
    while True:
        try:
            source, record = next(records)
        except StopIteration:
            break
        except Exception as e:  # an unreadable file (bad Parquet, a JSON document cut short)
            rejects.append(Reject(name, f"unreadable file: {type(e).__name__}: {e}", ""))
            return [], rejects
        try:
            _add_record(builder, position, source, record)
        except Exception as e:  # noqa: BLE001 - one odd record is that record's reject, never the file's
            reason = f"unreadable record: {type(e).__name__}: {e}"[:300]
            wid = record.get("annotation_id") or record.get("workflow_id") if isinstance(record, dict) else None
            # Its whole workflow goes (step 0 breaks it from the start): part of it is unknown.
            builder.reject(Reject(source, reason, "record", str(wid) if wid else "", 0 if wid else None))
    return builder.build(), rejects
