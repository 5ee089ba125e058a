"""The ``verified`` variant gives WebArena-Verified's own results: its published example runs
(tasks 107 and 108, with their HAR) and the retrieval test cases of its test suite
(``tests/assets/e2e_test_retrieved_data.json`` plus the variations its test builds around
each task's expected answer), all scored through ``pagelens.evaluation``'s harness.

Data: ``tests/data/verified`` (Apache-2.0, see its NOTICE)."""

from __future__ import annotations

import asyncio
import gzip
import json
import shutil
import subprocess
import sys

import pytest

from pagelens.evaluation import Harness, RunOutcome, SiteConfig, load_tasks
from support.paths import DATA as TESTS_DATA

pytest.importorskip("webarena_verified.types.tracing", reason="the verified extra: pip install 'pagelens[verified]'")

DATA = TESTS_DATA / "verified"
# WebArena-Verified's own test skips these valid variations as unsupported by its evaluator.
UNSUPPORTED = {
    "fmt_trim_whitespace",
    "fmt_extra_spaces",
    "fmt_with_quotes",
    "fmt_with_period",
    "fmt_tabs_to_spaces",
    "fmt_en_dash",
}


@pytest.fixture(scope="module")
def verified():
    return {t.task_id: t for t in load_tasks("webarena-verified")}


@pytest.fixture(scope="module")
def harness(verified):
    return Harness(verified, variant="verified")


def score(harness, task_id, answer, har=None):
    return asyncio.run(harness.score(RunOutcome(task_id, answer, None, har=har)))


def expected_answer(task):
    return next(ev["expected"] for ev in task.raw["eval"] if ev["evaluator"] == "AgentResponseEvaluator")


def retrieval_tasks(verified):
    """Retrieval tasks that succeed and are checked on the answer alone (the ones its test covers)."""
    out = []
    for task in verified.values():
        if any(ev["evaluator"] == "NetworkEventEvaluator" for ev in task.raw["eval"]):
            continue
        expected = expected_answer(task)
        if expected["task_type"] == "retrieve" and expected["status"] == "SUCCESS":
            out.append(task)
    return out


def alternatives(data):
    """Every choice of one alternative per nested list: ``["x", ["y", "z"]]`` -> ``[x, y]``, ``[x, z]``."""
    if not isinstance(data, list) or not any(isinstance(item, list) for item in data):
        return [data]
    combos: list[list] = [[]]
    for item in data:
        options = item if isinstance(item, list) else [item]
        combos = [c + [o] for c in combos for o in options]
    return combos


def answer(data, **override):
    return {"task_type": "retrieve", "status": "SUCCESS", "retrieved_data": data, **override}


def spellings(response):
    """The ways its test writes one valid answer: as is, upper-cased and padded strings, a fenced
    JSON block, a single value unwrapped from its list."""
    data = response["retrieved_data"]
    out = [json.dumps(response)]
    if data and all(isinstance(item, str) for item in data):
        if not any(item.startswith("^") and item.endswith("$") for item in data):  # not regex patterns
            out.append(json.dumps({**response, "retrieved_data": [item.upper() for item in data]}))
            out.append(json.dumps({**response, "retrieved_data": [f"  {item}  " for item in data]}))
        out.append("```json\n" + json.dumps(response, indent=2) + "\n\n```")
    if data and len(data) == 1 and not isinstance(data[0], list):
        out.append(json.dumps({**response, "retrieved_data": data[0]}))
    return out


def test_valid_answers_pass(verified, harness):
    variations = json.loads((DATA / "e2e_test_retrieved_data.json").read_text())
    checked, failed = 0, []
    for task in retrieval_tasks(verified):
        expected = expected_answer(task)
        responses = [{**expected, "retrieved_data": alt} for alt in alternatives(expected.get("retrieved_data", []))]
        for name, data in variations.get(str(task.task_id), {}).get("valid", {}).items():
            if name not in UNSUPPORTED:
                responses.append(answer(data))
        for response in responses:
            for text in spellings(response):
                result = score(harness, task.task_id, text)
                checked += 1
                if not (result.scored and result.score == 1.0):
                    failed.append((task.task_id, text[:120], result.reason or result.details[:2]))
    assert checked > 800
    assert not failed, failed[:5]


INVALID = {
    "wrong_status": lambda r: {**r, "status": "FAILURE"},
    "null_data": lambda r: {**r, "retrieved_data": None},
    "empty_array": lambda r: {**r, "retrieved_data": []},
    "wrong_type_string": lambda r: {**r, "retrieved_data": "not an array"},
    "wrong_type_number": lambda r: {**r, "retrieved_data": 42},
    "wrong_type_object": lambda r: {**r, "retrieved_data": {"invalid": "structure"}},
    "missing_field": lambda r: {k: v for k, v in r.items() if k != "retrieved_data"},
    "wrong_task_type": lambda r: {**r, "task_type": "INVALID_TYPE"},
    "extra_items": lambda r: (
        {**r, "retrieved_data": [*r["retrieved_data"], "extra_item", "another_extra"]}
        if isinstance(r.get("retrieved_data"), list)
        else r
    ),
}


def boolean_results(task):
    schema = next(ev for ev in task.raw["eval"] if ev["evaluator"] == "AgentResponseEvaluator").get(
        "results_schema", {}
    )
    return schema.get("type") == "array" and schema.get("items", {}).get("type") == "boolean"


def test_invalid_answers_fail(verified, harness):
    variations = json.loads((DATA / "e2e_test_retrieved_data.json").read_text())
    checked, passed = 0, []
    for task in retrieval_tasks(verified):
        expected = expected_answer(task)
        responses = [
            (name, make(dict(expected)))
            for name, make in INVALID.items()
            if not (name == "wrong_type_number" and boolean_results(task))
        ]
        responses += [
            (name, answer(data)) for name, data in variations.get(str(task.task_id), {}).get("invalid", {}).items()
        ]
        for name, response in responses:
            result = score(harness, task.task_id, json.dumps(response))
            checked += 1
            if not result.scored or result.score != 0.0:
                passed.append((task.task_id, name, result.score, result.reason))
    assert checked > 2000
    assert not passed, passed[:5]


@pytest.fixture(scope="module")
def example_har(tmp_path_factory):
    path = tmp_path_factory.mktemp("har") / "network.har"
    path.write_bytes(gzip.decompress((DATA / "network.har.gz").read_bytes()))
    return path


@pytest.mark.parametrize("task_id", [107, 108])
def test_published_example_runs(task_id, verified, example_har):
    published = json.loads((DATA / str(task_id) / "eval_result.json").read_text())
    config = json.loads((DATA / "config.demo.json").read_text())
    sites = SiteConfig({p: env["urls"][0] for p, env in config["environments"].items()})
    harness = Harness(verified, variant="verified", sites=sites)
    response = (DATA / str(task_id) / "agent_response.json").read_text()
    result = score(harness, task_id, response, har=str(example_har))
    assert result.scored and result.score == published["score"]
    for ev in published["evaluators_results"]:
        assert result.evaluators[ev["evaluator_name"]] == ev["score"]
    failing = {a["assertion_name"] for ev in published["evaluators_results"] for a in ev["assertions"] or ()}
    for name in failing:
        assert any(name in line for line in result.details), (name, result.details)


def network_task(verified):
    return next(t for t in verified.values() if any(ev["evaluator"] == "NetworkEventEvaluator" for ev in t.raw["eval"]))


def test_network_checks_need_the_runs_har(verified, harness, example_har):
    task = network_task(verified)
    done = json.dumps({"task_type": "mutate", "status": "SUCCESS", "retrieved_data": None})
    without = score(harness, task.task_id, done)
    assert not without.scored and "--har" in without.reason
    site_less = score(harness, task.task_id, done, har=str(example_har))
    assert not site_less.scored and "--sites" in site_less.reason
    sites = SiteConfig({name: f"http://{name}.test" for name in task.sites})
    with_har = score(Harness(verified, variant="verified", sites=sites), task.task_id, done, har=str(example_har))
    # The example HAR is another task's run: the events this task needs are not in it.
    assert with_har.scored and with_har.score == 0.0 and "NetworkEventEvaluator" in with_har.evaluators


def test_unachievable_tasks_want_their_status(verified, harness):
    task = next(
        t
        for t in verified.values()
        if t.unachievable
        and expected_answer(t)["task_type"] == "retrieve"
        and expected_answer(t)["status"] == "NOT_FOUND_ERROR"
        and not any(ev["evaluator"] == "NetworkEventEvaluator" for ev in t.raw["eval"])
    )
    right = answer(None, status="NOT_FOUND_ERROR")
    assert score(harness, task.task_id, json.dumps(right)).score == 1.0
    assert score(harness, task.task_id, json.dumps(answer(["something"]))).score == 0.0


def test_cli_scores_verified_runs(tmp_path, verified):
    task = retrieval_tasks(verified)[0]
    runs = tmp_path / "runs"
    runs.mkdir()
    good = json.dumps(
        {**expected_answer(task), "retrieved_data": alternatives(expected_answer(task)["retrieved_data"])[0]}
    )
    (runs / "good.json").write_text(json.dumps({"task_id": task.task_id, "answer": good}))
    (runs / "bad.json").write_text(json.dumps({"task_id": task.task_id, "answer": "no idea"}))
    report = tmp_path / "report.json"
    out = subprocess.run(
        [sys.executable, "-m", "pagelens", "eval", str(runs), "--variant", "verified", "--json", str(report)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    total = json.loads(report.read_text())["table"]["total"]
    assert total["scored"] == 2 and total["successes"] == 1
    shutil.rmtree(runs)
