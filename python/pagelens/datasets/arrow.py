"""Arrow and Parquet for the prep output: the adapter of the ``datasets`` extra's pyarrow
(the one module that imports it; see :mod:`pagelens.extras`)."""

from __future__ import annotations

import io
from dataclasses import fields
from pathlib import Path
from typing import Any

from pagelens.datasets.records import ORIGIN_KEY, Example
from pagelens.extras import require

pa: Any = require("pyarrow", "Parquet input and output")
pq: Any = require("pyarrow.parquet", "Parquet input and output")


def _schema() -> Any:
    """The output's columns: :class:`Example`'s fields, in order, none nullable."""
    python_types = {"str": pa.string(), "int": pa.int64(), "bool": pa.bool_()}
    return pa.schema(
        [
            pa.field(
                f.name,
                getattr(pa, f.metadata["arrow"])() if "arrow" in f.metadata else python_types[str(f.type)],
                nullable=False,
            )
            for f in fields(Example)
        ]
    )


# One row per example (see Example for what each column holds).
SCHEMA = _schema()
# What flows between the Ray engine's stages: every example column (nullable), plus the row's
# kind and, for a reject, its record as JSON.
ROW_SCHEMA = pa.schema(
    [pa.field("kind", pa.string()), pa.field("reject", pa.string())] + [pa.field(f.name, f.type) for f in SCHEMA]
)


def parquet_bytes(rows: list[dict[str, Any]]) -> bytes:
    buf = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows, schema=SCHEMA), buf, compression="zstd")
    return buf.getvalue()


def parquet_rows(data: bytes) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = pq.read_table(io.BytesIO(data)).to_pylist()
    return rows


def read_parquet_examples(path: Path) -> list[dict[str, Any]]:
    """The rows of a Parquet example file, each tagged with where it was read (under
    ``ORIGIN_KEY``); a file pyarrow cannot read is an error naming it."""
    from pagelens.errors import InputFileError

    try:
        rows: list[dict[str, Any]] = pq.read_table(path).to_pylist()
    except (pa.ArrowException, OSError, ValueError) as e:
        raise InputFileError(f"{path}: not a readable Parquet file: {str(e).splitlines()[0][:200]}") from None
    for number, row in enumerate(rows):
        row[ORIGIN_KEY] = f"{path} row {number}"
    return rows


def table(rows: list[dict[str, Any]]) -> Any:
    """Rows between the Ray engine's stages."""
    return pa.Table.from_pylist(rows, schema=ROW_SCHEMA)
