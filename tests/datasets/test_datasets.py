"""The dataset pipeline (issue: dataset preparation at scale) on a workflow dataset built
from the corpus, on both engines."""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pagelens
from pagelens.datasets import (
    ManifestMismatch,
    PrepConfig,
    PrepStalled,
    Transformer,
    read_output,
    read_workflows,
    run_local,
    run_ray,
)
from pagelens.datasets.cluster import _next_actor, wait_with_watchdog
from pagelens.datasets.readers import UnreadText, input_files
from support.paths import DATA as TESTS_DATA
from support.processes import descendants, executable
from support.workflow_data import build_dataset, split_workflows

BUDGET = 512
DATA = TESTS_DATA


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    folder = tmp_path_factory.mktemp("workflows")
    info = build_dataset(folder, n_pages=10)
    return folder, info


@pytest.fixture(scope="module")
def local_run(dataset, tmp_path_factory):
    folder, _ = dataset
    out = tmp_path_factory.mktemp("local-out")
    summary = run_local([str(folder)], str(out), PrepConfig(max_tokens=BUDGET), workers=2, shard_size=3)
    return out, summary


def observation(prompt: str) -> str:
    return prompt.split("\nObservation: ", 1)[1].split("\nStep-by-step guide:\n", 1)[0]


def test_every_example_holds_its_target_within_budget(dataset, local_run):
    folder, info = dataset
    examples, _ = read_output(local_run[0])
    by_step = {(e["workflow_id"], e["step"]): e for e in examples}
    assert set(info["expected"]) <= set(by_step)
    for (wid, step), target in info["expected"].items():
        e = by_step[(wid, step)]
        obs = observation(e["prompt"])
        # The element the recording named (found by html5lib) is the one we resolved.
        el = pagelens.Dom.parse(_html_of(folder, e["source"])).element(e["target_node"])
        assert el.tag == target.tag
        assert {k: v for k, v in el.attributes.items()} == target.attrs
        assert f' node="{e["target_node"]}"' in obs and e["target_tag"] in obs
        assert e["contains_target"] and e["observation_tokens"] == pagelens.count_tokens(obs)
        assert e["observation_tokens"] <= BUDGET or e["oversized"]
        assert e["prompt_tokens"] == pagelens.count_tokens(e["prompt"])
        assert e["clean_tokens"] < e["raw_tokens"]


def _html_of(folder: Path, source: str) -> str:
    line = int(source.rsplit(":", 1)[1])
    return json.loads((folder / "steps.jsonl").read_text().splitlines()[line - 1])["html"]


def test_an_examples_row_is_its_fields_in_column_order():
    """``Example.as_row`` gives every field, in the schema's order, as ``asdict`` would."""
    import dataclasses

    from pagelens.datasets.records import Example

    values = {}
    for i, f in enumerate(dataclasses.fields(Example)):
        values[f.name] = {"str": f"v{i}", "int": i, "bool": i % 2 == 0}[f.type]
    example = Example(**values)
    row = example.as_row()
    assert list(row) == [f.name for f in dataclasses.fields(Example)]
    assert row == dataclasses.asdict(example)


def test_prompts_and_labels_follow_the_five_line_format(local_run):
    examples, _ = read_output(local_run[0])
    by_wf: dict[str, list[dict]] = {}
    for e in examples:
        by_wf.setdefault(e["workflow_id"], []).append(e)
    label_re = re.compile(r"^(\d+)\.\nDescription: .+\nAction: (\S+)( \[.*\])?\nNode: (\d+)\nTarget: (<[^\n]+>)$")
    for steps in by_wf.values():
        for k, e in enumerate(steps):
            m = label_re.match(e["label"])
            assert m, e["label"]
            assert int(m.group(1)) == k + 1 and m.group(2) == e["action"]
            assert int(m.group(4)) == e["target_node"] and m.group(5) == e["target_tag"]
            if e["action"] == "keyboard_sequence_action":
                assert m.group(3) == " [hello world]"
            assert e["prompt"].startswith(f"Objective: {e['objective']}\nURL: {e['url']}\nObservation: ")
            # The guide is exactly the earlier steps' labels, in order.
            guide = "".join(p["label"] + "\n" for p in steps[:k])
            assert e["prompt"].endswith("\nStep-by-step guide:\n" + guide)


def test_broken_records_are_the_rejects_with_their_reasons(dataset, local_run):
    folder, info = dataset
    out, summary = local_run
    examples, rejects = read_output(out)
    broken = dict(info["broken"])
    ok_line = broken.pop("_cut_short_ok_line")
    got = {r["source"].rsplit("/", 1)[1]: r["field"] for r in rejects}
    assert got == broken
    assert any(e["source"].endswith(f"steps.jsonl:{ok_line}") for e in examples), "the step before a bad one stands"
    lines = (folder / "steps.jsonl").read_text().splitlines()
    assert summary["records_in"] == len(lines) == len(examples) + len(rejects)
    assert summary["rejected"] == len(broken)
    assert summary["tokens_before"] > summary["tokens_after"] > 0


def test_ray_output_is_identical_record_for_record(dataset, local_run, tmp_path):
    folder, _ = dataset
    calls: dict[str, list[tuple[int, int]]] = {}
    summary = run_ray(
        [str(folder)],
        str(tmp_path / "ray"),
        PrepConfig(max_tokens=BUDGET),
        workers=2,
        shard_size=2,
        on_progress=lambda f, done, total: calls.setdefault(Path(f).name, []).append((done, total)),
    )
    assert read_output(tmp_path / "ray") == read_output(local_run[0])
    for key in ("records_in", "examples_out", "rejected", "tokens_before", "tokens_after", "targets_rescued"):
        assert summary[key] == local_run[1][key], key
    # Progress per file: one call per shard, the count of workflows done rising to the total.
    assert calls, "no progress reported"
    for name, seen in calls.items():
        done = [d for d, _ in seen]
        assert done == sorted(done) and seen[-1][0] == seen[-1][1] > 0, (name, seen)
        assert len({t for _, t in seen}) == 1


def test_ray_over_many_files_is_the_local_engines_output(tmp_path):
    """Files are read one after another while the actors work (the next file's shards queued
    behind this one's): the output and each file's progress are the same as file by file."""
    build_dataset(tmp_path / "one", n_pages=6, steps=2, broken=False)
    split_workflows((tmp_path / "one" / "steps.jsonl").read_bytes(), tmp_path / "many", 3)
    config = PrepConfig(max_tokens=BUDGET)
    local = run_local([str(tmp_path / "many")], str(tmp_path / "local"), config, workers=2, shard_size=1)
    calls: dict[str, list[tuple[int, int]]] = {}
    ray_summary = run_ray(
        [str(tmp_path / "many")],
        str(tmp_path / "ray"),
        config,
        workers=2,
        shard_size=1,
        on_progress=lambda f, done, total: calls.setdefault(Path(f).name, []).append((done, total)),
    )
    examples, rejects = read_output(tmp_path / "ray")
    assert (examples, rejects) == read_output(tmp_path / "local") and not rejects
    assert {e["source"].rsplit("/", 1)[1].split(":")[0] for e in examples} == {f"part-0{k}.jsonl" for k in range(3)}
    assert ray_summary["examples_out"] == local["examples_out"] > 0
    assert sorted(calls) == [f"part-0{k}.jsonl" for k in range(3)]
    for seen in calls.values():
        assert [d for d, _ in seen] == list(range(1, seen[0][1] + 1)), seen  # one workflow a shard


@pytest.mark.parametrize("run", [run_local, run_ray], ids=["local", "ray"])
def test_a_run_resumes_from_its_shards(run, dataset, local_run, tmp_path):
    """Both engines write the same shards and markers: a run that stopped part way (here: half
    its shards' markers gone, one shard's files too) is finished by a rerun that redoes only
    those, to the same output, counting the earlier run's shards as progress when it reads
    their file; other settings are refused."""
    folder, _ = dataset
    out = tmp_path / "out"
    config = PrepConfig(max_tokens=BUDGET)
    run([str(folder)], str(out), config, workers=2, shard_size=2)
    markers = sorted((out / "_done").glob("*.json"))
    assert len(markers) > 2
    for marker in markers[::2]:
        marker.unlink()
    lost = markers[0].stem
    for f in (*(out / "examples").glob(f"{lost}.*"), *(out / "rejects").glob(f"{lost}.*")):
        f.unlink()
    summary, calls = run_with_progress(run, folder, out, config)
    kept = markers[1::2]
    assert summary["shards_resumed"] == len(kept)
    assert read_output(out) == read_output(local_run[0])
    check_resumed_progress(calls, folder, kept)
    with pytest.raises(ManifestMismatch, match="shard_size"):
        run([str(folder)], str(out), config, workers=2, shard_size=3)


def run_with_progress(
    run: Any, folder: Path, out: Path, config: PrepConfig
) -> tuple[dict[str, Any], dict[str, list[tuple[int, int]]]]:
    """A run (two workers, shards of two) and its progress reports, by file."""
    calls: dict[str, list[tuple[int, int]]] = {}
    summary = run(
        [str(folder)],
        str(out),
        config,
        workers=2,
        shard_size=2,
        on_progress=lambda f, done, total: calls.setdefault(f, []).append((done, total)),
    )
    return summary, calls


def check_resumed_progress(calls: dict[str, list[tuple[int, int]]], folder: Path, kept: list[Path]) -> None:
    """A resumed run's progress: each file's first report counts the workflows of the shards an
    earlier run finished (``kept``: their markers), then rises to the file's total."""
    files = input_files([str(folder)])
    resumed = dict.fromkeys(map(str, files), 0)
    for marker in kept:
        file_index = int(marker.stem.split("-")[1])
        resumed[str(files[file_index])] += json.loads(marker.read_text())["workflows"]
    assert set(calls) == set(resumed)
    for f, seen in calls.items():
        done = [d for d, _ in seen]
        assert done == sorted(done) and seen[-1][0] == seen[-1][1], (f, seen)
        if resumed[f]:
            assert seen[0][0] == resumed[f], (f, seen, resumed[f])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# A node's loss is seen by the head's health checks: Ray's defaults (a check every 3 s, a node
# lost after 5 failures of up to 10 s each) make each lost node a wait of 15-30 s; these make
# it about 2 s. Read by every node (only the head's GCS acts on them).
_LOST_NODE_SEEN_IN_2_S = {
    "RAY_health_check_period_ms": "500",
    "RAY_health_check_timeout_ms": "1000",
    "RAY_health_check_failure_threshold": "3",
}


class RayNode:
    """A Ray node started apart from the test (``ray start --block``), in its own process
    group, as a user's would be; stopped by ending that group, not ``ray stop`` (which would
    stop every cluster on the machine)."""

    def __init__(self, temp: Path, cpus: int, head_port: int | None = None, join: str | None = None):
        cmd = [executable("ray"), "start", "--block", "--num-cpus", str(cpus), "--disable-usage-stats"]
        cmd += ["--temp-dir", str(temp)]
        if join is None:
            cmd += ["--head", "--port", str(head_port), "--include-dashboard=false"]
        else:
            cmd += ["--address", join]
        # Without token authentication, like the driver here (Ray's default for drivers that
        # name an address; a token cluster needs RAY_AUTH_MODE=token on both sides).
        env = {**os.environ, "RAY_AUTH_MODE": "disabled", **_LOST_NODE_SEEN_IN_2_S}
        self.proc = subprocess.Popen(
            cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True, env=env
        )
        assert self.proc.stdout is not None
        seen = []
        for line in self.proc.stdout:  # wait for the line that says it is up
            seen.append(line)
            if "Ray runtime started" in line:
                break
        else:
            pytest.fail("ray start failed:\n" + "".join(seen))
        threading.Thread(target=self.proc.stdout.read, daemon=True).start()  # keep its pipe drained

    def kill(self) -> None:
        """Ends the node as a lost machine ends: every process of it at once. Ray's worker
        processes (the actors) are the raylet's children in process groups of their own, and
        outlive a killed group until they notice their raylet is gone."""
        workers = descendants(self.proc.pid)
        os.killpg(self.proc.pid, signal.SIGKILL)
        for pid in workers:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        self.proc.wait()

    def stop(self) -> None:
        if self.proc.poll() is not None:
            return
        os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            pass
        with contextlib.suppress(ProcessLookupError):  # what is still up of the group goes now
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()


@pytest.fixture
def ray_cluster(tmp_path_factory):
    """A one-node cluster (``ray start --head``, 2 CPUs) started apart from the test."""
    port = _free_port()
    head = RayNode(tmp_path_factory.mktemp("ray"), 2, head_port=port)
    try:
        yield f"127.0.0.1:{port}"
    finally:
        head.stop()


# Drivers run in their own processes, as a user's would: Ray Data keeps per-process state
# that a second Ray session in one interpreter trips over.
_HOGGED_RUN = """
import sys, ray
from pagelens.datasets import PrepConfig, run_ray
ray.init(address=sys.argv[1], log_to_driver=False)

@ray.remote(num_cpus=2)
class Hog:
    def ready(self):
        return True

hog = Hog.remote()
ray.get(hog.ready.remote(), timeout=120)
try:
    run_ray([sys.argv[2]], sys.argv[3], PrepConfig(max_tokens=512), workers=2)
except Exception as e:
    print(type(e).__name__, e)
"""


_TWO_RUNS = f"""
import sys, time, ray
from pagelens.datasets import PrepConfig, run_ray
ray.init(address=sys.argv[1], log_to_driver=False)
for out in sys.argv[3:]:
    run_ray([sys.argv[2]], out, PrepConfig(max_tokens={BUDGET}), workers=2)
# Ray's view of free CPUs lags a death by its resource reports (no event to wait on): poll it.
deadline = time.monotonic() + 60
while ray.available_resources().get("CPU", 0.0) < 2 and time.monotonic() < deadline:
    time.sleep(0.1)
print("free", ray.available_resources().get("CPU", 0.0))
"""


def _run_driver(script: str, *args: object) -> subprocess.CompletedProcess[str]:
    """Runs a driver script (one of the above) in its own interpreter, without token
    authentication like the clusters started here."""
    return subprocess.run(
        [sys.executable, "-c", script, *map(str, args)],
        env={**os.environ, "RAY_AUTH_MODE": "disabled"},
        capture_output=True,
        text=True,
        timeout=600,
    )


# The input rewritten after the driver read it, before any actor reads its pages there.
_CHANGED_INPUT = """
import sys, ray
from pathlib import Path
from pagelens.datasets import PrepConfig, cluster, run_ray
ray.init(address=sys.argv[1], log_to_driver=False)
read = cluster.read_shards

def read_then_change(out, index, path, *args, **kwargs):
    shards = read(out, index, path, *args, **kwargs)
    path.write_bytes(b"\\n" + path.read_bytes())
    return shards

cluster.read_shards = read_then_change
try:
    run_ray([sys.argv[2]], sys.argv[3], PrepConfig(max_tokens=512), workers=1)
except Exception as e:
    print(type(e).__name__, e)
"""


def test_ray_actors_that_cannot_read_the_input_stop_the_run_naming_it(dataset, tmp_path, ray_cluster):
    """The actors read the pages from the input file; one changed since the driver read it is
    an input error that names the file, raised as itself (not inside Ray's remote traceback),
    and no shard is marked done."""
    folder, _ = dataset
    copy = tmp_path / "in"
    shutil.copytree(folder, copy)
    run = _run_driver(_CHANGED_INPUT, ray_cluster, copy, tmp_path / "out")
    assert run.returncode == 0, run.stderr[-3000:]
    name = next(copy.glob("*.jsonl")).resolve()
    assert run.stdout.strip().splitlines()[-1] == (
        f"InputFileError {name}: the input file changed while it was being read"
    ), run.stdout
    assert not list((tmp_path / "out" / "_done").glob("*.json"))


def test_ray_on_a_separately_started_cluster(dataset, local_run, tmp_path, ray_cluster):
    """Actors are sized from the cluster's free CPUs: with 2 CPUs and 2 workers the reads
    still run (the pool used to take every CPU and wait forever); a cluster with no free CPU
    is a clear error, not a hang."""
    folder, _ = dataset
    env = {**os.environ, "RAY_AUTH_MODE": "disabled"}
    joined = tmp_path / "joined"
    cmd = [
        sys.executable,
        "-m",
        "pagelens",
        "prep",
        str(folder),
        str(joined),
        "--engine",
        "ray",
        "--address",
        ray_cluster,
        "--workers",
        "2",
        "--max-tokens",
        str(BUDGET),
        "--stall-seconds",
        "120",
    ]
    run = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    assert read_output(joined) == read_output(local_run[0])
    hogged = _run_driver(_HOGGED_RUN, ray_cluster, folder, tmp_path / "full")
    assert "ArgumentError the Ray cluster has 0 free CPU of 2" in hogged.stdout, hogged.stderr[-3000:]
    # Two runs from one driver: the first's actors give their CPUs back when it ends (they
    # used to hold them until the driver exited, and the second run found none free).
    twice = _run_driver(_TWO_RUNS, ray_cluster, folder, tmp_path / "first", tmp_path / "second")
    assert twice.returncode == 0, twice.stderr[-3000:]
    assert twice.stdout.split() == ["free", "2.0"], twice.stdout
    assert read_output(tmp_path / "first") == read_output(tmp_path / "second") == read_output(local_run[0])


def test_a_stalled_pipeline_is_reported_not_waited_on():
    never = threading.Event()
    with pytest.raises(PrepStalled, match=r"no progress for 0.3 s \(2 of 2 CPUs free\)"):
        wait_with_watchdog(
            never.wait, lambda: 7, stall_seconds=0.3, describe=lambda: "2 of 2 CPUs free", poll_seconds=0.05
        )
    # Slow but moving: every poll sees a new count, so no stall however long it takes.
    ticks = itertools.count()
    polls = threading.Event()

    def progress() -> int:
        n = next(ticks)
        if n > 20:
            polls.set()
        return n

    def work() -> str:
        polls.wait()
        return "done"

    assert wait_with_watchdog(work, progress, stall_seconds=0.0, describe=str, poll_seconds=0.01) == "done"
    with pytest.raises(KeyError):  # the work's own error reaches the caller
        wait_with_watchdog(lambda: {}["x"], lambda: 0, stall_seconds=60, describe=str)


def test_jsonl_output_and_worker_count_change_nothing(dataset, local_run, tmp_path):
    folder, _ = dataset
    run_local([str(folder)], str(tmp_path / "j"), PrepConfig(max_tokens=BUDGET), workers=1, shard_size=100, fmt="jsonl")
    assert sorted(p.suffix for p in (tmp_path / "j" / "examples").iterdir()) == [".jsonl"]
    assert read_output(tmp_path / "j") == read_output(local_run[0])


def test_resume_after_a_killed_run_redoes_nothing_and_loses_nothing(dataset, local_run, tmp_path):
    folder, _ = dataset
    out = tmp_path / "resumed"
    cmd = [
        sys.executable,
        "-m",
        "pagelens",
        "prep",
        str(folder),
        str(out),
        "--max-tokens",
        str(BUDGET),
        "--workers",
        "1",
        "--shard-size",
        "1",
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    done = out / "_done"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not (done.exists() and any(done.glob("*.json"))):
        time.sleep(0.005)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    finished = sorted(done.glob("*.json"))
    shards = len(read_workflows("steps.jsonl", (folder / "steps.jsonl").read_bytes())[0])
    assert 1 <= len(finished) < shards, "killed part-way"
    stamps = {
        p: (p.stat().st_ino, p.stat().st_mtime_ns) for d in ("examples", "_done") for p in (out / d).glob("part-*")
    }
    stamps = {p: s for p, s in stamps.items() if (done / f"{p.stem}.json").exists()}
    # What a kill during a shard's write leaves (whether this kill did depends on its timing).
    (out / "examples" / ".part-00000-00009.parquet.1.2.tmp").write_bytes(b"half a shard")
    rerun = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr
    summary = json.loads(rerun.stdout)
    assert summary["shards_resumed"] >= len(finished)
    for p, s in stamps.items():
        assert (p.stat().st_ino, p.stat().st_mtime_ns) == s, f"{p.name} was redone"
    assert not list(out.rglob(".*.tmp")), "no half-written file left behind"
    assert read_output(out) == read_output(local_run[0])


def test_a_rerun_with_other_settings_is_refused(dataset, local_run):
    folder, _ = dataset
    with pytest.raises(ManifestMismatch, match="config"):
        run_local([str(folder)], str(local_run[0]), PrepConfig(max_tokens=BUDGET * 2))


def test_mind2web_layout():
    data = (DATA / "mind2web_sample.json").read_bytes()
    workflows, rejects = read_workflows("mind2web_sample.json", data)
    assert [r.field for r in rejects] == ["pos_candidates"] and rejects[
        0
    ].source == "mind2web_sample.json[1].actions[0]"
    (wf,) = workflows
    examples, rej = Transformer(PrepConfig()).workflow(wf)
    assert rej == []
    assert [e["action"] for e in examples] == ["select_action", "keyboard_sequence_action", "mouse_click_action"]
    assert [e["text"] for e in examples] == ["Events", "Seattle", ""]
    assert [e["target_tag"].split()[0] for e in examples] == ["<select", "<input", "<path"]
    assert all(e["objective"] == "Find a wine tasting event in Seattle" and "URL:" not in e["prompt"] for e in examples)
    assert "Description: [combobox]  Reservation type -> SELECT: Events".replace("  ", " ") in examples[1]["prompt"]
    assert "Action: select_action [Events]" in examples[0]["label"]
    # backend ids name the target; they are not part of what the model reads.
    assert all("backend_node_id" not in e["prompt"] + e["label"] for e in examples)
    # The svg <path> clicked in step 3 would be unwrapped by the scribe rules: it is kept.
    assert [e["target_rescued"] for e in examples] == [False, False, True]


def test_a_target_that_cleaning_would_remove_is_kept_and_counted():
    html = "<html><body><div class=close></div><p>Hello <custom-button>Go</custom-button></p></body></html>"
    steps = [
        {
            "workflow_id": "w",
            "step": 0,
            "objective": "o",
            "url": "u",
            "html": html,
            "action": "click",
            "target_selector": "div.close",
        },
        {
            "workflow_id": "w",
            "step": 1,
            "objective": "o",
            "url": "u",
            "html": html,
            "action": "click",
            "target_path": "/html/body/p/custom-button",
        },
        {
            "workflow_id": "w",
            "step": 2,
            "objective": "o",
            "url": "u",
            "html": html,
            "action": "click",
            "target_selector": "p",
        },
    ]
    (wf,), _ = read_workflows("w.jsonl", "\n".join(map(json.dumps, steps)).encode())
    examples, _ = Transformer(PrepConfig()).workflow(wf)
    assert [e["target_rescued"] for e in examples] == [True, True, False]
    assert examples[0]["target_tag"].startswith('<div class="close" node=')
    assert examples[1]["target_tag"].startswith("<custom-button node=")
    assert 'Description: Click "Go"' in examples[1]["label"], "a missing description is made from the target"
    plain = pagelens.Dom.parse(html).clean().html()
    assert "custom-button" not in plain and "close" not in plain


@pytest.mark.parametrize("mode", ["all", "last"])
def test_evaluation_chunk_modes(dataset, mode):
    folder, _ = dataset
    (wf, *_), _ = read_workflows("steps.jsonl", (folder / "steps.jsonl").read_bytes())
    examples, _ = Transformer(PrepConfig(max_tokens=128, chunks=mode)).workflow(wf)
    by_step: dict[int, list[dict]] = {}
    for e in examples:
        by_step.setdefault(e["step"], []).append(e)
    for rows in by_step.values():
        count = rows[0]["chunk_count"]
        assert count > 1
        if mode == "all":
            assert [r["chunk_index"] for r in rows] == list(range(count))
            assert sum(r["contains_target"] for r in rows) == 1
        else:
            assert [r["chunk_index"] for r in rows] == [count - 1]
        for r in rows:
            assert r["contains_target"] == (f' node="{r["target_node"]}"' in observation(r["prompt"]))


def test_cli_errors_are_clear(tmp_path):
    bad = tmp_path / "x.csv"
    bad.write_text("a,b\n")
    r = subprocess.run(
        [sys.executable, "-m", "pagelens", "prep", str(bad), str(tmp_path / "o")], capture_output=True, text=True
    )
    assert r.returncode == 2 and "unknown format '.csv'" in r.stderr
    r = subprocess.run([sys.executable, "-m", "pagelens", "prep", str(tmp_path / "o")], capture_output=True, text=True)
    assert r.returncode == 2 and "at least one INPUT" in r.stderr


def test_unreadable_parquet_is_one_reject_not_a_crash():
    workflows, rejects = read_workflows("broken.parquet", b"PAR1 not really")
    assert workflows == [] and len(rejects) == 1 and "unreadable file" in rejects[0].reason


def test_parquet_input(dataset, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder, info = dataset
    lines = (folder / "steps.jsonl").read_text().splitlines()
    wanted = info["pages"][:2]
    rows = [json.loads(line) for line in lines if any(line.startswith(f'{{"workflow_id": "{w}"') for w in wanted)]
    keys = sorted({k for r in rows for k in r})  # from_pylist takes its columns from the first row
    pq.write_table(pa.Table.from_pylist([{k: r.get(k) for k in keys} for r in rows]), tmp_path / "steps.parquet")
    workflows, rejects = read_workflows(str(tmp_path / "steps.parquet"), (tmp_path / "steps.parquet").read_bytes())
    assert rejects == [] and [w.workflow_id for w in workflows] == info["pages"][:2]
    assert all(s.source.startswith(str(tmp_path / "steps.parquet") + "#") for w in workflows for s in w.steps)


# Keeping an element is a tree transform: check it on generated documents.
_TAGS = ["div", "span", "p", "a", "custom-x", "script", "i", "svg", "path", "template", "head", "meta", "noscript"]


@st.composite
def documents(draw):
    parts: list[str] = []
    for _ in range(draw(st.integers(1, 25))):
        tag = draw(st.sampled_from(_TAGS))
        attr = draw(
            st.sampled_from(
                ["", ' class="x"', ' onclick="f()"', ' title="t"', ' id="q9Zr7xKpL2mWv8QsT4nB6yHdF3jGc1aE0uR"']
            )
        )
        text = draw(st.sampled_from(["", "hi", " ", "a b"]))
        close = draw(st.booleans())
        parts.append(f"<{tag}{attr}>{text}" + (f"</{tag}>" if close else ""))
    return "<html><head><title>t</title></head><body>" + "".join(parts) + "</body></html>"


@settings(max_examples=200, deadline=None)
@given(documents(), st.data(), st.sampled_from(["scribe", "minimal"]))
def test_keep_property(html, data, profile):
    dom = pagelens.Dom.parse(html)
    target = data.draw(st.sampled_from(dom.node_ids()))
    kept = dom.clean(profile, keep=[target])
    plain = dom.clean(profile)
    assert target in kept and kept.element(target).tag == dom.element(target).tag
    assert kept.start_tag(target) in kept.html()
    assert set(kept.rescued_ids) <= {target}
    # Rescued exactly when plain cleaning loses the element; otherwise keeping changes nothing.
    assert (target in kept.rescued_ids) == (target not in plain)
    if not kept.rescued_ids:
        assert kept.html() == plain.html()
    # Every other element of the kept copy is one plain cleaning keeps too, or its ancestor.
    extra = set(kept.node_ids()) - set(plain.node_ids())
    assert extra <= {target} | _ancestors(dom, target)


def _ancestors(dom, node_id):
    out = set()
    p = dom.element(node_id).parent
    while p is not None:
        out.add(p)
        p = dom.element(p).parent
    return out


# -- hardening: a bad record loses only itself ------------------------------------------------------

JUNK = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=12,
)
M2W_FIELDS = ["annotation_id", "confirmed_task", "actions", "action_reprs", "website"]
ACTION_FIELDS = ["operation", "pos_candidates", "raw_html", "cleaned_html"]


def _good(k: int) -> dict:
    return {
        "workflow_id": f"good-{k}",
        "step": 0,
        "objective": "o",
        "url": "http://a.test/",
        "html": f"<p id='t{k}'>x</p>",
        "action": "mouse_click_action",
        "target_selector": f"#t{k}",
    }


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(JUNK, st.just("DEEP")), max_size=6), st.data())
def test_a_bad_record_is_its_own_reject_and_every_good_one_is_kept(junk, data):
    from pagelens.datasets import read_workflows

    mind2web = json.loads((TESTS_DATA / "mind2web_sample.json").read_text())[0]
    odd = json.loads(json.dumps(mind2web))
    odd["annotation_id"] = "odd"
    field = data.draw(st.sampled_from(M2W_FIELDS[1:]))
    odd[field] = data.draw(JUNK)
    if data.draw(st.booleans()) and isinstance(odd.get("actions"), list) and odd["actions"]:
        odd["actions"][0] = dict(mind2web["actions"][0], **{data.draw(st.sampled_from(ACTION_FIELDS)): data.draw(JUNK)})
    lines = [json.dumps(_good(0))]
    for k, j in enumerate(junk, start=1):
        lines.append("[" * 50_000 + "]" * 50_000 if j == "DEEP" else json.dumps(j))
        lines.append(json.dumps(_good(k)))
    lines.append(json.dumps(mind2web))
    lines.append(json.dumps(odd))
    workflows, rejects = read_workflows("in.jsonl", ("\n".join(lines) + "\n").encode())
    kept = {w.workflow_id for w in workflows if w.steps}
    assert {f"good-{k}" for k in range(len(junk) + 1)} <= kept
    assert mind2web["annotation_id"] in kept
    assert not any(r.reason.startswith("unreadable file") for r in rejects)
    # The same as one JSON document.
    doc = [_good(0), *[j for j in junk if j != "DEEP"], mind2web, odd]
    workflows, rejects = read_workflows("in.json", json.dumps(doc).encode())
    assert {"good-0", mind2web["annotation_id"]} <= {w.workflow_id for w in workflows if w.steps}


def test_a_target_whose_start_tag_is_over_the_budget_is_rejected_not_mislabelled():
    """Hardening: a target whose start tag alone exceeds the budget cannot be shown (its
    `node="N"` is in no chunk) and its Target line would put the label over the budget: the
    step is a named reject, never contains_target=True with a label longer than the budget."""
    from pagelens.datasets import read_workflows

    long_title = " ".join(f"word{i}" for i in range(3000))
    rows = [
        {
            "workflow_id": "w",
            "step": 0,
            "objective": "o",
            "url": "http://a.test/",
            "html": f'<p>intro</p><a id="t" href="/x" title="{long_title}">go</a>',
            "action": "mouse_click_action",
            "target_selector": "#t",
        },
        {
            "workflow_id": "ok",
            "step": 0,
            "objective": "o",
            "url": "http://a.test/",
            "html": '<p>intro</p><a id="t" href="/x">go</a>',
            "action": "mouse_click_action",
            "target_selector": "#t",
        },
    ]
    workflows, rejects = read_workflows("in.jsonl", "".join(json.dumps(r) + "\n" for r in rows).encode())
    for chunks in ("target", "all", "last"):
        transformer = Transformer(PrepConfig(max_tokens=512, chunks=chunks, profile="minimal"))
        made, refused = [], []
        for w in workflows:
            examples, step_rejects = transformer.workflow(w)
            made += examples
            refused += step_rejects
        assert [r.reason for r in refused if r.workflow_id == "w"][0].startswith("the target's start tag alone is")
        assert {e["workflow_id"] for e in made} == {"ok"}
        for e in made:
            assert e["label_tokens"] <= 512 and (
                not e["contains_target"] or f'node="{e["target_node"]}"' in e["prompt"]
            )


@pytest.fixture(scope="module")
def corpus_workflows(tmp_path_factory):
    """Every corpus page's workflow (77, 39 MB of HTML) and the local engine's output of them."""
    folder = tmp_path_factory.mktemp("corpus-workflows")
    build_dataset(folder, n_pages=1000, steps=2, broken=False)
    out = tmp_path_factory.mktemp("corpus-local")
    run_local([str(folder)], str(out), PrepConfig(max_tokens=BUDGET), workers=2)
    return folder, read_output(out)


def test_a_large_file_is_read_with_its_pages_left_in_it_and_gives_the_same_output(
    corpus_workflows, tmp_path, monkeypatch
):
    """The local engine reads a JSONL file from UNREAD_FILE_BYTES on with its pages left in
    the file, each read by the thread that transforms it: the output is the full read's,
    record for record (the corpus file, 41 MB, is under the size and decoded whole)."""
    from pagelens.datasets import local

    folder, expected = corpus_workflows
    unread: list[bool] = []
    read_shards = local.read_shards

    def spy(*args, **kwargs):
        file = read_shards(*args, **kwargs)
        unread.append(all(isinstance(s.html, UnreadText) for sh in file.todo for w in sh.workflows for s in w.steps))
        return file

    monkeypatch.setattr(local, "read_shards", spy)
    monkeypatch.setattr(local, "UNREAD_FILE_BYTES", 1024)
    run_local([str(folder)], str(tmp_path / "out"), PrepConfig(max_tokens=BUDGET), workers=2)
    assert unread == [True]
    assert read_output(tmp_path / "out") == expected


def _prep_on(address: str, folder: Path, out: Path, workers: int) -> subprocess.Popen[str]:
    cmd = [sys.executable, "-m", "pagelens", "prep", str(folder), str(out), "--engine", "ray", "--address", address]
    cmd += ["--workers", str(workers), "--shard-size", "1", "--max-tokens", str(BUDGET), "--stall-seconds", "300"]
    env = {**os.environ, "RAY_AUTH_MODE": "disabled"}
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _when_shards_done(out: Path, count: int, run: subprocess.Popen[str]) -> None:
    """Returns once ``count`` shards are marked done (the run is under way on its actors)."""
    while len(list((out / "_done").glob("*.json"))) < count:
        assert run.poll() is None, "the run ended before it was under way"
        time.sleep(0.02)


def test_prep_across_two_ray_nodes_survives_a_lost_node_and_resumes(corpus_workflows, tmp_path):
    """Two Ray nodes started apart, each with its own CPU (and a head with none): a run on both
    whose node is killed part way (its whole process group) finishes on the other, its output
    the local engine's record for record. A run whose only node is killed stops with an error
    naming the node; finished shards are kept, and a rerun on a new node resumes to the same
    output."""
    folder, expected = corpus_workflows
    port = _free_port()
    # Ray's sockets live in its temp folder, whose path must stay short (AF_UNIX: 107 bytes).
    temp = Path(tempfile.mkdtemp(prefix="ray-", dir="/tmp"))
    head = RayNode(temp / "head", 0, head_port=port)
    address = f"127.0.0.1:{port}"
    nodes = [RayNode(temp / f"n{i}", 1, join=address) for i in range(2)]
    try:
        run = _prep_on(address, folder, tmp_path / "both", 2)
        _when_shards_done(tmp_path / "both", 3, run)
        nodes[0].kill()
        stdout, stderr = run.communicate(timeout=600)
        assert run.returncode == 0, stderr[-3000:]
        summary = json.loads((tmp_path / "both" / "summary.json").read_text())
        assert len(summary["nodes"]) == 2 and len(summary["nodes_lost"]) == 1, summary
        assert f"lost the actor on node {summary['nodes_lost'][0]}" in stderr
        assert read_output(tmp_path / "both") == expected

        alone = _prep_on(address, folder, tmp_path / "alone", 1)
        _when_shards_done(tmp_path / "alone", 3, alone)
        nodes[1].kill()
        _, stderr = alone.communicate(timeout=600)
        assert alone.returncode != 0 and "every Ray node running prep was lost" in stderr, stderr[-3000:]
        lost = re.search(r"was lost \(([^)]*)\)", stderr).group(1)
        assert re.fullmatch(r"[0-9a-f]{12} on \S+", lost), lost
        kept = len(list((tmp_path / "alone" / "_done").glob("*.json")))
        assert kept >= 3

        nodes.append(RayNode(temp / "n2", 1, join=address))
        again = _prep_on(address, folder, tmp_path / "alone", 1)
        _, stderr = again.communicate(timeout=600)
        assert again.returncode == 0, stderr[-3000:]
        summary = json.loads((tmp_path / "alone" / "summary.json").read_text())
        assert summary["shards_resumed"] == kept and summary["nodes_lost"] == []
        assert read_output(tmp_path / "alone") == expected
    finally:
        for node in (*nodes, head):
            node.stop()
        shutil.rmtree(temp, ignore_errors=True)


def test_ray_queues_a_second_shard_only_while_shards_outnumber_actors():
    """Each actor gets one shard before any gets a second; near the end (no more shards left
    than actors) none is queued behind a running one, so no actor idles while another still
    has two to do."""
    a, b = "actor-a", "actor-b"
    held = {a: 1, b: 0}
    assert _next_actor(held, set(), shards_left=1) == b
    held[b] = 1
    assert _next_actor(held, set(), shards_left=3) in (a, b)
    assert _next_actor(held, set(), shards_left=2) is None
    assert _next_actor({a: 2, b: 2}, set(), shards_left=9) is None


def test_ray_gives_no_shard_to_a_lost_actor():
    """An actor whose node is gone gets nothing more, though it held nothing when it was lost;
    when every actor is gone there is no actor to give a shard to."""
    a, b = "actor-a", "actor-b"
    assert _next_actor({a: 0, b: 1}, {a}, shards_left=5) == b
    assert _next_actor({a: 0, b: 2}, {a}, shards_left=5) is None
    assert _next_actor({a: 0, b: 0}, {a, b}, shards_left=5) is None
