"""Hypothesis strategies for CDP accessibility-tree payloads.

Trees are drawn as parent pointers over nodes 1..n, so every shape occurs: tables inside
list items, options outside menus, links inside text, runs of identical buttons."""

from __future__ import annotations

from hypothesis import strategies as st

ROLES = [
    "generic",
    "none",
    "StaticText",
    "StaticText",
    "StaticText",
    "link",
    "button",
    "textbox",
    "combobox",
    "checkbox",
    "radio",
    "heading",
    "paragraph",
    "list",
    "listitem",
    "ListMarker",
    "table",
    "row",
    "cell",
    "columnheader",
    "rowheader",
    "gridcell",
    "LayoutTable",
    "LayoutTableRow",
    "LayoutTableCell",
    "menu",
    "menuitem",
    "listbox",
    "option",
    "MenuListPopup",
    "DescriptionList",
    "term",
    "definition",
    "image",
    "img",
    "strong",
    "emphasis",
    "code",
    "time",
    "navigation",
    "main",
    "LabelText",
    "Iframe",
    "group",
    "InlineTextBox",
    "LineBreak",
    "rowgroup",
    "searchbox",
    "tab",
    "slider",
]
# No backslashes or control characters: the tests undo repr escapes by simple replacement.
ALPHABET = "abcXYZ019 '\"|$#%★[]:.-•\u00a0\t中é"
NAMES = st.one_of(
    st.just(""),
    st.just("Add to Cart"),
    st.just("• "),
    st.just("3. "),
    st.text(alphabet=ALPHABET, max_size=14),
)
# What Chromium gives StaticText: the page's own whitespace inside names, whitespace-only
# pieces, and line breaks where the page renders them (preformatted text).
TEXT_NAMES = st.one_of(
    NAMES,
    st.sampled_from([" ", "\n", "$", "12", ".99", "(", ")", "re", ".", "compile"]),
    st.lists(st.text(alphabet="ab ({:=}x", max_size=8), min_size=2, max_size=4).map("\n".join),
    st.builds(
        lambda a, b: f"  {a}\n    {b}\n",
        st.text(alphabet="abc()=", min_size=1, max_size=6),
        st.text(alphabet="xyz.;", min_size=1, max_size=6),
    ),
)
CONTENT_NAMED = {
    "cell",
    "gridcell",
    "columnheader",
    "rowheader",
    "LayoutTableCell",
    "term",
    "definition",
    "heading",
    "link",
    "button",
    "listitem",
    "option",
    "menuitem",
}
PROP_VALUES = {
    "focusable": st.booleans(),
    "url": st.just("https://example.test/a?b=1"),
    "checked": st.sampled_from(["true", "false", "mixed"]),
    "selected": st.booleans(),
    "expanded": st.booleans(),
    "level": st.integers(1, 6),
    "required": st.booleans(),
    "disabled": st.booleans(),
    "valuetext": st.text(alphabet=ALPHABET, max_size=5),
    "valuemin": st.floats(-1e6, 1e6, allow_nan=False, width=32),
    "live": st.just("polite"),
}


@st.composite
def node_props(draw) -> list[dict]:
    names = draw(st.lists(st.sampled_from(sorted(PROP_VALUES)), max_size=3, unique=True))
    return [{"name": n, "value": {"type": "x", "value": draw(PROP_VALUES[n])}} for n in names]


def _contents_text(nodes: list[dict], i: int) -> str:
    parts: list[str] = []
    stack = [(i, True)]
    while stack:
        k, first = stack.pop()
        node = nodes[k]
        if node["role"]["value"] in ("InlineTextBox", "LineBreak"):
            continue
        if node["role"]["value"] == "StaticText" and not node.get("ignored"):
            parts.append(node["name"]["value"])
            continue
        if k != i:
            parts.append(" ")
        stack.extend((int(c) - 1, False) for c in reversed(node["childIds"]))
    return " ".join("".join(parts).split())


@st.composite
def clickable_ids(draw, nodes: list[dict]) -> list[int]:
    """Backend ids of some elements that respond to clicks (any role), as DOMSnapshot reports."""
    backend = sorted(n["backendDOMNodeId"] for n in nodes if "backendDOMNodeId" in n)
    return draw(st.lists(st.sampled_from(backend), max_size=6, unique=True)) if backend else []


@st.composite
def ax_payloads(draw, max_nodes: int = 40) -> list[dict]:
    n = draw(st.integers(1, max_nodes))
    parents = [None] + [draw(st.integers(0, i - 1)) for i in range(1, n)]
    nodes = []
    for i in range(n):
        role = "RootWebArea" if i == 0 else draw(st.sampled_from(ROLES))
        node = {
            "nodeId": str(i + 1),
            "ignored": draw(st.booleans()) if i and draw(st.integers(0, 9)) == 0 else False,
            "role": {"type": "role", "value": role},
            "name": {"type": "computedString", "value": draw(TEXT_NAMES if role == "StaticText" else NAMES)},
            "properties": draw(node_props()),
            "childIds": [],
        }
        if i == 0 or draw(st.integers(0, 19)) != 0:
            node["backendDOMNodeId"] = i + 1000
        if role in ("textbox", "combobox") and draw(st.booleans()):
            node["value"] = {"type": "string", "value": draw(NAMES)}
        if role == "slider":
            node["value"] = {"type": "number", "value": draw(st.integers(0, 100))}
        if i:
            node["parentId"] = str(parents[i] + 1)
        nodes.append(node)
    for i in range(1, n):
        nodes[parents[i]]["childIds"].append(str(i + 1))
    # Some names computed from contents, as Chromium does: the descendants' texts, sibling
    # texts glued, a space at element boundaries, whitespace collapsed.
    for i in reversed(range(n)):
        role = nodes[i]["role"]["value"]
        if role in CONTENT_NAMED and nodes[i]["childIds"] and draw(st.integers(0, 2)) == 0:
            text = _contents_text(nodes, i)
            if text:
                nodes[i]["name"] = {
                    "type": "computedString",
                    "value": text,
                    "sources": [
                        {"type": "attribute", "attribute": "aria-label"},
                        {"type": "contents", "value": {"type": "computedString", "value": text}},
                    ],
                }
    # Shuffle the order of entries (CDP order is not guaranteed) but keep the root first.
    rest = nodes[1:]
    order = draw(st.permutations(range(len(rest))))
    return [nodes[0]] + [rest[k] for k in order]


# -- live DOMs: the parts a capture must read right -----------------------------------------------

_WORDS = st.sampled_from(["alpha", "beta", "Gamma", "delta 12", "échelle", "[3]", "x  y", "NEW"])
_HIDING = st.sampled_from(
    ["", "", "", " hidden", ' style="display:none"', ' style="visibility:hidden"', ' aria-hidden="true"', " inert"]
)


@st.composite
def dom_fragments(draw, depth: int = 0) -> str:
    """An HTML fragment of the kinds of things pages hold: nested blocks and inline runs,
    hidden parts, labelled fields, buttons and links, lists, tables, details, open shadow
    roots (a template a script attaches), every kind hidden or not."""
    kinds = ["text", "button", "link", "field", "select", "checkbox"]
    if depth < 3:
        kinds += ["div", "span", "list", "table", "details", "labelled", "shadow"]
    kind = draw(st.sampled_from(kinds))
    hide = draw(_HIDING)
    word = draw(_WORDS)
    inner = lambda: "".join(draw(st.lists(dom_fragments(depth + 1), min_size=1, max_size=3)))  # noqa: E731
    if kind == "text":
        return word + " "
    if kind == "button":
        return f"<button{hide}>{word}</button>"
    if kind == "link":
        return f'<a href="#{word}"{hide}>{word}</a>'
    if kind == "field":
        return f'<input{hide} aria-label="{word}" value="{draw(_WORDS)}">'
    if kind == "select":
        return f"<select{hide}><option>{word}</option><option selected>{draw(_WORDS)}</option></select>"
    if kind == "checkbox":
        return f'<label{hide}><input type="checkbox"> {word}</label>'
    if kind == "div":
        return f"<div{hide}>{inner()}</div>"
    if kind == "span":
        return f"<span{hide}>{inner()}</span>"
    if kind == "list":
        return f"<ul{hide}><li>{inner()}</li><li>{word}</li></ul>"
    if kind == "table":
        return f"<table{hide}><tr><th>{word}</th></tr><tr><td>{inner()}</td></tr></table>"
    if kind == "details":
        return f"<details{hide}><summary>{word}</summary>{inner()}</details>"
    if kind == "labelled":
        return f'<span id="l-{depth}">{word}</span><button aria-labelledby="l-{depth}"{hide}>x</button>'
    return f'<div class="host"{hide}><template shadowrootmode="open">{inner()}<slot></slot></template>{word}</div>'


def observation_lines(max_id: int, name: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """Lines as observations print them: tabs for depth, a role, maybe an id (1..``max_id``), a
    name drawn from ``name``."""
    return st.builds(
        lambda depth, role, ident, text: (
            "\t" * depth + role + (f" [{ident}]" if ident is not None else "") + f" '{text}'"
        ),
        st.integers(0, 4),
        st.sampled_from(["text", "button", "link", "textbox", "heading"]),
        st.one_of(st.none(), st.integers(1, max_id)),
        name,
    )
