"""Each rule of spec section 3 on a small hand-built tree, with the exact expected text."""

from __future__ import annotations

import itertools

import pytest

import pagelens


def build(spec, clickable=None) -> pagelens.AXTree:
    """spec = (role, name, [children], {props}, value, {how}) with trailing parts optional;
    `how` may say "contents" (the name was computed from the node's contents), "ignored",
    or "no_dom" (no backendDOMNodeId, as CSS generated content)."""
    counter = itertools.count(1)
    nodes = []

    def visit(s):
        role, name, *rest = s
        children = rest[0] if rest else []
        props = rest[1] if len(rest) > 1 else {}
        value = rest[2] if len(rest) > 2 else None
        how = rest[3] if len(rest) > 3 else {}
        i = next(counter)
        n = {
            "nodeId": str(i),
            "ignored": bool(how.get("ignored")),
            "role": {"type": "role", "value": role},
            "name": {"type": "computedString", "value": name},
            "properties": [{"name": k, "value": {"type": "x", "value": v}} for k, v in props.items()],
            "backendDOMNodeId": 100 + i,
        }
        if how.get("contents") or role == "StaticText":
            n["name"]["sources"] = [
                {"type": "attribute", "attribute": "aria-label"},
                {"type": "contents", "value": {"type": "computedString", "value": name}},
            ]
        if how.get("no_dom"):
            del n["backendDOMNodeId"]
        if value is not None:
            n["value"] = {"type": "string", "value": value}
        nodes.append(n)
        n["childIds"] = [str(visit(c)) for c in children]
        return i

    visit(spec)
    return pagelens.AXTree.from_cdp({"nodes": nodes}, clickable=clickable)


C = {"contents": True}  # name computed from contents


def occam(spec) -> str:
    return build(spec).render().text


def test_unnamed_node_takes_its_only_text():
    assert occam(("RootWebArea", "P", [("button", "", [("StaticText", "Search")])])) == (
        "RootWebArea 'P'\n\tbutton [2] 'Search'"
    )


def test_text_inside_parent_name_is_dropped_targets_never_are():
    tree = (
        "RootWebArea",
        "P",
        [
            ("link", "Home", [("StaticText", "Home")]),
            ("button", "Add to Cart"),
            ("button", "Add to Cart"),
            ("button", "Add to Cart"),
        ],
    )
    assert occam(tree) == (
        "RootWebArea 'P'\n\tlink [2] 'Home'\n\tbutton [4] 'Add to Cart'\n"
        "\tbutton [5] 'Add to Cart'\n\tbutton [6] 'Add to Cart'"
    )


def test_inline_runs_join_until_a_link():
    # Chromium's names carry the page's own whitespace: pieces are joined as given.
    tree = (
        "RootWebArea",
        "P",
        [
            (
                "paragraph",
                "",
                [
                    ("StaticText", "Price: "),
                    ("strong", "", [("StaticText", "$365.42")]),
                    ("StaticText", " today "),
                    ("link", "more", [("StaticText", "more")]),
                    ("StaticText", " end"),
                ],
            ),
            ("paragraph", "", [("StaticText", "next paragraph")]),
        ],
    )
    assert occam(tree) == (
        "RootWebArea 'P'\n\ttext 'Price: $365.42 today'\n\tlink [7] 'more'\n\ttext 'end'\n\ttext 'next paragraph'"
    )


def test_pieces_without_whitespace_are_joined_verbatim():
    tree = (
        "RootWebArea",
        "P",
        [
            (
                "paragraph",
                "",
                [
                    ("StaticText", "$"),
                    ("StaticText", "12"),
                    ("StaticText", ".99"),
                    ("StaticText", " at "),
                    ("code", "", [("StaticText", "re")]),
                    ("StaticText", "."),
                    ("emphasis", "", [("StaticText", "compile")]),
                    ("StaticText", "("),
                    ("StaticText", " "),
                    ("StaticText", "x"),
                    ("StaticText", ")"),
                ],
            )
        ],
    )
    assert occam(tree) == "RootWebArea 'P'\n\ttext '$12.99 at re.compile( x)'"


def test_identical_sibling_texts_kept_once():
    tree = (
        "RootWebArea",
        "P",
        [
            (
                "generic",
                "",
                [
                    ("StaticText", "·"),
                    ("link", "a"),
                    ("StaticText", "·"),
                    ("link", "b"),
                ],
            )
        ],
    )
    assert occam(tree) == "RootWebArea 'P'\n\ttext '·'\n\tlink [4] 'a'\n\tlink [6] 'b'"


def test_table_becomes_markdown_with_ids_inline():
    tree = (
        "RootWebArea",
        "P",
        [
            (
                "table",
                "",
                [
                    (
                        "row",
                        "",
                        [
                            ("columnheader", "Order", [("StaticText", "Order")]),
                            ("columnheader", "Total", [("StaticText", "Total")]),
                            ("columnheader", "Action"),
                        ],
                    ),
                    (
                        "row",
                        "",
                        [
                            ("cell", "000170", [("StaticText", "000170")]),
                            ("cell", "$365.42 | net", [("StaticText", "$365.42 | net")]),
                            ("cell", "View Order", [("link", "View Order", [("StaticText", "View Order")])]),
                        ],
                    ),
                ],
            )
        ],
    )
    assert occam(tree) == (
        "RootWebArea 'P'\n"
        "\t| Order | Total | Action |\n"
        "\t| --- | --- | --- |\n"
        "\t| 000170 | $365.42 \\| net | link [15] 'View Order' |"
    )


def test_key_value_table():
    tree = (
        "RootWebArea",
        "P",
        [
            (
                "table",
                "Specs",
                [
                    (
                        "row",
                        "",
                        [
                            ("rowheader", "Weight", [("StaticText", "Weight")]),
                            ("cell", "2 kg", [("StaticText", "2 kg")]),
                        ],
                    ),
                ],
            )
        ],
    )
    assert occam(tree) == "RootWebArea 'P'\n\ttable 'Specs'\n\t\t| Weight | 2 kg |"


def test_lists_become_markdown():
    tree = (
        "RootWebArea",
        "P",
        [
            (
                "list",
                "",
                [
                    ("listitem", "", [("ListMarker", "1. "), ("StaticText", "First")]),
                    ("listitem", "", [("ListMarker", "2. "), ("link", "Docs", [("StaticText", "Docs")])]),
                    (
                        "listitem",
                        "",
                        [
                            ("ListMarker", "3. "),
                            ("StaticText", "Third with"),
                            ("link", "a link"),
                            ("list", "", [("listitem", "", [("ListMarker", "◦ "), ("StaticText", "nested")])]),
                        ],
                    ),
                ],
            )
        ],
    )
    assert occam(tree) == (
        "RootWebArea 'P'\n\t1. First\n\t2. link [8] 'Docs'\n\t3. Third with link [13] 'a link'\n\t\t- nested"
    )


def test_options_on_one_line():
    tree = (
        "RootWebArea",
        "P",
        [
            (
                "combobox",
                "Sort by",
                [
                    (
                        "MenuListPopup",
                        "",
                        [
                            ("option", "Relevance", [], {"selected": True}),
                            ("option", "Price", [], {"selected": False}),
                        ],
                    )
                ],
                {"expanded": False, "hasPopup": "menu"},
                "Relevance",
            )
        ],
    )
    assert occam(tree) == (
        "RootWebArea 'P'\n"
        "\tcombobox [2] 'Sort by' value: 'Relevance' [expanded: false] options: "
        "[4] 'Relevance' (selected); [5] 'Price'"
    )


def test_description_list():
    tree = (
        "RootWebArea",
        "P",
        [
            (
                "DescriptionList",
                "",
                [
                    ("term", "", [("StaticText", "Color")]),
                    ("definition", "", [("StaticText", "Red")]),
                    ("term", "", [("StaticText", "Size:")]),
                    ("definition", "", [("StaticText", "M")]),
                    ("definition", "", [("StaticText", "L")]),
                ],
            )
        ],
    )
    assert occam(tree) == "RootWebArea 'P'\n\tColor: Red\n\tSize: M; L"


def test_images_properties_values_and_characters():
    tree = (
        "RootWebArea",
        "P",
        [
            ("image", ""),
            ("image", "Logo"),
            ("textbox", "Email", [], {"required": False, "focusable": True, "focused": True}, "a@b.c"),
            ("checkbox", "Agree", [], {"checked": "true", "required": True}),
            ("link", "Order #12", [], {"url": "https://x.test/12"}),
            ("StaticText", "50%\u00a0off\u00a0\u00a0★★★★☆"),
        ],
    )
    assert occam(tree) == (
        "RootWebArea 'P'\n"
        "\timage [3] 'Logo'\n"
        "\ttextbox [4] 'Email' value: 'a@b.c'\n"
        "\tcheckbox [5] 'Agree' [checked: true] [required: true]\n"
        "\tlink [6] 'Order #12'\n"
        "\ttext '50% off ★★★★☆'"
    )
    shown = build(tree).render(show_urls=True).text
    assert "link [6] 'Order #12' [url: https://x.test/12]" in shown


def test_webarena_form():
    tree = (
        "RootWebArea",
        "P",
        [
            ("generic", "", [("link", "It's", [("StaticText", "It's")], {"focusable": True, "url": "u"})]),
            ("listitem", "", [], {"level": 1}),
        ],
    )
    assert build(tree).render("webarena").text == (
        "RootWebArea [1] 'P'\n\tlink [3] \"It's\" [url: u]\n\t\tStaticText [4] \"It's\""
    )


def test_node_lookup_maps_back_to_the_dom():
    tree = build(("RootWebArea", "P", [("combobox", "Pick", [], {"expanded": False}, "B")]))
    n = tree.node(2)
    assert (n.role, n.name, n.value, n.backend_dom_node_id) == ("combobox", "Pick", "B", 102)
    assert n.properties == {"expanded": False}
    assert n.parent == 1 and tree.node(1).children == [2]
    assert 2 in tree and 9 not in tree and len(tree) == 2


def test_frames_hang_under_their_iframe():
    main = {
        "nodes": [
            {
                "nodeId": "1",
                "role": {"value": "RootWebArea"},
                "name": {"value": "Outer"},
                "childIds": ["2"],
                "backendDOMNodeId": 1,
                "frameId": "MAIN",
            },
            {"nodeId": "2", "role": {"value": "Iframe"}, "name": {"value": ""}, "childIds": [], "backendDOMNodeId": 2},
        ]
    }
    inner = {
        "nodes": [
            {
                "nodeId": "1",
                "role": {"value": "RootWebArea"},
                "name": {"value": "Inner"},
                "childIds": ["7"],
                "backendDOMNodeId": 1,
                "frameId": "CHILD",
            },
            {
                "nodeId": "7",
                "role": {"value": "button"},
                "name": {"value": "Pay"},
                "childIds": [],
                "backendDOMNodeId": 7,
            },
        ]
    }
    tree = pagelens.AXTree.from_cdp(main, frames=[(2, inner)])
    assert tree.render().text == "RootWebArea 'Outer'\n\tIframe [2]\n\t\tRootWebArea 'Inner'\n\t\t\tbutton [7] 'Pay'"
    assert tree.frames == ["MAIN", "CHILD"]
    # The inner root's nodeId 1 was taken by the main frame: it gets a fresh id.
    inner_root = tree.node(2).children[0]
    assert inner_root == 8 and tree.node(inner_root).frame_id == "CHILD"
    assert tree.node(7).frame_id == "CHILD" and tree.node(7).backend_dom_node_id == 7
    with pytest.raises(pagelens.AXTreeError, match="backendDOMNodeId 99"):
        pagelens.AXTree.from_cdp(main, frames=[{"owner": 99, "payload": inner}])


def test_subtree_replays_pivots_without_ids():
    tree = build(
        (
            "RootWebArea",
            "Shop",
            [
                ("navigation", "Main", [("link", "Home"), ("link", "Cart")]),
                ("search", "", [("combobox", "Search", [], {"required": False}), ("button", "Go"), ("button", "")]),
                ("main", "", [("StaticText", "Lots of other text")]),
            ],
        )
    )
    obs = tree.subtree([6])
    assert obs.text == "RootWebArea 'Shop'\n\tsearch\n\t\tcombobox 'Search'\n\t\tbutton 'Go'"
    assert obs.ids == [] and sorted(obs.included_ids) == [1, 5, 6, 7]
    capped = tree.subtree([1], max_nodes=2)
    assert capped.truncated and "over the cap of 2 nodes" in capped.text


def test_names_from_contents_said_once():
    tree = (
        "RootWebArea",
        "P",
        [
            (
                "table",
                "",
                [
                    (
                        "row",
                        "",
                        [
                            (
                                "cell",
                                "if x is false, then y, else x",
                                [
                                    ("StaticText", "if "),
                                    ("code", "", [("StaticText", "x")]),
                                    ("StaticText", " is false, then "),
                                    ("code", "", [("StaticText", "y")]),
                                    ("StaticText", ", else "),
                                    ("code", "", [("StaticText", "x")]),
                                ],
                                {},
                                None,
                                C,
                            ),
                            (
                                "cell",
                                "Docs here",
                                [("link", "Docs", [("StaticText", "Docs")], {}, None, C), ("StaticText", " here")],
                                {},
                                None,
                                C,
                            ),
                        ],
                    )
                ],
            ),
            (
                "heading",
                "Intro edit",
                [("StaticText", "Intro "), ("link", "edit", [("StaticText", "edit")], {}, None, C)],
                {},
                None,
                C,
            ),
            ("heading", "Plain title", [("StaticText", "Plain title")], {}, None, C),
        ],
    )
    assert occam(tree) == (
        "RootWebArea 'P'\n"
        "\t| if x is false, then y, else x | link [15] 'Docs' here |\n"
        "\theading\n\t\ttext 'Intro'\n\t\tlink [20] 'edit'\n"
        "\theading 'Plain title'"
    )


def test_a_name_with_unshown_contents_is_kept():
    # CSS generated content has no DOM node: the tree drops it, but Chromium counted it in
    # the cell's name, so the name is printed (the link inside still prints itself).
    tree = (
        "RootWebArea",
        "P",
        [
            (
                "table",
                "",
                [
                    (
                        "row",
                        "",
                        [
                            (
                                "cell",
                                "New: Docs",
                                [
                                    ("StaticText", "New: ", [], {}, None, {"no_dom": True}),
                                    ("link", "Docs", [("StaticText", "Docs")], {}, None, C),
                                ],
                                {},
                                None,
                                C,
                            ),
                        ],
                    )
                ],
            )
        ],
    )
    assert occam(tree) == "RootWebArea 'P'\n\t| New: Docs link [6] 'Docs' |"


def test_block_boundaries_are_spaced_inline_ones_are_not():
    tree = (
        "RootWebArea",
        "P",
        [
            (
                "table",
                "",
                [
                    (
                        "row",
                        "",
                        [
                            (
                                "cell",
                                "",
                                [
                                    ("generic", "", [("StaticText", "Patch Size")]),
                                    ("generic", "", [("StaticText", "(% vs original)")]),
                                ],
                            ),
                            (
                                "cell",
                                "",
                                [
                                    ("StaticText", "E="),
                                    ("emphasis", "", [("StaticText", "mc")]),
                                    ("superscript", "", [("StaticText", "2")]),
                                ],
                            ),
                        ],
                    )
                ],
            ),
            (
                "paragraph",
                "",
                [
                    ("generic", "", [("StaticText", "Selling Like Crazy")], {}, None, {"ignored": True}),
                    ("generic", "", [("StaticText", "Lumify X9")], {}, None, {"ignored": True}),
                    ("StaticText", "one"),
                    ("LineBreak", "\n"),
                    ("StaticText", "two"),
                ],
            ),
        ],
    )
    assert occam(tree) == (
        "RootWebArea 'P'\n\t| Patch Size (% vs original) | E=mc2 |\n\ttext 'Selling Like Crazy Lumify X9 one two'"
    )


def test_preformatted_text_is_a_code_block_with_its_links_after():
    code = (
        "generic",
        "",
        [
            ("StaticText", "def f(x):\n    return "),
            ("link", "compile", [("StaticText", "compile")], {}, None, C),
            ("StaticText", "(x)\n\n# ```done```\n"),
        ],
    )
    tree = ("RootWebArea", "P", [("StaticText", "Example:"), code, ("StaticText", "After.")])
    assert occam(tree) == (
        "RootWebArea 'P'\n"
        "\ttext 'Example:'\n"
        "\t````\n\tdef f(x):\n\t    return compile(x)\n\t\n\t# ```done```\n\t````\n"
        "\tlink [5] 'compile'\n"
        "\ttext 'After.'"
    )
    # One line of <pre> reads as plain text.
    assert occam(("RootWebArea", "P", [("generic", "", [("StaticText", "pip install x\n")])])) == (
        "RootWebArea 'P'\n\ttext 'pip install x'"
    )


def test_a_link_inside_a_list_marker_is_kept():
    tree = (
        "RootWebArea",
        "P",
        [
            (
                "list",
                "",
                [
                    (
                        "listitem",
                        "",
                        [
                            ("ListMarker", "1. ", [("link", "1", [("StaticText", "1")], {}, None, C)]),
                            ("StaticText", " First"),
                        ],
                    )
                ],
            )
        ],
    )
    assert occam(tree) == "RootWebArea 'P'\n\t1. link [5] '1' First"


def test_script_clickable_elements_get_ids_and_hints():
    tree = (
        "RootWebArea",
        "P",
        [
            (
                "paragraph",
                "",
                [
                    ("StaticText", "Pick: "),
                    ("generic", "", [("StaticText", "In")]),
                    ("StaticText", " or "),
                    ("generic", "", [("StaticText", "Out")]),
                ],
            ),
            (
                "list",
                "",
                [
                    ("listitem", "", [("ListMarker", "• "), ("StaticText", "Folder A")]),
                    ("listitem", "", [("ListMarker", "• "), ("StaticText", "Folder B")]),
                ],
            ),
            ("generic", ""),
            ("image", ""),
            ("image", ""),
            ("table", "", [("row", "", [("cell", "", [("StaticText", "Row one")])])]),
        ],
    )
    # Backend ids are 100 + the node's position in the spec (depth first).
    clickable = {104: None, 107: None, 110: None, 116: "icon trash", 117: "star-outline", 118: None, 120: None}
    t = build(tree, clickable=clickable)
    assert t.render().text == (
        "RootWebArea 'P'\n"
        "\ttext 'Pick:'\n\tclickable [4] 'In'\n\ttext 'or'\n\tclickable [7] 'Out'\n"
        "\t- listitem [10] 'Folder A'\n\t- Folder B\n"
        "\tclickable [16] hint: 'icon trash'\n\timage [17] hint: 'star-outline'\n\timage [18]\n"
        "\trow [20] | Row one |"
    )
    assert t.node(16).clickable and t.node(16).hint == "icon trash" and not t.node(3).clickable
    # The published agents' form is unchanged.
    assert t.render("webarena").text == build(tree).render("webarena").text
    # History replay shows no ids but keeps the hint.
    assert t.subtree([16]).text.endswith("clickable hint: 'icon trash'")


def test_a_clickable_elements_words_in_a_box_of_their_own_are_its_name():
    """`<span onclick><div class=icon></div><div>Reply</div></span>`: the words are all the target
    says, in a block of their own (a blank container, beside one that prints nothing): they are
    its name, as inline words would be. Two blocks of words stay lines of their own below it, so
    do words beside a target inside, and a clickable list's one item is still its item."""
    tree = (
        "RootWebArea",
        "P",
        [
            ("generic", "", [("generic", ""), ("generic", "", [("generic", "", [("StaticText", "Reply")])])]),
            (
                "generic",
                "",
                [("generic", "", [("StaticText", "Line one")]), ("generic", "", [("StaticText", "Line two")])],
            ),
            ("generic", "", [("generic", "", [("StaticText", "Open"), ("button", "Share")])]),
            ("list", "", [("listitem", "", [("generic", "", [("StaticText", "Egypt")])])]),
        ],
    )
    t = build(tree, clickable={102: None, 107: None, 112: None, 116: None})
    assert t.render().text == (
        "RootWebArea 'P'\n"
        "\tclickable [2] 'Reply'\n"
        "\tclickable [7]\n\t\ttext 'Line one'\n\t\ttext 'Line two'\n"
        "\tclickable [12]\n\t\ttext 'Open'\n\t\tbutton [15] 'Share'\n"
        "\tlist [16]\n\t\t- Egypt"
    ), t.render().text


def _nested(depth: int, roles: tuple[str, ...], names: tuple[str, ...]) -> list[dict]:
    """A chain RootWebArea > roles[0] > roles[1] > ... > StaticText 'end' (built without recursion)."""
    chain = [("RootWebArea", "P")] + [(roles[k % len(roles)], names[k % len(names)]) for k in range(depth)]
    chain.append(("StaticText", "end"))
    nodes = []
    for i, (role, name) in enumerate(chain, start=1):
        node = {
            "nodeId": str(i),
            "role": {"type": "role", "value": role},
            "name": {"type": "computedString", "value": name},
            "backendDOMNodeId": 100 + i,
            "childIds": [str(i + 1)] if i < len(chain) else [],
        }
        if i > 1:
            node["parentId"] = str(i - 1)
        nodes.append(node)
    return nodes


@pytest.mark.parametrize(
    "roles, names, clickable_every",
    [
        (("StaticText",), ("",), 2),  # the hardening campaign's page: every other text clickable
        (("StaticText",), ("",), 3),
        (("generic", "StaticText"), ("", "x "), 2),
        (("heading", "generic"), ("Title", ""), 0),  # nested named nodes, each asking what its subtree says
        (("cell", "link"), ("a b c", ""), 2),
    ],
)
def test_deep_nesting_renders_in_linear_work(roles, names, clickable_every):
    """Hardening: a page nesting text 3,000 levels deep, clickable or not, renders at once (the
    renderer used to collect each nested target's subtree twice per level: 60 levels took hours).
    Every clickable node is printed once, and the text at the bottom is on the page."""
    depth = 3000
    nodes = _nested(depth, roles, names)
    clickable = [100 + i for i in range(2, depth + 2) if clickable_every and i % clickable_every == 0]
    tree = pagelens.AXTree.from_cdp({"nodes": nodes}, clickable=clickable, max_depth=depth + 10)
    obs = tree.render()
    assert "end" in obs.text
    assert len(obs.ids) == len(set(obs.ids))
    assert set(tree.clickable_ids) <= set(obs.ids)


def test_a_clickable_option_popup_keeps_its_id_inside_a_combobox():
    """Hardening: a combobox prints its popup's options on its own line, unless the popup is
    itself an action target (clickable): then the popup keeps its line and id."""
    spec = ("RootWebArea", "P", [("combobox", "Size", [("MenuListPopup", "", [("option", "S"), ("option", "M")])])])
    assert build(spec).render().text == "RootWebArea 'P'\n\tcombobox [2] 'Size' options: [4] 'S'; [5] 'M'"
    assert build(spec, clickable=[103]).render().text == (
        "RootWebArea 'P'\n\tcombobox [2] 'Size'\n\t\tMenuListPopup [3] options: [4] 'S'; [5] 'M'"
    )
