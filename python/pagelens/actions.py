"""The action space: what a model writes, parsed into an :class:`Action`.

Two published vocabularies are understood. AgentOccam's aligned actions
(``click [id]``, ``type [id] [text] [press_enter_after]``, ``go_back``, ``go_home``,
``note [text]``, ``stop [answer]``, ``branch [parent_id] [intent]``, ``prune [plan_id] [reason]``)
and WebArena's full set (adds ``hover``, ``press``, ``scroll``, ``goto``, ``new_tab``,
``tab_focus``, ``close_tab``, ``go_forward``, ``noop``).

The parser is tolerant of what models really write (a code fence around the action, an
``Action:`` label, quotes inside the brackets, words after the last bracket) and strict about
what it accepts: an unknown action, a missing or non-numeric id, a bad flag or direction is an
:class:`ActionError` whose message can be shown to the model as is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from pagelens.errors import ArgumentError, PagelensError

__all__ = [
    "ACTIONS",
    "ACTION_SPACES",
    "PLANNING",
    "Action",
    "ActionError",
    "NavigationFailed",
    "NavigationRefused",
    "UnknownElementError",
    "ActionSpec",
    "Internal",
    "UnknownActionError",
    "describe_actions",
    "internal_outcome",
    "parse_action",
]


class ActionError(PagelensError, ValueError):
    """Text that is not a valid action, or an action that could not be carried out.

    ``kind`` says which (a shell session's exit code, a server's answer): ``action`` here,
    more precise in the subclasses."""

    kind = "action"


class UnknownElementError(ActionError):
    """An id that names no element: not in the observation, gone from the page, or of a page
    that is gone. Observing again gives the ids to use."""

    kind = "unknown_id"


class NavigationRefused(ActionError):
    """A navigation (asked for, or by the page, or a redirect) to a host off the allow-list."""

    kind = "refused"


class NavigationFailed(ActionError):
    """A page that could not be opened: refused connection, unknown host, TLS, timeout."""

    kind = "navigation"


class UnknownActionError(ActionError):
    """The text names no action of the vocabulary: a caller with names of its own (SteP's
    policies) can add them to the message."""


@dataclass(frozen=True)
class ActionSpec:
    """One action of the vocabulary: everything the parser, the executor, the agents and the
    prompts need to know of it, kept here once."""

    name: str
    # Arguments in order. "id": an element (or plan) id; "int": a number; "text": free text
    # that runs to the last closing bracket; "flag": 0 or 1 (optional); "dir": up or down;
    # "keys": a key combination.
    args: tuple[str, ...]
    # The vocabularies it belongs to: AgentOccam's aligned space (paper section 4.1: what the
    # model needs, nothing it misuses) and WebArena's original one.
    spaces: frozenset[str]
    on_element: bool = False  # the browser acts on the element `[id]` names
    # What an internal action means (it changes the agent, not the page): "answer" ends the
    # task with its text as the answer, "note" keeps its text, "plan" changes the plan tree.
    # None: a page action, carried out by the browser.
    effect: Literal["answer", "note", "plan"] | None = None
    prompt: str = ""  # the line that explains it to a model ("": explained by its own prompt)

    @property
    def internal(self) -> bool:
        return self.effect is not None


_OCCAM, _WEBARENA = frozenset({"occam"}), frozenset({"webarena"})
_BOTH = _OCCAM | _WEBARENA

ACTIONS: dict[str, ActionSpec] = {
    spec.name: spec
    for spec in (
        ActionSpec(
            "click",
            ("id",),
            _BOTH,
            on_element=True,
            prompt=(
                "click [id]: click the element with this id. To choose an option of a drop-down, click the option's id "
                "directly. An id shown as *[id] is new since your previous step (a menu or dialog it opened); "
                "name it as [id]."
            ),
        ),
        ActionSpec(
            "type",
            ("id", "text", "flag"),
            _BOTH,
            on_element=True,
            prompt=(
                "type [id] [text] [press_enter_after=0|1]: replace the content of a field with the text; "
                "Enter is pressed afterwards unless the last argument is 0."
            ),
        ),
        ActionSpec("hover", ("id",), _WEBARENA, on_element=True, prompt="hover [id]: move the mouse over the element."),
        ActionSpec(
            "press",
            ("keys",),
            _WEBARENA,
            prompt=("press [keys]: press a key combination on the focused element, e.g. press [Control+a]."),
        ),
        ActionSpec("scroll", ("dir",), _WEBARENA, prompt="scroll [up|down]: scroll the page by one screen."),
        ActionSpec("goto", ("text",), _WEBARENA, prompt="goto [url]: open a URL in this tab."),
        ActionSpec("new_tab", (), _WEBARENA, prompt="new_tab: open a new tab."),
        ActionSpec("tab_focus", ("int",), _WEBARENA, prompt="tab_focus [index]: switch to the tab with this index."),
        ActionSpec("close_tab", (), _WEBARENA, prompt="close_tab: close this tab."),
        ActionSpec("go_back", (), _BOTH, prompt="go_back: return to the previous page."),
        ActionSpec("go_forward", (), _WEBARENA, prompt="go_forward: undo go_back."),
        ActionSpec(
            "go_home", (), _OCCAM, prompt=("go_home: go to the start page, where the sites of this task are listed.")
        ),
        ActionSpec(
            "note",
            ("text",),
            _OCCAM,
            effect="note",
            prompt=("note [text]: write down a fact you will need later (notes stay visible with the plans)."),
        ),
        ActionSpec(
            "stop",
            ("text",),
            _BOTH,
            effect="answer",
            prompt=(
                "stop [answer]: finish. Put the answer in the brackets; if the task has no textual answer or cannot be "
                "done, write N/A and the reason."
            ),
        ),
        ActionSpec("branch", ("id", "text"), _OCCAM, effect="plan"),
        ActionSpec("prune", ("id", "text"), _OCCAM, effect="plan"),
        ActionSpec("noop", (), _WEBARENA, prompt="noop: do nothing this turn (wait for the page)."),
    )
}
# The planning actions, switched on and off together.
PLANNING = frozenset(name for name, spec in ACTIONS.items() if spec.effect == "plan")

ACTION_SPACES: dict[str, frozenset[str]] = {
    "occam": frozenset(n for n, spec in ACTIONS.items() if "occam" in spec.spaces),
    "webarena": frozenset(n for n, spec in ACTIONS.items() if "webarena" in spec.spaces),
    "all": frozenset(ACTIONS),
}


def describe_actions(allowed: frozenset[str] | set[str]) -> str:
    """The prompt's lines for the actions in ``allowed``, in the table's order."""
    return "\n".join(spec.prompt for name, spec in ACTIONS.items() if name in allowed and spec.prompt)


# Names models use for the same thing (the parser reads them as the table's names).
ALIASES = {
    "key_press": "press",
    "goto_url": "goto",
    "focus_tab": "tab_focus",
    "switch_tab": "tab_focus",
    "answer": "stop",
    "finish": "stop",
    "fill": "type",
}


@dataclass(frozen=True)
class Action:
    """One parsed action.

    ``target`` is the element id (click, hover, type), the plan id (branch, prune) or the tab
    index (tab_focus). ``text`` is the typed text, answer, note, intent, reason, URL, key
    combination or scroll direction. ``press_enter`` is ``type``'s press_enter_after flag.
    A click's ``button``, ``clicks`` (2: a double click) and ``modifiers`` (keys held) are
    those of a front that offers them (Playwright MCP's browser_click); an agent's click is a
    plain one, as its text says.
    """

    kind: str
    target: int | None = None
    text: str | None = None
    press_enter: bool = False
    button: Literal["left", "right", "middle"] = "left"
    clicks: int = 1
    modifiers: tuple[str, ...] = ()

    def __str__(self) -> str:
        sig = ACTIONS[self.kind].args
        parts = [self.kind]
        for arg in sig:
            if arg in ("id", "int"):
                parts.append(f"[{self.target}]")
            elif arg == "flag":
                parts.append(f"[{int(self.press_enter)}]")
            else:
                parts.append(f"[{self.text}]")
        return " ".join(parts)

    @property
    def plain_click(self) -> bool:
        """A click with the left button, once, no key held (what an agent's ``click`` is)."""
        return self.kind == "click" and self.button == "left" and self.clicks == 1 and not self.modifiers

    @property
    def acts_on_element(self) -> bool:
        return ACTIONS[self.kind].on_element

    @property
    def internal(self) -> bool:
        """It changes the agent (notes, plans, answer), not the page."""
        return ACTIONS[self.kind].internal


@dataclass
class Internal:
    """The outcome of an internal action (plans, notes, an answer; SteP's policy calls)."""

    ok: bool
    error: str | None = None
    done: bool = False  # the task is over
    answer: str | None = None
    note: str | None = None
    navigate_to: str | None = None  # prune: back to the page where the plan was made


def internal_outcome(action: Action, agent: Any = None, url: str = "") -> Internal | None:
    """What ``action`` means when it is internal (None: a page action, for the browser), as the
    table's ``effect`` says. An agent gives an effect its own meaning with a method
    ``on_<effect>(action, url) -> Internal`` (AgentOccam keeps notes and a plan tree; SteP's
    answer returns from a policy); without one: an answer ends the task, a note is kept in
    the outcome, and a plan action is refused to an agent without plans (no-op without an
    agent: the browser alone has no plans)."""
    effect = ACTIONS[action.kind].effect
    if effect is None:
        return None
    own = getattr(agent, f"on_{effect}", None)
    if own is not None:
        outcome: Internal = own(action, url)
        return outcome
    if effect == "answer":
        return Internal(True, done=True, answer=action.text or "")
    if effect == "note":
        return Internal(True, note=action.text or "")
    if agent is not None:
        return Internal(False, f"`{action.kind}` is not available: this agent keeps no plans")
    return Internal(True)


_FENCE = re.compile(r"```(?:[a-zA-Z]+[ \t]*\n)?\s*(.*?)```", re.S)
# No two unbounded repeats can share the same characters: a model's text is parsed in linear time.
_LABEL = re.compile(r"^\s*(?:[-*>]\s*)?(?:\*\*)?(?:next\s+)?action\s*(?:\*\*\s*)?[:：]\s*(?:\*\*)?\s*", re.I)
_NAME = re.compile(r"^\s*([A-Za-z_]+)")
_QUOTES = ('""', "''", "``", "“”", "‘’")


def _strip_quotes(s: str) -> str:
    s = s.strip()
    if len(s) >= 2 and s[0] + s[-1] in _QUOTES:
        return s[1:-1]
    return s


def _candidate_lines(raw: str) -> list[str]:
    """Where the action may be: the last code fence if there is one, else every line."""
    fences = [f.strip() for f in _FENCE.findall(raw) if f.strip()]
    if fences:
        return [fences[-1]]
    return [line for line in raw.splitlines() if line.strip()] or [raw]


def parse_action(raw: str, allowed: frozenset[str] | str | None = None) -> Action:
    """Parse a model's action. ``allowed``: a name from :data:`ACTION_SPACES` or a set of kinds."""
    if not isinstance(raw, str):
        raise ActionError(f"an action is text, not {type(raw).__name__}")
    if isinstance(allowed, str):
        if allowed not in ACTION_SPACES:
            raise ArgumentError(f"unknown action space {allowed!r}; known: {sorted(ACTION_SPACES)}")
        allowed = ACTION_SPACES[allowed]
    space = allowed if allowed is not None else ACTION_SPACES["all"]
    if not raw.strip():
        raise ActionError("empty action; write one action such as `click [12]`")
    first_error: ActionError | None = None
    candidates = _candidate_lines(raw)
    # A fence holds exactly the action, possibly over several lines (typed text with newlines).
    for text in candidates:
        text = _LABEL.sub("", text.strip()).strip().strip("`").strip()
        m = _NAME.match(text)
        if not m:
            continue
        name = m.group(1).lower()
        name = ALIASES.get(name, name)
        if name not in ACTIONS:
            if len(candidates) == 1:
                first_error = first_error or UnknownActionError(
                    f"unknown action {m.group(1)!r}; valid actions: {', '.join(sorted(space))}"
                )
            continue
        if name not in space:
            raise ActionError(f"action {name!r} is not available here; valid actions: {', '.join(sorted(space))}")
        try:
            return _parse_args(name, text[m.end() :])
        except ActionError as e:
            first_error = first_error or e
    if first_error is not None:
        raise first_error
    raise ActionError(
        f"no action found in {raw.strip()[:80]!r}; write one action such as `click [12]`; "
        f"valid actions: {', '.join(sorted(space))}"
    )


def _brackets(rest: str) -> list[tuple[int, int]]:
    """Top-level [..] groups of ``rest`` as (start, end) spans of their contents."""
    spans = []
    depth = 0
    start = 0
    for i, ch in enumerate(rest):
        if ch == "[":
            if depth == 0:
                start = i + 1
            depth += 1
        elif ch == "]" and depth > 0:
            depth -= 1
            if depth == 0:
                spans.append((start, i))
    return spans


def _parse_int(name: str, what: str, s: str) -> int:
    s = _strip_quotes(s)
    s = re.sub(r"^(?:id|element_id|tab_index|plan_id|parent_id)\s*=\s*", "", s.strip(), flags=re.I).strip()
    s = s.removeprefix("*").strip()  # `[*12]`: the observation's new-element mark copied inside
    if not re.fullmatch(r"\d+", s):
        raise ActionError(f"`{name}` needs a numeric {what} in brackets, got [{s[:40]}]")
    if len(s) > 18:  # no page has that many elements, and int() of 4,300 digits refuses
        raise ActionError(f"`{name}`: {what} {s[:20]}... is not one of the page's")
    return int(s)


def _parse_args(name: str, rest: str) -> Action:
    sig = ACTIONS[name].args
    if not sig:
        return Action(name)
    rest = rest.strip()
    if rest.startswith("*["):  # `click *[12]`: the observation's new-element mark copied with the id
        rest = rest[1:]
    if not rest.startswith("["):
        usage = " ".join(f"[{a}]" for a in sig if a != "flag")
        raise ActionError(f"`{name}` needs its arguments in brackets: `{name} {usage}`")
    what = {
        "click": "element id",
        "hover": "element id",
        "type": "element id",
        "branch": "parent plan id",
        "prune": "plan id",
        "tab_focus": "tab index",
    }
    if sig == ("id",) or sig == ("int",):
        spans = _brackets(rest)
        if not spans:
            raise ActionError(f"`{name}` needs a closing bracket: `{name} [{what[name]}]`")
        return Action(name, target=_parse_int(name, what[name], rest[spans[0][0] : spans[0][1]]))
    if sig in (("text",), ("keys",), ("dir",)):
        # Free text runs to the last closing bracket: `stop [a [b] c]` answers "a [b] c".
        end = rest.rfind("]")
        if end <= 0:
            raise ActionError(f"`{name}` needs a closing bracket: `{name} [...]`")
        body = _strip_quotes(rest[1:end])
        if sig == ("dir",):
            d = re.sub(r"^direction\s*=\s*", "", body.strip(), flags=re.I).strip().lower()
            if d not in ("up", "down"):
                raise ActionError(f"`scroll` takes [up] or [down], got [{body}]")
            return Action(name, text=d)
        if sig == ("keys",):
            if not body.strip():
                raise ActionError("`press` needs a key combination, e.g. `press [Control+a]`")
            return Action(name, text=body.strip())
        if name == "goto" and not body.strip():
            raise ActionError("`goto` needs a URL: `goto [https://...]`")
        return Action(name, text=body)
    # id then free text (type, branch, prune): the id is the first group; for `type`, an
    # optional final [0] or [1] is the press-enter flag; the text is everything between.
    spans = _brackets(rest)
    if not spans:
        raise ActionError(f"`{name}` needs a closing bracket")
    target = _parse_int(name, what[name], rest[spans[0][0] : spans[0][1]])
    after = rest[spans[0][1] + 1 :].lstrip()
    if not after.startswith("["):
        usage = "[id] [text] [press_enter_after=0|1]" if name == "type" else "[id] [text]"
        raise ActionError(f"`{name}` needs {usage}, got `{name} {rest}`")
    press_enter = name == "type"  # AgentOccam and WebArena default to pressing Enter
    end = after.rfind("]")
    if end <= 0:
        raise ActionError(f"`{name}` needs a closing bracket after the text")
    body = after[1:end]
    if name == "type":
        flag = re.search(r"\]\s*\[\s*(press_enter_after\s*=\s*)?([^\[\]]*)$", body, flags=re.I)
        value = flag.group(2).strip().lower() if flag else ""
        if flag and value in ("0", "1", "true", "false"):
            press_enter = value in ("1", "true")
            body = body[: flag.start()]
        elif flag and flag.group(1):
            raise ActionError(f"`type`'s press_enter_after is 0 or 1, got [{value[:20]}]")
    text = _strip_quotes(body)
    if name in ("branch", "prune") and not text.strip():
        raise ActionError(f"`{name}` needs a non-empty {'intent' if name == 'branch' else 'reason'}")
    return Action(name, target=target, text=text, press_enter=press_enter)
