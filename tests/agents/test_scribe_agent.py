"""ScribeAgent on the live browser (issue: ScribeAgent live): a scripted model behind a local
OpenAI-compatible server (no model runs here) answers in ScribeAgent's five-line format from
the one chunk of cleaned HTML it is shown; the agent samples, votes and acts on the predicted
element itself. MiniWoB++ tasks and local pages (an iframe's button, a cross-site frame's
field, a native <select>), prompts equal to `pagelens prep`'s, and bad answers."""

from __future__ import annotations

import asyncio
import itertools
import re

import pytest

from pagelens.agents import ScribeAgent, ScribeConfig, read_trajectory, run_agent
from pagelens.browser import AsyncBrowserEnv, BrowserConfig
from pagelens.datasets import PrepConfig, Step, Transformer, Workflow
from pagelens.envs.miniwob import AsyncMiniWoBEnv, MiniWoBConfig
from pagelens.llm import LLMClient
from pagelens.stepformat.lines import SYSTEM
from support.llm_server import LLMServer

CHUNK_TOKENS = 256  # small, so that pages come in several chunks and the votes pool over them


# -- the scripted model: reads its prompt as a fine-tuned model would -------------------------------


def read_prompt(prompt: str) -> tuple[str, str, int]:
    """(objective, the chunk of HTML, how many steps are done)."""
    objective = re.match(r"Objective: (.*)\n", prompt).group(1)
    chunk = prompt.split("\nObservation: ", 1)[1].split("\nStep-by-step guide:\n", 1)[0]
    guide = prompt.split("\nStep-by-step guide:\n", 1)[1]
    return objective, chunk, len(re.findall(r"^\d+\.$", guide, flags=re.M))


def node_of(chunk: str, tag: str, text: str = "", **attrs: str) -> int | None:
    """The node id of a <tag> in the chunk with these attributes whose content starts with text."""
    for m in re.finditer(rf"<{tag}\b([^>]*)>([^<]*)", chunk):
        attributes, content = m.group(1), m.group(2)
        node = re.search(r'\bnode="(\d+)"', attributes)
        if node and content.strip().startswith(text) and all(f'{k}="{v}"' in attributes for k, v in attrs.items()):
            return int(node.group(1))
    return None


def step(number: int, description: str, action: str, node: int, tag: str) -> str:
    return f'{number}.\nDescription: {description}\nAction: {action}\nNode: {node}\nTarget: <{tag} node="{node}">'


STOP = "Description: The task is done\nAction: stop [done]\nNode: 0\nTarget: none"


def plan_for(objective: str) -> list[tuple[str, str, str, dict[str, str], str]]:
    """(description, action, tag, attrs, text the element starts with) per step."""
    objective = objective.split(" Specifically: ")[0]  # a planner's rewrite adds to the objective
    quoted = re.findall(r'"([^"]*)"', objective)
    if objective == "Click the button.":
        return [('Click "Click Me!"', "mouse_click_action", "button", {}, "Click Me!")]
    if objective.startswith("Enter the username"):
        return [
            (
                f'Type "{quoted[0]}" into the username',
                f"keyboard_sequence_action [{quoted[0]}]",
                "input",
                {"id": "username"},
                "",
            ),
            # A click on a text field that says what to type: the agent types it.
            (f'Type "{quoted[1]}" into the password', "mouse_click_action", "input", {"id": "password"}, ""),
            ('Click "Login"', "mouse_click_action", "button", {}, "Login"),
        ]
    if objective.startswith("Select ") and "from the list" in objective:
        item = re.match(r"Select (.*) from the list", objective).group(1)
        return [
            (f'Select "{item}"', f"select_action [{item}]", "select", {"id": "options"}, ""),
            ('Click "Submit"', "mouse_click_action", "button", {}, "Submit"),
        ]
    if objective == "Press the button inside the frame.":
        return [('Click "Child button"', "mouse_click_action", "button", {}, "Child button")]
    if objective.startswith("Search the other site for"):
        return [(f'Type "{quoted[0]}" into "Query"', "mouse_click_action", "input", {"id": "q"}, "")]
    if objective.startswith("Choose the colour"):
        return [(f'Select "{quoted[0]}" in "colour"', f"select_action [{quoted[0]}]", "select", {"id": "color"}, "")]
    raise AssertionError(f"unscripted objective {objective!r}")


def scripted_scribe(noise: bool = True):
    """One answer per call; with ``noise``, every fourth answer names another element on the
    chunk (a sample that the vote must outweigh)."""
    calls = itertools.count()

    def reply(messages: list[dict[str, str]]) -> str:
        assert messages[0] == {"role": "system", "content": SYSTEM}
        objective, chunk, done = read_prompt(messages[-1]["content"])
        plan = plan_for(objective)
        if done >= len(plan):
            return STOP
        description, action, tag, attrs, text = plan[done]
        node = node_of(chunk, tag, text, **attrs)
        if node is None:
            return "The element is not in this part of the page."
        if noise and next(calls) % 4 == 3:
            other = [int(n) for n in re.findall(r'node="(\d+)"', chunk) if int(n) != node]
            if other:
                return step(done + 1, "Click something else", "mouse_click_action", other[0], "div")
        return step(done + 1, description, action, node, tag)

    return reply


def client(server: LLMServer) -> LLMClient:
    return LLMClient(model="scripted", base_url=server.base_url, backoff=0.01)


def config(**kw) -> ScribeConfig:
    return ScribeConfig(max_tokens=CHUNK_TOKENS, samples=4, **kw)


@pytest.fixture(scope="module")
def scribe_model():
    server = LLMServer(scripted_scribe())
    yield server
    server.close()


# -- MiniWoB++ ------------------------------------------------------------------------------------


@pytest.mark.parametrize("task", ["click-test", "login-user", "choose-list"])
def test_scribe_solves_miniwob(scribe_model, task, tmp_path):
    async def main():
        mw_config = MiniWoBConfig(browser=BrowserConfig(settle_ms=50, block_other_hosts=True))
        async with AsyncMiniWoBEnv(mw_config) as mw:
            await mw.reset(task, 5)
            agent = ScribeAgent(client(scribe_model), mw.utterance, config())
            result = await run_agent(
                mw.browser,
                agent,
                mw.utterance,
                f"miniwob:{task}",
                tmp_path / task,
                max_steps=6,
                reset=lambda: mw.reset(task, 5),
            )
            return result, await mw.state()

    result, state = asyncio.run(main())
    assert state.done and state.reward == 1.0, state
    assert result.reason == "stop" and result.answer == "done"
    steps = [r for r in read_trajectory(result.trajectory) if r["type"] == "step"]
    assert all(s["result"]["ok"] for s in steps), [s["result"] for s in steps]
    acting = [s for s in steps if s["meta"].get("votes")]
    assert acting and all(len(s["prompts"]) == s["meta"]["chunks"] for s in acting[:-1])
    # The noisy samples lost the vote: the winner has most of them.
    for s in acting[:-1]:
        votes = s["meta"]["votes"]
        assert votes[str(s["meta"]["node"])] == max(votes.values())
    if task == "login-user":  # the click on the password field became typing
        assert steps[1]["action"].startswith("type [")


# -- local pages: frames, a cross-site field, a native select -----------------------------------


def run_page(site, url: str, objective: str, tmp_path, check: str, planner=None, agent_config=None):
    server = LLMServer(scripted_scribe())
    try:

        async def main():
            async with AsyncBrowserEnv(allowed_hosts=("127.0.0.1", "localhost"), settle_ms=50) as env:
                agent = ScribeAgent(client(server), objective, agent_config or config(), planner=planner)
                result = await run_agent(env, agent, objective, site.url(url), tmp_path / "run", max_steps=4)
                shown = await env.page.evaluate(check)
                return result, shown, agent

        return asyncio.run(main())
    finally:
        server.close()


def test_scribe_acts_inside_an_iframe(site, tmp_path):
    result, title, _ = run_page(
        site, "site/frames.html", "Press the button inside the frame.", tmp_path, "document.title"
    )
    assert title == "child clicked" and result.reason == "stop"


def test_scribe_types_into_a_cross_site_frame_and_chooses_in_a_select(site, tmp_path):
    result, _, _ = run_page(site, "site/frames.html", 'Search the other site for "pagelens".', tmp_path / "a", "1")
    steps = [r for r in read_trajectory(result.trajectory) if r["type"] == "step"]
    assert steps[0]["action"].endswith("[pagelens] [0]") and steps[0]["result"]["ok"]
    result, colour, _ = run_page(
        site,
        "site/form.html",
        'Choose the colour "Blue".',
        tmp_path / "b",
        "document.getElementById('color-echo').textContent",
    )
    assert colour == "colour is blue"


def test_the_planner_rewrites_the_objective_and_stops_with_an_answer(site, tmp_path):
    calls: list[str] = []

    def planner_reply(messages):
        prompt = messages[-1]["content"]
        calls.append(prompt)
        assert "Child button" in prompt  # it reads the accessibility tree
        if "Restate the objective" in prompt:
            return "use the button labelled Child button"
        return "Stop: yes\nAnswer: pressed it"

    planner = LLMServer(planner_reply)
    try:
        result, title, agent = run_page(
            site,
            "site/frames.html",
            "Press the button inside the frame.",
            tmp_path,
            "document.title",
            planner=client(planner),
        )
    finally:
        planner.close()
    assert title == "child clicked"
    assert agent.objective == "Press the button inside the frame. Specifically: use the button labelled Child button"
    assert result.reason == "stop" and result.answer == "pressed it" and len(calls) == 2


# -- prompts equal prep's --------------------------------------------------------------------------


def test_inference_prompts_equal_prep_prompts_byte_for_byte(browser, site):
    browser.reset(site.url("site/form.html"))
    obs = browser.observe_html()
    objective = "Fill in the form"
    html = obs.dom.html()  # the page as a recording would hold it
    steps = (
        Step("w", 0, objective, obs.url, html, "select_action", "r:1", text="Green", target_selector="#color"),
        Step("w", 1, objective, obs.url, html, "keyboard_sequence_action", "r:2", text="hi", target_selector="#notes"),
        Step("w", 2, objective, obs.url, html, "mouse_click_action", "r:3", target_selector="#color"),
    )
    prep = PrepConfig(max_tokens=CHUNK_TOKENS, chunks="all")
    examples, rejects = Transformer(prep).workflow(Workflow("w", steps))
    assert not rejects
    last = [e for e in examples if e["step"] == 2]
    assert len(last) > 1  # several chunks
    agent = ScribeAgent(LLMClient(model="unused", base_url="http://127.0.0.1:9"), objective, config())
    labels = [next(e["label"] for e in examples if e["step"] == k) for k in (0, 1)]
    agent.restore(
        {
            "objective": objective,
            "rewritten": True,
            "last_error": None,
            "history": [{"lines": label, "description": ""} for label in labels],
        }
    )
    assert agent.prompts_for(obs) == [e["prompt"] for e in sorted(last, key=lambda e: e["chunk_index"])]


# -- bad answers ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "answer, error",
    [
        ("I would click the button.", "not a step"),
        ("Description: x\nAction: mouse_click_action\nNode: 999999\nTarget: <b>", "not on the page"),
        ("Description: x\nAction: fly_action\nNode: 1\nTarget: <b>", "unknown action"),
        ("Description: x\nAction: mouse_click_action\nNode: soon\nTarget: <b>", "no node id"),
    ],
)
def test_answers_that_name_nothing_are_step_errors_shown_back(site, tmp_path, answer, error):
    prompts: list[str] = []

    def reply(messages):
        prompts.append(messages[-1]["content"])
        return answer

    server = LLMServer(reply)
    try:

        async def main():
            async with AsyncBrowserEnv(allowed_hosts=("127.0.0.1",), settle_ms=50) as env:
                agent = ScribeAgent(client(server), "Do it", config(rounds=1))
                return await run_agent(env, agent, "Do it", site.url("site/second.html"), tmp_path / "r", max_steps=2)

        result = asyncio.run(main())
    finally:
        server.close()
    steps = [r for r in read_trajectory(result.trajectory) if r["type"] == "step"]
    assert len(steps) == 2 and not any(s["result"]["ok"] for s in steps)
    assert error in steps[0]["result"]["error"]
    assert "Note: the last step failed: no answer named an element" in prompts[-1]
