"""An independent, deliberately plain Python reading of spec section 2, used to check the
Rust renderer line for line, and the sets the spec's invariants speak about."""

from __future__ import annotations

import re
from dataclasses import dataclass

DROP_WHEN_BLANK = {
    "generic", "none", "img", "list", "strong", "paragraph", "banner", "navigation",
    "Section", "LabelText", "Legend", "listitem",
}
HIDDEN_PROPS = {"focusable", "editable", "readonly", "level", "settable", "multiline", "invalid"}
SKIPPED_ROLES = {"InlineTextBox", "LineBreak"}
INTERACTIVE = {
    "link", "button", "textbox", "searchbox", "combobox", "checkbox", "radio", "switch",
    "slider", "spinbutton", "tab", "menuitem", "option", "treeitem",
}


def py_str(v: object) -> str:
    return str(v)


@dataclass
class Kept:
    node: dict
    element_id: int
    depth: int
    line: str


def _role(n: dict) -> str:
    return ((n.get("role") or {}).get("value")) or "none"


def _name(n: dict) -> str:
    v = (n.get("name") or {}).get("value")
    return v if isinstance(v, str) else ""


def webarena_kept(nodes: list[dict]) -> list[Kept]:
    """Kept nodes of the section-2 form, in output order, for a single-frame payload whose
    nodeIds are integers (true of every corpus page)."""
    by_id: dict[str, dict] = {}
    for n in nodes:
        by_id.setdefault(n["nodeId"], n)
    child_ids = {c for n in by_id.values() for c in n.get("childIds", [])}
    roots = [n for n in by_id.values() if n["nodeId"] not in child_ids]
    out: list[Kept] = []
    stack = [(r, 0, False) for r in reversed(roots)]
    while stack:
        n, depth, skipped = stack.pop()
        role = _role(n)
        skipped = skipped or role in SKIPPED_ROLES
        structural = not skipped and not n.get("ignored") and "backendDOMNodeId" in n
        child_depth = depth
        if structural:
            name = _name(n)
            props = [
                (p["name"], p["value"]["value"])
                for p in n.get("properties", [])
                if "value" in (p.get("value") or {}) and p["value"]["value"] is not None
                and not isinstance(p["value"]["value"], (dict, list))
                and p["name"] not in HIDDEN_PROPS
            ]
            blank = not name.strip()
            dropped = (blank and not props and role in DROP_WHEN_BLANK) or (blank and role == "listitem")
            if not dropped:
                line = f"{role} [{int(n['nodeId'])}]"
                if name:
                    line += " " + repr(name)
                for k, v in props:
                    line += f" [{k}: {py_str(v)}]"
                out.append(Kept(n, int(n["nodeId"]), depth, line))
                child_depth = depth + 1
        for c in reversed(n.get("childIds", [])):
            stack.append((by_id[c], child_depth, skipped))
    return out


def webarena_text(nodes: list[dict]) -> str:
    return "\n".join("\t" * k.depth + k.line for k in webarena_kept(nodes))


def normalize(s: str) -> str:
    return " ".join(s.split())


BULLETS = set("•◦▪▫■□●○‣⁃–—-*· ")


def is_bullet(s: str) -> bool:
    return all(c in BULLETS for c in s)


def unescape_occam(text: str) -> str:
    """Undo the escapes the occam form applies (repr quotes, Markdown pipes)."""
    return text.replace("\\'", "'").replace('\\"', '"').replace("\\|", "|").replace("\\\\", "\\")


def text_present(text: str, unescaped: str, s: str) -> bool:
    return s in text or s in unescaped or repr(s)[1:-1] in text


ID_RE = re.compile(r"\[(-?\d+)\]")


def structural_tree(nodes: list[dict]) -> tuple[dict[int, int | None], dict[int, list[int]], dict[int, str]]:
    """Parent and children of each structural node (spec section 2's hoisting), and names."""
    by_id: dict[str, dict] = {}
    for n in nodes:
        by_id.setdefault(n["nodeId"], n)
    child_ids = {c for n in by_id.values() for c in n.get("childIds", [])}
    roots = [n for n in by_id.values() if n["nodeId"] not in child_ids]
    parent: dict[int, int | None] = {}
    children: dict[int, list[int]] = {}
    names: dict[int, str] = {}
    stack = [(r, None, False) for r in reversed(roots)]
    while stack:
        n, anc, skipped = stack.pop()
        skipped = skipped or _role(n) in SKIPPED_ROLES
        structural = not skipped and not n.get("ignored") and "backendDOMNodeId" in n
        me = anc
        if structural:
            i = int(n["nodeId"])
            parent[i] = anc
            children[i] = []
            names[i] = normalize(_name(n))
            if anc is not None:
                children[anc].append(i)
            me = i
        for c in reversed(n.get("childIds", [])):
            stack.append((by_id[c], me, skipped))
    return parent, children, names


def pivotal_expected(nodes: list[dict], pivots: list[int]) -> set[int]:
    parent, children, names = structural_tree(nodes)
    keep: set[int] = set()
    roots = [i for i, p in parent.items() if p is None]
    for p in pivots:
        stack = [p]
        while stack:
            x = stack.pop()
            keep.add(x)
            stack.extend(children[x])
        a = parent[p]
        while a is not None:
            keep.add(a)
            a = parent[a]
        sibs = roots if parent[p] is None else children[parent[p]]
        keep.update(s for s in sibs if names[s])
    return keep
