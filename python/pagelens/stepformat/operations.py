"""The operations a recorded or predicted step can do, in one table: ScribeAgent's names, the
other spellings data comes in (WebArena's, Mind2Web's), Mind2Web's operation strings, and the
:class:`~pagelens.actions.Action` each becomes on the live page.

`pagelens prep` (the records and readers), `pagelens score-steps` (Mind2Web's operation
metric) and the ScribeAgent agent all read this table, so the names cannot drift apart. The
module has no dependency beyond the action vocabulary: agents import it on a base install.
"""

from __future__ import annotations

from dataclasses import dataclass

from pagelens.actions import Action, ActionError


@dataclass(frozen=True)
class Operation:
    name: str  # ScribeAgent's (paper section 3.2.1)
    mind2web: str  # Mind2Web's operation ("CLICK", "TYPE"...), as its metrics spell it
    spellings: tuple[str, ...]  # other names records use (lower case)
    needs_text: bool  # its text is what was typed, pressed or chosen: without it the step says nothing
    in_mind2web: bool  # Mind2Web's own data has it (its reader accepts it)


OPERATIONS: dict[str, Operation] = {
    op.name: op
    for op in (
        Operation("mouse_click_action", "CLICK", ("click",), needs_text=False, in_mind2web=True),
        Operation("keyboard_sequence_action", "TYPE", ("type",), needs_text=True, in_mind2web=True),
        Operation("keyboard_combination_action", "PRESS", ("press",), needs_text=True, in_mind2web=False),
        Operation("select_action", "SELECT", ("select", "select_option"), needs_text=True, in_mind2web=True),
        Operation("hover_action", "HOVER", ("hover",), needs_text=False, in_mind2web=True),
    )
}
_BY_SPELLING = {s: op.name for op in OPERATIONS.values() for s in op.spellings}
# Mind2Web's operation names to ScribeAgent's, for the ones its data has.
MIND2WEB = {op.mind2web: op.name for op in OPERATIONS.values() if op.in_mind2web}


def canonical_operation(name: str) -> str | None:
    """ScribeAgent's name for an operation given in its own or WebArena's/Mind2Web's spelling."""
    key = name.strip()
    if key in OPERATIONS:
        return key
    return _BY_SPELLING.get(key.lower())


def mind2web_operation(name: str, text: str) -> str:
    """Mind2Web's operation string of a step: ``CLICK``, ``TYPE some text``..."""
    op = OPERATIONS.get(name)
    if op is None:
        return f"{name.upper()} {' '.join(text.split())}".strip()
    return f"{op.mind2web} {' '.join(text.split())}".strip() if op.needs_text else op.mind2web


# `<input type=...>` kinds that take typed text.
TEXT_INPUT_TYPES = frozenset("text search email url tel password number".split())


def click_means_typing(tag: str, input_type: str | None = None) -> bool:
    """ScribeAgent's rule: a click on a text field is typing into it. ``input_type`` is the
    live element's ``type`` when known (a checkbox click stays a click); without it (a step's
    Target line, as ScribeAgent's evaluation reads it) every ``<input>`` counts."""
    tag = tag.lower()
    if tag == "textarea":
        return True
    return tag == "input" and (input_type is None or (input_type or "text").lower() in TEXT_INPUT_TYPES)


def to_action(name: str, node: int, text: str, tag: str) -> Action:
    """The page action a step's operation is, on element ``node`` (its tag ``tag``). Keys go to
    the focused element (a model types into a field, then presses); typing and choosing
    replace the field's content without Enter (the step after says when to press it); choosing
    an ``<option>`` is clicking it (the executor selects it through its ``<select>``)."""
    op = OPERATIONS.get(name)
    if op is None:
        raise ActionError(f"unknown operation {name!r}; known: {', '.join(OPERATIONS)}")
    if op.name == "mouse_click_action":
        return Action("click", target=node)
    if op.name == "hover_action":
        return Action("hover", target=node)
    if op.name == "keyboard_combination_action":
        return Action("press", text=text.strip() or "Enter")
    if not text:
        raise ActionError(f"{name} on node {node} says nothing to type or choose")
    if tag.lower() == "option":
        return Action("click", target=node)
    return Action("type", target=node, text=text, press_enter=False)
