"""Bad input to `pagelens eval`: one line naming the file, task and field; the other runs are
still scored; the exit code is not 0 only when nothing could be scored."""

from __future__ import annotations

import copy
import json
import subprocess
import sys

import pytest

from pagelens.evaluation import TaskConfigError, find_outcomes, load_outcome, load_tasks
from support.samples import GOOD_TASK


def write(path, data):
    path.write_text(json.dumps(data))
    return path


def pagelens_eval(*args):
    return subprocess.run(
        [sys.executable, "-m", "pagelens", "eval", *map(str, args)], capture_output=True, text=True, timeout=120
    )


# -- task files ---------------------------------------------------------------------------------

BAD_TASKS = [
    (
        {**GOOD_TASK, "eval": {**GOOD_TASK["eval"], "or": {"reference_url": "x"}}},
        "field `eval.or` must be a list of objects",
    ),
    ({**GOOD_TASK, "eval": {**GOOD_TASK["eval"], "or": ["x"]}}, "field `eval.or` must be a list of objects"),
    (
        {
            **GOOD_TASK,
            "eval": {
                "eval_types": ["program_html"],
                "program_html": [
                    {"url": "last", "locator": "", "required_contents": {"must_include": ["a"]}, "or": {"url": "x"}}
                ],
            },
        },
        "eval.program_html[0]: field `or` must be a list of objects",
    ),
    (
        {
            "task_id": 7,
            "intent": "x",
            "sites": ["gitlab"],
            "start_urls": ["u"],
            "eval": [{"evaluator": "NetworkEventEvaluator", "expected": {"url": 42}}],
        },
        "eval[0]: field `expected.url` must be a URL",
    ),
    (
        {
            "task_id": 7,
            "intent": "x",
            "sites": ["gitlab"],
            "start_urls": ["u"],
            "eval": [{"evaluator": "AgentResponseEvaluator", "expected": {"status": 1}}],
        },
        "field `expected.status` must be a string",
    ),
    (
        {
            "task_id": 7,
            "intent": "x",
            "sites": ["gitlab"],
            "start_urls": ["u"],
            "eval": [{"evaluator": "Magic", "expected": {}}],
        },
        "unknown evaluator 'Magic'",
    ),
]


@pytest.mark.parametrize("task,message", BAD_TASKS)
def test_bad_task_names_file_task_and_field(tmp_path, task, message):
    path = write(tmp_path / "tasks.json", [GOOD_TASK | {"task_id": 0}, task])
    with pytest.raises(TaskConfigError) as e:
        load_tasks(path)
    text = str(e.value)
    assert "tasks.json[1]" in text and f"(task {task['task_id']})" in text and message in text, text
    (tmp_path / "run.json").write_text('{"task_id": 0, "answer": "yes"}')
    out = pagelens_eval(tmp_path / "run.json", "--tasks", path)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and message in out.stderr


@pytest.mark.parametrize(
    "content,message",
    [
        (b"\xff\xfe{", "task file is not UTF-8 text"),
        (b"{not json", "task file is not JSON"),
        (b"[]", "holds no tasks"),
    ],
)
def test_unreadable_task_files_are_named(tmp_path, content, message):
    path = tmp_path / "tasks.json"
    path.write_bytes(content)
    with pytest.raises(TaskConfigError, match=message) as e:
        load_tasks(path)
    assert str(path) in str(e.value)


def test_empty_task_folder(tmp_path):
    with pytest.raises(TaskConfigError, match="holds no tasks"):
        load_tasks(tmp_path)


def test_bad_sites_file_is_named(tmp_path):
    sites = tmp_path / "sites.json"
    sites.write_bytes(b"\xff{")
    write(tmp_path / "tasks.json", [GOOD_TASK])
    (tmp_path / "run.json").write_text('{"task_id": 1, "answer": "yes"}')
    out = pagelens_eval(tmp_path / "run.json", "--tasks", tmp_path / "tasks.json", "--sites", sites)
    assert out.returncode == 2 and str(sites) in out.stderr and "not UTF-8" in out.stderr
    assert "Traceback" not in out.stderr


# -- runs -----------------------------------------------------------------------------------------


def test_bad_runs_are_named_and_the_others_scored(tmp_path):
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "good.json").write_text('{"task_id": 1, "answer": "yes"}')
    (runs / "number_url.json").write_text('{"task_id": 1, "answer": "yes", "final_url": 5}')
    (runs / "number_answer.json").write_text('{"task_id": 1, "answer": 12}')
    (runs / "binary.json").write_bytes(b"\xff\xfe")
    (runs / "bad.jsonl").write_text('{"type": "run", "task_id": 1}\n{oops\n{"type": "end", "answer": "yes"}\n')
    outcomes, problems = find_outcomes(runs)
    assert [o.source.split("/")[-1] for o in outcomes] == ["good.json"]
    assert len(problems) == 4
    text = "\n".join(problems)
    assert "number_url.json (task 1): field `final_url` must be a string, not int" in text
    assert "number_answer.json (task 1): field `answer` must be a string, not int" in text
    assert "binary.json: not UTF-8" in text and "bad.jsonl:2: not JSON" in text
    tasks = write(tmp_path / "tasks.json", [GOOD_TASK])
    out = pagelens_eval(runs, "--tasks", tasks)
    assert out.returncode == 0, out.stderr
    assert "| **total** | 1 | 1 | 0 | 1 | 100.0% |" in out.stdout
    assert out.stderr.count("skipped:") == 4


def test_torn_last_line_is_scored_on_what_was_recorded(tmp_path):
    run = tmp_path / "run.jsonl"
    run.write_text(
        '{"type": "run", "task_id": 1}\n'
        '{"type": "step", "action": "stop [yes]", "answer": "yes", "final_url": "http://s/"}\n'
        '{"type": "end", "answ'
    )
    outcome = load_outcome(run)
    assert outcome.answer == "yes" and any("torn" in n for n in outcome.notes)
    out = pagelens_eval(run, "--tasks", write(tmp_path / "tasks.json", [GOOD_TASK]), "--json", tmp_path / "r.json")
    assert out.returncode == 0, out.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["table"]["total"]["successes"] == 1
    assert any("torn" in d for d in report["runs"][0]["details"])


def test_a_func_outside_the_helpers_is_that_tasks_error(tmp_path):
    evil = {
        "task_id": 2,
        "intent": "x",
        "sites": ["shopping"],
        "start_url": "u",
        "eval": {
            "eval_types": ["program_html"],
            "program_html": [
                {
                    "url": "func:__import__('os').system('touch /tmp/pagelens-pwned')",
                    "locator": "",
                    "required_contents": {"must_include": ["a"]},
                }
            ],
        },
    }
    tasks = write(tmp_path / "tasks.json", [GOOD_TASK, evil])
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "a.json").write_text('{"task_id": 1, "answer": "yes"}')
    (runs / "b.json").write_text('{"task_id": 2, "final_url": "http://127.0.0.1:9/"}')
    out = pagelens_eval(runs, "--tasks", tasks, "--json", tmp_path / "r.json")
    assert out.returncode == 0, out.stderr
    line = next(x for x in out.stderr.splitlines() if x.startswith("task error: task 2"))
    assert "tasks.json[1] (task 2)" in line and "__import__" in line and "one of WebArena's helpers" in line
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["table"]["total"]["scored"] == 1 and report["table"]["total"]["successes"] == 1
    assert [r["error"] for r in report["runs"]] == [False, True]


def test_exit_code_when_nothing_is_scored(tmp_path):
    tasks = write(tmp_path / "tasks.json", [GOOD_TASK])
    (tmp_path / "r.json").write_text('{"task_id": 99, "answer": "yes"}')
    out = pagelens_eval(tmp_path / "r.json", "--tasks", tasks)
    assert out.returncode == 1 and "no run could be scored" in out.stderr
    (tmp_path / "wrong.json").write_text('{"task_id": 1, "answer": "no"}')
    out = pagelens_eval(tmp_path / "wrong.json", "--tasks", tasks)
    assert out.returncode == 0  # scored 0 is scored


# -- any junk, in any field: the error family, naming the place; every good record kept --------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from pagelens.errors import PagelensError  # noqa: E402
from pagelens.evaluation import SiteConfig, StringEvaluator, UrlEvaluator  # noqa: E402

JUNK = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)
PROGRAM_TASK = {
    **GOOD_TASK,
    "eval": {
        "eval_types": ["string_match", "url_match", "program_html"],
        "reference_answers": {"must_include": ["yes"], "fuzzy_match": "N/A"},
        "reference_url": "__SHOPPING__/a |OR| __SHOPPING__/b",
        "program_html": [
            {"url": "last", "locator": "document.title", "required_contents": {"must_include": ["a |OR| b"]}}
        ],
        "string_note": "x",
    },
}
TASK_PATHS = [
    ("task_id",),
    ("intent",),
    ("sites",),
    ("start_url",),
    ("eval",),
    ("eval", "eval_types"),
    ("eval", "reference_answers"),
    ("eval", "reference_answers", "must_include"),
    ("eval", "reference_answers", "fuzzy_match"),
    ("eval", "reference_url"),
    ("eval", "or"),
    ("eval", "program_html"),
    ("eval", "program_html", 0),
    ("eval", "program_html", 0, "url"),
    ("eval", "program_html", 0, "locator"),
    ("eval", "program_html", 0, "required_contents"),
    ("eval", "program_html", 0, "prep_actions"),
    ("eval", "string_note"),
]


def _set(data, path, value):
    data = copy.deepcopy(data)
    node = data
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return data


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(TASK_PATHS), JUNK)
def test_junk_in_any_task_field_is_a_task_error_naming_file_task_and_field(tmp_path_factory, path, value):
    folder = tmp_path_factory.mktemp("t")
    tasks = write(folder / "tasks.json", [GOOD_TASK | {"task_id": 0}, _set(PROGRAM_TASK, path, value)])
    try:
        loaded = load_tasks(tasks)
    except TaskConfigError as e:
        assert "tasks.json[1]" in str(e), str(e)
        return
    # Accepted as written: scoring it gives a score or that task's own error, never an escape.
    sites = SiteConfig({"__SHOPPING__": "http://127.0.0.1:9"})
    for variant in ("webarena", "agentoccam", "strict"):
        for task in loaded:
            resolved = task.resolved(sites)
            for evaluator, argument in (
                (StringEvaluator(variant), "yes"),
                (UrlEvaluator(variant), "http://127.0.0.1:9/a"),
            ):
                try:
                    assert 0.0 <= evaluator.score(resolved, argument) <= 1.0
                except PagelensError:
                    pass


@settings(max_examples=200, deadline=None)
@given(JUNK, st.sampled_from(["", "accounts"]))
def test_junk_site_files_are_task_config_errors(tmp_path_factory, value, key):
    folder = tmp_path_factory.mktemp("s")
    path = write(folder / "sites.json", {"__SHOPPING__": "http://s", key: value} if key else value)
    try:
        sites = SiteConfig.load(path)
    except TaskConfigError as e:
        assert str(path) in str(e)
        return
    assert isinstance(sites.urls, dict)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(["task_id", "answer", "final_url", "har", "url"]), JUNK, st.booleans())
def test_junk_in_a_run_file_skips_that_run_only(tmp_path_factory, field, value, as_trajectory):
    folder = tmp_path_factory.mktemp("r")
    (folder / "good.json").write_text('{"task_id": 1, "answer": "yes"}')
    if as_trajectory:
        header = {"type": "run", "task_id": 2, "url": "http://s/"}
        end = {"type": "end", "answer": "x", field: value}
        (folder / "odd.jsonl").write_text(json.dumps(header) + "\n" + json.dumps(end) + "\n")
    else:
        (folder / "odd.json").write_text(json.dumps({"task_id": 2, "answer": "x", field: value}))
    outcomes, problems = find_outcomes(folder)
    assert "good.json" in {o.source.split("/")[-1] for o in outcomes}
    assert len(outcomes) + len(problems) == 2
    for problem in problems:
        assert "odd.json" in problem, problem
    for outcome in outcomes:
        assert outcome.answer is None or isinstance(outcome.answer, str)
        assert outcome.final_url is None or isinstance(outcome.final_url, str)
        assert isinstance(outcome.task_id, int)
