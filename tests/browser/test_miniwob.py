"""MiniWoB++ tasks (from the PyPI package's pages, over file://) solved by scripted policies.

Each policy reads the task's utterance and chooses its actions from the AX-tree observation
(ids found by role and name), the way a model would; no JavaScript reaches into the task.
"""

from __future__ import annotations

import re

import pytest

from pagelens.browser import PageObservation
from pagelens.envs.miniwob import TESTED_TASKS, MiniWoBEnv, available_tasks

SEEDS = (0, 1, 2)


def ids(obs: PageObservation, role: str, name: str | None = None, exact: bool = True) -> list[int]:
    out = []
    for i in obs.ids:
        node = obs.tree.node(i)
        if node.role != role:
            continue
        if name is None or (node.name == name if exact else name in node.name):
            out.append(i)
    return out


def one(obs: PageObservation, role: str, name: str | None = None) -> int:
    found = ids(obs, role, name)
    assert found, f"no {role} {name!r} in\n{obs.text}"
    return found[0]


def quoted(utterance: str) -> list[str]:
    return re.findall(r'"([^"]*)"', utterance)


def click_test(env, obs, u):
    return [f"click [{one(obs, 'button', 'Click Me!')}]"]


def click_button(env, obs, u):
    return [f"click [{one(obs, 'button', quoted(u)[0])}]"]


def enter_text(env, obs, u):
    return [f"type [{one(obs, 'textbox')}] [{quoted(u)[0]}] [0]", f"click [{one(obs, 'button', 'Submit')}]"]


def login_user(env, obs, u):
    user, password = quoted(u)
    first, second = ids(obs, "textbox")[:2]
    return [
        f"type [{first}] [{user}] [0]",
        f"type [{second}] [{password}] [0]",
        f"click [{one(obs, 'button', 'Login')}]",
    ]


def click_checkboxes(env, obs, u):
    wanted = re.match(r"Select (.*) and click Submit\.", u).group(1)
    names = [] if wanted == "nothing" else [w.strip() for w in wanted.split(",")]
    return [f"click [{one(obs, 'checkbox', n)}]" for n in names] + [f"click [{one(obs, 'button', 'Submit')}]"]


def choose_list(env, obs, u):
    item = re.match(r"Select (.*) from the list and click Submit\.", u).group(1)
    # The options of the native <select>: clicking one selects it through its <select>.
    return [f"click [{one(obs, 'option', item)}]", f"click [{one(obs, 'button', 'Submit')}]"]


def click_tab(env, obs, u):
    tab = re.match(r"Click on (Tab #\d+)\.", u).group(1)
    return [f"click [{one(obs, 'link', tab)}]"]


def use_autocomplete(env, obs, u):
    parts = quoted(u)
    start, end = parts[0], (parts[1] if len(parts) > 1 else "")
    box = one(obs, "textbox")
    step = env.step(f"type [{box}] [{start}] [0]")
    assert step.result.ok, step.result.error
    menu = step.observation
    # The widget suggests after a 300 ms delay: wait a step or more, as an agent would.
    # The suggestions are a plain list (no clickable roles): type the one that fits.
    for _ in range(30):
        items = re.findall(r"^\t*- (.*)$", menu.text, flags=re.M)
        for item in items:
            if item.startswith(start) and item.endswith(end):
                # Leaving the field (Tab) closes the suggestion menu, which covers Submit.
                return [f"type [{box}] [{item}] [0]", "press [Tab]", f"click [{one(menu, 'button', 'Submit')}]"]
        menu = env.step("noop").observation
    raise AssertionError(f"no suggestion for {start}...{end} in\n{menu.text}")


POLICIES = {
    "click-test": click_test,
    "click-button": click_button,
    "enter-text": enter_text,
    "login-user": login_user,
    "click-checkboxes": click_checkboxes,
    "choose-list": choose_list,
    "click-tab": click_tab,
    "use-autocomplete": use_autocomplete,
}


@pytest.fixture(scope="module")
def env():
    with MiniWoBEnv() as e:
        yield e


def test_policies_cover_the_tested_tasks():
    assert set(POLICIES) == set(TESTED_TASKS)
    tasks = available_tasks()
    assert len(tasks) > 100 and set(TESTED_TASKS) <= set(tasks)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("task", TESTED_TASKS)
def test_scripted_policy_reaches_reward_1(env, task, seed):
    obs = env.reset(task, seed=seed)
    utterance = env.utterance
    assert utterance and not env.state().done
    actions = POLICIES[task](env, obs, utterance)
    last = None
    for action in actions:
        last = env.step(action)
        assert last.result.ok, f"{action}: {last.result.error}"
    assert last is not None and last.state.done, f"{task} not done after {actions}"
    assert last.state.reward == 1.0, f"{task} seed {seed}: {last.state.reason} after {actions}"
    assert 0 < last.state.discounted_reward <= 1.0


def test_seed_makes_the_episode_repeatable(env):
    env.reset("click-button", seed=7)
    first = env.utterance
    env.reset("click-button", seed=7)
    assert env.utterance == first


def test_a_wrong_answer_scores_minus_1(env):
    obs = env.reset("click-tab", seed=0)
    wanted = re.match(r"Click on (Tab #\d+)\.", env.utterance).group(1)
    wrong = next(
        i for i in ids(obs, "link") if obs.tree.node(i).name.startswith("Tab #") and obs.tree.node(i).name != wanted
    )
    step = env.step(f"click [{wrong}]")
    assert step.state.done and step.state.reward == -1.0


def test_unknown_task():
    from pagelens.envs.miniwob import task_url

    with pytest.raises(ValueError, match="unknown MiniWoB"):
        task_url("no-such-task")
