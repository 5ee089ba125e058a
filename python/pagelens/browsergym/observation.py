"""A BrowserGym observation read as pagelens' tree and text, its elements labelled with
BrowserGym's bids (what the model reads names what BrowserGym acts on)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from pagelens._core import DEFAULT_TOKENIZER, AXTree, Observation, RenderMode, snapshot_clickables
from pagelens.errors import ArgumentError, ArgumentTypeError

# BrowserGym's bids: digits, with the letters of the frames they are in before them.
BID = re.compile(r"[A-Za-z0-9]{1,64}")


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
        labels[new_id] = str(bid) if isinstance(bid, (str, int)) and BID.fullmatch(str(bid)) else ""
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


def native_select_of(obs: Mapping[str, Any], bid: str) -> tuple[str, str] | None:
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
