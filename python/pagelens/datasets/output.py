"""The output folder: examples (Parquet or JSONL) with a fixed schema, rejects, summary.

    OUT/manifest.json          settings of the run (a resumed run must match them)
    OUT/examples/*.parquet     one row per example (schema below), or *.jsonl
    OUT/rejects/*.jsonl        one line per rejected record: source, field, reason, ...
    OUT/summary.json           counts, tokens, target-kept rate, throughput

Both engines write this layout; :func:`read_output` reads either back in a stable order.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any

from pagelens._io import json_lines, parse_json, write_atomically
from pagelens.datasets.records import ORIGIN_KEY, Example
from pagelens.errors import ArgumentError, InputFileError
from pagelens.extras import require

OUTPUT_FORMATS = ("parquet", "jsonl")


def check_format(fmt: str) -> None:
    """Refuses an unknown output format, or Parquet without pyarrow, before anything is written."""
    if fmt not in OUTPUT_FORMATS:
        raise ArgumentError(f"format must be one of {', '.join(OUTPUT_FORMATS)}, not {fmt!r}")
    if fmt == "parquet":
        require("pyarrow", "Parquet output")


def examples_bytes(rows: list[dict[str, Any]], fmt: str) -> bytes:
    if fmt == "jsonl":
        return json_lines(rows)
    from pagelens.datasets import arrow

    return arrow.parquet_bytes(rows)


def rejects_bytes(rejects: list[dict[str, Any]]) -> bytes:
    return json_lines(rejects)


def _example_files(out: Path) -> list[Path]:
    folder = out / "examples"
    return sorted(
        p for p in folder.glob("*") if p.suffix in (".parquet", ".jsonl", ".json") and not p.name.startswith(".")
    )


def _read_examples(out: Path, columns: list[str] | None = None) -> list[dict[str, Any]]:
    """Every example of the output, checked: a file that cannot be read, or a row that is not
    an example (a field missing or of the wrong type), is an :class:`InputFileError` naming
    the file, the row and the field — never a pyarrow, JSON or Unicode traceback."""
    files = _example_files(out)
    if all(p.suffix != ".parquet" for p in files):
        # JSON lines need no pyarrow (the base install reads them).
        rows = [row for p in files for row in _json_rows(p)]
    else:
        from pagelens.datasets import arrow

        rows = []
        for p in files:
            rows.extend(_json_rows(p) if p.suffix != ".parquet" else arrow.read_parquet_examples(p))
    wanted = columns or _EXAMPLE_TYPES
    for row in rows:
        where = row.pop(ORIGIN_KEY)
        for name in wanted:
            _check_field(row, name, where)
    return [{c: r[c] for c in columns} for r in rows] if columns else rows


_EXAMPLE_TYPES: dict[str, type] = {
    f.name: {"str": str, "int": int, "bool": bool}[str(f.type)] for f in dataclasses.fields(Example)
}


def _check_field(row: dict[str, Any], name: str, where: str) -> None:
    kind = _EXAMPLE_TYPES.get(name)
    if kind is None:
        raise ArgumentError(f"no example column {name!r}")
    value = row.get(name)
    if name not in row or value is None:
        raise InputFileError(f"{where}: not an example of `pagelens prep`: field {name!r} is missing")
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise InputFileError(
            f"{where}: not an example of `pagelens prep`: field {name!r} must be {kind.__name__}, "
            f"not {type(value).__name__}"
        )


def _json_rows(path: Path) -> list[dict[str, Any]]:
    """The rows of a JSON-lines file, each tagged with its line; a line that is not a JSON
    object is an error naming it."""
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputFileError(f"{path}: not UTF-8 text (byte {e.start})") from None
    except OSError as e:
        raise InputFileError(f"{path}: cannot be read: {e.strerror or e}") from None
    rows = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        row = parse_json(line, f"{path}:{number} is")
        if not isinstance(row, dict):
            raise InputFileError(f"{path}:{number}: not an example of `pagelens prep`: a {type(row).__name__}")
        row[ORIGIN_KEY] = f"{path}:{number}"
        rows.append(row)
    return rows


def read_rejects(out: str | os.PathLike[str]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for p in sorted((Path(out) / "rejects").glob("*.jsonl")):
        for row in _json_rows(p):
            where = row.pop(ORIGIN_KEY)
            if not isinstance(row.get("source"), str) or not isinstance(row.get("reason"), str):
                raise InputFileError(f"{where}: not a reject of `pagelens prep` (it needs a string source and reason)")
            rows.append(row)
    return sorted(rows, key=lambda r: (r["source"], r["reason"]))


def prep_output(out: str | os.PathLike[str]) -> Path:
    """``out`` when it is a `pagelens prep` output folder, else an error naming it."""
    path = Path(out)
    if not path.is_dir():
        raise InputFileError(f"no such prep output folder: {path}")
    if not (path / "manifest.json").is_file() and not (path / "examples").is_dir():
        raise InputFileError(f"{path} is not a `pagelens prep` output (no manifest.json or examples/)")
    return path


def read_output(out: str | os.PathLike[str]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Examples ordered by (workflow, step, chunk) and rejects ordered by source: the same
    for any engine, worker count or resume history."""
    rows = _read_examples(prep_output(out))
    rows.sort(key=lambda r: (r["workflow_id"], r["step"], r["chunk_index"]))
    return rows, read_rejects(out)


def summarize(out: str | os.PathLike[str], seconds: float, extra: dict[str, Any]) -> dict[str, Any]:
    """The run summary from what is on disk (so a resumed run counts everything once)."""
    out = Path(out)
    cols = [
        "workflow_id",
        "step",
        "html_bytes",
        "raw_tokens",
        "clean_tokens",
        "target_rescued",
        "prompt_tokens",
        "label_tokens",
        "contains_target",
    ]
    rows = _read_examples(out, cols)
    steps: dict[tuple[str, int], dict[str, Any]] = {}
    for r in rows:
        steps.setdefault((r["workflow_id"], r["step"]), r)
    rejects = read_rejects(out)
    by_field: dict[str, int] = {}
    for r in rejects:
        key = r.get("field") or "record"
        by_field[key] = by_field.get(key, 0) + 1
    html_mb = sum(s["html_bytes"] for s in steps.values()) / 1e6
    raw = sum(s["raw_tokens"] for s in steps.values())
    clean = sum(s["clean_tokens"] for s in steps.values())
    rescued = sum(1 for s in steps.values() if s["target_rescued"])
    return {
        **extra,
        "records_in": len(steps) + len(rejects),
        "steps_out": len(steps),
        "examples_out": len(rows),
        "rejected": len(rejects),
        "rejected_by_field": dict(sorted(by_field.items())),
        "workflows_out": len({s[0] for s in steps}),
        "html_mb": round(html_mb, 3),
        "tokens_before": raw,
        "tokens_after": clean,
        "token_reduction": round(1 - clean / raw, 4) if raw else 0.0,
        "prompt_tokens": sum(r["prompt_tokens"] for r in rows),
        "label_tokens": sum(r["label_tokens"] for r in rows),
        "targets_rescued": rescued,
        "target_rescued_rate": round(rescued / len(steps), 4) if steps else 0.0,
        # share of examples whose observation holds their target (1.0 unless chunks="all"/"last")
        "target_in_observation_rate": round(sum(r["contains_target"] for r in rows) / len(rows), 4) if rows else 0.0,
        "seconds": round(seconds, 3),
        "html_mb_per_s": round(html_mb / seconds, 3) if seconds > 0 else None,
        "examples_per_s": round(len(rows) / seconds, 2) if seconds > 0 else None,
    }


def write_summary(out: Path, summary: dict[str, Any]) -> None:
    write_atomically(out / "summary.json", json.dumps(summary, indent=2) + "\n")
