"""A scripted MiniWoB++ policy that reads only pagelens' occam text and the task's goal, and
answers a pagelens action: one policy for every test that drives a MiniWoB++ episode through
another loop (the MCP tools, BrowserGym's env). Ids may be numbers or another tool's labels."""

from __future__ import annotations

import re

# An id as the occam form prints it: `[12]`, `[a3]` (a label), `*[12]` (new since last step).
ID = r"\*?\[([A-Za-z0-9]+)\]"


def element(text: str, role: str, name: str) -> str:
    """The id of the `role` whose printed name is exactly ``name``."""
    found = re.search(rf"(?:^|\t| )(?:{role}) {ID} '{re.escape(name)}'", text, re.M)
    if found is None:
        raise AssertionError(f"no {role} named {name!r} in:\n{text}")
    return found.group(1)


def next_action(goal: str, text: str, focused: str | None = None) -> str:
    """The next action for ``goal`` on the page ``text`` shows (``focused``: the id of the
    element that has focus, where the loop says it, for tasks played with keys)."""
    if goal == "Click the button.":
        return f"click [{element(text, 'button', 'Click Me!')}]"
    if m := re.fullmatch(r'Click on the "(.+)" button\.', goal):
        return f"click [{element(text, 'button', m.group(1))}]"
    if m := re.fullmatch(r'Click on the link "(.+)"\.', goal):
        # MiniWoB++'s links are <span>s with a click handler: targets only as clickables.
        return f"click [{element(text, 'link|clickable', m.group(1))}]"
    if goal.startswith("Focus into the textbox"):
        return f"click [{re.search(rf'textbox {ID}', text).group(1)}]"
    if m := re.fullmatch(r'Enter "(.+)" into the text field and press Submit\.', goal):
        box = re.search(rf"textbox {ID}([^\n]*)", text)
        if f"value: {m.group(1)!r}" not in box.group(2):
            return f"type [{box.group(1)}] [{m.group(1)}] [0]"
        return f"click [{element(text, 'button', 'Submit')}]"
    if m := re.fullmatch(r"Select (.+) from the list and click Submit\.", goal):
        box = re.search(rf"combobox {ID} value: '([^'\n]*)'", text)
        if box is None or box.group(2) != m.group(1):
            option = re.search(rf"{ID} {re.escape(repr(m.group(1)))}", text)
            return f"click [{option.group(1)}]"
        return f"click [{element(text, 'button', 'Submit')}]"
    if m := re.fullmatch(r"Select (.+) and click Submit\.", goal):
        wanted = set() if m.group(1) == "nothing" else set(re.split(r", | and ", m.group(1)))
        for box, name, checked in re.findall(rf"checkbox {ID} '([^'\n]*)' \[checked: (\w+)\]", text):
            if (name in wanted) != (checked == "true"):
                return f"click [{box}]"
        return f"click [{element(text, 'button', 'Submit')}]"
    if m := re.fullmatch(r"Select (-?\d+) with the spinner and hit Submit\.", goal):
        spin = re.search(rf"spinbutton {ID}[^\n]* value: (-?\d+)", text)
        value, wanted = int(spin.group(2)), int(m.group(1))
        if value == wanted:
            return f"click [{element(text, 'button', 'Submit')}]"
        if focused != spin.group(1):
            return f"click [{spin.group(1)}]"  # the keys go to the focused element
        return "press [ArrowUp]" if value < wanted else "press [ArrowDown]"
    if m := re.fullmatch(r'Navigate through the file tree\. Find and click on the folder or file named "(.+)"\.', goal):
        name = re.escape(m.group(1))
        # A folder is a clickable with its name; a file is a list item whose text is its name.
        if folder := re.search(rf"clickable {ID} '{name}'", text):
            return f"click [{folder.group(1)}]"
        if file := re.search(rf"listitem {ID}\n\t+{name}\n", text + "\n"):
            return f"click [{file.group(1)}]"
        # Open the first closed folder (its hit area says so) and look again.
        closed = re.search(rf"clickable {ID} hint: '[^'\n]*\bexpandable-hitarea", text)
        if closed is None:
            raise AssertionError(f"{m.group(1)!r} is nowhere in the tree and no folder is closed:\n{text}")
        return f"click [{closed.group(1)}]"
    raise AssertionError(f"the policy does not know this task: {goal!r}\n{text}")
