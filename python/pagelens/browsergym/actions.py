"""A pagelens action written as BrowserGym's action string, in the functions of the caller's
action set (a click on a native drop-down's option its select_option, a key press sent to the
focused element)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from pagelens.actions import ACTIONS, ALIASES, ActionError, parse_action
from pagelens.browsergym.observation import native_select_of
from pagelens.errors import ArgumentTypeError

# BrowserGym's scroll takes pixels; pagelens' scroll is "one screen" (BrowserGym's observation
# does not carry the viewport's height: this is a screen of its default 1280x720 viewport).
SCROLL_PIXELS = 600


# BrowserGym's action subsets by function name (browsergym.core.action.highlevel.ACTION_SUBSETS,
# 0.14.3), and the ones its environments use unless told otherwise (HighLevelActionSet()).
BROWSERGYM_SUBSETS: dict[str, tuple[str, ...]] = {
    "chat": ("send_msg_to_user",),
    "infeas": ("report_infeasible",),
    "bid": (
        "scroll",
        "fill",
        "select_option",
        "click",
        "dblclick",
        "hover",
        "press",
        "focus",
        "clear",
        "drag_and_drop",
        "upload_file",
    ),
    "coord": (
        "scroll_at",
        "mouse_move",
        "mouse_up",
        "mouse_down",
        "mouse_click",
        "mouse_dblclick",
        "mouse_drag_and_drop",
        "mouse_upload_file",
        "keyboard_down",
        "keyboard_up",
        "keyboard_press",
        "keyboard_type",
        "keyboard_insert_text",
    ),
    "nav": ("go_back", "go_forward", "goto"),
    "tab": ("tab_close", "tab_focus", "new_tab"),
}
DEFAULT_SUBSETS = ("chat", "infeas", "bid", "nav", "tab")


def _functions(action_set: Any) -> tuple[frozenset[str], bool | None]:
    """The function names an action set allows (``noop`` always) and whether it takes several
    calls per action (None: not said). ``action_set``: BrowserGym's ``HighLevelActionSet`` (or
    its ``to_python_code``, an environment's ``action_mapping``), subset names, function
    names, or None for BrowserGym's default set."""
    multiaction = None
    if action_set is None:
        names: set[str] = {f for subset in DEFAULT_SUBSETS for f in BROWSERGYM_SUBSETS[subset]}
    else:
        owner = getattr(action_set, "__self__", action_set)  # a bound to_python_code
        table = getattr(owner, "action_set", None)
        if isinstance(table, Mapping):
            names = {str(name) for name in table}
            multiaction = getattr(owner, "multiaction", None)
        elif isinstance(action_set, str) or not isinstance(action_set, Iterable):
            raise ArgumentTypeError(
                "action_set is BrowserGym's HighLevelActionSet, subset names (bid, coord, nav, tab, chat, infeas) "
                f"or function names, not {type(action_set).__name__}"
            )
        else:
            names = set()
            for item in action_set:
                names.update(BROWSERGYM_SUBSETS.get(str(item), (str(item),)))
    return frozenset(names | {"noop"}), multiaction if isinstance(multiaction, bool) else None


def to_action(
    text: str,
    obs: Mapping[str, Any] | None = None,
    *,
    action_set: Any = None,
    multiaction: bool | None = None,
) -> str:
    """A pagelens action (a model's answer: `click [12]`, `type [a3] [blue] [1]`, `stop [42]`)
    as BrowserGym's action string, in the functions of ``action_set`` (the caller's
    environment's: BrowserGym's ``HighLevelActionSet``, or subset or function names; None:
    BrowserGym's default set, whose subsets are chat, infeas, bid, nav and tab).

    With the observation it was chosen on, a click on an option of a native drop-down becomes
    ``select_option`` on the drop-down (a click cannot choose it), and a key press goes to the
    focused element (``press(bid, key)``, in the bid subset) or, where the set has it, to
    ``keyboard_press``. ``type``'s Enter is a second call; a set that takes one call per action
    (``multiaction=False``, or the set's own flag) refuses it. Internal actions (notes, plans)
    and ``go_home`` have no BrowserGym counterpart and are refused: an agent applies them
    itself; so is an action whose function the set lacks, naming it."""
    allowed, own_multiaction = _functions(action_set)
    if multiaction is None:
        multiaction = True if own_multiaction is None else own_multiaction
    result = _to_call(text, obs, allowed, multiaction)
    for call in result.split("\n"):
        function = call.split("(", 1)[0]
        if function not in allowed:
            raise ActionError(
                f"`{text.strip()[:80]}` needs BrowserGym's {function}(), which this action set does not have "
                f"(it has {', '.join(sorted(allowed))})"
            )
    return result


def _to_call(text: str, obs: Mapping[str, Any] | None, allowed: frozenset[str], multiaction: bool) -> str:
    action, bid = _parse(text)
    kind = action.kind
    if ACTIONS[kind].internal and kind != "stop":
        raise ActionError(f"`{kind}` changes the agent, not the page: apply it in the agent, not in BrowserGym")
    if kind == "stop":
        answer = action.text or ""
        if answer.strip().upper().startswith("N/A"):
            reason = answer.strip()[3:].lstrip(" :-—,.") or "the task cannot be done"
            return f"report_infeasible({reason!r})"
        return f"send_msg_to_user({answer!r})"
    if kind == "click":
        select = native_select_of(obs, bid) if obs is not None else None
        if select is not None:
            return f"select_option({select[0]!r}, {select[1]!r})"
        return f"click({bid!r})"
    if kind == "hover":
        return f"hover({bid!r})"
    if kind == "type":
        fill = f"fill({bid!r}, {action.text or ''!r})"
        if not action.press_enter:
            return fill
        if not multiaction:
            raise ActionError(
                "`type [id] [text] [1]` is two BrowserGym actions (fill, then press Enter) and this action set takes "
                "one: end the action with [0], then press Enter as its own step"
            )
        return f"{fill}\npress({bid!r}, 'Enter')"
    if kind == "press":
        keys = action.text or ""
        focused = obs.get("focused_element_bid") if obs is not None else None
        if "press" in allowed and isinstance(focused, str) and focused:
            return f"press({focused!r}, {keys!r})"
        if "keyboard_press" in allowed:
            return f"keyboard_press({keys!r})"
        if "press" in allowed:
            raise ActionError(
                f"`press [{keys}]` goes to the focused element, and no element has focus (or the observation was "
                "not given): click or type into the element first"
            )
        return f"keyboard_press({keys!r})"  # refused below, naming the function
    if kind == "scroll":
        return f"scroll(0, {SCROLL_PIXELS if action.text == 'down' else -SCROLL_PIXELS})"
    if kind == "goto":
        return f"goto({(action.text or '').strip()!r})"
    if kind == "tab_focus":
        return f"tab_focus({action.target})"
    simple = {"go_back": "go_back()", "go_forward": "go_forward()", "new_tab": "new_tab()", "close_tab": "tab_close()"}
    if kind in simple:
        return simple[kind]
    if kind == "noop":
        return "noop()"
    raise ActionError(f"`{kind}` has no BrowserGym counterpart (go_home needs the start page: use goto [url])")


# A bid with letters (`[a12]`) as the element of an action that takes one, which pagelens'
# parser (numeric ids) would refuse. Only there: `scroll [down]` keeps its word.
_ELEMENT_ACTIONS = sorted(
    {name for name, spec in ACTIONS.items() if spec.on_element}
    | {alias for alias, name in ALIASES.items() if ACTIONS[name].on_element}
)
_LETTER_BID = re.compile(
    rf"\b((?:{'|'.join(_ELEMENT_ACTIONS)})\s*\*?)\[(\s*\*?\s*)([A-Za-z][A-Za-z0-9]{{0,63}})(\s*)\]", re.I
)
_SENTINEL = 10**17  # numbers no page reaches, standing in for letter bids while parsing


def _parse(text: str) -> tuple[Any, str]:
    """The action and its target as a bid. Bids with letters stand in as large numbers while
    pagelens' parser reads the action, and are put back in its target and text after."""
    if not isinstance(text, str):
        raise ActionError(f"an action is text, not {type(text).__name__}")
    stand_ins: dict[int, str] = {}
    # Stand-ins are numbers the text does not hold, so that putting the bids back changes
    # nothing the model typed (`[Order 1000000000000000000 units]` stays as it is).
    base = _SENTINEL
    while any(str(base + k) in text for k in range(len(_LETTER_BID.findall(text)) + 1)):
        base += 7_919_000_000_000_000

    def stand_in(m: re.Match[str]) -> str:
        number = base + len(stand_ins)
        stand_ins[number] = m.group(3)
        return f"{m.group(1)}[{m.group(2)}{number}{m.group(4)}]"

    action = parse_action(_LETTER_BID.sub(stand_in, text))
    if stand_ins and action.text:  # a typed text that held `click [a1]`
        restored = action.text
        for number, bid in stand_ins.items():
            restored = restored.replace(str(number), bid)
        action = type(action)(action.kind, action.target, restored, action.press_enter)
    if action.target is None:
        return action, ""
    return action, stand_ins.get(action.target, str(action.target))
