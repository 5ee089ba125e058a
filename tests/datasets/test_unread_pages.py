"""JSONL files read with their pages left in the file (the Ray engine's driver), or decoded by
the core into RawHtml (the local engine): the same workflows, rejects and sources as a full
read once the pages are read where the work is, on the corpus and on generated records (good,
odd and broken); the driver's shards carry no HTML."""

from __future__ import annotations

import json
import os
import pickle
import tempfile
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pagelens import RawHtml
from pagelens.datasets import readers
from pagelens.datasets.readers import FileStamp, UnreadText, read_unread, read_workflows
from pagelens.errors import InputFileError
from support.workflow_data import build_dataset


def _both_reads(path: Path) -> tuple[tuple, tuple, tuple]:
    """(full read, unread read with its pages then read, read with the pages held by the
    core) of one file."""
    data = path.read_bytes()
    full = read_workflows(path.name, data)
    workflows, rejects = read_workflows(path.name, data, FileStamp.of(path))
    return full, (read_unread(workflows), rejects), read_workflows(path.name, data, raw_html=True)


def test_the_corpus_workflows_read_unread_are_the_full_read(tmp_path):
    build_dataset(tmp_path, n_pages=1000, steps=2, broken=True)
    path = tmp_path / "steps.jsonl"
    data = path.read_bytes()
    workflows, rejects = read_workflows(path.name, data, FileStamp.of(path))
    pages = [s.html for w in workflows for s in w.steps]
    assert pages and all(isinstance(p, UnreadText) for p in pages)
    # What the driver ships per shard: a few bytes per step, not the page.
    assert len(pickle.dumps(workflows)) < len(data) / 200
    full, unread, held = _both_reads(path)
    assert unread == full and unread[1], "the broken records' rejects are compared too"
    assert held == full
    # Every page is held by the core either way, none became a str.
    for read in (unread, held):
        assert all(isinstance(s.html, RawHtml) for w in read[0] for s in w.steps)


# Text that JSON writes with escapes: quotes, backslashes, control characters, lone surrogates,
# non-ASCII (written as is or escaped), whitespace of every kind (a blank page is a reject).
_TEXT = st.text(
    alphabet=st.sampled_from(list('<a href="/x">\\\'\n\t\r\x00\x1f \u00a0\u2003\u3000é😀\ud800\udfffpP')),
    max_size=40,
)


def _record(draw) -> dict:
    kind = draw(st.sampled_from(["step", "mind2web", "odd"]))
    html = draw(_TEXT)
    if kind == "step":
        return {
            "workflow_id": draw(st.sampled_from(["w1", "w2", 3, "", None])),
            "step": draw(st.sampled_from([0, 1, 2, None, -1, "x"])),
            "objective": draw(st.sampled_from(["find it", "", "   "])),
            "url": "http://a.test/",
            "html": html,
            "action": draw(st.sampled_from(["mouse_click_action", "CLICK", "dance"])),
            "target_selector": "a",
            "description": draw(_TEXT),  # a long one is decoded as it is, never left unread
        }
    if kind == "mind2web":
        return {
            "annotation_id": draw(st.sampled_from(["m1", "m2"])),
            "confirmed_task": "book it",
            "action_reprs": ["[a] go"],
            "actions": [
                {
                    "raw_html": html,
                    "operation": {"op": "CLICK"},
                    "pos_candidates": [{"backend_node_id": "7"}],
                }
            ],
        }
    # Nested pages, duplicate keys' stand-ins, a page that is not a string.
    return {"workflow_id": "w1", "html": draw(st.sampled_from([html, 5, [html], {"html": html}]))}


@st.composite
def _lines(draw) -> bytes:
    out = []
    for _ in range(draw(st.integers(1, 8))):
        record = _record(draw)
        line = json.dumps(record, ensure_ascii=draw(st.booleans())).encode("utf-8", "surrogatepass")
        edit = draw(st.sampled_from(["none", "none", "cut", "byte", "dup"]))
        if edit == "cut":  # a line cut short
            line = line[: draw(st.integers(0, len(line)))]
        elif edit == "byte":  # one byte changed: a raw control character, bad UTF-8, a quote
            at = draw(st.integers(0, len(line) - 1))
            line = line[:at] + draw(st.sampled_from([b"\x01", b"\xff", b'"', b"\\", b"\n"])) + line[at + 1 :]
        elif edit == "dup" and line.startswith(b'{"workflow_id"'):  # a duplicate key: the last one counts
            line = line[:-1] + b', "html": "<p>second</p>"}'
        out.append(line)
    return b"\n".join(out) + b"\n"


@settings(max_examples=300, deadline=None)
@given(_lines())
def test_unread_reads_of_generated_lines_are_the_full_read(data):
    # Short pages are left unread too here, so that every odd string meets the stand-in path.
    with mock.patch.object(readers, "UNREAD_MIN_BYTES", 1), tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "steps.jsonl"
        path.write_bytes(data)
        full, unread, held = _both_reads(path)
        assert unread == full
        assert held == full


def test_a_page_read_from_a_changed_or_missing_file_is_an_input_error(tmp_path):
    build_dataset(tmp_path, n_pages=3, steps=1, broken=False)
    path = tmp_path / "steps.jsonl"
    workflows, _ = read_workflows(path.name, path.read_bytes(), FileStamp.of(path))
    with path.open("ab") as f:
        f.write(b"\n")
    with pytest.raises(InputFileError, match="changed while it was being read"):
        read_unread(workflows)
    os.rename(path, tmp_path / "elsewhere.jsonl")
    with pytest.raises(InputFileError, match=r"steps\.jsonl: cannot read the input here .*every worker sees"):
        read_unread(workflows)
