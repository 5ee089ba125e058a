"""One shard's work, the same on every engine: a run's output is the same files whichever
engine wrote them, and either engine resumes from the other's markers' kind.

Each input file is cut into shards of ``SHARD_SIZE`` workflows, named by file and shard index.
A shard's examples and rejects are written atomically, then its marker in ``OUT/_done/``; a
rerun with the same settings skips every marked shard, so a killed run resumes without redoing
or losing work.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pagelens._io import write_atomically
from pagelens.datasets.output import examples_bytes, rejects_bytes
from pagelens.datasets.readers import FileStamp, read_workflows
from pagelens.datasets.records import Reject, Workflow
from pagelens.datasets.transform import Transformer
from pagelens.errors import InputFileError

# Workflows per output shard: what a kill can lose, and what a resume redoes.
SHARD_SIZE = 64
# The Ray engine's: a shard is one actor's turn, so a file is spread over the actors in
# smaller pieces (the local engine spreads each shard's workflows over its threads).
RAY_SHARD_SIZE = 8


@dataclass(frozen=True)
class Shard:
    """A shard to do: its name, its workflows, and (first shard of a file) the file's rejects."""

    name: str
    workflows: Sequence[Workflow]
    file_rejects: Sequence[dict[str, Any]] = ()


@dataclass(frozen=True)
class ShardDone:
    name: str
    workflows: int
    examples: int
    html_bytes: int  # raw HTML of its steps, each step once


def shards_of(
    file_index: int, workflows: Sequence[Workflow], file_rejects: Sequence[Reject], shard_size: int
) -> Iterator[Shard]:
    """The file's shards, in order (one, empty, for a file with no workflow)."""
    rejects = [r.to_dict() for r in file_rejects]
    starts = range(0, len(workflows), shard_size) if workflows else [0]
    for si, start in enumerate(starts):
        name = f"part-{file_index:05d}-{si:05d}"
        yield Shard(name, workflows[start : start + shard_size], rejects if si == 0 else ())


def is_done(out: Path, name: str) -> bool:
    return (out / "_done" / f"{name}.json").exists()


@dataclass(frozen=True)
class FileShards:
    """An input file, read and cut into shards: those left to do, and what earlier runs did."""

    index: int
    path: Path
    workflows: int
    todo: list[Shard]
    resumed_shards: int  # marked done by an earlier run, skipped
    resumed_workflows: int


def read_shards(out: Path, index: int, path: Path, shard_size: int, *, unread_pages: bool = True) -> FileShards:
    """Reads input file ``index`` and cuts it into shards, leaving out those ``out`` marks done.
    ``unread_pages``: a JSONL file's pages are left in the file for the worker to read (see
    ``readers.UnreadText``); else they are decoded into ``RawHtml``."""
    stamp = FileStamp.of(path) if unread_pages else None
    data = path.read_bytes()
    if stamp is not None and (len(data) != stamp.size or FileStamp.of(path) != stamp):
        # The pages' places in the file would not hold.
        raise InputFileError(f"{path}: the input file changed while it was being read")
    workflows, file_rejects = read_workflows(str(path), data, stamp, raw_html=True)
    todo: list[Shard] = []
    resumed = resumed_workflows = 0
    for shard in shards_of(index, workflows, file_rejects, shard_size):
        if is_done(out, shard.name):
            resumed += 1
            resumed_workflows += len(shard.workflows)
        else:
            todo.append(shard)
    return FileShards(index, path, len(workflows), todo, resumed, resumed_workflows)


class FileProgress:
    """Each input file's workflows done so far, passed on as they change to
    ``on_progress(file, done, total)``; an earlier run's shards count when the file is read."""

    def __init__(self, on_progress: Callable[[str, int, int], None] | None):
        self._report = on_progress
        self._files: dict[int, tuple[str, list[int]]] = {}  # file index -> (path, [done, total])

    def opened(self, file: FileShards) -> None:
        self._files[file.index] = (str(file.path), [0, file.workflows])
        if file.resumed_workflows:
            self.advanced(file.index, file.resumed_workflows)

    def advanced(self, index: int, workflows: int) -> None:
        path, counts = self._files[index]
        counts[0] += workflows
        if self._report:
            self._report(path, *counts)


def write_shard(
    out: Path, shard: Shard, results: Iterable[tuple[list[dict[str, Any]], list[Reject]]], fmt: str
) -> ShardDone:
    """Writes the shard's examples and rejects (``results``: each workflow's, in order), then
    its marker."""
    examples: list[dict[str, Any]] = []
    rejects = list(shard.file_rejects)
    html_bytes = 0
    for made, rejected in results:
        examples.extend(made)
        rejects.extend(r.to_dict() for r in rejected)
        html_bytes += sum({(e["workflow_id"], e["step"]): e["html_bytes"] for e in made}.values())
    write_atomically(out / "examples" / f"{shard.name}.{fmt}", examples_bytes(examples, fmt))
    write_atomically(out / "rejects" / f"{shard.name}.jsonl", rejects_bytes(rejects))
    counts = {"workflows": len(shard.workflows), "examples": len(examples), "rejects": len(rejects)}
    write_atomically(out / "_done" / f"{shard.name}.json", json.dumps(counts) + "\n")
    return ShardDone(shard.name, len(shard.workflows), len(examples), html_bytes)


def do_shard(transformer: Transformer, out: Path, shard: Shard, fmt: str) -> ShardDone:
    """Transforms the shard's workflows one after another and writes its files and marker."""
    return write_shard(out, shard, map(transformer.workflow, shard.workflows), fmt)
