"""The README's AgentLab code, executed as written: AgentLab's own GenericAgent (agentlab 0.4.2,
installed from requirements/agentlab.txt) reads pagelens' text in BrowserGym's own MiniWoB++
loop, its model a scripted one behind a local OpenAI-compatible server (real HTTP, the real
`openai` client AgentLab builds)."""

from __future__ import annotations

import os
import re

import pytest

from support.paths import ROOT

# LiteLLM (AgentLab's) fetches a price table from GitHub when imported, retrying for seconds:
# there is no network here, its own copy serves.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
pytest.importorskip("agentlab", reason="AgentLab is not installed (requirements/agentlab.txt)")

from support.llm_server import LLMServer  # noqa: E402
from support.miniwob_policy import next_action  # noqa: E402

README = ROOT / "README.md"


def readme_agentlab_code() -> str:
    text = README.read_text()
    section = text[text.index("## Inside BrowserGym and AgentLab") :]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


# pagelens' occam text as it sits in AgentLab's prompt: the root line, then tab-indented lines.
_OCCAM = re.compile(r"^RootWebArea '[^'\n]*'\n(?:\t[^\n]*\n?)*", re.M)


@pytest.mark.parametrize("task", ["click-button", "enter-text", "use-spinner"])
def test_the_readme_agentlab_agent_runs_in_browsergym_on_pagelens_text(browsergym, task, monkeypatch, tmp_path):
    # tiktoken's files (AgentLab counts tokens with it), rebuilt from pagelens' embedded ranks.
    import hashlib

    from pagelens import _core

    url = "https://openaipublic.blob.core.windows.net/encodings/{}.tiktoken"
    for name in ("cl100k_base", "o200k_base", "r50k_base"):
        (tmp_path / hashlib.sha1(url.format(name).encode()).hexdigest()).write_bytes(_core.tiktoken_bpe_file(name))
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))

    namespace: dict = {}
    exec(compile(readme_agentlab_code(), str(README), "exec"), namespace)  # noqa: S102 (our own README)

    state: dict = {}
    seen_prompts: list[str] = []

    def reply(messages: list[dict]) -> str:
        prompt = "\n".join(
            m["content"] if isinstance(m["content"], str) else "".join(p.get("text", "") for p in m["content"])
            for m in messages
        )
        seen_prompts.append(prompt)
        page = _OCCAM.search(prompt)
        assert page, prompt[-3000:]
        answer = next_action(state["goal"], page.group(0), focused=state["focused"])
        action = namespace["to_action"](answer, state["obs"], action_set=state["agent"].action_set)
        return f"<think>\nThe page shows what the goal needs.\n</think>\n<action>\n{action}\n</action>"

    server = LLMServer(reply)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    try:
        from agentlab.agents.generic_agent.agent_configs import FLAGS_GPT_4o
        from agentlab.llm.chat_api import OpenAIModelArgs

        args = namespace["PagelensGenericAgentArgs"](
            chat_model_args=OpenAIModelArgs(
                model_name="scripted-model", max_total_tokens=128_000, max_input_tokens=100_000, max_new_tokens=500
            ),
            flags=FLAGS_GPT_4o,
        )
        agent = args.make_agent()
        state["agent"] = agent
        env = browsergym.make(f"browsergym/miniwob.{task}")
        try:
            obs, _ = env.reset(seed=5)
            for _ in range(12):
                state.update(goal=obs["goal"], focused=obs["focused_element_bid"], obs=obs)
                action, _info = agent.get_action(agent.obs_preprocessor(obs))
                obs, reward, terminated, truncated, _ = env.step(action)
                assert not obs["last_action_error"], obs["last_action_error"]
                if terminated or truncated:
                    break
            assert terminated and reward == 1.0, reward
        finally:
            env.close()
    finally:
        server.close()
    # The model read pagelens' text (role, then id), not BrowserGym's ("[id] role 'name'").
    assert seen_prompts and all(_OCCAM.search(p) for p in seen_prompts)
    assert not any(re.search(r"^\t*\[\d+\] button '", p, re.M) for p in seen_prompts)
    # The README's browsergym_action writes in the environment's own set.
    assert namespace["browsergym_action"]("press [Enter]", {"focused_element_bid": "7"}, env) == "press('7', 'Enter')"
