"""The local engine: threads over workflows (the core releases the GIL), written shard by
shard in order (see :mod:`pagelens.datasets.shards`: a killed run resumes from its markers).
"""

from __future__ import annotations

import json
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from pagelens._io import remove_unfinished_writes, write_atomically
from pagelens.datasets.output import check_format, summarize, write_summary
from pagelens.datasets.readers import input_files, read_unread
from pagelens.datasets.records import Reject, Workflow
from pagelens.datasets.shards import SHARD_SIZE, FileProgress, Shard, read_shards, write_shard
from pagelens.datasets.transform import PrepConfig, Transformer
from pagelens.errors import ArgumentError, PagelensError

# Shards whose workflows are queued with the pool at once: the one being finished and the next.
SHARDS_IN_FLIGHT = 2

# JSONL files from this size on are read with their pages left in the file, each read by the
# thread that transforms it: memory then holds the shards in flight, not every page of the
# file decoded (a 330 MB file: peak 380 MB against 1.24 GB). Smaller files are decoded whole,
# 2-3% faster (benches/README.md).
UNREAD_FILE_BYTES = 64 * 1024 * 1024

__all__ = [
    "SHARD_SIZE",
    "UNREAD_FILE_BYTES",
    "ManifestMismatch",
    "check_manifest",
    "open_run",
    "run_local",
    "throughput",
]


class ManifestMismatch(PagelensError, ValueError):
    """The output folder holds a run made with other settings."""


def check_manifest(out: Path, manifest: dict[str, Any], overwrite: bool = False) -> None:
    path = out / "manifest.json"
    if path.exists() and not overwrite:
        old = json.loads(path.read_text())
        if old != manifest:
            diff = sorted(k for k in manifest.keys() | old.keys() if manifest.get(k) != old.get(k))
            raise ManifestMismatch(
                f"{out} holds a run with other settings ({', '.join(diff)} differ); use another folder or --overwrite"
            )
    for sub in ("examples", "rejects", "_done"):
        folder = out / sub
        if overwrite:
            for f in folder.glob("*") if folder.exists() else []:
                f.unlink(missing_ok=True)
        else:  # a resume: a killed run's half-written shards go
            remove_unfinished_writes(folder)
    write_atomically(path, json.dumps(manifest, indent=2) + "\n")


def open_run(
    engine: str,
    inputs: list[str],
    out: str,
    config: PrepConfig,
    *,
    workers: int,
    shard_size: int,
    fmt: str,
    overwrite: bool,
) -> tuple[list[Path], Path]:
    """A run's inputs and output folder, its settings checked against what OUT holds (both
    engines: the same shards and markers, so the same resume rule)."""
    check_format(fmt)
    if workers < 1 or shard_size < 1:
        raise ArgumentError("workers and shard_size must be at least 1")
    files = input_files(inputs)
    out_dir = Path(out).resolve()  # Ray's actors write there too, whatever their working folder
    manifest = {
        "engine": engine,
        "config": config.to_dict(),
        "inputs": [str(f) for f in files],
        "shard_size": shard_size,
        "format": fmt,
    }
    check_manifest(out_dir, manifest, overwrite)
    return files, out_dir


def run_local(
    inputs: list[str],
    out: str,
    config: PrepConfig,
    *,
    workers: int = 1,
    shard_size: int = SHARD_SIZE,
    fmt: str = "parquet",
    overwrite: bool = False,
    on_progress: Callable[[str, int, int], None] | None = None,
) -> dict[str, Any]:
    """Runs the pipeline over ``inputs`` (files or folders) into ``out``; returns the summary.
    ``on_progress(file, done, total)`` is called with the file's workflow counts. Throughput
    figures count only the work of this call, not shards finished by an earlier one."""
    files, out_dir = open_run(
        "local", inputs, out, config, workers=workers, shard_size=shard_size, fmt=fmt, overwrite=overwrite
    )
    transformer = Transformer(config)

    def transform(workflow: Workflow) -> tuple[list[dict[str, Any]], list[Reject]]:
        (workflow,) = read_unread([workflow])  # its pages, when a large file's were left unread
        return transformer.workflow(workflow)

    started = time.perf_counter()
    resumed = html_bytes = new_examples = 0
    progress = FileProgress(on_progress)
    # Shards whose workflows are with the pool, oldest first. The next shard's workflows are
    # queued before the oldest is written, and the next file is read while the pool works: no
    # thread waits at a shard's end for the slowest workflow, nor at a file's end for the read.
    in_flight: deque[tuple[int, Shard, list[Future[Any]]]] = deque()

    def finish_oldest() -> None:
        nonlocal html_bytes, new_examples
        fi, shard, futures = in_flight.popleft()
        finished = write_shard(out_dir, shard, (f.result() for f in futures), fmt)
        html_bytes += finished.html_bytes
        new_examples += finished.examples
        progress.advanced(fi, finished.workflows)

    with ThreadPoolExecutor(max_workers=workers) as pool:
        try:
            for fi, f in enumerate(files):
                file = read_shards(out_dir, fi, f, shard_size, unread_pages=f.stat().st_size >= UNREAD_FILE_BYTES)
                resumed += file.resumed_shards
                progress.opened(file)
                for shard in file.todo:
                    in_flight.append((fi, shard, [pool.submit(transform, w) for w in shard.workflows]))
                    while len(in_flight) >= SHARDS_IN_FLIGHT:
                        finish_oldest()
            while in_flight:
                finish_oldest()
        finally:
            for _, _, futures in in_flight:  # a failure stops the run: queued work is dropped
                for future in futures:
                    future.cancel()
    seconds = time.perf_counter() - started
    summary = summarize(
        out_dir, seconds, {"engine": "local", "workers": workers, "shards_resumed": resumed, "config": config.to_dict()}
    )
    summary.update(throughput(html_bytes, new_examples, seconds))
    write_summary(out_dir, summary)
    return summary


def throughput(html_bytes: int, examples: int, seconds: float) -> dict[str, float | None]:
    """The run's own throughput: the work of this call, not shards an earlier one finished."""
    return {
        "html_mb_per_s": round(html_bytes / 1e6 / seconds, 3) if seconds > 0 else None,
        "examples_per_s": round(examples / seconds, 2) if seconds > 0 else None,
    }
