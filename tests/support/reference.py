"""An independent, deliberately plain Python reading of spec section 2, used to check the
Rust renderer line for line, and the sets the spec's invariants speak about."""

from __future__ import annotations

import re
from dataclasses import dataclass

DROP_WHEN_BLANK = {
    "generic",
    "none",
    "img",
    "list",
    "strong",
    "paragraph",
    "banner",
    "navigation",
    "Section",
    "LabelText",
    "Legend",
    "listitem",
}
HIDDEN_PROPS = {"focusable", "editable", "readonly", "level", "settable", "multiline", "invalid"}
SKIPPED_ROLES = {"InlineTextBox", "LineBreak"}
INTERACTIVE = {
    "link",
    "button",
    "textbox",
    "searchbox",
    "combobox",
    "checkbox",
    "radio",
    "switch",
    "slider",
    "spinbutton",
    "tab",
    "menuitem",
    "option",
    "treeitem",
    "Date",
    "DateTime",
    "InputTime",
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


# Spec section 3, "Page text is never an id": pagelens' own brackets (written here as OWN
# while a line is composed) stay; a `[` the page wrote that could read as an id gets a
# backslash. White space as Unicode's White_Space property (Rust's char::is_whitespace).
OWN = "\ufdd0"
WHITE = "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
_READS_AS_ID = re.compile(f"[{WHITE}]*\\*?[{WHITE}]*[^{WHITE}\\[\\]*{OWN}]{{1,64}}[{WHITE}]*\\]")


def seal(line: str) -> str:
    out = []
    for i, c in enumerate(line):
        if c == OWN:
            out.append("[")
        elif c == "[" and not (out and out[-1].endswith("\\")) and _READS_AS_ID.match(line, i + 1):
            out.append("\\[")
        else:
            out.append(c)
    return "".join(out)


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
                if "value" in (p.get("value") or {})
                and p["value"]["value"] is not None
                and not isinstance(p["value"]["value"], (dict, list))
                and p["name"] not in HIDDEN_PROPS
                and re.fullmatch(r"[A-Za-z0-9_-]{1,64}", p["name"])
            ]
            blank = not name.strip()
            dropped = (blank and not props and role in DROP_WHEN_BLANK) or (blank and role == "listitem")
            if not dropped:
                line = f"{role} {OWN}{int(n['nodeId'])}]"
                if name:
                    line += " " + repr(name)
                for k, v in props:
                    line += f" {OWN}{k}: {py_str(v)}]"
                out.append(Kept(n, int(n["nodeId"]), depth, seal(line)))
                child_depth = depth + 1
        for c in reversed(n.get("childIds", [])):
            stack.append((by_id[c], child_depth, skipped))
    return out


def name_from_contents(n: dict) -> bool:
    """The winning source of the node's name (the first with a value, not superseded) is
    its own contents (CDP ``name.sources``)."""
    for source in (n.get("name") or {}).get("sources") or []:
        if "value" in source and not source.get("superseded"):
            return source.get("type") == "contents"
    return False


def text_junctions(nodes: list[dict]) -> list[tuple[str, str]]:
    """Adjacent sibling StaticText nodes (one raw parent, next to each other in its
    ``childIds``, both shown) that touch with no whitespace between them: (left, right)."""
    by_id: dict[str, dict] = {}
    for n in nodes:
        by_id.setdefault(n["nodeId"], n)
    child_ids = {c for n in by_id.values() for c in n.get("childIds", [])}
    roots = [n for n in by_id.values() if n["nodeId"] not in child_ids]
    out: list[tuple[str, str]] = []
    stack = [(r, False) for r in roots]
    while stack:
        n, skipped = stack.pop()
        skipped = skipped or _role(n) in SKIPPED_ROLES
        kids = [by_id[c] for c in n.get("childIds", [])]
        if not skipped:
            # Texts as Chromium gives them: nothing but InlineTextBoxes below (otherwise an
            # element sits between the two texts and they do not touch).
            shown = [
                not k.get("ignored")
                and "backendDOMNodeId" in k
                and _role(k) == "StaticText"
                and all(_role(by_id[c]) in SKIPPED_ROLES for c in k.get("childIds", []))
                for k in kids
            ]
            for i in range(len(kids) - 1):
                left, right = _name(kids[i]), _name(kids[i + 1])
                if shown[i] and shown[i + 1] and left and right:
                    if not left[-1].isspace() and not right[0].isspace():
                        out.append((left, right))
        stack.extend((k, skipped) for k in kids)
    return out


def junction_joined(text: str, left: str, right: str) -> bool:
    """The characters on both sides of a junction appear joined in the occam text."""
    pair = left[-1] + right[0]
    return pair in text or pair in unescape_occam(text) or repr(pair)[1:-1] in text


def squashed(s: str) -> str:
    return "".join(s.split())


def webarena_text(nodes: list[dict]) -> str:
    return "\n".join("\t" * k.depth + k.line for k in webarena_kept(nodes))


def normalize(s: str) -> str:
    return " ".join(s.split())


BULLETS = set("•◦▪▫■□●○‣⁃–—-*· ")


def is_bullet(s: str) -> bool:
    return all(c in BULLETS for c in s)


def unescape_occam(text: str) -> str:
    """Undo the escapes the occam form applies (repr quotes, Markdown pipes, page brackets)."""
    return text.replace("\\[", "[").replace("\\'", "'").replace('\\"', '"').replace("\\|", "|").replace("\\\\", "\\")


def text_present(text: str, unescaped: str, s: str) -> bool:
    """``s`` (a normalised name) is in the occam text: as is, unquoted, or with the page's
    own spacing (code blocks keep it, so compare after normalising both)."""
    return (
        s in text
        or s in unescaped
        or repr(s)[1:-1] in text
        or s in normalize(unescaped)
        or s in normalize(text)  # code blocks are not quoted, so nothing to unescape
    )


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
