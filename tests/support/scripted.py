"""Scripted models (no model runs here): the helpers that read what a model is shown — a
prompt's sections, the ids and names of a page's elements — and write an AgentOccam reply,
and a model that solves the MiniWoB++ tasks the tests run."""

from __future__ import annotations

import re


def section(prompt: str, name: str) -> str:
    m = re.search(rf"^{name}:\n(.*?)(?=\n\n[A-Z][A-Z ]+:\n|\Z)", prompt, flags=re.S | re.M)
    return m.group(1) if m else ""


def elements(page: str) -> list[tuple[str, int, str]]:
    return [(r, int(i), n) for r, i, n in re.findall(r"(\w+) \*?\[(\d+)\](?: '([^']*)')?", page)]


def find(page: str, role: str, name: str | None = None) -> int:
    for r, i, n in elements(page):
        if r == role and (name is None or n == name):
            return i
    raise AssertionError(f"no {role} {name!r} in {page}")


def answer(action: str, reason: str = "scripted", highlight: str = "") -> str:
    return (
        f"Interaction history summary: -\nObservation description: the page.\nReason: {reason}\n"
        f"Action: {action}\nObservation highlight: {highlight}"
    )


def says_the_word(messages):
    """A model for goals of the form "Say WORD": it stops with that word as its answer."""
    word = messages[-1]["content"].split("Say ", 1)[1].split()[0]
    return answer(f"stop [{word}]")


def steps_done(prompt: str) -> list[str]:
    return re.findall(r"^STEP \d+: (.*?) -> ", section(prompt, "INTERACTION HISTORY"), flags=re.M)


def miniwob_model(messages):
    prompt = messages[-1]["content"]
    goal = section(prompt, "OBJECTIVE").strip()
    page = section(prompt, "CURRENT OBSERVATION")
    done = steps_done(prompt)
    quoted = re.findall(r'"([^"]*)"', goal)
    plan: list[str]
    if goal == "Click the button.":
        plan = [f"click [{find(page, 'button', 'Click Me!')}]"]
    elif goal.startswith("Enter the username"):
        boxes = [i for r, i, _ in elements(page) if r == "textbox"]
        plan = [
            f"type [{boxes[0]}] [{quoted[0]}] [0]",
            f"type [{boxes[1]}] [{quoted[1]}] [0]",
            f"click [{find(page, 'button', 'Login')}]",
        ]
    elif goal.startswith("Enter ") and "text field" in goal:
        plan = [f"type [{find(page, 'textbox')}] [{quoted[0]}] [0]", f"click [{find(page, 'button', 'Submit')}]"]
    elif goal.startswith("Select ") and "from the list" in goal:
        item = re.match(r"Select (.*) from the list", goal).group(1)
        option = re.search(rf"\[(\d+)\] '{re.escape(item)}'", page).group(1)
        plan = [f"click [{option}]", f"click [{find(page, 'button', 'Submit')}]"]
    else:
        raise AssertionError(f"unscripted goal {goal!r}")
    if len(done) >= len(plan):
        return answer("stop [done]")
    return answer(plan[len(done)], highlight=re.search(r"\[(\d+)\]", plan[len(done)]).group(1))
