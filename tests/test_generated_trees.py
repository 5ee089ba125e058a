"""The spec's invariants on generated trees (hypothesis)."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pagelens
from reference import (
    INTERACTIVE,
    is_bullet,
    normalize,
    pivotal_expected,
    structural_tree,
    text_present,
    unescape_occam,
    webarena_kept,
    webarena_text,
)
from strategies import ax_payloads

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def tree_of(nodes):
    return pagelens.AXTree.from_cdp(json.dumps({"nodes": nodes}).encode())


@SETTINGS
@given(ax_payloads())
def test_webarena_matches_reference(nodes):
    assert tree_of(nodes).render("webarena").text == webarena_text(nodes)


@SETTINGS
@given(ax_payloads())
def test_nothing_lost_and_every_target_once(nodes):
    tree = tree_of(nodes)
    obs = tree.render()
    plain = unescape_occam(obs.text)
    assert len(obs.ids) == len(set(obs.ids))
    for k in webarena_kept(nodes):
        role = k.node["role"]["value"]
        name = normalize(k.node["name"]["value"])
        if name and not (role == "ListMarker" and is_bullet(name)):
            assert text_present(obs.text, plain, name), (k.line, obs.text)
        if role in INTERACTIVE:
            assert k.element_id in obs.ids, (k.line, obs.text)
            assert tree.node(k.element_id).backend_dom_node_id == k.node["backendDOMNodeId"]


@SETTINGS
@given(ax_payloads())
def test_deterministic_across_input_forms(nodes):
    as_bytes = tree_of(nodes)
    as_dict = pagelens.AXTree.from_cdp({"nodes": nodes})
    as_list = pagelens.AXTree.from_cdp(nodes)
    as_str = pagelens.AXTree.from_cdp(json.dumps({"nodes": nodes}))
    for mode in ("occam", "webarena"):
        texts = {t.render(mode).text for t in (as_bytes, as_dict, as_list, as_str)}
        assert len(texts) == 1


@SETTINGS
@given(ax_payloads(), st.data())
def test_pivotal_subtree(nodes, data):
    parent, _, names = structural_tree(nodes)
    if not parent:
        return
    pivots = data.draw(st.lists(st.sampled_from(sorted(parent)), min_size=1, max_size=3, unique=True))
    tree = tree_of(nodes)
    obs = tree.subtree(pivots)
    assert set(obs.included_ids) == pivotal_expected(nodes, pivots)
    assert obs.unknown_ids == [] and obs.ids == []
    plain = unescape_occam(obs.text)
    for p in pivots:
        role = tree.node(p).role
        if names[p] and not (role == "ListMarker" and is_bullet(names[p])):
            assert text_present(obs.text, plain, names[p])


@SETTINGS
@given(ax_payloads(max_nodes=60), st.integers(20, 400))
def test_token_budget(nodes, budget):
    tree = tree_of(nodes)
    whole = tree.render()
    cut = tree.render(max_tokens=budget)
    if whole.token_count <= budget:
        assert not cut.truncated and cut.text == whole.text
        return
    assert cut.truncated
    lines = cut.text.split("\n")
    assert lines[-1].startswith(f"[... {cut.omitted_lines} more lines")
    kept = lines[:-1]
    assert kept == whole.text.split("\n")[: len(kept)]
    if kept:
        assert cut.token_count <= budget
    assert cut.token_count == pagelens.count_tokens(cut.text)
    assert set(cut.ids) <= set(whole.ids)
