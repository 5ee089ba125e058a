"""Hardening: damaged study folders and paths that do not exist. A damaged results line is
skipped (its episode runs again), never a traceback nor a success it was not; a path that is
not a study or a prep output exits 2 naming it."""

from __future__ import annotations

import json
import subprocess
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from pagelens.studies import compare, read_results, write_report
from support.samples import GOOD_RESULT as GOOD

JUNK = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)


def study(tmp_path, lines: list[str]):
    (tmp_path / "study.json").write_text(json.dumps({"benchmark": "miniwob"}))
    (tmp_path / "results.jsonl").write_text("\n".join(lines) + "\n")
    return tmp_path


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(sorted(GOOD)), JUNK)
def test_a_damaged_results_line_is_skipped_not_trusted(tmp_path_factory, field, value):
    tmp = tmp_path_factory.mktemp("s")
    damaged = {**GOOD, "id": "miniwob.b.0.occam", "task": "b", field: value}
    other = dict(GOOD, id="miniwob.c.0.occam", task="c", success=False)
    directory = study(tmp, [json.dumps(GOOD), json.dumps(damaged), "[" * 100_000, json.dumps(other)])
    results = {r["id"]: r for r in read_results(directory)}
    assert {GOOD["id"], other["id"]} <= set(results)
    for kept in results.values():  # a line is kept only when the change left it a valid one
        assert isinstance(kept["success"], bool) and isinstance(kept["task"], str) and isinstance(kept["id"], str)
    assert write_report(directory).exists()
    assert compare(directory, directory)["tasks"]


def test_success_written_as_a_string_is_not_a_success(tmp_path):
    directory = study(
        tmp_path, [json.dumps(dict(GOOD, success="false")), json.dumps(dict(GOOD, id="x", reward=float("nan")))]
    )
    assert read_results(directory) == []


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pagelens", *args], capture_output=True, text=True, timeout=120)


def test_paths_that_are_not_what_a_command_reads_exit_2_naming_them(tmp_path):
    (tmp_path / "real").mkdir()
    real = study(tmp_path / "real", [json.dumps(GOOD)])
    cases = [
        (["study", "compare", str(real), str(tmp_path / "does-not-exist")], "does-not-exist"),
        (["study", "report", str(tmp_path)], str(tmp_path)),
        (["score-steps", str(tmp_path / "no-such-prep"), str(tmp_path / "p.jsonl")], "no-such-prep"),
        (["predict-steps", str(tmp_path / "no-such-prep"), str(tmp_path / "p.jsonl"), "--model", "m"], "no-such-prep"),
    ]
    for args, named in cases:
        proc = run(*args)
        assert proc.returncode == 2, (args, proc.stdout, proc.stderr)
        assert named in proc.stderr and "Traceback" not in proc.stderr, proc.stderr


def test_a_task_that_does_not_exist_is_refused_before_the_study_starts(tmp_path):
    """A misspelled task is the command's mistake: exit 2 naming it (with the near names),
    nothing written, never an episode recorded as the agent's failure."""
    for args, named in (
        (["--benchmark", "miniwob", "--tasks", "click-lnk,click-test"], "click-lnk"),
        (["--benchmark", "webarena", "--tasks", "99999"], "99999"),
    ):
        proc = run("study", "run", str(tmp_path / "s"), "--model", "m", *args)
        assert proc.returncode == 2 and named in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
        assert not (tmp_path / "s").exists()
    assert (
        "did you mean click-link"
        in run(
            "study", "run", str(tmp_path / "s"), "--model", "m", "--benchmark", "miniwob", "--tasks", "click-lnk"
        ).stderr
    )


def test_every_run_of_a_study_is_in_its_journal(tmp_path):
    """study.json keeps what each run ran on: versions, git commits, the settings' hash; a
    rerun adds an entry and keeps the earlier ones; the hash follows what decides results."""
    from pagelens.studies.settings import StudySettings, check_study, settings_hash

    study = StudySettings("miniwob", "occam", "m", tasks=("click-test",), seeds=(0,), base_url="http://x/v1")
    check_study(tmp_path, study)
    check_study(
        tmp_path, StudySettings("miniwob", "occam", "m", tasks=("click-test",), seeds=(0, 1), base_url="http://x/v1")
    )
    data = json.loads((tmp_path / "study.json").read_text())
    assert data["seeds"] == [0, 1] and len(data["journal"]) == 2
    first, second = data["journal"]
    assert set(first["versions"]) == {"pagelens", "pagelens-core", "playwright", "chromium", "python", "os"}
    assert first["git"]["pagelens"] is None or len(first["git"]["pagelens"].split("+")[0]) == 40
    assert first["settings_hash"] == settings_hash(study) != second["settings_hash"]  # the seeds grew
    respelled = StudySettings("miniwob", "occam", "m", tasks=("click-test",), seeds=(0,), base_url="http://x/v1/")
    assert settings_hash(respelled) == settings_hash(study)  # spelling is not meaning


def test_subset_hard_is_webarena_verified_s_own():
    """`--subset hard` takes WebArena-Verified's published Hard subset from its own data (258
    tasks), with --sites narrowing it; a subset it does not publish, or one asked of MiniWoB++,
    is refused naming what there is."""
    import importlib.util
    from pathlib import Path

    import pytest

    from pagelens.errors import ArgumentError
    from pagelens.studies.benchmarks import TaskSelection, get_benchmark

    spec = importlib.util.find_spec("webarena_verified")
    if spec is None:
        pytest.skip("the verified extra is not installed")
    data = Path(next(iter(spec.submodule_search_locations))) / "assets/dataset/subsets/webarena-verified-hard.json"
    published = {str(i) for i in json.loads(data.read_text())["task_ids"]}
    verified = get_benchmark("webarena-verified")
    hard = verified.task_names(TaskSelection(subset="hard"), verified.options_type())
    assert set(hard) == published and len(hard) == 258
    on_gitlab = verified.task_names(TaskSelection(subset="hard", sites=frozenset({"gitlab"})), verified.options_type())
    assert 0 < len(on_gitlab) < 258 and set(on_gitlab) <= published
    with pytest.raises(ArgumentError, match="no task subset 'hardest'.*known: hard, non-hard"):
        verified.task_names(TaskSelection(subset="hardest"), verified.options_type())
    with pytest.raises(ArgumentError, match="MiniWoB"):
        get_benchmark("miniwob").task_names(TaskSelection(subset="hard"), None)
    run = subprocess.run(
        [sys.executable, "-m", "pagelens", "study", "run", "--benchmark", "webarena-verified", "--subset", "hard",
         "--model", "m", "/nonexistent-dir-never-written"],
        capture_output=True,
        text=True,
    )  # fmt: skip
    assert run.returncode == 2 and "258 of the study's tasks cannot be run" in run.stderr  # no sites given
