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
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from pagelens._io import parse_json
from pagelens.datasets.operations import MIND2WEB
from pagelens.datasets.records import (
    RecordError,
    Reject,
    Step,
    Workflow,
    WorkflowBuilder,
    step_from_record,
)
from pagelens.errors import ArgumentError, InputFileError

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


def _records(name: str, data: bytes) -> Iterator[tuple[str, Any]]:
    """(source, record or an exception) for each record of one file."""
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
        items = doc if isinstance(doc, list) else [doc]
        for i, item in enumerate(items):
            yield f"{name}[{i}]", item
    else:
        for i, line in enumerate(data.split(b"\n"), start=1):
            if not line.strip():
                continue
            try:
                yield f"{name}:{i}", parse_json(line, "the line is")
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


def read_workflows(name: str, data: bytes) -> tuple[list[Workflow], list[Reject]]:
    """The workflows of one file (its name decides the format) and its rejected records."""
    builder = WorkflowBuilder()
    rejects = builder.rejects
    position: dict[str, int] = {}
    records = _records(name, data)
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
