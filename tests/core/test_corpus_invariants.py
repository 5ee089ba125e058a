"""Spec section 5's invariants, held on every page of the real corpus."""

from __future__ import annotations

import random

import pagelens
from support.corpus import PAGES, ax_bytes, ax_nodes
from support.reference import (
    INTERACTIVE,
    is_bullet,
    junction_joined,
    name_from_contents,
    normalize,
    pivotal_expected,
    squashed,
    structural_tree,
    text_junctions,
    text_present,
    unescape_occam,
    webarena_kept,
    webarena_text,
)


def test_corpus_is_complete():
    assert len(PAGES) == 100


def test_webarena_form_matches_the_reference(page):
    tree = pagelens.AXTree.from_cdp(ax_bytes(page))
    obs = tree.render("webarena")
    expected = webarena_text(list(ax_nodes(page)))
    assert obs.text == expected
    assert obs.ids == [k.element_id for k in webarena_kept(list(ax_nodes(page)))]


def test_nothing_lost(page):
    tree = pagelens.AXTree.from_cdp(ax_bytes(page))
    occam = tree.render().text
    plain = unescape_occam(occam)
    _, children, _ = structural_tree(list(ax_nodes(page)))
    missing = []
    for k in webarena_kept(list(ax_nodes(page))):
        name = normalize((k.node.get("name") or {}).get("value") or "")
        role = k.node["role"]["value"]
        if not name or (role == "ListMarker" and is_bullet(name)):
            continue
        # A name computed from the node's contents is the text of its descendants, each
        # checked on its own (the name may be printed, or the contents, never both).
        if role != "StaticText" and name_from_contents(k.node) and children.get(k.element_id):
            continue
        if not text_present(occam, plain, name):
            missing.append((k.element_id, role, name))
    assert not missing, missing[:10]


def test_text_junctions_joined(page):
    """Two sibling texts that touch on the page touch in the occam form (spec 3.3)."""
    text = pagelens.AXTree.from_cdp(ax_bytes(page)).render().text
    split = [(a[-20:], b[:20]) for a, b in text_junctions(list(ax_nodes(page))) if not junction_joined(text, a, b)]
    assert not split, split[:10]


CELLS_AND_TERMS = {
    "cell",
    "gridcell",
    "columnheader",
    "rowheader",
    "LayoutTableCell",
    "term",
    "definition",
    "DescriptionListTerm",
    "DescriptionListDetail",
}


def test_no_cell_or_term_said_twice(page):
    """A cell or term whose name Chromium computed from its contents prints that text once."""
    text = squashed(unescape_occam(pagelens.AXTree.from_cdp(ax_bytes(page)).render().text))
    twice = []
    for n in ax_nodes(page):
        if n.get("ignored") or n["role"]["value"] not in CELLS_AND_TERMS or not name_from_contents(n):
            continue
        name = squashed(n["name"]["value"])
        if len(name) >= 3 and name + name in text:
            twice.append((n["nodeId"], name[:40]))
    assert not twice, twice[:10]


def test_every_action_target_kept_once(page):
    nodes = list(ax_nodes(page))
    tree = pagelens.AXTree.from_cdp(ax_bytes(page))
    obs = tree.render()
    assert len(obs.ids) == len(set(obs.ids)), "an id is shown twice"
    shown = set(obs.ids)
    for k in webarena_kept(nodes):
        if k.node["role"]["value"] not in INTERACTIVE:
            continue
        assert k.element_id in shown, k.line
        assert f"[{k.element_id}]" in obs.text
        assert tree.node(k.element_id).backend_dom_node_id == k.node["backendDOMNodeId"]
    for i in obs.ids:
        assert f"[{i}]" in obs.text


def test_deterministic(page):
    a = pagelens.AXTree.from_cdp(ax_bytes(page))
    b = pagelens.AXTree.from_cdp(bytes(ax_bytes(page)))
    for mode in ("occam", "webarena"):
        assert a.render(mode).text == b.render(mode).text == a.render(mode).text


def test_occam_no_longer_than_webarena(page):
    tree = pagelens.AXTree.from_cdp(ax_bytes(page))
    assert tree.render().token_count <= tree.render("webarena").token_count


def test_occam_shorter_in_total():
    occam = webarena = 0
    for page in PAGES:
        tree = pagelens.AXTree.from_cdp(ax_bytes(page))
        occam += tree.render().token_count
        webarena += tree.render("webarena").token_count
    assert occam < webarena


def test_pivotal_subtree(page):
    nodes = list(ax_nodes(page))
    parent, children, names = structural_tree(nodes)
    tree = pagelens.AXTree.from_cdp(ax_bytes(page))
    rng = random.Random(page)
    candidates = sorted(parent)
    for size in (1, 3):
        pivots = rng.sample(candidates, min(size, len(candidates)))
        obs = tree.subtree(pivots + [987654321])
        assert obs.unknown_ids == [987654321]
        assert obs.ids == []
        assert set(obs.included_ids) == pivotal_expected(nodes, pivots)
        plain = unescape_occam(obs.text)
        by_id = {int(n["nodeId"]): n for n in nodes}
        for p in pivots:
            role = tree.node(p).role
            said_by_contents = role != "StaticText" and name_from_contents(by_id[p]) and children[p]
            if names[p] and not (role == "ListMarker" and is_bullet(names[p])) and not said_by_contents:
                assert text_present(obs.text, plain, names[p]), (p, names[p])
        # No element ids in history replay.
        for p in pivots:
            if tree.node(p).role in INTERACTIVE:
                assert f"[{p}]" not in obs.text or f"[{p}]" in names[p]


def test_pivotal_subtree_cap(page):
    tree = pagelens.AXTree.from_cdp(ax_bytes(page))
    root = tree.roots[0]
    obs = tree.subtree([root], max_nodes=3)
    if len(obs.included_ids) > 3:
        assert obs.truncated and "over the cap" in obs.text
