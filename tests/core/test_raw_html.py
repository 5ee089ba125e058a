"""RawHtml: a page decoded from JSON by the core and held there as UTF-8. Its value is the one
Python's JSON decoder gives, or none where only a str can hold it; the parser, the tokenizer
and the prep transform read it as they read that str, output for output."""

from __future__ import annotations

import json
import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pagelens
from pagelens import ArgumentTypeError, AXTree, Dom, RawHtml, Tokenizer, count_tokens, escape_page_text
from pagelens._core import long_member_texts
from pagelens.datasets import PrepConfig, read_workflows, run_local
from pagelens.datasets.transform import Transformer
from support.workflow_data import build_dataset

_ALPHABET = list('<a href="/x">\\\'\n\t\r\x00\x1f \u00a0\u2003é中😀\ud800\udbff\udc00\udfffpP/')


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.sampled_from(_ALPHABET), max_size=60), st.booleans())
def test_from_json_is_pythons_decoder(text, ensure_ascii):
    literal = json.dumps(text, ensure_ascii=ensure_ascii).encode("utf-8", "surrogatepass")
    held = RawHtml.from_json(literal)
    try:
        value = json.loads(literal)
    except ValueError:  # a raw surrogate is not UTF-8
        value = None
    if value is None or any(0xD800 <= ord(c) <= 0xDFFF for c in value):
        assert held is None  # only a str holds a lone surrogate (an escaped pair is one character)
        return
    text = value
    assert held is not None and held == text and text == held and str(held) == text
    assert held.nbytes == len(text.encode())
    assert hash(held) == hash(text)
    assert pickle.loads(pickle.dumps(held)) == held
    # The same value from a line's member, with its range.
    line = json.dumps({"id": 1, "html": text}, ensure_ascii=ensure_ascii).encode()
    for start, end, value in long_member_texts(line, 0):
        assert json.loads(line[start:end]) == value


@pytest.mark.parametrize("bad", [b'"a" ', b'"a', b"a", b'"a\\x"', b'"\xff"', b'"a\x01"', b'["a"]'])
def test_from_json_refuses_what_is_not_one_json_string(bad):
    assert RawHtml.from_json(bad) is None


def test_wrong_arguments_are_named():
    with pytest.raises(ArgumentTypeError, match="text must be str or RawHtml, not int"):
        Tokenizer().count(5)  # type: ignore[arg-type]
    with pytest.raises(ArgumentTypeError, match="html must be str, bytes or RawHtml, not int"):
        Dom.parse(5)  # type: ignore[arg-type]
    with pytest.raises(pagelens.ArgumentError, match="UTF-8"):
        RawHtml("\ud800")
    assert RawHtml("<p>x</p>") != RawHtml("<p>y</p>") and RawHtml("<p>x</p>") != b"<p>x</p>"


def test_the_parser_and_tokenizers_read_it_as_the_str(tmp_path):
    build_dataset(tmp_path, n_pages=12, steps=1, broken=False)
    data = (tmp_path / "steps.jsonl").read_bytes()
    pages = [json.loads(line)["html"] for line in data.splitlines()]
    assert len(pages) == 12 and not all(p.isascii() for p in pages)
    for page in pages:
        held = RawHtml(page)
        assert Dom.parse(held).html() == Dom.parse(page).html()
        for name in ("gpt2", "cl100k_base", "o200k_base"):
            assert Tokenizer(name).count(held) == Tokenizer(name).count(page) == count_tokens(held, name)


def test_prep_examples_from_held_pages_are_those_from_str_pages(tmp_path):
    build_dataset(tmp_path, n_pages=40, steps=2, broken=True)
    data = (tmp_path / "steps.jsonl").read_bytes()
    as_str, rejects = read_workflows("steps.jsonl", data)
    held, held_rejects = read_workflows("steps.jsonl", data, raw_html=True)
    assert held_rejects == rejects
    assert all(isinstance(s.html, RawHtml) for w in held for s in w.steps)
    assert not any(isinstance(s.html, RawHtml) for w in as_str for s in w.steps)
    transformer = Transformer(PrepConfig(max_tokens=1024))
    made = [transformer.workflow(w) for w in as_str]
    assert [transformer.workflow(w) for w in held] == made
    assert sum(len(examples) for examples, _ in made) >= 70


def click_record(workflow_id: str, page_head: str) -> dict:
    """A prep record: one click on a link of a page that begins with ``page_head``."""
    return {
        "workflow_id": workflow_id,
        "step": 0,
        "objective": "find it",
        "url": "https://a.test/",
        "html": page_head + "<a href='/x'>go</a>" * 200,
        "action": "click",
        "target_selector": "a",
        "description": "Click go",
    }


def test_a_lone_surrogate_is_read_as_a_replacement_character(tmp_path):
    # JSON's "\ud800" decodes to a str no UTF-8 holds: the parser, the tokenizers and prep read
    # it leniently (one U+FFFD for each lone surrogate, as the core's JSON readers count it)
    # instead of failing the run.
    text = "a\ud800b \udfff"
    replaced = "a\ufffdb \ufffd"
    for name in ("gpt2", "cl100k_base", "o200k_base"):
        assert Tokenizer(name).count(text) == Tokenizer(name).count(replaced) == count_tokens(text, name)
    assert Dom.parse(text).html() == Dom.parse(replaced).html()
    record = click_record("w", "<p>odd \ud800 page</p>")
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "s.jsonl").write_text(json.dumps(record) + "\n")
    summary = run_local([str(tmp_path / "in")], str(tmp_path / "out"), PrepConfig(), fmt="jsonl")
    assert summary["examples_out"] == 1 and summary["rejected"] == 0


def test_a_lone_surrogate_reads_the_same_whichever_way_it_comes():
    """A page's `'😀'.slice(1)`: in CDP's JSON (escaped), in a str payload, in a dict payload,
    in a live DOM's nodes, and in a page escaping function: one U+FFFD each, never an error."""
    node = {"nodeId": "1", "role": {"value": "StaticText"}, "name": {"value": "x\ud83d y"}, "backendDOMNodeId": 1}
    escaped = json.dumps({"nodes": [node]})
    assert "\\ud83d" in escaped
    for payload in (escaped.encode(), escaped, {"nodes": [node]}, json.dumps({"nodes": [node]}, ensure_ascii=False)):
        assert AXTree.from_cdp(payload).render("webarena").text == "StaticText [1] 'x\ufffd y'"
    dom, ids = Dom.from_nodes([(-1, 1, "p", ["title", "a\udc00"], False), (0, 3, "b\ud800c", [], False)])
    assert dom.html() == '<p title="a\ufffd" node="0">b\ufffdc</p>' and ids == [0, None]
    assert escape_page_text("[4]\ud800") == "\\[4]\ufffd"
    assert Dom.parse("<a title='\ufffd'>go</a>").select("a[title='\ud800']") != []  # a DomError never, nor Unicode


def test_a_lone_surrogate_in_any_field_stops_no_prep_run(tmp_path):
    """`\\ud800` in a workflow's id, objective, description, target or URL: its records are
    read with U+FFFD there and made into examples (Parquet and JSONL alike); the good records
    beside it are kept."""
    odd = "x\ud800y"
    good = click_record("good", "<p>page</p>")
    records = [good] + [good | {"workflow_id": f"w{k}", key: odd} for k, key in enumerate(good) if key != "step"]
    records[-1]["target_selector"] = "a[title='\ud800']"
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "s.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    for fmt in ("jsonl", "parquet"):
        summary = run_local([str(tmp_path / "in")], str(tmp_path / f"out-{fmt}"), PrepConfig(), fmt=fmt)
        # Those whose page, action or target no longer names the element are rejects, said so;
        # the others (the good one, an odd id, objective, URL or description) are examples.
        assert summary["examples_out"] == 4, summary
        reasons = "".join(p.read_text() for p in (tmp_path / f"out-{fmt}" / "rejects").iterdir())
        assert "Unicode" not in reasons and "Error" not in reasons, reasons
