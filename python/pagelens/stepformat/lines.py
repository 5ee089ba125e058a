"""ScribeAgent's step format, written and read in one place: `pagelens prep` writes training
prompts and labels with it, the ScribeAgent agent writes inference prompts and reads replies
with it, and `pagelens score-steps` reads predictions with it, so the three cannot drift.

A step (ScribeAgent section 3.2.2, appendix A.2)::

    3.
    Description: Type "ab" into "Search"
    Action: keyboard_sequence_action [ab]
    Node: 42
    Target: <input node="42" type="text">

A prompt: ``Objective: …\\nURL: …\\nObservation: <one cleaned HTML chunk>\\nStep-by-step
guide:\\n<the previous steps>\\n``; the model continues with the next step.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pagelens.actions import ActionError
from pagelens.stepformat.operations import OPERATIONS, canonical_operation

# The system message of ScribeAgent's own inference (benchmarks/webarena/agent/workflow_agent.py).
SYSTEM = "Help achieve the objective by generating the next step."

# A reply must hold the four fields in order, one line each (ScribeAgent keeps a sample only
# when this matches). Bounded repetitions keep it linear on hostile text.
_STEP = re.compile(
    r"Description: ([^\n]{1,4000})\nAction: ([^\n]{1,4000})\n"
    r"Node: ([^\n]{1,200})\nTarget: ([^\n]{1,4000})"
)
_FIRST_WORD = re.compile(r"[^ \n]*")
_NODE_ATTR = re.compile(r'node="([^"]{0,40})"')
_ACTION = re.compile(r"([A-Za-z_]{1,40})(?: \[(.*)\])?")


def one_line(text: str) -> str:
    return " ".join(text.split())


def step_lines(number: int, description: str, action: str, text: str, node: int, target: str) -> str:
    """The five-line step: number, description, action, node id, target start tag. Typed,
    pressed or chosen text follows the action name in brackets, on the same line."""
    action_line = f"{action} [{one_line(text)}]" if text else action
    return f"{number}.\nDescription: {one_line(description)}\nAction: {action_line}\nNode: {node}\nTarget: {target}"


def prompt_text(objective: str, url: str, observation: str, guide: str) -> str:
    """The user prompt for one chunk of the page, ``guide`` being the previous steps' lines."""
    head = f"Objective: {one_line(objective)}\n" + (f"URL: {url}\n" if url else "")
    return f"{head}Observation: {observation}\nStep-by-step guide:\n" + (guide + "\n" if guide else "")


@dataclass(frozen=True)
class ParsedStep:
    """A reply read as a step. ``action`` is ScribeAgent's name (or ``stop``)."""

    description: str
    action: str
    text: str
    node: int
    target: str
    reply: str  # the reply as given (the longest one wins a vote's text)


def parse_step(reply: str) -> ParsedStep:
    """Reads a reply as ScribeAgent's evaluation does: the four fields must be there; the node
    is the first word after ``Node:`` when it is a number, else the first ``node="N"`` of the
    reply. ``Action: stop [answer]`` ends the task (its node is not needed). Anything else is
    an :class:`ActionError` saying what is wrong."""
    m = _STEP.search(reply)
    if m is None:
        raise ActionError("the reply is not a step: it needs the lines Description:, Action:, Node: and Target:")
    description, action_line, node_field, target = (g.strip() for g in m.groups())
    a = _ACTION.fullmatch(action_line.strip())
    if a is None:
        raise ActionError(f"cannot read the action {action_line[:80]!r}")
    name, text = a.group(1), a.group(2) or ""
    if name.lower() == "stop":
        return ParsedStep(description, "stop", text, -1, target, reply)
    action = canonical_operation(name)
    if action is None:
        raise ActionError(f"unknown action {name!r}: use {', '.join(OPERATIONS)}")
    first = _FIRST_WORD.match(node_field)
    word = first.group(0) if first else ""
    if not word.isdigit():
        attr = _NODE_ATTR.search(reply)
        word = attr.group(1) if attr else ""
        if not word.isdigit():
            raise ActionError(f'no node id: Node: {node_field[:40]!r} is not a number and the reply has no node="N"')
    if len(word) > 10 or int(word) > 2**32 - 1:
        raise ActionError(f"node id {word[:20]} is out of range")
    return ParsedStep(description, action, text, int(word), target, reply)


def vote(steps: list[ParsedStep]) -> ParsedStep | None:
    """The step that answers (samples and chunks pooled): the node with most votes, ties to
    the larger id (ids run backwards, so the one earlier in the page), and among that node's
    answers the longest (ScribeAgent keeps the longest as the step's text). None for none."""
    by_node: dict[int, list[ParsedStep]] = {}
    for s in steps:
        by_node.setdefault(s.node, []).append(s)
    if not by_node:
        return None
    node = max(by_node, key=lambda n: (len(by_node[n]), n))
    return max(by_node[node], key=lambda s: len(s.reply))
