"""MiniWoB++ tasks whose targets are elements made clickable by script (no control role): a
file-tree widget, words in tab panels, icon buttons, menu items, e-mail rows. Each is solved
on seeds 0-4 by a policy that reads only the utterance and ``obs.text`` -- what a text-only
agent gets -- never the tree. Without clickable elements none of these has an id to click."""

from __future__ import annotations

import re

import pytest

from pagelens.envs.miniwob import MiniWoBEnv

SEEDS = range(5)
ID = re.compile(r"\[(\d+)\]")


@pytest.fixture(scope="module")
def env():
    with MiniWoBEnv() as e:
        yield e


def line_id(text: str, pattern: str, after: int = 0) -> int | None:
    """The first id on the first line (from line ``after`` on) matching ``pattern``."""
    for line in text.split("\n")[after:]:
        if re.search(pattern, line):
            found = ID.search(line)
            if found:
                return int(found.group(1))
    return None


def line_index(text: str, pattern: str) -> int | None:
    for i, line in enumerate(text.split("\n")):
        if re.search(pattern, line):
            return i
    return None


def quoted(utterance: str) -> str:
    return re.search(r'"([^"]+)"', utterance).group(1)


def name(s: str) -> str:
    """How the occam form quotes a name."""
    return re.escape(repr(s))


def episode(env, task: str, seed: int, policy) -> float:
    obs = env.reset(task, seed=seed)
    for _ in range(12):
        action = policy(env.utterance, obs.text)
        assert action, f"the policy found nothing to do in:\n{obs.text}"
        step = env.step(action)
        assert step.result.ok, (action, step.result.error)
        if step.state.done:
            return step.state.reward
        obs = step.observation
    raise AssertionError(f"{task} seed {seed}: not done after 12 steps")


def navigate_tree(utterance: str, text: str) -> str | None:
    # "Find and click on the folder or file named "X"": click it if shown, else open a folder.
    target = line_id(text, rf"(clickable|listitem) \*?\[\d+\] {name(quoted(utterance))}$")
    if target is not None:
        return f"click [{target}]"
    folder = line_id(text, r"hint: '[^']*\bexpandable-hitarea")
    return f"click [{folder}]" if folder is not None else None


def click_tab(utterance: str, text: str) -> str | None:
    # "Switch between the tabs to find and click on the link "X"": words are clickable spans.
    target = line_id(text, rf"(clickable|link) \*?\[\d+\] {name(quoted(utterance))}$")
    if target is not None:
        return f"click [{target}]"
    tabs = re.findall(r"tab \*?\[(\d+)\] 'Tab #\d+'.*\[selected: (true|false)\]", text)
    if not tabs:
        return None
    selected = next((i for i, (_, sel) in enumerate(tabs) if sel == "true"), -1)
    return f"click [{tabs[(selected + 1) % len(tabs)][0]}]"  # the next tab


ICON_ACTIONS = {"Reply": "reply", "Retweet": "retweet", "Like": "like"}


def social_media(utterance: str, text: str) -> str | None:
    # "For the user @U, click on the "A" button.": icons have hints; the rest sit in a menu.
    user = re.search(r"@\S+?(?=,)", utterance).group(0)
    act = quoted(utterance)
    item = line_id(text, rf"listitem \*?\[\d+\] '{re.escape(act)}")
    post = line_index(text, rf"text '.*{re.escape(user)} ")
    if item is not None:
        return f"click [{item}]"
    if post is None:
        return None
    hint = ICON_ACTIONS.get(act, "more")
    return f"click [{line_id(text, rf'hint: {name(hint)}', after=post)}]"


def email_inbox(utterance: str, text: str) -> str | None:
    # "Find the email by N and click the star/trash icon ..." or "... reply to them with the
    # text "T".": rows are clickable, icons have hints, the reply form has a send icon.
    sender = re.search(r"email by (\S+) and", utterance).group(1)
    if "reply" in utterance:
        body = line_id(text, r"textbox \*?\[\d+\]$")
        if body is not None:
            return f"type [{body}] [{quoted(utterance)}] [0]"
        filled = line_id(text, r"textbox \*?\[\d+\] value:")
        if filled is not None:
            return f"click [{line_id(text, r'hint: .send-reply.')}]"
        reply = line_id(text, r"clickable \*?\[\d+\] 'Reply'")
        if reply is not None:
            return f"click [{reply}]"
        row = line_index(text, rf"text {name(sender)}$")
        return f"click [{line_id(text, r'clickable', after=row - 1)}]" if row else None
    icon = "star" if "star" in utterance else "trash"
    row = line_index(text, rf"text {name(sender)}$")
    return f"click [{line_id(text, rf'hint: {name(icon)}', after=row)}]" if row is not None else None


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize(
    "task, policy",
    [
        ("navigate-tree", navigate_tree),
        ("click-tab-2", click_tab),
        ("social-media", social_media),
        ("email-inbox", email_inbox),
    ],
)
def test_text_only_policy_solves_script_clickable_tasks(env, task, policy, seed):
    assert episode(env, task, seed, policy) == 1.0


def test_without_clickable_elements_the_targets_have_no_id():
    # The same pages with the snapshot switched off: the folders, icons and menu have no id.
    from pagelens.envs.miniwob import MiniWoBConfig

    config = MiniWoBConfig()
    config.browser.clickables = False
    with MiniWoBEnv(config) as bare:
        obs = bare.reset("navigate-tree", seed=0)
        assert line_id(obs.text, r"expandable-hitarea") is None and "clickable [" not in obs.text
        obs = bare.reset("social-media", seed=0)
        assert "hint:" not in obs.text and line_id(obs.text, r"image \*?\[\d+\]") is None
