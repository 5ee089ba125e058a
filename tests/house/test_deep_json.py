"""Deeply nested JSON in every file a command reads (hardening class 9): each case is the
command's own kind of answer — the file named with exit 2, or the one record skipped and
counted while the others are used — never a RecursionError traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from support.samples import GOOD_RESULT as RESULT
from support.samples import GOOD_TASK as TASK

DEEP = "[" * 100_000 + "]" * 100_000
DEEP_OBJECT = '{"a": ' * 60_000 + "1" + "}" * 60_000


def pagelens(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pagelens", *map(str, args)], capture_output=True, text=True, timeout=300
    )


def _eval_files(tmp: Path, deep_in: str, deep: str) -> tuple[list[object], Path]:
    tasks, sites = tmp / "tasks.json", tmp / "sites.json"
    tasks.write_text(deep if deep_in == "tasks" else json.dumps([TASK]))
    if deep_in == "sites":
        sites.write_text(deep)
    runs = tmp / "runs"
    runs.mkdir()
    (runs / "good.json").write_text('{"task_id": 1, "answer": "yes"}')
    named = {"tasks": tasks, "sites": sites}.get(deep_in)
    if deep_in == "run-json":
        named = runs / "deep.json"
        named.write_text(deep)
    elif deep_in == "run-jsonl":
        named = runs / "deep.jsonl"
        named.write_text('{"type": "run", "task_id": 1}\n' + deep + '\n{"type": "end", "answer": "yes"}\n')
    args: list[object] = [runs, "--tasks", tasks]
    if deep_in == "sites":
        args += ["--sites", sites]
    assert named is not None
    return args, named


# (case, the file's kind of answer): "exit 2" names the file and stops; "skipped" names it and
# goes on with the others (exit 0); "counted" keeps going and counts the line.
EVAL_CASES = [
    ("tasks", "exit 2"),
    ("sites", "exit 2"),
    ("run-json", "skipped"),
    ("run-jsonl", "skipped"),
]


@pytest.mark.parametrize("deep", [DEEP, DEEP_OBJECT], ids=["array", "object"])
@pytest.mark.parametrize("case,answer", EVAL_CASES)
def test_eval(tmp_path, case, answer, deep):
    args, named = _eval_files(tmp_path, case, deep)
    run = pagelens("eval", *args)
    assert "Traceback" not in run.stderr and "RecursionError" not in run.stderr, run.stderr[-800:]
    assert named.name in run.stderr, run.stderr[-800:]
    if answer == "exit 2":
        assert run.returncode == 2
    else:
        assert run.returncode == 0 and "| **total** | 1 | 1 |" in run.stdout  # the good run still scored


def test_report_of_a_trajectory(tmp_path):
    trajectory = tmp_path / "trajectory.jsonl"
    trajectory.write_text('{"type": "run", "task": "t"}\n' + DEEP + '\n{"type": "end"}\n')
    run = pagelens("report", trajectory)
    assert run.returncode == 2 and "Traceback" not in run.stderr and str(trajectory) in run.stderr


def _prep_output(tmp: Path) -> Path:
    page = '<html><body><button id="go">Go</button></body></html>'
    record = {"workflow_id": "w", "step": 0, "objective": "o", "url": "https://a.test/", "html": page}
    (tmp / "in.jsonl").write_text(json.dumps({**record, "action": "click", "target_selector": "#go"}) + "\n")
    out = tmp / "out"
    prep = pagelens("prep", tmp / "in.jsonl", out, "--format", "jsonl")
    assert prep.returncode == 0, prep.stderr
    return out


def test_score_steps_counts_a_deep_prediction_line(tmp_path):
    out = _prep_output(tmp_path)
    predictions = tmp_path / "p.jsonl"
    predictions.write_text(DEEP + "\n" + DEEP_OBJECT + "\n")
    run = pagelens("score-steps", out, predictions, "--json")
    assert run.returncode == 0, run.stderr[-800:]
    assert json.loads(run.stdout)["counts"]["torn_lines"] == 2


@pytest.mark.parametrize("command", ["score-steps", "predict-steps"])
def test_a_deep_example_line_names_the_output(tmp_path, command):
    out = _prep_output(tmp_path)
    example = next((out / "examples").glob("*.jsonl"))
    example.write_text(example.read_text() + DEEP + "\n")
    extra = ["--base-url", "http://127.0.0.1:9/v1", "--model", "m"] if command == "predict-steps" else []
    run = pagelens(command, out, tmp_path / "p.jsonl", *extra)
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert f"{example}:2" in run.stderr and "nested too deeply" in run.stderr


def _study(folder: Path, study_json: str, results: list[str]) -> Path:
    folder.mkdir()
    (folder / "study.json").write_text(study_json)
    (folder / "results.jsonl").write_text("\n".join(results) + "\n")
    return folder


def test_study_report_skips_a_deep_results_line(tmp_path):
    folder = _study(tmp_path / "s", json.dumps({"benchmark": "miniwob"}), [json.dumps(RESULT), DEEP, DEEP_OBJECT])
    run = pagelens("study", "report", folder)
    assert run.returncode == 0 and "Traceback" not in run.stderr, run.stderr[-800:]
    assert "1 episodes finished" in (folder / "report.html").read_text()


def test_study_compare_skips_a_deep_results_line(tmp_path):
    first = _study(tmp_path / "a", json.dumps({"benchmark": "miniwob"}), [json.dumps(RESULT), DEEP])
    second = _study(tmp_path / "b", json.dumps({"benchmark": "miniwob"}), [DEEP_OBJECT, json.dumps(RESULT)])
    run = pagelens("study", "compare", first, second)
    assert run.returncode == 0 and "Traceback" not in run.stderr, run.stderr[-800:]
    assert "over 1 episodes" in run.stdout


def test_a_deep_study_json_stops_a_resumed_study_before_anything_runs(tmp_path):
    deep = _study(tmp_path / "deep", DEEP, [])
    run = pagelens("study", "run", "--benchmark", "miniwob", "--tasks", "click-test", "--model", "m", deep)
    assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr[-800:]
    assert str(deep) in run.stderr or "study.json" in run.stderr
    assert (deep / "results.jsonl").read_text() == "\n"  # nothing written
