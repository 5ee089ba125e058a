"""The local engine: threads over workflows (the core releases the GIL), shard by shard.

Each input file is cut into shards of ``shard_size`` workflows. A shard's examples and
rejects are written atomically, then its marker in ``OUT/_done/``; a rerun with the same
settings skips every marked shard, so a killed run resumes without redoing or losing work.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from pagelens._io import write_atomically
from pagelens.datasets.output import check_format, examples_bytes, rejects_bytes, summarize, write_summary
from pagelens.datasets.readers import input_files, read_workflows
from pagelens.datasets.transform import PrepConfig, Transformer
from pagelens.errors import ArgumentError, PagelensError


class ManifestMismatch(PagelensError, ValueError):
    """The output folder holds a run made with other settings."""


# Workflows per output shard: what a kill can lose, and what a resume redoes.
SHARD_SIZE = 64


def check_manifest(out: Path, manifest: dict[str, Any], overwrite: bool = False) -> None:
    path = out / "manifest.json"
    if path.exists() and not overwrite:
        old = json.loads(path.read_text())
        if old != manifest:
            diff = sorted(k for k in manifest.keys() | old.keys() if manifest.get(k) != old.get(k))
            raise ManifestMismatch(
                f"{out} holds a run with other settings ({', '.join(diff)} differ); use another folder or --overwrite"
            )
    if overwrite and out.exists():
        for sub in ("examples", "rejects", "_done"):
            for f in (out / sub).glob("*") if (out / sub).exists() else []:
                f.unlink()
    write_atomically(path, json.dumps(manifest, indent=2) + "\n")


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
    check_format(fmt)
    if workers < 1 or shard_size < 1:
        raise ArgumentError("workers and shard_size must be at least 1")
    files = input_files(inputs)
    out_dir = Path(out)
    manifest = {
        "engine": "local",
        "config": config.to_dict(),
        "inputs": [str(f) for f in files],
        "shard_size": shard_size,
        "format": fmt,
    }
    check_manifest(out_dir, manifest, overwrite)
    transformer = Transformer(config)
    started = time.perf_counter()
    resumed = 0
    html_bytes = new_examples = 0
    with ThreadPoolExecutor(max_workers=workers) as pool:
        for fi, f in enumerate(files):
            workflows, file_rejects = read_workflows(str(f), f.read_bytes())
            shards = [workflows[i : i + shard_size] for i in range(0, len(workflows), shard_size)] or [[]]
            total = len(workflows)
            done = 0
            for si, shard in enumerate(shards):
                name = f"part-{fi:05d}-{si:05d}"
                marker = out_dir / "_done" / f"{name}.json"
                if marker.exists():
                    resumed += 1
                else:
                    examples: list[dict[str, Any]] = []
                    rejects = [r.to_dict() for r in file_rejects] if si == 0 else []
                    for made, rej in pool.map(transformer.workflow, shard):
                        examples.extend(made)
                        rejects.extend(r.to_dict() for r in rej)
                        html_bytes += sum({(e["workflow_id"], e["step"]): e["html_bytes"] for e in made}.values())
                    new_examples += len(examples)
                    write_atomically(out_dir / "examples" / f"{name}.{fmt}", examples_bytes(examples, fmt))
                    write_atomically(out_dir / "rejects" / f"{name}.jsonl", rejects_bytes(rejects))
                    counts = {"workflows": len(shard), "examples": len(examples), "rejects": len(rejects)}
                    write_atomically(marker, json.dumps(counts) + "\n")
                done += len(shard)
                if on_progress:
                    on_progress(str(f), done, total)
    seconds = time.perf_counter() - started
    summary = summarize(
        out_dir, seconds, {"engine": "local", "workers": workers, "shards_resumed": resumed, "config": config.to_dict()}
    )
    summary["html_mb_per_s"] = round(html_bytes / 1e6 / seconds, 3) if seconds > 0 else None
    summary["examples_per_s"] = round(new_examples / seconds, 2) if seconds > 0 else None
    write_summary(out_dir, summary)
    return summary
