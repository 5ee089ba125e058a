"""The cluster engine: the local engine's shards, done by a pool of Ray actors.

The driver reads each input file (as the local engine does) and cuts it into the same shards;
each shard goes through Ray's object store to one of ``workers`` actors, each holding one
tokenizer, which transforms it and writes its files and marker into the output folder (a path
every node sees). Of a JSONL file the driver decodes only the records' small fields: a shard
carries each page's place in the file, and the actor reads its pages there (the input is on a
path every node sees too), so the driver neither decodes nor ships any HTML. The output is the
local engine's, file for file, and a rerun resumes from the markers. Runs on a local Ray
instance (``workers`` CPUs) or on an existing cluster (``address``).

(It was a Ray Data pipeline — read, flat_map, repartition, map_batches, materialize, then
filter and write — at 0.22x the local engine's speed on two workers: each workflow's HTML went
through JSON and Arrow twice and the whole output through the object store before a write.)
"""

from __future__ import annotations

import dataclasses
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pagelens.datasets.local import open_run, throughput
from pagelens.datasets.output import examples_bytes, summarize, write_summary
from pagelens.datasets.readers import read_unread, text_bytes
from pagelens.datasets.records import Step, Workflow
from pagelens.datasets.shards import RAY_SHARD_SIZE, FileProgress, Shard, ShardDone, do_shard, read_shards
from pagelens.datasets.transform import PrepConfig, Transformer
from pagelens.errors import ArgumentError, PagelensError
from pagelens.ray_cluster import RayCluster

# Shards given to an actor at once: the one it does and the one waiting in its queue.
SHARDS_IN_FLIGHT = 2

# How long the Ray pipeline may go without progress before it stops with PrepStalled.
STALL_SECONDS = 600.0


class PrepStalled(PagelensError, RuntimeError):
    """The Ray pipeline made no progress for the stall limit (the message says what the
    cluster had free)."""


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


class NodesLost(PagelensError, RuntimeError):
    """Every actor's node left the cluster: the message names them; finished shards are kept,
    so a rerun resumes."""


class _ShardWorker:
    """A Ray actor: one tokenizer, the shards it is given."""

    def __init__(self, config: dict[str, Any], out: str, fmt: str):
        self.transformer = Transformer(PrepConfig(**config))
        # The first use of the tokenizer's tables, the parser, the selector engine, the cleaner
        # and the output's writer is part of the actor's start-up (reported apart), as it is
        # of a warm local run, not of its first shard.
        page = '<a href="/">warm up</a>'
        step = Step(
            "warm-up", 0, "warm up", "https://warm.up/", page, "mouse_click_action", "warm-up", target_selector="a"
        )
        made, _ = self.transformer.workflow(Workflow("warm-up", (step,)))
        examples_bytes(made, fmt)
        self.out, self.fmt = Path(out), fmt

    def node(self) -> str:
        """The node it runs on, as the cluster names it (its id and address)."""
        import socket

        import ray

        return f"{ray.get_runtime_context().get_node_id()[:12]} on {socket.gethostname()}"

    def shard(self, shard: Shard) -> ShardDone:
        # Its pages come as places in the input file (the driver sends no HTML): read them here.
        shard = dataclasses.replace(shard, workflows=read_unread(shard.workflows))
        return do_shard(self.transformer, self.out, shard, self.fmt)


def _actor_cpus(cluster: RayCluster, workers: int) -> float:
    """CPUs each of the ``workers`` actors asks for: what is free, split between them (at most
    one each). Ray schedules by these numbers only; an actor still uses a whole CPU when it
    runs, so fewer free CPUs than workers share them."""
    free, total = cluster.cpus()
    if free <= 0:
        raise ArgumentError(
            f"the Ray cluster has {free:g} free CPU of {total:g}: the pipeline needs at least one "
            "(free some, or add a node)"
        )
    return min(1.0, free / workers)


def _release(cluster: RayCluster, actors: list[Any], alive: int, share: float, wait_seconds: float = 10.0) -> None:
    """Stops the run's actors. On a cluster that outlives the run (``address``, or Ray started
    by the caller) they would otherwise hold their CPUs until the driver exits and the next
    run would find none free. Their CPUs come back once Ray has seen them die: wait for the
    ``alive`` ones' (a lost node's never come back) — bounded, as a cluster busy with others'
    work may take them at once."""
    if not actors:
        return
    ray = cluster.ray
    before = cluster.cpus()[0]
    for actor in actors:
        ray.kill(actor)
    if not cluster.started_here:
        deadline = time.monotonic() + wait_seconds
        while cluster.cpus()[0] < before + share * alive - 1e-9 and time.monotonic() < deadline:
            time.sleep(0.05)


def _nodes(actors: set[Any], node_of: dict[Any, str]) -> list[str]:
    """The nodes the actors ran on, each once."""
    return sorted({node_of[actor] for actor in actors})


def _html_size(shard: Shard) -> int:
    return sum(text_bytes(step.html) for wf in shard.workflows for step in wf.steps)


def _next_actor(held: dict[Any, int], gone: set[Any], shards_left: int) -> Any | None:
    """The actor to give the next shard (``held``: the shards each has running or queued;
    ``gone``: actors lost with their node): one with nothing to do first; one with a shard
    already (the next queued behind it, its transfer overlapping the work) only while more
    shards are left than actors, so that at the end no actor waits on a queue while another
    has nothing to do."""
    live = [actor for actor in held if actor not in gone]
    for actor in live:
        if held[actor] == 0:
            return actor
    if shards_left > len(live):
        for actor in live:
            if held[actor] < SHARDS_IN_FLIGHT:
                return actor
    return None


def _shard_result(ray: Any, ref: Any) -> ShardDone:
    """A shard's outcome; a pagelens error raised in the actor (an input it cannot read) is
    raised here as itself, its message the user's to read, not inside Ray's remote traceback."""
    try:
        done: ShardDone = ray.get(ref)
    except ray.exceptions.RayTaskError as e:
        if isinstance(e.cause, PagelensError):
            raise e.cause from None
        raise
    return done


def run_ray(
    inputs: list[str],
    out: str,
    config: PrepConfig,
    *,
    address: str | None = None,
    workers: int = 1,
    shard_size: int = RAY_SHARD_SIZE,
    fmt: str = "parquet",
    overwrite: bool = False,
    stall_seconds: float = STALL_SECONDS,
    on_progress: Callable[[str, int, int], None] | None = None,
) -> dict[str, Any]:
    """Runs the pipeline on Ray; ``address`` joins an existing cluster ("auto" or
    "ray://host:10001"), otherwise a local instance with ``workers`` CPUs is started and
    stopped. Actors are sized from the cluster's free CPUs; a run with no shard finished for
    ``stall_seconds`` raises :class:`PrepStalled`; ``on_progress(file, done, total)`` as for the
    local engine. Returns the summary (also written to ``out/summary.json``)."""
    files, out_dir = open_run(
        "ray", inputs, out, config, workers=workers, shard_size=shard_size, fmt=fmt, overwrite=overwrite
    )
    cluster = RayCluster("the Ray engine", address, workers)
    ray = cluster.ray
    state = {"shards": 0, "resumed": 0, "html_bytes": 0, "examples": 0}
    actors: list[Any] = []
    share = 0.0
    node_of: dict[Any, str] = {}
    gone: set[Any] = set()  # actors lost with their node (or their process)
    progress = FileProgress(on_progress)
    try:
        share = _actor_cpus(cluster, workers)
        starting = time.perf_counter()
        worker = ray.remote(num_cpus=share)(_ShardWorker)
        actors = [worker.remote(config.to_dict(), str(out_dir), fmt) for _ in range(workers)]

        def cluster_state() -> str:
            free, total = cluster.cpus()
            return f"{free:g} of {total:g} CPUs free; {workers} actors asked for {share:g} CPU each"

        # The actors' start (a process each, pagelens imported, a tokenizer loaded) is start-up,
        # reported apart from the work's throughput.
        nodes: list[str] = wait_with_watchdog(
            lambda: ray.get([a.node.remote() for a in actors]),
            lambda: 0,
            stall_seconds=stall_seconds,
            describe=cluster_state,
        )
        started = time.perf_counter()
        node_of.update(zip(actors, nodes, strict=True))

        def work() -> None:
            # Each actor holds a second shard in its queue while it does one: the next
            # shard's workflows reach it through the object store during the current one's
            # work, not after it (one at a time, each transfer waited for the shard before it).
            held = dict.fromkeys(actors, 0)  # shards each actor has running or queued
            unread = iter(enumerate(files))
            more = True  # files left to read
            todo: deque[tuple[int, Shard]] = deque()
            running: dict[Any, tuple[Any, int, Shard]] = {}

            def read_next() -> bool:
                item = next(unread, None)
                if item is None:
                    return False
                # The pages stay in the file: each actor reads its shards' own (the input is on a
                # path every node sees), so the driver neither decodes nor ships any HTML.
                file = read_shards(out_dir, *item, shard_size)
                state["resumed"] += file.resumed_shards
                progress.opened(file)
                # Largest first (by HTML, what the work scales with): a file's last shards to
                # finish are then small ones, rather than one large shard keeping a single actor
                # busy while the others have nothing left (files are often sorted by page size).
                todo.extend((file.index, shard) for shard in sorted(file.todo, key=_html_size, reverse=True))
                return True

            while True:
                # The next file is read (by this driver) while the actors work through the
                # shards they hold, before this file's last shards are handed out: not after
                # its last shard is done, with every actor idle during the read.
                while more and len(todo) < len(actors):
                    more = read_next()
                left = len(todo) if not more else sys.maxsize
                while todo and (actor := _next_actor(held, gone, left)) is not None:
                    fi, shard = todo.popleft()
                    held[actor] += 1
                    running[actor.shard.remote(shard)] = (actor, fi, shard)
                if not running:
                    if todo:  # shards left and no actor: every node is gone
                        raise NodesLost(
                            f"every Ray node running prep was lost ({', '.join(_nodes(gone, node_of))}); "
                            f"{state['shards']} shards were finished and are kept: rerun to resume"
                        )
                    return
                (ref,), _ = ray.wait(list(running), num_returns=1)
                actor, fi, shard = running.pop(ref)
                held[actor] -= 1
                try:
                    finished: ShardDone = _shard_result(ray, ref)
                except ray.exceptions.RayActorError:
                    # Its node (or its process) is gone: the shard goes to another actor.
                    gone.add(actor)  # its queued shard fails too, and goes back the same way
                    todo.appendleft((fi, shard))
                    print(
                        f"prep: lost the actor on node {node_of[actor]}; its shard {shard.name} goes to another",
                        file=sys.stderr,
                        flush=True,
                    )
                    continue
                state["shards"] += 1
                state["html_bytes"] += finished.html_bytes
                state["examples"] += finished.examples
                progress.advanced(fi, finished.workflows)

        wait_with_watchdog(work, lambda: state["shards"], stall_seconds=stall_seconds, describe=cluster_state)
        seconds = time.perf_counter() - started
    finally:
        try:
            lost = _nodes(gone, node_of)
            _release(cluster, actors, sum(node_of.get(a) not in lost for a in actors), share)
        except Exception as e:  # noqa: BLE001 - a cluster gone as well: the run's own outcome stands
            print(f"prep: could not stop the run's actors ({type(e).__name__}: {e})", file=sys.stderr, flush=True)
        cluster.close()
    summary = summarize(
        out_dir,
        seconds,
        {
            "engine": "ray",
            "workers": workers,
            "address": address,
            "shards_resumed": state["resumed"],
            "actors_start_seconds": round(started - starting, 3),
            "nodes": sorted(set(nodes)),
            "nodes_lost": _nodes(gone, node_of),
            "config": config.to_dict(),
        },
    )
    summary.update(throughput(state["html_bytes"], state["examples"], seconds))
    write_summary(out_dir, summary)
    return summary
