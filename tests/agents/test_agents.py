"""Agents end to end: real Chromium, real HTTP to a local OpenAI-compatible server started here
(its replies scripted from the prompt, since no model runs on this machine), the real `openai`
client. MiniWoB++ tasks solved, plans branched and pruned, pivotal history, invalid actions,
the judge, retries, resume after a kill, and SteP's policy stack."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest

from pagelens.actions import Action
from pagelens.agents import OccamAgent, OccamConfig, StePAgent, StePConfig, load_policies, read_trajectory, run_agent
from pagelens.agents.step import PolicyCall
from pagelens.browser import AsyncBrowserEnv, BrowserConfig
from pagelens.envs.miniwob import AsyncMiniWoBEnv, MiniWoBConfig
from pagelens.llm import LLMClient
from support.llm_server import LLMServer
from support.scripted import answer, elements, find, miniwob_model, section, steps_done


@pytest.fixture(scope="module")
def model():
    server = LLMServer(miniwob_model)
    yield server
    server.close()


def client(server, **kw) -> LLMClient:
    return LLMClient(model="scripted", base_url=server.base_url, backoff=0.01, **kw)


def run_miniwob(task: str, seed: int, agent_factory, tmp_path, max_steps: int = 8):
    async def main():
        config = MiniWoBConfig(browser=BrowserConfig(settle_ms=50, block_other_hosts=True))
        async with AsyncMiniWoBEnv(config) as mw:
            # The utterance is the objective: start the episode first to read it.
            await mw.reset(task, seed)
            agent = agent_factory(mw.utterance)
            result = await run_agent(
                mw.browser,
                agent,
                mw.utterance,
                f"miniwob:{task}",
                tmp_path / task,
                max_steps=max_steps,
                reset=lambda: mw.reset(task, seed),
            )
            return result, await mw.state(), agent

    return asyncio.run(main())


@pytest.mark.parametrize("task", ["click-test", "enter-text", "login-user", "choose-list"])
def test_occam_solves_miniwob(model, task, tmp_path):
    result, state, _ = run_miniwob(task, 3, lambda goal: OccamAgent(client(model), goal), tmp_path)
    assert state.done and state.reward == 1.0, state
    assert result.reason == "stop" and result.answer == "done"
    records = read_trajectory(result.trajectory)
    assert [r["type"] for r in records][0] == "run" and records[-1]["type"] == "end"
    steps = [r for r in records if r["type"] == "step"]
    assert [s["step"] for s in steps] == list(range(len(steps)))
    assert all(s["result"]["ok"] for s in steps)
    assert all(s["prompts"] and s["responses"] and s["tokens"]["prompt"] > 0 for s in steps)
    # Each step keeps the timings of the observation it read, stage by stage.
    assert all(s["timing"]["observe"]["capture"] > 0 and s["timing"]["observe"]["render"] > 0 for s in steps)
    assert result.report.is_file() and "Step 1:" in result.report.read_text()


# -- planning tree, pivotal history, invalid actions ----------------------------------------------------


class Script:
    """Replies from a list, one per call (a function entry gets the messages)."""

    def __init__(self, replies):
        self.replies = list(replies)
        self.calls: list[list[dict]] = []

    def __call__(self, messages):
        self.calls.append(messages)
        reply = self.replies.pop(0)
        return reply(messages) if callable(reply) else reply


def run_site(site, script, tmp_path, config=None, max_steps=10, url="site/form.html", agent=None):
    server = LLMServer(script)
    try:

        async def main():
            async with AsyncBrowserEnv(allowed_hosts=("127.0.0.1",), settle_ms=50) as env:
                a = (
                    agent(client(server))
                    if agent
                    else OccamAgent(client(server), "test the page", site.url(url), config)
                )
                return await run_agent(env, a, "test the page", site.url(url), tmp_path / "run", max_steps=max_steps), a

        return asyncio.run(main())
    finally:
        server.close()


def page_of(messages) -> str:
    return section(messages[-1]["content"], "CURRENT OBSERVATION")


def test_a_run_that_could_take_no_step_is_refused_before_anything(tmp_path):
    """run_agent itself (not only the CLI) refuses max_steps or max_failed_decisions below 1,
    before it opens a page or writes a trajectory."""
    from pagelens import ArgumentError

    for steps, failed in ((0, None), (-3, None), (5, 0)):
        with pytest.raises(ArgumentError, match="at least 1"):
            asyncio.run(
                run_agent(None, None, "t", "http://127.0.0.1:1/", tmp_path / "r", steps, max_failed_decisions=failed)
            )  # type: ignore[arg-type]
    assert not (tmp_path / "r").exists()


def test_branch_and_prune_scope_the_history(site, tmp_path):
    script = Script(
        [
            answer("branch [0] [Open the second page]"),
            lambda m: answer(f"click [{find(page_of(m), 'link', 'Go to the second page')}]"),
            answer("prune [0] [The second page is not what we need]"),
            answer("stop [back on the form]"),
        ]
    )
    result, agent = run_site(site, script, tmp_path)
    assert result.answer == "back on the form"
    first, second, third, fourth = (c[-1]["content"] for c in script.calls)
    # Under the new sub-plan the history starts empty; the plan tree shows it active.
    assert "[1] (Active Plan) Open the second page" in second
    assert section(second, "INTERACTION HISTORY").strip() == "(no steps yet)"
    assert "URL: " + site.url("site/form.html") in second
    # Its own step appears under it.
    assert re.search(r"^STEP 1: click \[\d+\] -> done", section(third, "INTERACTION HISTORY"), flags=re.M)
    assert "Second page" in third
    # After prune: back on plan 0 and on the page where it was made, the sub-plan's steps folded in.
    history = section(fourth, "INTERACTION HISTORY")
    assert "[0] (Active Plan)" in fourth and "[1]" not in section(fourth, "PREVIOUS PLANS")
    assert "STEP 0: branch [0] [Open the second page] -> done" in history
    assert re.search(r"STEP 1 \(abandoned sub-plan \[1\]\): click \[\d+\]", history)
    assert "STEP 2 (abandoned sub-plan [1]): prune [0]" in history
    assert "URL: " + site.url("site/form.html") in fourth
    assert agent.plans.plans[1].pruned and agent.plans.active == 0


def test_pivotal_subtree_and_same_page_replay(site, tmp_path):
    def choose_green(m):
        page = page_of(m)
        green = re.search(r"\[(\d+)\] 'Green'", page).group(1)
        return answer(f"click [{green}]", highlight=green)

    script = Script([choose_green, answer("note [looked]", highlight=""), answer("note [again]"), answer("stop [ok]")])
    run_site(site, script, tmp_path)
    second = script.calls[1][-1]["content"]
    replay = section(second, "INTERACTION HISTORY")
    # Step 0 is replayed as the pivotal subtree of the Green option: its select and siblings,
    # not the rest of the page, and without ids.
    assert "Green" in replay and "Blue" in replay
    assert "Vanish" not in replay and "Go to the second page" not in replay
    assert not re.search(r"\[\d+\] 'Green'", replay)
    # Step 2 saw the same page as step 1.
    fourth = script.calls[3][-1]["content"]
    assert "same page as the step before" in section(fourth, "INTERACTION HISTORY")


def test_invalid_action_is_shown_back_then_the_step_fails_cleanly(site, tmp_path):
    script = Script(
        [
            answer("fly [3]"),
            answer("stop [recovered]"),
        ]
    )
    result, _ = run_site(site, script, tmp_path)
    retry = script.calls[1]
    assert retry[-1]["content"].startswith("That action is not valid: unknown action 'fly'")
    assert retry[-2]["role"] == "assistant"
    step = [r for r in read_trajectory(result.trajectory) if r["type"] == "step"][0]
    assert step["invalid"] and step["action"] == "stop [recovered]" and result.answer == "recovered"

    hopeless = Script([answer("fly [1]")] * 3 + [answer("stop [gave up]")])
    result, _ = run_site(site, hopeless, tmp_path / "b", config=OccamConfig(max_invalid=2))
    steps = [r for r in read_trajectory(result.trajectory) if r["type"] == "step"]
    assert steps[0]["result"]["ok"] is False and "no valid action after 3 answers" in steps[0]["result"]["error"]
    assert steps[1]["action"] == "stop [gave up]"


def test_action_space_ablation(site, tmp_path):
    # AgentOccam's space has no scroll; the WebArena space with scrolling on does.
    script = Script([answer("scroll [down]"), answer("stop [x]")])
    result, _ = run_site(site, script, tmp_path)
    assert "not available here" in read_trajectory(result.trajectory)[1]["invalid"][0]
    script = Script([answer("scroll [down]"), answer("stop [x]")])
    config = OccamConfig(
        action_space="webarena", scrolling=True, planning=False, history="actions", observation="webarena"
    )
    result, _ = run_site(site, script, tmp_path / "w", config=config)
    step = read_trajectory(result.trajectory)[1]
    assert step["action"] == "scroll [down]" and step["result"]["ok"]
    prompt = script.calls[1][-1]["content"]
    assert "PREVIOUS PLANS" not in prompt and "STEP 0: scroll [down] -> done" in prompt
    assert "branch [" not in script.calls[0][0]["content"]
    lines = [ln for ln in page_of(script.calls[0]).splitlines() if not ln.startswith("URL: ")]
    assert lines and all(re.match(r"\t*\w+ \[\d+\]", ln) for ln in lines)  # WebArena's form: ids on every line
    assert re.search(r"\[\d+\] RootWebArea|RootWebArea \[\d+\]", page_of(script.calls[0]))


def test_judge_picks_among_candidates(site, tmp_path):
    def propose(m):
        page = page_of(m)
        return answer(
            f"click [{find(page, 'button', 'Vanish')}]\n"
            f"click [{find(page, 'link', 'Go to the second page')}]\nstop [too early]"
        )

    script = Script(
        [
            propose,
            "Plan progress assessment: none yet.\nAction assessment: ...\nAction selection: 1",
            answer("stop [on the second page]"),
        ]
    )
    result, _ = run_site(site, script, tmp_path, config=OccamConfig(judge=True))
    step = read_trajectory(result.trajectory)[1]
    assert len(step["candidates"]) == 3 and step["judge"]["selected"] == 1
    assert step["action"] == step["candidates"][1] and step["action"].startswith("click")
    judge_prompt = script.calls[1]
    assert "ACTIONS TO CHOOSE FROM:\n0: click" in judge_prompt[-1]["content"]
    assert "Action selection" in judge_prompt[0]["content"]
    assert result.answer == "on the second page" and "second.html" in result.final_url


def test_retries_through_the_agent(site, tmp_path):
    server = LLMServer(lambda m: answer("stop [fine]"))
    server.failures[:] = [429, 500, 503]
    try:

        async def main():
            llm = client(server)
            async with AsyncBrowserEnv(settle_ms=0) as env:
                agent = OccamAgent(llm, "t", site.url("site/second.html"))
                result = await run_agent(env, agent, "t", site.url("site/second.html"), tmp_path / "r")
            return result, llm

        result, llm = asyncio.run(main())
    finally:
        server.close()
    assert result.answer == "fine" and llm.retries == 3 and llm.usage.calls == 1
    assert result.usage["calls"] == 1 and result.usage["prompt_tokens"] > 0


def test_resume_after_kill_loses_and_duplicates_nothing(site, tmp_path):
    def counting(messages):
        done = len(steps_done(messages[-1]["content"]))
        return answer("stop [six steps]" if done >= 5 else f"note [step {done}]")

    server = LLMServer(counting)
    out = tmp_path / "run"
    cmd = [
        sys.executable,
        "-m",
        "pagelens",
        "run",
        "--url",
        site.url("site/second.html"),
        "--task",
        "count",
        "--model",
        "scripted",
        "--base-url",
        server.base_url,
        "--out",
        str(out),
        "--max-steps",
        "10",
    ]
    try:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        traj = out / "trajectory.jsonl"
        deadline = time.time() + 60
        while time.time() < deadline:
            if traj.exists() and traj.read_text().count('"type": "step"') >= 3:
                server.delay = 30  # the next call hangs: kill the run in the middle of a step
                break
            time.sleep(0.05)
        time.sleep(0.5)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        server.delay = 0
        before = [r for r in read_trajectory(traj) if r["type"] == "step"]
        assert 3 <= len(before) < 6 and not any(r["type"] == "end" for r in read_trajectory(traj))
        with open(traj, "a") as f:
            f.write('{"type": "step", "step": 99, "tor')  # a torn write, as a crash can leave
        done = subprocess.run(cmd + ["--resume"], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
    finally:
        server.close()
    records = read_trajectory(traj)
    steps = [r for r in records if r["type"] == "step"]
    assert [s["step"] for s in steps] == list(range(6))
    assert steps[: len(before)] == before  # nothing rewritten
    assert records[-1]["type"] == "end" and records[-1]["answer"] == "six steps"
    assert len([r for r in records if r["type"] == "run"]) == 1
    again = subprocess.run(cmd + ["--resume"], capture_output=True, text=True, timeout=120)
    assert again.returncode == 0 and read_trajectory(traj) == records  # finished runs are left alone
    assert (out / "report.html").is_file()


def test_run_then_eval_scores_the_trajectory(site, tmp_path):
    """`pagelens run` with a task id, then `pagelens eval` on its folder: the answer and the
    final URL reach the evaluators; the report shows the reasoning and the plan tree."""

    def follow(messages):
        done = steps_done(messages[-1]["content"])
        if not done:
            link = find(page_of(messages), "link", "Go to the second page")
            return answer(f"click [{link}]", reason="the second page has what we need")
        return answer("stop [Second page]")

    server = LLMServer(follow)
    out = tmp_path / "runs" / "7"
    try:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "pagelens",
                "run",
                "--url",
                site.url("site/form.html"),
                "--task",
                "open it",
                "--model",
                "scripted",
                "--base-url",
                server.base_url,
                "--out",
                str(out),
                "--task-id",
                "7",
                "--har",
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        server.close()
    assert done.returncode == 0, done.stderr
    # --har: the run's network events beside the trajectory, for WebArena-Verified's checks.
    har = json.loads((out / "network.har").read_text())
    requested = [e["request"]["url"] for e in har["log"]["entries"]]
    assert site.url("site/form.html") in requested and site.url("site/second.html") in requested
    assert read_trajectory(out / "trajectory.jsonl")[0]["har"] == "network.har"
    from pagelens.evaluation import load_outcome

    assert load_outcome(out / "trajectory.jsonl").har == str(out / "network.har")
    report = (out / "report.html").read_text()
    assert "the second page has what we need" in report and "Plan tree" in report
    tasks = tmp_path / "tasks.json"
    second = site.url("site/second.html")
    tasks.write_text(
        json.dumps(
            [
                {
                    "task_id": 7,
                    "sites": ["local"],
                    "intent": "open it",
                    "start_url": site.url("site/form.html"),
                    "require_login": False,
                    "eval": {
                        "eval_types": ["string_match", "url_match"],
                        "reference_answers": {"must_include": ["second page"]},
                        "reference_url": second,
                    },
                }
            ]
        )
    )
    scored = subprocess.run(
        [
            sys.executable,
            "-m",
            "pagelens",
            "eval",
            str(tmp_path / "runs"),
            "--tasks",
            str(tasks),
            "--json",
            str(tmp_path / "scores.json"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert scored.returncode == 0, scored.stderr
    total = json.loads((tmp_path / "scores.json").read_text())["table"]["total"]
    assert total["runs"] == 1 and total["scored"] == 1 and total["successes"] == 1


# -- SteP -----------------------------------------------------------------------------------------------


def step_model(messages):
    system, prompt = messages[0]["content"], messages[-1]["content"]
    history = section(prompt, "HISTORY OF THIS POLICY")
    page = section(prompt, "CURRENT OBSERVATION")
    if 'policy "root"' in system:
        if "returned:" in history:
            return "Reason: the form is done.\nAction: stop [logged in]"
        goal = section(prompt, "OBJECTIVE")
        user, password = re.findall(r'"([^"]*)"', goal)
        return f"Reason: a form to fill.\nAction: fill_form [username {user}, password {password}]"
    if 'policy "fill_form"' in system:
        args = section(prompt, "OBJECTIVE")
        user, password = re.match(r"username (\S+), password (\S+)", args).groups()
        boxes = [i for r, i, _ in elements(page) if r == "textbox"]
        n = len(re.findall(r"^STEP", history, flags=re.M))
        plan = [
            f"type [{boxes[0]}] [{user}] [0]",
            f"type [{boxes[1]}] [{password}] [0]",
            f"click [{find(page, 'button', 'Login')}]",
            "stop [submitted]",
        ]
        return f"Reason: next field.\nAction: {plan[n]}"
    raise AssertionError(system[:200])


def test_step_two_level_stack_on_miniwob(tmp_path):
    server = LLMServer(step_model)
    try:
        result, state, agent = run_miniwob(
            "login-user", 5, lambda goal: StePAgent(client(server), goal, load_policies()), tmp_path, max_steps=10
        )
    finally:
        server.close()
    assert state.reward == 1.0 and result.answer == "logged in"
    steps = [r for r in read_trajectory(result.trajectory) if r["type"] == "step"]
    assert [s["meta"]["policy"] for s in steps] == ["root", "fill_form", "fill_form", "fill_form", "fill_form", "root"]
    assert [s["meta"]["depth"] for s in steps] == [1, 2, 2, 2, 2, 1]
    assert steps[0]["action"].startswith("fill_form [username")
    final_root = steps[-1]["prompts"][0][-1]["content"]
    assert "fill_form [username" in final_root and "returned: submitted" in final_root
    assert agent.stack and len(agent.stack) == 1


def test_step_limits_and_errors(site, tmp_path):
    # Depth limit: the root cannot call a policy when the stack is full.
    script = Script(["Action: fill_form [x]", "Action: stop [blocked]"])
    result, _ = run_site(
        site, script, tmp_path, agent=lambda llm: StePAgent(llm, "t", load_policies(), StePConfig(max_depth=1))
    )
    steps = [r for r in read_trajectory(result.trajectory) if r["type"] == "step"]
    assert not steps[0]["result"]["ok"] and "policy stack is full" in steps[0]["result"]["error"]
    assert "policy stack is full" in script.calls[1][-1]["content"]
    # An unknown policy is an error shown to the model; a reply without markers still parses.
    script = Script(["Action: make_coffee [strong]", "I will finish now.\nstop [done]"])
    result, _ = run_site(site, script, tmp_path / "b", agent=lambda llm: StePAgent(llm, "t", load_policies()))
    assert "or call a policy: " in script.calls[1][-1]["content"]
    assert result.answer == "done"
    # Per-policy step limit: a policy that never stops is popped with a message to its caller.
    script = Script(["Action: find_element [the moon]", "Action: noop", "Action: noop", "Action: stop [end]"])
    result, agent = run_site(
        site,
        script,
        tmp_path / "c",
        agent=lambda llm: StePAgent(llm, "t", load_policies(), StePConfig(max_policy_steps=2)),
    )
    assert "gave up after 2 steps" in script.calls[3][-1]["content"] and result.answer == "end"


def test_step_parsing_is_whole_action():
    agent = StePAgent(LLMClient(model="x", base_url="http://127.0.0.1:9/v1"), "t", load_policies())
    typed = agent._parse("type [3] [please stop [now]] [0]")
    assert isinstance(typed, Action) and typed.kind == "type" and typed.text == "please stop [now]"
    assert agent._parse("fill_form [a, b]") == PolicyCall("fill_form", "a, b")
    assert agent._parse("```\nfind_element [Submit]\n```") == PolicyCall("find_element", "Submit")


def test_policies_are_files(tmp_path):
    (tmp_path / "root.md").write_text("name: root\ndescription: the root\n\n## Instructions\nDo it.\n")
    (tmp_path / "search.md").write_text(
        "name: search\ndescription: search a list\nargument: what\n\n## Instructions\nLook.\n## Examples\nsearch [x]\n"
    )
    policies = load_policies(tmp_path)
    assert policies["search"].examples == "search [x]" and policies["search"].argument == "what"
    (tmp_path / "bad.md").write_text("name: Bad Name\ndescription: x\n\nbody")
    with pytest.raises(ValueError, match="lower_snake_case"):
        load_policies(tmp_path)


@pytest.mark.skipif(
    not os.environ.get("PAGELENS_LIVE_MODEL"), reason="set PAGELENS_LIVE_MODEL to run with a real model"
)
@pytest.mark.parametrize("task", ["click-test", "enter-text", "login-user", "choose-list"])
def test_real_model_on_miniwob(task, tmp_path):
    llm = LLMClient(model=os.environ["PAGELENS_LIVE_MODEL"])
    result, state, _ = run_miniwob(task, 0, lambda goal: OccamAgent(llm, goal), tmp_path, max_steps=6)
    assert state.reward == 1.0, (result, state)


def test_pagelens_run_starts_a_miniwob_episode_through_its_start_control(tmp_path):
    """A MiniWoB++ task page opened by `pagelens run` (not MiniWoBEnv) waits behind its START
    cover, a div made clickable by script: the agent sees it with an id, starts the episode,
    then solves it from the page's own instruction."""
    from pagelens.envs.miniwob import task_url

    def player(messages):
        page = page_of(messages)
        done = steps_done(messages[-1]["content"])
        reward = re.search(r"text 'Last reward:'\n\s*text '(-?\d\.\d+)'", page)
        if reward:
            return answer(f"stop [{reward.group(1)}]")
        start = re.search(r"clickable \*?\[(\d+)\] 'START'", page)
        if start and not done:
            return answer(f"click [{start.group(1)}]", reason="the episode starts behind this cover")
        wanted = re.search(r'Click on the \\?"(\w+)\\?" button', page).group(1)
        return answer(f"click [{find(page, 'button', wanted)}]")

    server = LLMServer(player)
    out = tmp_path / "run"
    try:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "pagelens",
                "run",
                "--url",
                task_url("click-button"),
                "--task",
                "Do what the page asks.",
                "--model",
                "scripted",
                "--base-url",
                server.base_url,
                "--out",
                str(out),
                "--max-steps",
                "5",
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        server.close()
    assert done.returncode == 0, done.stderr
    records = read_trajectory(out / "trajectory.jsonl")
    steps = [r for r in records if r["type"] == "step"]
    assert "'START'" in steps[0]["observation"] and steps[0]["result"]["ok"]
    assert float(records[-1]["answer"]) > 0  # MiniWoB's own reward display: a success


def test_run_stops_on_a_garbage_model_and_fails_fast_on_a_hung_endpoint(site, tmp_path):
    """`pagelens run --max-failed-decisions N` ends a run whose model never gives a valid action;
    `--llm-timeout`/`--llm-retries` make a hung endpoint a failure of the run, with its cause,
    in seconds (not 12 minutes of silence)."""
    garbage = LLMServer(lambda m: "I am not sure what to do here.")
    try:
        cmd = [
            sys.executable,
            "-m",
            "pagelens",
            "run",
            "--url",
            site.url("site/second.html"),
            "--task",
            "t",
            "--model",
            "m",
            "--base-url",
            garbage.base_url,
            "--out",
            str(tmp_path / "g"),
            "--max-failed-decisions",
            "2",
            "--max-invalid",
            "0",
            "--max-steps",
            "20",
        ]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    finally:
        garbage.close()
    assert proc.returncode == 0, proc.stderr
    end = read_trajectory(tmp_path / "g" / "trajectory.jsonl")[-1]
    assert end["reason"] == "no_valid_action" and end["steps"] == 2
    hung = LLMServer(lambda m: answer("stop [late]"))
    hung.delay = 60
    try:
        started = time.monotonic()
        cmd = [
            sys.executable,
            "-m",
            "pagelens",
            "run",
            "--url",
            site.url("site/second.html"),
            "--task",
            "t",
            "--model",
            "m",
            "--base-url",
            hung.base_url,
            "--out",
            str(tmp_path / "h"),
            "--llm-timeout",
            "1",
            "--llm-retries",
            "1",
        ]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    finally:
        hung.delay = 0
        hung.close()
    assert proc.returncode != 0 and time.monotonic() - started < 60
    assert "pagelens: error" in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    # The retry was announced as it happened, with its cause: never silence.
    assert "retry 1/1" in proc.stderr and "Timeout" in proc.stderr, proc.stderr


# -- the step viewer's pictures -------------------------------------------------------------------


def test_each_step_s_picture_is_the_moment_of_its_action_and_is_readable(site, tmp_path):
    """A square that slides to and fro for 0.75 s after the page opens and after each click (a
    CSS animation; the page is read while it moves): each click's picture is taken as the click
    begins, with the square's box measured on that same picture (the outline's middle is the
    square's green on every step, wherever the square was when the page was read), cut to
    the page's content (a 300-pixel page in a 1280-pixel viewport), which the viewer shows at
    twice its size, with the observation beside it."""
    from PIL import Image

    from pagelens.agents.report import write_report
    from pagelens.agents.trajectory import load_trajectory

    def click_square(messages):
        return answer(f"click [{find(page_of(messages), 'button', 'Catch me')}]")

    server = LLMServer(click_square)
    try:

        async def main():
            async with AsyncBrowserEnv(allowed_hosts=("127.0.0.1",), settle_ms=50, screenshots=True) as env:
                a = OccamAgent(client(server), "catch it", site.url("site/moving.html"))
                return await run_agent(env, a, "catch it", site.url("site/moving.html"), tmp_path / "run", max_steps=5)

        asyncio.run(main())
    finally:
        server.close()
    run = load_trajectory(tmp_path / "run" / "trajectory.jsonl")
    assert len(run.steps) == 5 and all(s.ok for s in run.steps)
    for s in run.steps:
        picture = Image.open(tmp_path / "run" / s.screenshot).convert("RGB")
        x0, y0, w, h = s.screenshot_box
        assert w < 400 and picture.size[0] == round(w)  # cut to the content, not the 1280-pixel viewport
        bx, by, bw, bh = s.target_box
        middle = (int(bx + bw / 2 - x0), int(by + bh / 2 - y0))
        assert picture.getpixel(middle) == (0, 200, 0), (s.step, middle, s.target_box, s.screenshot_box)
    viewer = write_report(tmp_path / "run" / "trajectory.jsonl", tmp_path / "run" / "report.html").read_text()
    widths = [int(v) for v in re.findall(r"<svg class='shot'[^>]* width='(\d+)'", viewer)]
    assert len(widths) == 5 and all(v >= 2 * round(s.screenshot_box[2]) for v, s in zip(widths, run.steps, strict=True))
    assert viewer.count("<div class='picture'>") == 5 and viewer.count("<div class='text'>") == 5
