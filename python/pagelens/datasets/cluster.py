"""The cluster engine: the same transform as a Ray Data pipeline.

    read_binary_files → flat_map(file → workflows and rejects) → map_batches(Transformer)
    → examples written as Parquet/JSONL shards by Ray, rejects gathered to the driver

A workflow is one row (its steps must be in one file, as for the local engine), so no
shuffle is needed; ``map_batches`` runs a pool of actors, each holding one tokenizer. Runs
on a local Ray instance (``workers`` CPUs) or on an existing cluster (``address``).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from pagelens._io import write_atomically
from pagelens.datasets.local import check_manifest
from pagelens.datasets.output import check_format, rejects_bytes, summarize, write_summary
from pagelens.datasets.readers import input_files, read_workflows
from pagelens.datasets.records import Step, Workflow
from pagelens.datasets.transform import PrepConfig, Transformer
from pagelens.errors import ArgumentError, PagelensError
from pagelens.extras import require
from pagelens.ray_cluster import RayCluster

# How long the Ray pipeline may go without progress before it stops with PrepStalled.
STALL_SECONDS = 600.0


class PrepStalled(PagelensError, RuntimeError):
    """The Ray pipeline made no progress for the stall limit (the message says what the
    cluster had free)."""


class _Progress:
    """A zero-CPU Ray actor the stages tick after each piece of work; the driver reads it to
    tell a slow run from one that cannot go on."""

    def __init__(self) -> None:
        self.ticks = 0

    def tick(self) -> None:
        self.ticks += 1

    def count(self) -> int:
        return self.ticks


def wait_with_watchdog(
    work: Callable[[], Any],
    progress: Callable[[], int],
    *,
    stall_seconds: float,
    describe: Callable[[], str],
    poll_seconds: float = 2.0,
) -> Any:
    """Runs ``work`` on a thread and returns its result; raises :class:`PrepStalled` when
    ``progress()`` has not moved for ``stall_seconds`` (``describe()`` says why it may be)."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["result"] = work()
        except BaseException as e:  # handed to the caller's thread
            box["error"] = e

    thread = threading.Thread(target=run, name="pagelens-ray-pipeline", daemon=True)
    thread.start()
    last, moved = progress(), time.monotonic()
    while thread.is_alive():
        thread.join(poll_seconds)
        now = progress()
        if now != last:
            last, moved = now, time.monotonic()
        elif thread.is_alive() and time.monotonic() - moved > stall_seconds:
            raise PrepStalled(f"the Ray pipeline made no progress for {stall_seconds:g} s ({describe()})")
    if "error" in box:
        raise box["error"]
    return box.get("result")


def _file_rows(row: dict[str, Any], names: dict[str, str], progress: Any = None) -> list[dict[str, Any]]:
    """One input file → a row per workflow (its steps as JSON) and per rejected record."""
    if progress is not None:
        progress.tick.remote()
    path = str(Path(row["path"]).resolve())
    workflows, rejects = read_workflows(names.get(path, row["path"]), bytes(row["bytes"]))
    rows = [{"kind": "reject", "payload": json.dumps(r.to_dict())} for r in rejects]
    rows += [
        {"kind": "workflow", "payload": json.dumps({"id": w.workflow_id, "steps": [asdict(s) for s in w.steps]})}
        for w in workflows
    ]
    return rows


class _PrepBatch:
    """A Ray actor's transform: built once (tokenizer loaded once), called per batch."""

    def __init__(self, config: dict[str, Any], progress: Any = None):
        self.transformer = Transformer(PrepConfig(**config))
        self.progress = progress

    def __call__(self, batch: Any) -> Any:  # pyarrow Tables
        if self.progress is not None:
            self.progress.tick.remote()
        out: list[dict[str, Any]] = []
        for kind, payload in zip(batch.column("kind").to_pylist(), batch.column("payload").to_pylist(), strict=True):
            if kind == "reject":
                out.append({"kind": "reject", "reject": payload})
                continue
            data = json.loads(payload)
            wf = Workflow(data["id"], tuple(Step(**s) for s in data["steps"]))
            examples, rejects = self.transformer.workflow(wf)
            out.extend({"kind": "example", "reject": None, **e} for e in examples)
            out.extend({"kind": "reject", "reject": json.dumps(r.to_dict())} for r in rejects)
        from pagelens.datasets import arrow

        return arrow.table(out)


def _actor_cpus(cluster: RayCluster, workers: int) -> float:
    """CPUs each of the ``workers`` actors asks for: what is free less one CPU for the
    reading tasks (Ray Data's tasks ask for one each), split between the actors. Without
    that CPU the actor pool can hold every CPU while the reads that feed it wait forever
    (Ray schedules by these numbers only; an actor still uses a whole CPU when it runs)."""
    free, total = cluster.cpus()
    if free < 1:
        raise ArgumentError(
            f"the Ray cluster has {free:g} free CPU of {total:g}: the pipeline needs at least one "
            "(free some, or add a node)"
        )
    return min(1.0, (free - 1) / workers)


def run_ray(
    inputs: list[str],
    out: str,
    config: PrepConfig,
    *,
    address: str | None = None,
    workers: int = 1,
    batch_size: int = 4,
    fmt: str = "parquet",
    overwrite: bool = False,
    stall_seconds: float = STALL_SECONDS,
) -> dict[str, Any]:
    """Runs the pipeline on Ray; ``address`` joins an existing cluster ("auto" or
    "ray://host:10001"), otherwise a local instance with ``workers`` CPUs is started and
    stopped. Actors are sized from the cluster's free CPUs; a run with no progress for
    ``stall_seconds`` raises :class:`PrepStalled`. Returns the summary (also written to
    ``out/summary.json``)."""
    check_format(fmt)
    files = input_files(inputs)
    out_dir = Path(out)
    manifest = {"engine": "ray", "config": config.to_dict(), "inputs": [str(f) for f in files], "format": fmt}
    # A Ray run is not resumable shard by shard: start from an empty output each time.
    check_manifest(out_dir, manifest, overwrite=True)
    names = {str(f.resolve()): str(f) for f in files}
    cluster = RayCluster("the Ray engine", address, workers + 1)
    ray = cluster.ray
    col = require("ray.data.expressions", "the Ray engine").col
    try:
        ctx = ray.data.DataContext.get_current()
        ctx.enable_progress_bars = False
        started = time.perf_counter()
        share = _actor_cpus(cluster, workers)
        ds = ray.data.read_binary_files([str(f.resolve()) for f in files], include_paths=True)
        # A file's workflows leave flat_map as one block; split it so that every actor gets work.
        progress: Any = ray.remote(num_cpus=0)(_Progress).remote()
        ds = ds.flat_map(_file_rows, fn_kwargs={"names": names, "progress": progress})
        ds = ds.repartition(target_num_rows_per_block=batch_size)
        ds = ds.map_batches(
            _PrepBatch,
            fn_constructor_kwargs={"config": config.to_dict(), "progress": progress},
            batch_size=batch_size,
            batch_format="pyarrow",
            concurrency=workers,
            num_cpus=share,
        )

        def cluster_state() -> str:
            free, total = cluster.cpus()
            return f"{free:g} of {total:g} CPUs free; {workers} actors asked for {share:g} CPU each"

        ds = wait_with_watchdog(
            ds.materialize,
            lambda: int(ray.get(progress.count.remote(), timeout=60)),
            stall_seconds=stall_seconds,
            describe=cluster_state,
        )
        examples = ds.filter(expr=col("kind") == "example").drop_columns(["kind", "reject"])
        if examples.count():
            if fmt == "parquet":
                examples.write_parquet(str(out_dir / "examples"))
            else:
                examples.write_json(str(out_dir / "examples"))  # JSON lines, named *.json
        reject_rows = ds.filter(expr=col("kind") == "reject").select_columns(["reject"]).take_all()
        rejects = [json.loads(r["reject"]) for r in reject_rows]
        write_atomically(out_dir / "rejects" / "part-ray.jsonl", rejects_bytes(rejects))
        seconds = time.perf_counter() - started
    finally:
        cluster.close()
    summary = summarize(
        out_dir, seconds, {"engine": "ray", "workers": workers, "address": address, "config": config.to_dict()}
    )
    write_summary(out_dir, summary)
    return summary
