"""Studies (issue: an agent evaluated on a whole benchmark): MiniWoB++ tasks x seeds on worker
processes and on Ray actors with a scripted model behind a local OpenAI-compatible server
(no model runs here); resume after SIGKILL; faults (endpoint failing for a while and for good,
a browser killed mid-episode, an episode over its time limit, the budget); the report in
headless Chromium; comparing two studies."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from pagelens.studies import (
    RunOptions,
    StudyMismatch,
    StudySettings,
    StudyStopped,
    compare,
    read_results,
    run_study,
    wilson,
    write_report,
)
from support.llm_server import LLMServer
from support.paths import ROOT
from support.processes import descendants
from support.scripted import answer, miniwob_model

TASKS = ("click-test", "enter-text", "login-user")
SEEDS = (0, 1)
TIMING = ("seconds", "model_seconds", "step_seconds")


def settings(server: LLMServer, **kw) -> StudySettings:
    values = {"tasks": TASKS, "seeds": SEEDS, "max_steps": 8, "base_url": server.base_url, **kw}
    return StudySettings("miniwob", "occam", "scripted", **values)


def comparable(directory: Path) -> dict[str, dict]:
    """Results without their timings (MiniWoB's discounted reward falls with time too)."""
    out = {}
    for r in read_results(directory):
        row = {k: v for k, v in r.items() if k not in TIMING}
        row["evaluation"] = {k: v for k, v in r["evaluation"].items() if k != "discounted"}
        out[r["id"]] = row
    return out


@pytest.fixture(scope="module")
def model():
    server = LLMServer(miniwob_model)
    yield server
    server.close()


@pytest.fixture(scope="module")
def local_study(model, tmp_path_factory):
    directory = tmp_path_factory.mktemp("local")
    summary = run_study(directory, settings(model), RunOptions(workers=2, backoff=0.01))
    return directory, summary


def test_a_local_study_of_tasks_and_seeds(local_study):
    directory, summary = local_study
    results = read_results(directory)
    assert sorted(r["id"] for r in results) == sorted(f"miniwob.{t}.{s}.occam" for t in TASKS for s in SEEDS)
    episodes = len(TASKS) * len(SEEDS)
    # Each episode ends at MiniWoB's done (its last action solved the task), before the model's stop.
    assert all(r["success"] and r["reward"] == 1.0 and r["reason"] == "task_done" for r in results)
    assert all(r["steps"] >= 1 and r["prompt_tokens"] > 0 and r["model"] == "scripted" for r in results)
    assert summary["finished"] == summary["episodes"] == episodes and summary["success_rate"] == 1.0
    assert summary["per_task"]["login-user"] == {"episodes": 2, "successes": 2, "success_rate": 1.0, "lost": 0}
    assert json.loads((directory / "summary.json").read_text()) == summary
    for r in results:
        episode = directory / "episodes" / r["id"]
        run = json.loads((episode / "trajectory.jsonl").read_text().splitlines()[0])
        assert run["episode"] == r["id"] and run["seed"] == r["seed"] and run["restarts"] == 0
        assert (episode / "report.html").is_file()
    # Seeds give different pages: the same task's first prompts differ between seeds.
    firsts = {
        json.loads(
            (directory / "episodes" / f"miniwob.enter-text.{s}.occam" / "trajectory.jsonl").read_text().splitlines()[1]
        )["observation"]
        for s in SEEDS
    }
    assert len(firsts) == len(SEEDS)


def test_new_marks_are_a_study_setting(model, local_study, tmp_path):
    """The agents read `*[id]` on what a click opened (on by default); `new_marks=False`
    (`--no-new-marks`) is a setting of the study, recorded in it, and reaches each worker's
    browser (the marks themselves: tests/test_browser_actions.py)."""
    from pagelens.studies.episodes import Worker

    async def browser_marks(study: StudySettings) -> bool:
        worker = Worker(study, tmp_path)
        try:
            return (await worker.fresh_browser()).config.mark_new
        finally:
            await worker.close()

    assert asyncio.run(browser_marks(settings(model))) is True
    assert asyncio.run(browser_marks(settings(model, new_marks=False))) is False
    directory, _ = local_study
    assert json.loads((directory / "study.json").read_text())["new_marks"] is True


def test_ray_engine_gives_the_same_results(model, local_study, tmp_path):
    directory, _ = local_study
    run_study(tmp_path / "ray", settings(model), RunOptions(workers=2, engine="ray", backoff=0.01))
    assert comparable(tmp_path / "ray") == comparable(directory)


def test_a_killed_study_resumes_without_loss_or_duplicates(model, tmp_path):
    directory = tmp_path / "killed"
    cmd = [
        sys.executable,
        "-m",
        "pagelens",
        "study",
        "run",
        str(directory),
        "--benchmark",
        "miniwob",
        "--agent",
        "occam",
        "--model",
        "scripted",
        "--base-url",
        model.base_url,
        "--tasks",
        ",".join(TASKS),
        "--seeds",
        "0-1",
        "--max-steps",
        "8",
        "--workers",
        "2",
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    results = directory / "results.jsonl"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and (not results.exists() or results.read_text().count("\n") < 2):
        if proc.poll() is not None:
            break
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    before = results.read_text()
    finished_before = [json.loads(line)["id"] for line in before.splitlines() if line.strip()]
    assert 2 <= len(finished_before) < 6, "the kill came mid-way"
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    after = results.read_text()
    assert after.startswith(before.rsplit("\n", 1)[0])  # finished lines untouched
    ids = [json.loads(line)["id"] for line in after.splitlines()]
    assert len(ids) == len(set(ids)) == 6
    restarted = [r for r in read_results(directory) if r["restarts"]]
    for r in restarted:  # begun before the kill: the restart is in its trajectory
        run = json.loads((directory / "episodes" / r["id"] / "trajectory.jsonl").read_text().splitlines()[0])
        assert run["restarts"] == r["restarts"] >= 1
    assert all(r["id"] not in finished_before for r in restarted)
    # Other settings are refused, naming the difference.
    other = subprocess.run([*cmd[:-2], "--max-steps", "5", "--workers", "2"], capture_output=True, text=True)
    assert other.returncode != 0 and "max_steps: 8 in study.json, 5 now" in other.stderr


def test_other_settings_are_refused_in_python(model, local_study):
    directory, _ = local_study
    with pytest.raises(StudyMismatch, match=r"max_steps: 8 in study.json, 4 now"):
        run_study(directory, settings(model, max_steps=4))


def test_a_resume_compares_meaning_not_spelling(tmp_path):
    """Tasks in another order, a trailing slash on the endpoint, fewer or more seeds and tasks:
    the same study (more of them extend it); a setting that decides results is refused."""
    from pagelens.studies.settings import check_study

    first = StudySettings("miniwob", "occam", "m", tasks=("a", "b"), seeds=(0, 1), base_url="http://h:1/v1")
    check_study(tmp_path, first)
    check_study(
        tmp_path, StudySettings("miniwob", "occam", "m", tasks=("b", "a"), seeds=(1,), base_url="http://h:1/v1/")
    )
    check_study(tmp_path, StudySettings("miniwob", "occam", "m", tasks=("c",), seeds=(2, 0), base_url="http://h:1/v1"))
    planned = json.loads((tmp_path / "study.json").read_text())
    assert planned["tasks"] == ["a", "b", "c"] and planned["seeds"] == [0, 1, 2]
    with pytest.raises(StudyMismatch, match="agent: 'occam' in study.json, 'step' now"):
        check_study(tmp_path, StudySettings("miniwob", "step", "m", tasks=("a",), base_url="http://h:1/v1"))
    with pytest.raises(StudyMismatch, match="base_url"):
        check_study(tmp_path, StudySettings("miniwob", "occam", "m", tasks=("a",), base_url="http://other:1/v1"))


# -- faults ---------------------------------------------------------------------------------------


def test_an_endpoint_failing_for_a_while_is_retried(tmp_path, capfd):
    server = LLMServer(miniwob_model)
    server.failures = [500, 429, 503]
    try:
        summary = run_study(
            tmp_path / "s", settings(server, tasks=("click-test",), seeds=(0,)), RunOptions(backoff=0.01)
        )
    finally:
        server.close()
    assert summary["success_rate"] == 1.0 and len(server.requests) >= 4
    # Each retry was said as it happened, by the worker running the episode.
    said = capfd.readouterr().err
    assert "miniwob.click-test.0.occam: " in said and "retry 3/5" in said, said[-2000:]


def test_an_endpoint_down_for_good_stops_the_study(tmp_path):
    server = LLMServer(miniwob_model)
    server.failures = [500] * 10_000
    try:
        with pytest.raises(StudyStopped, match="stopped after 2 infrastructure failures in a row; the last: model"):
            run_study(tmp_path / "s", settings(server), RunOptions(backoff=0.001, max_infra_failures=2))
    finally:
        server.close()
    assert read_results(tmp_path / "s") == []  # nothing recorded as finished: a rerun runs them
    failures = (tmp_path / "s" / "failures.jsonl").read_text().splitlines()
    assert len(failures) == 2 and all(json.loads(f)["error_kind"] == "model" for f in failures)


def _chromium_descendants() -> list[int]:
    """Chromium browser processes started under this test process (through the workers)."""
    found = []
    for pid in descendants(os.getpid()):
        with contextlib.suppress(OSError):
            if Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode(errors="replace").endswith("chromium"):
                found.append(pid)
    return found


def test_a_browser_killed_mid_episode_is_restarted_once(tmp_path):
    killed = threading.Event()

    def model_that_kills(messages):
        if not killed.is_set():
            killed.set()
            for pid in _chromium_descendants():
                os.kill(pid, signal.SIGKILL)
        return miniwob_model(messages)

    server = LLMServer(model_that_kills)
    try:
        summary = run_study(
            tmp_path / "s", settings(server, tasks=("click-test",), seeds=(0,)), RunOptions(backoff=0.01)
        )
    finally:
        server.close()
    assert killed.is_set()
    [result] = read_results(tmp_path / "s")
    assert result["success"] and result["restarts"] == 1 and summary["success_rate"] == 1.0
    run = json.loads((tmp_path / "s" / "episodes" / result["id"] / "trajectory.jsonl").read_text().splitlines()[0])
    assert run["restarts"] == 1


@pytest.mark.parametrize("answer_seconds", [0.0, 0.1])
def test_an_episode_over_its_time_limit_is_an_error(tmp_path, answer_seconds):
    """The agent used its time (the model answers at once, or in a tenth of a second; the
    episode is just too short for its steps): the episode's own outcome, recorded as finished,
    also when its quick calls to the model took most of its time (its steps are notes, which
    need no page work)."""

    def busy(messages):
        time.sleep(answer_seconds)
        return "Action: note [still looking]"  # never solves the task, never stops

    server = LLMServer(busy)
    try:
        summary = run_study(
            tmp_path / "s",
            settings(server, tasks=("click-test",), seeds=(0,), episode_seconds=1.5, max_steps=10_000),
            RunOptions(backoff=0.01),
        )
    finally:
        server.close()
    [result] = read_results(tmp_path / "s")
    assert result["error_kind"] == "timeout" and not result["success"] and result["restarts"] == 1
    assert summary["errors"] == {"timeout": 1}


def _hanging_model():
    """A scripted model that, while ``hang`` is set, never answers (until ``release``)."""
    hang, release = threading.Event(), threading.Event()

    def model(messages):
        if hang.is_set():
            release.wait(300)
        return miniwob_model(messages)

    return model, hang, release


def test_a_hung_endpoint_is_the_run_s_failure_and_a_rerun_runs_the_episodes(tmp_path):
    """Issue 24, 1: an endpoint that never answers is an infrastructure failure (not a
    finished episode), three in a row stop the study, and a rerun runs them."""
    model, hang, release = _hanging_model()
    hang.set()
    server = LLMServer(model)
    study = settings(server, tasks=("click-test", "enter-text", "login-user"), seeds=(0,), episode_seconds=6)
    options = RunOptions(backoff=0.01, max_infra_failures=3, llm_timeout=120)
    try:
        with pytest.raises(StudyStopped, match="3 infrastructure failures in a row; the last: model"):
            run_study(tmp_path / "s", study, options)
        assert read_results(tmp_path / "s") == []
        failures = [json.loads(line) for line in (tmp_path / "s" / "failures.jsonl").read_text().splitlines()]
        assert [f["error_kind"] for f in failures] == ["model"] * 3
        assert all("too slow" in f["error"] and "--llm-timeout 120" in f["error"] for f in failures)
        # The report says why the study stopped and what the infrastructure lost.
        report = (tmp_path / "s" / "report.html").read_text()
        assert "stopped: stopped after 3 infrastructure failures in a row" in report
        assert "<tr><td>model</td><td>3</td>" in report and "0 of 3 episodes planned" in report
        hang.clear()
        release.set()
        summary = run_study(tmp_path / "s", study, options)
    finally:
        release.set()
        server.close()
    assert summary["finished"] == 3 and summary["success_rate"] == 1.0
    report = (tmp_path / "s" / "report.html").read_text()
    # The rerun finished them: nothing lost, no infrastructure failure left standing.
    assert "ran to its end" in report and "<tr><td colspan='4'>none</td></tr>" in report
    assert "<tr><td colspan='2'>none</td></tr>" in report.split('id="infrastructure"', 1)[1]


def test_a_slow_endpoint_is_the_endpoint_s_failure_with_the_steps_it_took(tmp_path):
    """An endpoint that answers every call, but slowly (1 s a call; the agent's own part of a
    step takes a fraction of that): the episode runs out of time while mostly waiting for the
    model — infrastructure (`model`), left for a rerun — and its steps and model seconds are
    recorded as they happened, not as 0."""
    import asyncio

    from pagelens.studies.benchmarks import get_benchmark
    from pagelens.studies.episodes import Worker
    from pagelens.studies.settings import EpisodeSpec

    def slow(messages):
        time.sleep(1.0)
        return answer("note [still looking]")

    server = LLMServer(slow)
    # 12 s: on a busy machine the reset and first reading took most of 5 s, and the episode
    # ended before its first step (CI: 0 steps, rightly "model"): room for several steps.
    study = settings(server, tasks=("click-test",), seeds=(0,), episode_seconds=12, max_steps=10_000)
    worker = Worker(study, tmp_path, RunOptions(backoff=0.01, llm_timeout=120))
    task = get_benchmark("miniwob").resolve("click-test", study.options())

    async def episode():
        try:
            return await worker.run(EpisodeSpec("miniwob", "click-test", 0, "occam"), task)
        finally:
            await worker.close()

    try:
        result = asyncio.run(episode())
    finally:
        server.close()
    assert result.error_kind == "model", result
    assert "too slow" in (result.error or "")
    steps = [
        json.loads(line)
        for line in (tmp_path / "episodes" / result.id / "trajectory.jsonl").read_text().splitlines()
        if json.loads(line).get("type") == "step"
    ]
    assert result.steps == len(steps) >= 1
    assert result.model_seconds >= 1.0 and result.model_seconds >= result.step_seconds / 2


def test_an_episode_cut_short_cancels_its_model_call(tmp_path):
    """The worker's model call ends with its episode (cancelled on the worker's loop): no
    thread is left waiting on the endpoint, so episode after episode keeps its browser and
    its time (no `browser_start` failures from a full thread pool)."""
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    from pagelens.studies.benchmarks import get_benchmark
    from pagelens.studies.episodes import Worker
    from pagelens.studies.settings import EpisodeSpec

    model, hang, release = _hanging_model()
    hang.set()
    server = LLMServer(model)
    # 8 s: the page's reset and first reading fit on a busy machine, so the model's wait is most
    # of the episode (4 s did not, under the suite's load: the episode was the agent's timeout).
    study = settings(server, tasks=("click-test",), seeds=(0,), episode_seconds=8)
    worker = Worker(study, tmp_path, RunOptions(backoff=0.01, llm_timeout=120))
    task = get_benchmark("miniwob").resolve("click-test", study.options())
    threads = 1

    async def episodes():
        # The agent decides on the loop's default executor: with one thread, a call left
        # waiting would leave the second episode's agent no thread at all.
        asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(threads))
        kinds = []
        try:
            for seed in range(threads + 1):
                result = await worker.run(EpisodeSpec("miniwob", "click-test", seed, "occam"), task)
                kinds.append(result.error_kind)
                # The call was cancelled with its episode: the agent's thread is not waiting.
                assert worker.llm is not None and worker.llm.waiting_for is None
        finally:
            await worker.close()
        return kinds

    try:
        kinds = asyncio.run(episodes())
    finally:
        release.set()
        server.close()
    assert kinds == ["model"] * (threads + 1)


def test_the_budget_stops_new_episodes(tmp_path):
    server = LLMServer(miniwob_model)
    try:
        with pytest.raises(StudyStopped, match="budget reached"):
            # Each episode costs a few thousand prompt tokens at $1,000 per million: the first is over budget.
            run_study(tmp_path / "s", settings(server), RunOptions(prices=(1000.0, 1000.0), budget_usd=0.5))
    finally:
        server.close()
    results = read_results(tmp_path / "s")
    assert 1 <= len(results) < 6 and sum(r["cost"] for r in results) >= 0.5


def test_an_agent_with_no_valid_action_ends_its_episode(tmp_path):
    server = LLMServer(lambda messages: "I am not sure what to do." + " really" * 2000)
    try:
        run_study(
            tmp_path / "s",
            settings(server, tasks=("click-test",), seeds=(0,), max_failed_decisions=2),
            RunOptions(backoff=0.01),
        )
    finally:
        server.close()
    [result] = read_results(tmp_path / "s")
    assert result["reason"] == "no_valid_action" and result["steps"] == 2 and not result["success"]
    # The malformed reply went back to the model shortened, not whole.
    retry = [r for r in server.requests if len(r["messages"]) > 2][0]
    shown = retry["messages"][-2]["content"]
    assert len(shown) < 700 and "characters left out" in shown


# -- report and comparison -------------------------------------------------------------------------


def test_the_report_in_headless_chromium(local_study, tmp_path):
    import asyncio

    from playwright.async_api import async_playwright

    from pagelens.browser.launch import LaunchOptions

    directory, _ = local_study
    made = subprocess.run(
        [sys.executable, "-m", "pagelens", "study", "report", str(directory)], capture_output=True, text=True
    )
    assert made.returncode == 0 and made.stdout.strip() == str(directory / "report.html")
    report = write_report(directory)
    shot = tmp_path / "report.png"

    async def look() -> tuple[int, int, str]:
        async with async_playwright() as p:
            chromium = await p.chromium.launch(**LaunchOptions().playwright_kwargs())
            page = await chromium.new_page()
            await page.goto(report.as_uri())
            rows = await page.locator("#per-task tr").count()
            bars = await page.locator("svg rect").count()
            overall = await page.locator("#overall").inner_text()
            await page.screenshot(path=str(shot), full_page=True)
            await chromium.close()
            return rows, bars, overall

    rows, bars, overall = asyncio.run(look())
    assert rows == 1 + len(TASKS) and bars >= 2 and overall.startswith("6 episodes finished: 6 successes")
    assert shot.stat().st_size > 10_000
    html = report.read_text()
    # Self-contained: no script, nothing fetched from anywhere.
    assert "<script" not in html and not re.search(r"""(?:src|href)=["']?(?:https?:)?//""", html)
    assert html.count('href="episodes/') == 6
    # What a person reads first: the settings, how far it got, each episode's reward, the journal.
    assert "<th>benchmark</th><td>miniwob</td>" in html and "<th>model</th><td>scripted</td>" in html
    assert "6 of 6 episodes planned" in html and "ran to its end" in html
    assert html.count("<td class='ok'>1</td>") == 6  # every episode's reward
    assert "pagelens-core" in html and "chromium" in html.lower()  # the journal's versions


def test_an_episode_s_step_viewer_in_headless_chromium(local_study, tmp_path):
    """Every step: the screenshot the model's page was, the acted element outlined on it, the
    observation, the reply, the action and its result; arrow keys go from step to step; the
    episode's reward in its header."""
    import asyncio

    from playwright.async_api import async_playwright

    from pagelens.browser.launch import LaunchOptions

    directory, _ = local_study
    viewer = directory / "episodes" / "miniwob.enter-text.0.occam" / "report.html"
    shot = tmp_path / "viewer.png"

    async def look() -> dict:
        async with async_playwright() as p:
            chromium = await p.chromium.launch(**LaunchOptions().playwright_kwargs())
            page = await chromium.new_page(viewport={"width": 1300, "height": 900})
            await page.goto(viewer.as_uri())
            seen = {
                "steps": await page.locator("section.step").count(),
                "shots": await page.locator("svg.shot image").count(),
                "outlines": await page.locator("svg.shot rect.target").count(),
                "replies": await page.locator("pre.reply").count(),
                "reward": await page.locator("#reward").inner_text(),
            }
            await page.keyboard.press("ArrowRight")
            await page.wait_for_function("location.hash === '#step-1'")  # steps count from 1
            await page.keyboard.press("ArrowRight")
            await page.wait_for_function("location.hash === '#step-2'")
            seen["hash"] = await page.evaluate("location.hash")
            await page.screenshot(path=str(shot), full_page=False)
            await chromium.close()
            return seen

    seen = asyncio.run(look())
    assert seen["steps"] >= 2 and seen["shots"] == seen["steps"] == seen["replies"]
    assert seen["outlines"] >= 1  # the click and the typing went to elements
    assert seen["reward"].startswith("1") and "success" in seen["reward"] and seen["hash"] == "#step-2"
    assert shot.stat().st_size > 10_000


def test_wilson_interval():
    assert wilson(0, 0) == (0.0, 1.0)
    lo, hi = wilson(9, 10)
    assert lo == pytest.approx(0.5958, abs=1e-4) and hi == pytest.approx(0.9821, abs=1e-4)


def test_compare_two_studies(model, local_study, tmp_path):
    directory, _ = local_study

    def worse(messages):  # gives up on login-user at once
        if "Enter the username" in messages[-1]["content"]:
            return answer("stop [cannot]")
        return miniwob_model(messages)

    server = LLMServer(worse)
    try:
        run_study(tmp_path / "b", settings(server), RunOptions(workers=2, backoff=0.01))
    finally:
        server.close()
    result = compare(directory, tmp_path / "b")
    by_task = {r["task"]: r for r in result["tasks"]}
    assert by_task["login-user"] == {
        "task": "login-user",
        "first": 1.0,
        "second": 0.0,
        "difference": -1.0,
        "flipped": "regressed",  # ("lost" is for episodes the infrastructure lost)
    }
    assert by_task["click-test"]["difference"] == 0 and result["mean_difference"] == pytest.approx(-1 / 3)
    # Paired by task and seed: 6 pairs, differences 0,0,0,0,-1,-1; t interval with 5 degrees of freedom.
    sd = (4 * (1 / 3) ** 2 + 2 * (2 / 3) ** 2) ** 0.5 / 5**0.5
    assert result["pairs"] == 6 and result["warnings"] == []
    assert result["interval"] == pytest.approx([-1 / 3 - 2.571 * sd / 6**0.5, -1 / 3 + 2.571 * sd / 6**0.5])
    # Studies of another model or agent: the difference is not the agent's alone, said so.
    other = tmp_path / "c"
    shutil.copytree(tmp_path / "b", other)
    data = json.loads((other / "study.json").read_text())
    (other / "study.json").write_text(json.dumps({**data, "model": "another"}))
    assert compare(directory, other)["warnings"] == ["the studies differ in model (scripted and another)"]
    out = subprocess.run(
        [sys.executable, "-m", "pagelens", "study", "compare", str(directory), str(tmp_path / "b")],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0 and "regressed (flipped to failure): login-user" in out.stdout


# -- WebArena-style tasks on local stand-ins ------------------------------------------------------


def test_a_webarena_study_scores_each_episode_and_resets_sites(site, tmp_path):
    """Tasks on a local stand-in of the "shopping" site: string_match on the answer, program_html
    on the live page (a task that changes its site, so `--reset-cmd` runs first), and a task that
    needs the login. Site URLs and the account come from the sites file; each result carries the
    harness's verdict."""
    tasks = [
        {
            "task_id": 1,
            "intent": "Say done.",
            "sites": ["shopping"],
            "start_url": "__SHOPPING__/",
            "require_login": False,
            "storage_state": None,
            "eval": {
                "eval_types": ["string_match"],
                "reference_answers": {"must_include": ["done"]},
                "reference_url": "",
                "program_html": [],
            },
        },
        {
            "task_id": 2,
            "intent": "Open the second page.",
            "sites": ["shopping"],
            "start_url": "__SHOPPING__/",
            "require_login": False,
            "storage_state": None,
            "eval": {
                "eval_types": ["program_html"],
                "reference_answers": None,
                "reference_url": "",
                "program_html": [
                    {"url": "__SHOPPING__/", "locator": "", "required_contents": {"must_include": ["Please sign in"]}}
                ],
            },
        },
    ]
    # A task that needs the shop's login: the worker runs WebArena's shopping login recipe on a
    # local stand-in of its login page once, and the episode starts logged in.
    tasks.append(
        {
            "task_id": 3,
            "intent": "Who is signed in?",
            "sites": ["shopping"],
            "start_url": "__SHOPPING__/",
            "require_login": True,
            "storage_state": "./.auth/shopping_state.json",
            "eval": {
                "eval_types": ["string_match"],
                "reference_answers": {"must_include": ["done"]},
                "reference_url": "",
                "program_html": [],
            },
        }
    )
    (tmp_path / "tasks.json").write_text(json.dumps(tasks))
    (tmp_path / "sites.json").write_text(
        json.dumps(
            {
                "shopping": site.url("site/shop").rstrip("/"),
                "accounts": {"shopping": {"username": "emma@example.com", "password": "secret"}},
            }
        )
    )
    log = tmp_path / "resets.log"
    server = LLMServer(lambda messages: answer("stop [done]"))
    try:
        s = StudySettings(
            "webarena",
            "occam",
            "scripted",
            tasks=("1", "2", "3"),
            seeds=(0,),
            max_steps=3,
            base_url=server.base_url,
            benchmark_options={
                "sites_file": str(tmp_path / "sites.json"),
                "task_file": str(tmp_path / "tasks.json"),
                "reset_cmd": f"echo {{site}} >> {log}",
            },
        )
        summary = run_study(tmp_path / "s", s, RunOptions(workers=2, backoff=0.01))
    finally:
        server.close()
    results = {r["task"]: r for r in read_results(tmp_path / "s")}
    assert results["1"]["success"] and results["1"]["evaluation"]["evaluators"] == {"string_match": 1.0}
    assert results["2"]["success"] and results["2"]["evaluation"]["evaluators"] == {"program_html": 1.0}
    assert {r["site"] for r in results.values()} == {"shopping"} and summary["per_site"]["shopping"]["successes"] == 3
    assert log.read_text().split() == ["shopping"]  # only the task that changes the site reset it
    first = json.loads(
        (tmp_path / "s" / "episodes" / "webarena.3.0.occam" / "trajectory.jsonl").read_text().splitlines()[1]
    )
    assert "Welcome back, emma@example.com" in first["observation"]
    not_logged_in = json.loads(
        (tmp_path / "s" / "episodes" / "webarena.1.0.occam" / "trajectory.jsonl").read_text().splitlines()[1]
    )
    assert "Welcome back" not in not_logged_in["observation"]
    # A reset command that fails leaves the site in an unknown state: an infrastructure failure.
    broken = StudySettings(
        "webarena",
        "occam",
        "scripted",
        tasks=("2",),
        seeds=(0,),
        max_steps=3,
        base_url="http://127.0.0.1:9/v1",
        benchmark_options={
            "sites_file": str(tmp_path / "sites.json"),
            "task_file": str(tmp_path / "tasks.json"),
            "reset_cmd": "echo no >&2; exit 3",
        },
    )
    with pytest.raises(StudyStopped, match="the last: reset: reset command for shopping failed \\(3\\): no"):
        run_study(tmp_path / "broken", broken, RunOptions(max_infra_failures=1))
    assert read_results(tmp_path / "broken") == []


def test_an_episode_ends_when_miniwob_says_done(tmp_path):
    """A model that solves the task and then keeps acting (clicking START, which begins
    MiniWoB's next episode) is scored on the task it solved: the episode ends at MiniWoB's done,
    with its reward; nothing after counts."""
    from support.scripted import find, section, steps_done

    def restless(messages):
        prompt = messages[-1]["content"]
        page = section(prompt, "CURRENT OBSERVATION")
        if not steps_done(prompt):
            return answer(f"click [{find(page, 'button', 'Click Me!')}]")
        try:
            return answer(f"click [{find(page, 'clickable', 'START')}]")
        except Exception:
            return answer(f"click [{find(page, 'button')}]")

    server = LLMServer(restless)
    try:
        s = StudySettings(
            "miniwob", "occam", "scripted", tasks=("click-test",), seeds=(0, 1), max_steps=6, base_url=server.base_url
        )
        run_study(tmp_path, s, RunOptions(workers=1, backoff=0.01))
    finally:
        server.close()
    for r in read_results(tmp_path):
        assert r["success"] and r["reward"] == 1.0, r
        assert r["reason"] == "task_done" and r["steps"] == 1, r


def test_one_count_of_success_rates_for_the_evaluation_the_study_and_the_comparison():
    """The evaluation's site table, a study's summary and the comparison all count with
    pagelens.rates: not-scored runs are out of the rate (and counted apart), scores average
    over scored runs, groups come out sorted."""
    from pagelens.evaluation.harness import TaskScore, site_table
    from pagelens.rates import rate_of, rates_by

    verdicts = [True, False, None, True]
    r = rate_of("x", verdicts, [1.0, 0.5, None, None])
    assert (r.runs, r.scored, r.not_scored, r.successes) == (4, 3, 1, 2)
    assert r.rate == pytest.approx(2 / 3) and r.mean_score == pytest.approx(1.5 / 3)
    assert r.interval() == wilson(2, 3)
    assert rate_of("none", [None]).rate is None and rate_of("none", []).mean_score is None
    groups = rates_by(["b1", "a1", "b0"], lambda s: s[0], lambda s: s[1] == "1")
    assert list(groups) == ["a", "b"] and groups["b"].successes == 1 and groups["b"].runs == 2
    scores = [
        TaskScore(1, "shop", scored=True, score=1.0, success=True),
        TaskScore(2, "shop", scored=False),
        TaskScore(3, "forum", scored=True, score=0.0, success=False),
    ]
    table = site_table(scores)
    assert [row["site"] for row in table["sites"]] == ["forum", "shop"]
    assert table["total"] == {
        "site": "total",
        "runs": 3,
        "scored": 2,
        "not_scored": 1,
        "successes": 1,
        "success_rate": 0.5,
        "mean_score": 0.5,
    }


# -- a login that reaches the scorer --------------------------------------------------------------

SHOP_TASK = {
    "task_id": 9,
    "intent": "Order the blue mug.",
    "sites": ["shopping"],
    "start_url": "__SHOPPING__/",
    "require_login": True,
    "storage_state": "./.auth/shopping_state.json",
    "eval": {
        "eval_types": ["program_html"],
        "reference_answers": None,
        "reference_url": "",
        "program_html": [
            {
                # WebArena's helper: the latest order's page, found through the site's REST API.
                "url": "func:shopping_get_latest_order_url()",
                "locator": "document.querySelector('.order-details').outerText",
                "required_contents": {"must_include": ["Blue mug"]},
            }
        ],
    },
}


def _shopper(messages):
    """Orders the mug (the button's id read from the page), then stops."""
    prompt = messages[-1]["content"]
    if "Order #" in prompt:
        return answer("stop [ordered]")
    found = re.search(r"button \[(\d+)\] 'Order the blue mug'", prompt)
    return answer(f"click [{found.group(1)}]" if found else "stop [no button]")


def _shop_study(folder: Path, server: LLMServer, storage: Path | None) -> StudySettings:
    """The study of SHOP_TASK with the tasks and sites files written in ``folder``."""
    return StudySettings(
        "webarena",
        "occam",
        "scripted",
        tasks=("9",),
        seeds=(0,),
        max_steps=4,
        base_url=server.base_url,
        benchmark_options={
            "sites_file": str(folder / "sites.json"),
            "task_file": str(folder / "tasks.json"),
            "storage_dir": str(storage) if storage else None,
        },
    )


@pytest.mark.parametrize("login", ["recipe", "storage-dir"])
def test_a_login_reaches_the_scorer(login, tmp_path):
    """Issue 24, 3: a task that needs the shop's login, changes the site (places an order) and
    is checked by program_html through a `func:` helper on a page only the signed-in customer
    sees: scored in the worker's own browser with the episode's login — from WebArena's
    login recipe (the sites file's account) or from STORAGE_DIR/shopping.json."""
    from support.shop_server import ADMIN, CUSTOMER, ShopServer

    shop = ShopServer()
    server = LLMServer(_shopper)
    (tmp_path / "tasks.json").write_text(json.dumps([SHOP_TASK]))
    accounts = {"shopping_admin": ADMIN} | ({"shopping": CUSTOMER} if login == "recipe" else {})
    (tmp_path / "sites.json").write_text(json.dumps({"shopping": shop.url, "accounts": accounts}))
    storage = None
    if login == "storage-dir":
        storage = tmp_path / "auth"
        storage.mkdir()
        host = shop.url.split("//")[1].split(":")[0]
        cookie = {"name": "session", "value": "emma%40example.com", "domain": host, "path": "/", "expires": -1,
                  "httpOnly": True, "secure": False, "sameSite": "Lax"}  # fmt: skip
        (storage / "shopping.json").write_text(json.dumps({"cookies": [cookie], "origins": []}))
    try:
        run_study(tmp_path / "s", _shop_study(tmp_path, server, storage), RunOptions(backoff=0.01))
    finally:
        server.close()
        shop.close()
    [result] = read_results(tmp_path / "s")
    assert shop.orders == [{"id": "000000001", "customer": "emma@example.com", "item": "Blue mug"}]
    assert result["evaluation"]["scored"], result["evaluation"]
    assert result["success"] and result["evaluation"]["evaluators"] == {"program_html": 1.0}, result["evaluation"]


def test_a_login_that_fails_is_the_run_s_failure_naming_it(tmp_path):
    from support.shop_server import ADMIN, CUSTOMER, ShopServer

    shop = ShopServer()
    server = LLMServer(_shopper)
    (tmp_path / "tasks.json").write_text(json.dumps([SHOP_TASK]))
    wrong = {**CUSTOMER, "password": "wrong"}
    (tmp_path / "sites.json").write_text(
        json.dumps({"shopping": shop.url, "accounts": {"shopping": wrong, "shopping_admin": ADMIN}})
    )
    try:
        # The study ends with its one episode lost: not a study that ran to its end.
        with pytest.raises(StudyStopped, match=r"1 of 1 planned episodes lost: \S+ seed 0 \(setup\)"):
            run_study(tmp_path / "s", _shop_study(tmp_path, server, None), RunOptions(backoff=0.01))
    finally:
        server.close()
        shop.close()
    assert read_results(tmp_path / "s") == [] and shop.orders == []  # not finished: a rerun runs it
    [failure] = [json.loads(line) for line in (tmp_path / "s" / "failures.jsonl").read_text().splitlines()]
    assert failure["error_kind"] == "setup" and "stayed on its login page" in failure["error"]
    assert failure["error"].count("logging in to") == 1, failure["error"]  # said once, not wrapped
    # The account is named (the one the sites file gives), never its password.
    assert repr(CUSTOMER["username"]) in failure["error"] and "wrong" not in failure["error"]


# -- counts, exits and the report's word for them ----------------------------------------------


def _study_cli(directory: Path, base_url: str, *extra: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "pagelens", "study", "run", str(directory), "--benchmark", "miniwob"]
    cmd += ["--model", "scripted", "--base-url", base_url, "--max-steps", "8", *extra]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600)


def test_a_study_extended_by_another_command_counts_one_plan_everywhere(model, tmp_path):
    """Two tasks x two seeds, then the same folder asked for one task and a third seed: the
    study's plan is the union of what the commands asked (5 episodes, not the 6 of a cross
    product), and the run's output, summary.json and the report all count 5 of 5 — no episode
    nobody asked for is called lost; the first command run again runs nothing and says the
    same; finished never exceeds planned."""
    directory = tmp_path / "s"
    first = _study_cli(directory, model.base_url, "--tasks", "click-test,enter-text", "--seeds", "0-1")
    assert first.returncode == 0, first.stderr[-2000:]
    assert "4/4 episodes" in first.stderr
    wider = _study_cli(directory, model.base_url, "--tasks", "click-test", "--seeds", "2")
    assert wider.returncode == 0, wider.stderr[-2000:]
    assert "5/5 episodes" in wider.stderr, wider.stderr
    again = _study_cli(directory, model.base_url, "--tasks", "click-test,enter-text", "--seeds", "0-1")
    assert again.returncode == 0, again.stderr[-2000:]
    assert "5/5 episodes" in again.stderr and "lost" not in again.stderr, again.stderr
    assert len(read_results(directory)) == 5  # the rerun ran nothing
    summary = json.loads((directory / "summary.json").read_text())
    assert (summary["episodes"], summary["finished"], summary["status"], summary["lost"]) == (5, 5, "ended", [])
    assert sorted(json.loads((directory / "study.json").read_text())["plan"]) == sorted(
        [["click-test", 0], ["click-test", 1], ["enter-text", 0], ["enter-text", 1], ["click-test", 2]]
    )
    report = (directory / "report.html").read_text()
    assert "5 of 5 episodes planned" in report and "ran to its end" in report
    assert "Episodes lost (0 of 5 planned" in report


def test_a_study_that_loses_episodes_exits_2_and_names_each(tmp_path):
    """An endpoint that fails for good, fewer losses than the stop threshold: the study is not
    a success (exit 2), the terminal and the report name every lost episode (task, seed, kind,
    cause), and an episode tried twice is counted once."""
    server = LLMServer(miniwob_model)
    server.failures = [500] * 100
    directory = tmp_path / "s"
    try:
        for _ in range(2):
            done = _study_cli(
                directory, server.base_url, "--tasks", "click-test,enter-text", "--seeds", "0",
                "--llm-retries", "0", "--max-infra-failures", "5",
            )  # fmt: skip
            assert done.returncode == 2, done.stderr[-2000:]
    finally:
        server.close()
    assert "0/2 episodes" in done.stderr and "tasks planned (2): click-test, enter-text" in done.stderr
    for task in ("click-test", "enter-text"):
        assert re.search(rf"lost: {task} seed 0: model: .*500", done.stderr), done.stderr
    summary = json.loads((directory / "summary.json").read_text())
    assert summary["status"] == "incomplete"
    assert [(e["task"], e["seed"], e["kind"]) for e in summary["lost"]] == [
        ("click-test", 0, "model"),
        ("enter-text", 0, "model"),
    ]
    failures = (directory / "failures.jsonl").read_text().splitlines()
    assert len(failures) == 4  # two runs of two episodes: one line per attempt...
    report = (directory / "report.html").read_text()
    lost = report.split('id="lost"', 1)[1].split("</table>", 1)[0]
    assert lost.count("<td>model</td>") == 2 and "click-test" in lost and "enter-text" in lost
    infrastructure = report.split('id="infrastructure"', 1)[1].split("</table>", 1)[0]
    assert "<td>model</td><td>2</td>" in infrastructure  # ...and each episode counted once
    assert "ended with episodes lost" in report


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (["--budget-usd", "-1"], "--budget-usd"),
        (["--max-infra-failures", "0"], "--max-infra-failures"),
        (["--sites", "shopping"], "--sites"),
        (["--reset-cmd", "true"], "--reset-cmd"),
        (["--episode-seconds", "0"], "--episode-seconds"),
        (["--prices=-1,2"], "--prices"),
    ],
)
def test_nonsense_settings_are_refused_before_a_folder_is_made(tmp_path, capsys, flags, named):
    from pagelens.cli import main

    directory = tmp_path / "s"
    args = ["study", "run", str(directory), "--benchmark", "miniwob", "--model", "m", "--base-url", "http://x/v1"]
    code = main([*args, "--tasks", "click-test", *flags])
    assert code == 2
    assert named in capsys.readouterr().err
    assert not directory.exists()


def test_the_report_says_running_only_while_the_run_is_alive(model, tmp_path):
    """The summary a run writes as it starts says running, with its process: the report says
    so while that process lives, and that the run was killed once it is gone."""
    from pagelens.studies.store import summarize

    directory = tmp_path / "s"
    run_study(directory, settings(model, tasks=("click-test",), seeds=(0,)))
    planned = [("miniwob.click-test.0.occam", "click-test", 0)]
    summarize(directory, planned, "running")  # as a run starting now (this process) writes it
    assert "running (process" in write_report(directory).read_text()
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    summary = json.loads((directory / "summary.json").read_text())
    (directory / "summary.json").write_text(json.dumps({**summary, "pid": gone.pid}))
    assert "its run was killed or interrupted" in write_report(directory).read_text()


def test_compare_clips_its_interval_and_pairs_seeds_per_task(tmp_path):
    """A difference of success rates lies in [-1, 1], and so does its interval (two pairs that
    disagree give Student's ±12.7 unclipped); per task, only the seeds both studies ran are
    compared (a seed one study alone ran is a difference of seeds, not of agents)."""
    from pagelens.studies.report import paired_interval
    from pagelens.studies.store import EpisodeResult, ResultsLog

    assert paired_interval([-1.0, 1.0]) == (-1.0, 1.0)
    assert paired_interval([0.0, 0.0]) == (0.0, 0.0)

    def study(name, outcomes):
        directory = tmp_path / name
        directory.mkdir()
        (directory / "study.json").write_text(json.dumps(settings_json()))
        log = ResultsLog(directory)
        for (task, seed), success in outcomes.items():
            log.append(
                EpisodeResult(f"miniwob.{task}.{seed}.occam", "miniwob", task, seed, "occam", "m", success=success)
            )
        return directory

    def settings_json():
        return StudySettings("miniwob", "occam", "m", tasks=("t",), seeds=(0, 1, 2)).to_json()

    # The first study ran seeds 0-2 of t (seeds 1 and 2 failed); the second only seed 0.
    first = study("a", {("t", 0): True, ("t", 1): False, ("t", 2): False})
    second = study("b", {("t", 0): True})
    [row] = compare(first, second)["tasks"]
    assert (row["first"], row["second"], row["difference"]) == (1.0, 1.0, 0.0)


def test_the_reports_words_mean_one_thing(tmp_path):
    """A task whose every episode was lost keeps its row in the per-task table (0 finished, its
    losses said); failed episodes are counted by kind, an error's or how the episode ended, and
    the kinds add up to the failures."""
    from html.parser import HTMLParser

    from pagelens.studies.store import EpisodeResult, ResultsLog

    directory = tmp_path / "s"
    directory.mkdir()
    tasks = ("kept", "all-lost")
    (directory / "study.json").write_text(
        json.dumps(StudySettings("miniwob", "occam", "m", tasks=tasks, seeds=(0, 1)).to_json())
    )
    log = ResultsLog(directory)
    log.append(EpisodeResult("miniwob.kept.0.occam", "miniwob", "kept", 0, "occam", "m", success=True))
    log.append(
        EpisodeResult(
            "miniwob.kept.1.occam", "miniwob", "kept", 1, "occam", "m", success=False, reason="stop", error_kind=""
        )
    )

    class Tables(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.tables: dict[str, list[list[str]]] = {}
            self.table: str | None = None

        def handle_starttag(self, tag, attrs):
            if tag == "table":
                self.table = dict(attrs).get("id")
                self.tables[self.table] = []
            elif tag == "tr" and self.table:
                self.tables[self.table].append([])

        def handle_data(self, data):
            if self.table and self.tables[self.table] and data.strip():
                self.tables[self.table][-1].append(data.strip())

        def handle_endtag(self, tag):
            if tag == "table":
                self.table = None

    page = Tables()
    page.feed(write_report(directory).read_text())
    per_task = {row[0]: row for row in page.tables["per-task"][1:]}
    assert set(per_task) == {"kept", "all-lost"} and per_task["all-lost"][1] == "0" and "2 lost" in per_task["all-lost"]
    failures = sum(int(row[-1]) for row in page.tables["failures"][1:])
    assert failures == 1, page.tables["failures"]


def test_the_journal_names_pagelens_commit_from_a_wheel_too(monkeypatch):
    """Installed from a wheel, pagelens has no git checkout beside it: the journal records the
    commit its extension was built from (baked in by the build), marked as such."""
    from pagelens._core import BUILD_COMMIT
    from pagelens.studies import settings as study_settings

    root = ROOT
    monkeypatch.setattr(study_settings, "_git_commit", lambda folder: None)  # as in a wheel
    if not (root / ".git").exists():  # built from a tree with no history: nothing to name
        assert BUILD_COMMIT == "" and study_settings.pagelens_commit() is None
        return
    assert re.fullmatch(r"[0-9a-f]{40}", BUILD_COMMIT), BUILD_COMMIT
    # A commit of this repository, at or before its HEAD (the extension is built from the tree).
    known = subprocess.run(["git", "-C", str(root), "merge-base", "--is-ancestor", BUILD_COMMIT, "HEAD"])
    assert known.returncode == 0
    assert study_settings.pagelens_commit() == f"{BUILD_COMMIT} (built)"


def test_the_journal_names_the_code_that_ran_not_the_checkout_around_it(tmp_path):
    """pagelens installed in a venv inside another project's git checkout (its files untracked
    there, as a venv's are): the journal names the build's commit, never that project's; a file
    the checkout tracks is that checkout's code, its commit named, +dirty by its own status."""
    from pagelens._core import BUILD_COMMIT
    from pagelens.studies.settings import pagelens_commit

    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(project), *args], check=True, capture_output=True, text=True).stdout

    project = tmp_path / "project"
    project.mkdir()
    git("init", "-q")
    git("config", "user.email", "t@example.com")
    git("config", "user.name", "t")
    (project / "app.py").write_text("x = 1\n")
    (project / ".gitignore").write_text(".venv/\n")
    git("add", ".")
    git("commit", "-qm", "the project")
    head = git("rev-parse", "HEAD").strip()
    installed = project / ".venv" / "lib" / "site-packages" / "pagelens" / "studies" / "settings.py"
    installed.parent.mkdir(parents=True)
    installed.write_text("# a wheel's file\n")
    (project / "app.py").write_text("x = 2\n")  # the project has changes of its own
    expected = f"{BUILD_COMMIT} (built)" if BUILD_COMMIT else None
    assert pagelens_commit(installed) == expected
    assert head not in str(pagelens_commit(installed))
    # Without the ignore, the same untracked file: still not the project's code.
    (project / ".gitignore").unlink()
    assert pagelens_commit(installed) == expected
    # A file the checkout tracks is its code: its commit, dirty by its own status.
    assert pagelens_commit(project / "app.py") == f"{head}+dirty"
    git("checkout", "-q", "--", ".")
    assert pagelens_commit(project / "app.py") == head


def test_study_run_passes_the_agent_options_run_takes(tmp_path):
    """`study run` takes every agent option `pagelens run` takes (one set of flags), keeps them
    in study.json, and the worker's agent is made with them: SteP reads the given policies."""
    from pagelens.agents.factory import AgentSettings
    from pagelens.cli import build_parser

    def options_of(*path):
        parser = build_parser()
        for name in path:
            sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
            parser = sub.choices[name]
        return {s for a in parser._actions for s in a.option_strings}

    agent_flags = {"--" + f.name.replace("_", "-") for f in dataclasses.fields(AgentSettings)}
    assert agent_flags <= options_of("run") and agent_flags <= options_of("study", "run")

    policies = tmp_path / "policies"
    shutil.copytree(Path(__import__("pagelens").__file__).parent / "agents" / "policies", policies)
    root = policies / "root.md"
    root.write_text(root.read_text() + "\nAlways mention ZEBRA-MARKER in your reason.\n")
    server = LLMServer(lambda messages: "Reason: ZEBRA-MARKER.\nAction: stop [done]")
    try:
        done = _study_cli(
            tmp_path / "s", server.base_url, "--agent", "step", "--tasks", "click-test", "--seeds", "0",
            "--policies", str(policies), "--max-invalid", "1",
        )  # fmt: skip
    finally:
        server.close()
    assert done.returncode == 0, done.stderr[-2000:]
    study = json.loads((tmp_path / "s" / "study.json").read_text())
    assert study["agent_options"]["policies"] == str(policies) and study["agent_options"]["max_invalid"] == 1
    assert any("ZEBRA-MARKER" in m["content"] for r in server.requests for m in r["messages"])


def test_a_planner_model_is_one_of_the_episode_s_clients(tmp_path):
    """ScribeAgent's planner (--planner-model) is made by the worker with the study's endpoint
    settings, and counts as the episode's: its spend, its waits and its cancel go with the
    agent's model's."""
    from pagelens.studies.episodes import Worker

    study = StudySettings(
        "miniwob", "scribe", "m", tasks=("click-test",), base_url="http://127.0.0.1:9/v1",
        agent_options={"planner_model": "planner"},
    )  # fmt: skip
    worker = Worker(study, tmp_path, RunOptions(llm_timeout=7, llm_retries=1))
    model, planner = worker._clients()
    assert (model.model, planner.model) == ("m", "planner")
    assert planner.base_url == model.base_url and planner.timeout == 7 and planner.max_retries == 1
    assert (
        Worker(
            settings_without_planner := StudySettings("miniwob", "scribe", "m", tasks=("click-test",)), tmp_path
        )._clients()[1:]
        == []
    )
    assert settings_without_planner.agent_options == {}


def test_any_runs_extensions_kills_and_reruns_count_alike_everywhere(tmp_path_factory):
    """Property: any sequence of commands (each a set of tasks x seeds, extending the plan),
    episodes finished or lost to the infrastructure between them, runs killed mid-way: the
    plan is the union of what was asked; summary.json, the report and the tally agree; finished
    never exceeds planned, and finished + lost (+ pending while running) is the plan."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from pagelens.studies.settings import check_study
    from pagelens.studies.store import EpisodeResult, ResultsLog, summarize, tally

    command = st.tuples(
        st.sets(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=3),
        st.sets(st.integers(0, 3), min_size=1, max_size=3),
    )
    outcome = st.sampled_from(["success", "failure", "lost", "not run"])

    @settings(max_examples=25, deadline=None)
    @given(st.lists(st.tuples(command, st.lists(outcome, max_size=12), st.booleans()), min_size=1, max_size=4))
    def check(steps):
        directory = tmp_path_factory.mktemp("study")
        asked: set[tuple[str, int]] = set()
        for (tasks, seeds), outcomes, killed in steps:
            plan = check_study(
                directory,
                StudySettings("miniwob", "occam", "m", tasks=tuple(sorted(tasks)), seeds=tuple(sorted(seeds))),
            )
            asked |= {(t, s) for t in tasks for s in seeds}
            assert {(e.task, e.seed) for e in plan} == asked and len(plan) == len(asked)
            planned = [(e.id, e.task, e.seed) for e in plan]
            done = {r["id"] for r in read_results(directory)}
            todo = [p for p in planned if p[0] not in done]
            log = ResultsLog(directory)
            for (episode, task, seed), what in zip(todo, outcomes, strict=False):
                if what in ("success", "failure"):
                    log.append(EpisodeResult(episode, "miniwob", task, seed, "occam", "m", success=what == "success"))
                elif what == "lost":
                    with (directory / "failures.jsonl").open("a") as f:
                        f.write(json.dumps({"id": episode, "error_kind": "browser", "error": "it crashed"}) + "\n")
            if killed:  # the run died while running: its summary says running, its process is gone
                gone = subprocess.Popen([sys.executable, "-c", "pass"])
                gone.wait()
                summarize(directory, planned, "running", pid=gone.pid)
            else:
                summarize(directory, planned, "ended")
            page = write_report(directory).read_text()
            summary = json.loads((directory / "summary.json").read_text())
            counts = tally(directory, planned)
            finished = len({r["id"] for r in read_results(directory)} & {p[0] for p in planned})
            assert summary["episodes"] == counts["episodes"] == len(asked)
            assert summary["finished"] == counts["finished"] == finished <= len(asked)
            assert summary["finished"] + len(summary["lost"]) + summary["pending"] == len(asked)
            assert summary["pending"] == 0  # no run is running now (a killed one is said stopped)
            assert f"{finished} of {len(asked)} episodes planned" in page
            assert f"Episodes lost ({len(summary['lost'])} of {len(asked)} planned" in page
            assert set(summary["per_task"]) == {t for t, _ in asked}
            assert sum(summary["failures"].values()) == finished - summary["successes"]
            # While a run runs (this process), what has not begun is pending, never lost.
            running = summarize(directory, planned, "running")
            assert all(e["kind"] != "not run" for e in running["lost"])
            assert running["finished"] + len(running["lost"]) + running["pending"] == len(asked)
            if running["pending"]:
                assert f"{running['pending']} pending" in write_report(directory).read_text()
            summarize(directory, planned, "ended")

    check()
