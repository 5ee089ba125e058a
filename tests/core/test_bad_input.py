"""Malformed payloads give a clear AXTreeError, never a crash, hang or RecursionError."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pagelens
from pagelens import AXTreeError


def node(i, role="generic", name="", children=(), **extra):
    n = {
        "nodeId": str(i),
        "ignored": False,
        "role": {"type": "role", "value": role},
        "name": {"type": "computedString", "value": name},
        "childIds": [str(c) for c in children],
        "backendDOMNodeId": i,
    }
    n.update(extra)
    return n


def payload(*nodes) -> bytes:
    return json.dumps({"nodes": list(nodes)}).encode()


@pytest.mark.parametrize(
    "data, message",
    [
        (b'{"nodes": [', "malformed accessibility-tree JSON"),
        (b"", "empty payload"),
        (b"42", "expected an object"),
        (b'{"other": []}', 'no "nodes" array'),
        (b'{"nodes": {"a": 1}}', "malformed"),
        (b'{"nodes": [{"nodeId": "1", "childIds": "2"}]}', "malformed"),
        (b'{"nodes": [{"role": {"value": "link"}}]}', 'position 0 has no "nodeId"'),
        (b'{"nodes": [{"nodeId": "1", "name": {"value": "\xff"}}]}', "not valid UTF-8"),
    ],
)
def test_malformed(data, message):
    with pytest.raises(AXTreeError, match=message):
        pagelens.AXTree.from_cdp(data)


def test_unknown_child_names_both_nodes():
    with pytest.raises(AXTreeError, match="node 1 lists unknown child id 99"):
        pagelens.AXTree.from_cdp(payload(node(1, children=[99])))


def test_cycle():
    with pytest.raises(AXTreeError, match="cycle"):
        pagelens.AXTree.from_cdp(payload(node(1, children=[2]), node(2, children=[1])))
    with pytest.raises(AXTreeError, match="cycle through node 1"):
        pagelens.AXTree.from_cdp(payload(node(1, children=[1])))


def test_two_parents():
    with pytest.raises(AXTreeError, match="node 3 is a child of both node 1 and node 2"):
        pagelens.AXTree.from_cdp(payload(node(1, children=[2, 3]), node(2, children=[3]), node(3)))


def test_duplicate_ids():
    with pytest.raises(AXTreeError, match="duplicate nodeId 2"):
        pagelens.AXTree.from_cdp(payload(node(1, children=[2]), node(2, "link", "a"), node(2, "link", "b")))
    # Chromium repeats some entries verbatim; those are harmless.
    tree = pagelens.AXTree.from_cdp(payload(node(1, children=[2]), node(2, "link", "a"), node(2, "link", "a")))
    assert len(tree) == 2


def test_a_lone_surrogate_in_a_str_payload_is_read_leniently():
    # A page's lone surrogate must not make the page unreadable: one U+FFFD for it.
    tree = pagelens.AXTree.from_cdp(
        '{"nodes": [{"nodeId": "1", "role": {"value": "button"}, "name": {"value": "\udcff"}, "backendDOMNodeId": 1}]}'
    )
    assert tree.render().text == "button [1] '\ufffd'"


def test_wrong_payload_type():
    with pytest.raises(TypeError, match="bytes, str, dict or list"):
        pagelens.AXTree.from_cdp(42)


def deep_chain(depth: int) -> bytes:
    # Generated as text: json.dumps would be fine too, but this keeps memory flat.
    parts = []
    for i in range(1, depth + 1):
        kids = f'["{i + 1}"]' if i < depth else "[]"
        role = "StaticText" if i == depth else "generic"
        name = "bottom" if i == depth else ""
        parts.append(
            f'{{"nodeId":"{i}","role":{{"value":"{role}"}},"name":{{"value":"{name}"}},'
            f'"childIds":{kids},"backendDOMNodeId":{i}}}'
        )
    return ('{"nodes":[' + ",".join(parts) + "]}").encode()


def test_100000_deep_chain():
    data = deep_chain(100_000)
    with pytest.raises(AXTreeError, match="deeper than 10000 levels at node 10002"):
        pagelens.AXTree.from_cdp(data)
    # A caller that allows the depth gets a tree; rendering is iterative.
    tree = pagelens.AXTree.from_cdp(data, max_depth=200_000)
    assert len(tree) == 100_000
    # 99,999 blank generics dissolve; the text they held survives.
    assert tree.render().text == "text 'bottom'"
    assert tree.render("webarena").text.endswith("StaticText [100000] 'bottom'")
    assert "bottom" in tree.subtree([100_000]).text


def test_50_mb_payload():
    n = 120_000
    name = "x" * 400
    nodes = [node(1, "RootWebArea", "big", children=range(2, n + 1))]
    nodes += [node(i, "link", f"{name}{i}") for i in range(2, n + 1)]
    data = payload(*nodes)
    assert len(data) > 50_000_000
    tree = pagelens.AXTree.from_cdp(data)
    assert len(tree) == n
    assert len(tree.render().ids) == n - 1
    # The same size of junk is an error, not a hang.
    with pytest.raises(AXTreeError):
        pagelens.AXTree.from_cdp(data[: len(data) // 2])


def test_unknown_mode_and_tokenizer():
    tree = pagelens.AXTree.from_cdp(payload(node(1, "RootWebArea", "t")))
    with pytest.raises(ValueError, match="unknown mode"):
        tree.render("html")
    with pytest.raises(ValueError, match="unknown tokenizer"):
        tree.render(tokenizer="bert")
    with pytest.raises(ValueError, match="at least 1"):
        tree.render(max_tokens=0)
    with pytest.raises(KeyError, match="no node with id 77"):
        tree.node(77)


# -- deep trees: the text stays linear in the payload (indentation stops at 64 levels) ------------


def chain(depth: int) -> bytes:
    """A chain of nested links, each the only child of the one before."""
    nodes = [
        {
            "nodeId": str(i),
            "role": {"value": "link"},
            "name": {"value": f"l{i}"},
            "backendDOMNodeId": i + 1,
            "childIds": [str(i + 1)] if i + 1 < depth else [],
        }
        for i in range(depth)
    ]
    return json.dumps({"nodes": nodes}).encode()


@pytest.mark.parametrize("depth,max_depth", [(10_000, None), (100_000, 200_000)])
def test_deep_chains_render_in_linear_size(depth, max_depth):
    payload = chain(depth)
    kwargs = {} if max_depth is None else {"max_depth": max_depth}
    tree = pagelens.AXTree.from_cdp(payload, **kwargs)
    for mode in ("occam", "webarena"):
        text = tree.render(mode).text
        assert len(text) < 2 * len(payload), (mode, len(text), len(payload))
        lines = text.split("\n")
        assert lines[64].startswith("\t" * 64 + "link") and lines[65].startswith("\t" * 64 + "(depth 65) link")
        assert lines[-1].endswith(f"'l{depth - 1}'")
    cut = tree.render(max_tokens=50)
    assert cut.truncated and cut.token_count <= 50 and cut.omitted_lines > depth - 20


@pytest.mark.parametrize("budget", [1, 2, 3, 5, 8, 12, 16, 17, 30])
def test_a_budget_is_never_exceeded(budget):
    tree = pagelens.AXTree.from_cdp(chain(300))
    for mode in ("occam", "webarena"):
        obs = tree.render(mode, max_tokens=budget)
        assert obs.truncated and obs.token_count <= budget
        assert pagelens.count_tokens(obs.text) == obs.token_count


# -- output size: a fixed multiple of the payload, whatever the tree's shape ------------------------
# A node's line is at most 64 tabs, a `(depth N) ` marker, its role, name and properties; the
# smallest JSON that makes a node (here: no spaces, one-letter names) is still over 40 bytes.

AX_GROWTH, AX_SLACK = 3, 1024


@st.composite
def compact_trees(draw) -> bytes:
    """Trees of the smallest nodes JSON allows, in any shape: long chains, wide fans, text
    runs; parents always come before their children."""
    n = draw(st.integers(1, 1500))
    reach = draw(st.sampled_from([1, 2, 8, 1500]))  # 1: a chain; 1500: any shape
    parents = [draw(st.integers(max(0, i - reach), i - 1)) for i in range(1, n)]
    roles = draw(
        st.lists(
            st.sampled_from(
                [
                    "link",
                    "StaticText",
                    "generic",
                    "button",
                    "ListMarker",
                    "heading",
                    "paragraph",
                    "LineBreak",
                    "cell",
                    "row",
                    "table",
                    "none",
                ]
            ),
            min_size=n,
            max_size=n,
        )
    )
    names = draw(st.lists(st.sampled_from(["", "a", " ", "\n", "•", "1."]), min_size=n, max_size=n))
    children: list[list[str]] = [[] for _ in range(n)]
    for child, parent in enumerate(parents, start=1):
        children[parent].append(str(child))
    nodes = [
        {
            "nodeId": str(i),
            "role": {"value": "RootWebArea" if i == 0 else roles[i]},
            "name": {"value": names[i]},
            "childIds": children[i],
            "backendDOMNodeId": i + 1,
        }
        for i in range(n)
    ]
    return json.dumps({"nodes": nodes}, separators=(",", ":")).encode()


@settings(max_examples=100, deadline=None)
@given(compact_trees(), st.sampled_from([None, 100_000]))
def test_ax_output_stays_within_a_fixed_multiple_of_its_payload(data, max_depth):
    tree = pagelens.AXTree.from_cdp(data) if max_depth is None else pagelens.AXTree.from_cdp(data, max_depth=max_depth)
    bound = AX_GROWTH * len(data) + AX_SLACK
    for mode in ("occam", "webarena"):
        assert len(tree.render(mode).text.encode()) <= bound, mode
        assert len(tree.render(mode, show_urls=True).text.encode()) <= bound, mode


def test_a_log_torn_inside_a_character_keeps_every_whole_record(tmp_path):
    """Hardening: a crash mid-write can cut a line inside a UTF-8 character. Every reader keeps
    the whole records (eval scores the run, report writes, resume cuts the tail and appends on a
    fresh line, a study's results and predictions count it as one torn line)."""

    from pagelens._io import JsonlLog, read_json_lines
    from pagelens.agents.trajectory import read_trajectory
    from pagelens.evaluation import load_outcome
    from pagelens.studies import read_results

    run = {"type": "run", "task": "t", "task_id": 7, "url": "http://a.test/", "agent": "occam"}
    step = {
        "type": "step",
        "step": 0,
        "url": "http://a.test/",
        "action": "stop [café]",
        "answer": "café",
        "final_url": "http://a.test/é",
        "result": {"ok": True, "error": None},
        "observation": "x",
    }
    whole = (json.dumps(run) + "\n" + json.dumps(step, ensure_ascii=False) + "\n").encode()
    torn = json.dumps({"type": "end", "answer": "é" * 3}, ensure_ascii=False).encode()
    cut = torn[: torn.index("é".encode()) + 1]  # inside the character
    path = tmp_path / "trajectory.jsonl"
    path.write_bytes(whole + cut)
    assert [r["type"] for r in read_trajectory(path)] == ["run", "step"]
    outcome = load_outcome(path)
    assert outcome.answer == "café" and outcome.notes  # scored on what it recorded, said so
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "pagelens", "report", str(path)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    read_trajectory(path, repair=True)
    assert path.read_bytes() == whole
    log = JsonlLog(path)
    log.append({"type": "end", "answer": "ok"})
    assert read_json_lines(path).records[-1] == {"type": "end", "answer": "ok"}
    results = tmp_path / "study" / "results.jsonl"
    results.parent.mkdir()
    line = {"id": "a", "benchmark": "miniwob", "task": "t", "seed": 0, "agent": "occam", "success": True}
    results.write_bytes(json.dumps(line).encode() + b"\n" + cut)
    assert [r["id"] for r in read_results(results.parent)] == ["a"]


def test_a_byte_order_mark_loses_no_record(tmp_path):
    """A UTF-8 BOM (an editor's) at the start of a JSON-lines or JSON file is no part of its
    first record: trajectories are scored, study results counted, prep records read."""
    from pagelens._io import BOM, parse_json, read_json_lines
    from pagelens.agents.trajectory import read_trajectory
    from pagelens.datasets import read_workflows
    from pagelens.evaluation import load_outcome
    from pagelens.studies import read_results

    run = {"type": "run", "task": "t", "task_id": 7, "url": "http://a.test/", "agent": "occam"}
    step = {"type": "step", "step": 0, "url": "http://a.test/", "action": "stop [42]", "answer": "42"}
    step |= {"final_url": "http://a.test/", "result": {"ok": True, "error": None}, "observation": "x"}
    path = tmp_path / "trajectory.jsonl"
    path.write_bytes(BOM + (json.dumps(run) + "\n" + json.dumps(step) + "\n").encode())
    assert [r["type"] for r in read_trajectory(path)] == ["run", "step"]
    assert load_outcome(path).answer == "42"
    assert read_json_lines(path).bad_lines == []
    assert parse_json(BOM + b'{"a": 1}', "x") == {"a": 1} == parse_json('\ufeff{"a": 1}', "x")
    results = tmp_path / "study" / "results.jsonl"
    results.parent.mkdir()
    line = {"id": "a", "benchmark": "miniwob", "task": "t", "seed": 0, "agent": "occam", "success": True}
    results.write_bytes(BOM + json.dumps(line).encode() + b"\n")
    assert [r["id"] for r in read_results(results.parent)] == ["a"]
    record = {"workflow_id": "w", "step": 0, "objective": "o", "url": "https://a.test/", "html": "<a>go</a>"}
    record |= {"action": "click", "target_selector": "a", "description": "Click go"}
    for name, data in (
        ("s.jsonl", BOM + json.dumps(record).encode() + b"\n"),
        ("t.json", BOM + json.dumps([record]).encode()),
    ):
        for raw_html in (False, True):
            workflows, rejects = read_workflows(name, data, raw_html=raw_html)
            assert [w.workflow_id for w in workflows] == ["w"] and not rejects, (name, rejects)


def test_a_lone_surrogate_in_what_a_run_records_is_written_as_a_replacement(tmp_path):
    """A page's title or a model's text may hold a lone surrogate: logs and files written with
    it hold U+FFFD in its place (valid UTF-8), never a UnicodeEncodeError that stops the run."""
    from pagelens._io import JsonlLog, read_json_lines, write_atomically

    log = JsonlLog(tmp_path / "t.jsonl")
    log.append({"title": "Odd \ud83d", "k\udc00": 1})
    log.append({"title": "fine"})
    assert read_json_lines(tmp_path / "t.jsonl").records == [{"title": "Odd \ufffd", "k\ufffd": 1}, {"title": "fine"}]
    write_atomically(tmp_path / "s.json", '{"a": "\ud800"}')
    assert (tmp_path / "s.json").read_text("utf-8") == '{"a": "\ufffd"}'


def test_a_private_file_is_the_users_alone_even_over_an_older_readable_one(tmp_path):
    """Saved cookies (`pagelens browser state save`, the daemon's kept state) are written whole
    and 0600 — also where a file readable by others already stood (writing in place would keep
    its mode), and no temporary file is left beside it."""
    import os

    from pagelens._io import write_atomically

    path = tmp_path / "state.json"
    path.write_text("old")
    os.chmod(path, 0o644)
    write_atomically(path, b'{"cookies": []}', private=True)
    assert path.stat().st_mode & 0o777 == 0o600
    assert path.read_bytes() == b'{"cookies": []}'
    assert [p.name for p in tmp_path.iterdir()] == ["state.json"]


def test_a_write_that_fails_leaves_nothing_beside_its_target(tmp_path):
    """A target that cannot be replaced (a folder of that name): the error is raised and no
    temporary file (for a private write, cookies) is left beside it."""
    from pagelens._io import write_atomically

    (tmp_path / "state").mkdir()
    with pytest.raises(IsADirectoryError):
        write_atomically(tmp_path / "state", b'{"cookies": ["secret"]}', private=True)
    assert [p.name for p in tmp_path.iterdir()] == ["state"]
    assert list((tmp_path / "state").iterdir()) == []


def test_every_json_lines_file_is_written_by_the_one_encoder():
    """Rejects, examples and logs hold a lone surrogate (a page's text) as U+FFFD: one
    encoder writes every JSON-lines record, so none of them raises UnicodeEncodeError."""
    from pagelens._io import json_line
    from pagelens.datasets.output import examples_bytes, rejects_bytes

    odd = {"reason": "cut \ud800 here"}
    assert json_line(odd).decode("utf-8") == '{"reason": "cut \ufffd here"}\n'
    assert rejects_bytes([odd, odd]) == json_line(odd) * 2
    assert examples_bytes([odd], "jsonl") == json_line(odd)
