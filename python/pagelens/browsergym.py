"""pagelens inside BrowserGym and AgentLab: its observation read as pagelens' occam text, with
BrowserGym's own element ids (``bid``), and pagelens actions written as BrowserGym's.

::

    from pagelens.browsergym import occam_text, to_action

    text = occam_text(obs)                  # obs: what BrowserGym's env.step() returned
    action = to_action("click [12]", obs)   # -> "click('12')", for env.step(action)

Nothing here imports BrowserGym: the observation is a dict (``axtree_object``,
``extra_element_properties``, ``dom_object``, as BrowserGym gives them), the action a string.
BrowserGym pins an older Playwright than pagelens; install it beside pagelens without its
dependencies (README, "BrowserGym"). :func:`link_playwright_browsers` gives the second Chromium
BrowserGym starts (its chat window) Debian's.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pagelens._core import DEFAULT_TOKENIZER, AXTree, Observation, snapshot_clickables
from pagelens.actions import ACTIONS, ALIASES, ActionError, parse_action
from pagelens.browser.records import RenderMode
from pagelens.errors import ArgumentError, ArgumentTypeError

__all__ = [
    "BROWSERGYM_SUBSETS",
    "DEFAULT_SUBSETS",
    "SCROLL_PIXELS",
    "bid_tree",
    "link_playwright_browsers",
    "occam_observation",
    "occam_text",
    "to_action",
]

# BrowserGym's scroll takes pixels; pagelens' scroll is "one screen" (BrowserGym's observation
# does not carry the viewport's height: this is a screen of its default 1280x720 viewport).
SCROLL_PIXELS = 600


def bid_tree(obs: Mapping[str, Any]) -> tuple[AXTree, dict[int, str]]:
    """The page of a BrowserGym observation as a pagelens tree, and the label (the bid) each of
    its element ids prints as ("" for an element BrowserGym gave no bid: it cannot be acted on
    there, so no id is shown for it).

    BrowserGym merges the AX trees of all frames into one node list (each frame's nodes in a
    block, an iframe's node naming the frame's root among its children); node ids are only
    unique within a frame, so every node is given a new one here. Elements that respond to
    clicks come from ``dom_object`` (its ``isClickable``, with hints from the DOM) or, without
    it, from ``extra_element_properties``."""
    renumbered = _renumber(_checked_nodes(obs))
    labels: dict[int, str] = {}
    backend_of_bid: dict[str, int] = {}
    for new_id, node in enumerate(renumbered, start=1):
        bid = node.pop("browsergym_id", None)
        labels[new_id] = str(bid) if isinstance(bid, (str, int)) and _BID.fullmatch(str(bid)) else ""
        backend = node.get("backendDOMNodeId")
        if labels[new_id] and isinstance(backend, int):
            backend_of_bid.setdefault(labels[new_id], backend)
    tree = AXTree.from_cdp({"nodes": renumbered}, clickable=_clickables(obs, backend_of_bid))
    return tree, labels


def occam_observation(
    obs: Mapping[str, Any],
    max_tokens: int | None = None,
    *,
    mode: RenderMode = "occam",
    tokenizer: str = DEFAULT_TOKENIZER,
) -> Observation:
    """:func:`occam_text`'s rendering, with what it shows (``ids`` are pagelens' numbers; the
    text prints bids in their place)."""
    tree, labels = bid_tree(obs)
    return tree.render(mode, max_tokens=max_tokens, tokenizer=tokenizer, labels=labels)


def occam_text(
    obs: Mapping[str, Any],
    max_tokens: int | None = None,
    *,
    mode: RenderMode = "occam",
    tokenizer: str = DEFAULT_TOKENIZER,
) -> str:
    """A BrowserGym observation as pagelens' occam text (spec: docs/spec/observation.md) whose
    ids are BrowserGym's bids: `click [12]` here is `click('12')` there (see :func:`to_action`).
    ``max_tokens`` cuts it at a line boundary, saying how much was left out."""
    return occam_observation(obs, max_tokens, mode=mode, tokenizer=tokenizer).text


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
        select = _native_select_of(obs, bid) if obs is not None else None
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


def link_playwright_browsers(folder: str | os.PathLike[str], executable: str | None = None) -> Path:
    """A folder for ``PLAYWRIGHT_BROWSERS_PATH`` in which Playwright's own Chromium builds (the
    full one and the headless shell) are links to ``executable`` (Debian's Chromium by
    default). A library that launches Playwright's default browser (BrowserGym's chat window
    does) then starts Debian's; pagelens itself never needs it. The paths are the ones this
    Playwright asks for, read from Playwright itself."""
    from playwright.sync_api import sync_playwright

    from pagelens.browser.launch import find_chromium

    target = Path(executable or find_chromium()).resolve()
    root = Path(folder).expanduser().resolve()
    root.mkdir(parents=True, exist_ok=True)
    saved = os.environ.get("PLAYWRIGHT_BROWSERS_PATH")
    os.environ["PLAYWRIGHT_BROWSERS_PATH"] = str(root)
    try:
        with sync_playwright() as p:
            wanted = {Path(p.chromium.executable_path)}
            # The headless shell's path is only said by a launch that cannot find it.
            try:
                p.chromium.launch(headless=True).close()
            except Exception as e:
                missing = re.search(r"Executable doesn't exist at (\S+)", str(e))
                if missing is None:
                    raise
                wanted.add(Path(missing.group(1)))
    finally:
        if saved is None:
            del os.environ["PLAYWRIGHT_BROWSERS_PATH"]
        else:
            os.environ["PLAYWRIGHT_BROWSERS_PATH"] = saved
    for path in wanted:
        if root not in path.parents:
            raise ArgumentError(f"Playwright asks for {path}, outside {root}: PLAYWRIGHT_BROWSERS_PATH was not read")
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.is_symlink() or path.exists():
            path.unlink()
        path.symlink_to(target)
    return root


# BrowserGym's bids: digits, with the letters of the frames they are in before them.
_BID = re.compile(r"[A-Za-z0-9]{1,64}")
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


def _checked_nodes(obs: Any) -> list[dict[str, Any]]:
    """The observation's AX nodes, each checked for the fields the bridge reads: one
    PagelensError naming the node and the field, never a TypeError from deep inside."""
    if not isinstance(obs, Mapping):
        raise ArgumentTypeError(f"a BrowserGym observation is a dict, not {type(obs).__name__}")
    axtree = obs.get("axtree_object")
    raw = axtree.get("nodes") if isinstance(axtree, Mapping) else None
    if not isinstance(raw, Sequence) or isinstance(raw, (str, bytes)):
        raise ArgumentError(
            "the observation has no axtree_object with nodes: BrowserGym's env gives it unless "
            "its observation space was narrowed"
        )
    nodes = []
    for i, node in enumerate(raw):
        if not isinstance(node, Mapping):
            raise ArgumentError(f"axtree_object node {i} is a {type(node).__name__}, not an object")
        kids = node.get("childIds")
        if kids is not None and (isinstance(kids, (str, bytes)) or not isinstance(kids, Sequence)):
            raise ArgumentError(f"axtree_object node {i}: childIds is a {type(kids).__name__}, not a list of ids")
        for field in ("role", "name", "value"):
            value = node.get(field)
            if value is not None and not isinstance(value, Mapping):
                raise ArgumentError(
                    f"axtree_object node {i}: {field} is a {type(value).__name__}, not an object with a value"
                )
        for field in ("nodeId", "parentId", "browsergym_id"):
            value = node.get(field)
            if value is not None and not isinstance(value, (str, int)):
                raise ArgumentError(f"axtree_object node {i}: {field} is a {type(value).__name__}, not a str")
        nodes.append(dict(node))
    for field in ("dom_object", "extra_element_properties"):
        value = obs.get(field)
        if value is not None and not isinstance(value, Mapping):
            raise ArgumentError(f"the observation's {field} is a {type(value).__name__}, not an object")
    return nodes


def _renumber(nodes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Nodes with unique ids 1..n. A frame's block starts at a node without a parent; a child
    id names a node of the same block, or (an iframe's child: BrowserGym appends the frame's
    root) the root of another block with that id, each root claimed once, in order."""
    block_of: list[int] = []
    block = -1
    for i, node in enumerate(nodes):
        if i == 0 or "parentId" not in node:
            block += 1
        block_of.append(block)
    local: dict[tuple[int, str], int] = {}
    roots: dict[str, list[int]] = {}
    for i, node in enumerate(nodes):
        key = str(node.get("nodeId", ""))
        local.setdefault((block_of[i], key), i)
        if "parentId" not in node:
            roots.setdefault(key, []).append(i)
    claimed: set[int] = set()
    out = []
    for i, node in enumerate(nodes):
        copy = dict(node)
        copy["nodeId"] = str(i + 1)
        kids = []
        for child in node.get("childIds") or ():
            found = local.get((block_of[i], str(child)))
            if found is None or "parentId" not in nodes[found]:  # a block's root is no child of its own
                found = next(
                    (r for r in roots.get(str(child), ()) if block_of[r] != block_of[i] and r not in claimed), None
                )
                if found is not None:
                    claimed.add(found)
            if found is not None and found != i:
                kids.append(str(found + 1))
        copy["childIds"] = kids
        parent = node.get("parentId")
        if parent is not None:
            found = local.get((block_of[i], str(parent)))
            if found is None:
                copy.pop("parentId")
            else:
                copy["parentId"] = str(found + 1)
        out.append(copy)
    return out


def _clickables(obs: Mapping[str, Any], backend_of_bid: Mapping[str, int]) -> dict[int, str | None]:
    """Backend DOM node id -> hint of the elements that respond to clicks."""
    dom = obs.get("dom_object")
    if isinstance(dom, Mapping) and dom.get("documents"):
        merged: dict[int, str | None] = {}
        for _frame, found in snapshot_clickables(dom):
            merged.update(found)
        return merged
    props = obs.get("extra_element_properties")
    out: dict[int, str | None] = {}
    if isinstance(props, Mapping):
        for bid, p in props.items():
            if isinstance(p, Mapping) and p.get("clickable") and str(bid) in backend_of_bid:
                out[backend_of_bid[str(bid)]] = None
    return out


def _native_select_of(obs: Mapping[str, Any], bid: str) -> tuple[str, str] | None:
    """(the drop-down's bid, the option's text) when ``bid`` is an option of a native
    ``<select>`` popup (Chromium: combobox > MenuListPopup > option)."""
    nodes = _renumber(_checked_nodes(obs))
    by_id = {n["nodeId"]: n for n in nodes}
    option = next((n for n in nodes if str(n.get("browsergym_id")) == bid), None)
    if option is None or _role(option) not in ("option", "MenuListOption"):
        return None
    popup = by_id.get(str(option.get("parentId")))
    if popup is None or _role(popup) != "MenuListPopup":
        return None
    select = by_id.get(str(popup.get("parentId")))
    if select is None or not select.get("browsergym_id"):
        return None
    name = (option.get("name") or {}).get("value")
    return str(select["browsergym_id"]), name if isinstance(name, str) else ""


def _role(node: Mapping[str, Any]) -> str:
    role = node.get("role")
    return str(role.get("value", "")) if isinstance(role, Mapping) else ""
