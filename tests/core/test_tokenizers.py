"""Our offline tokenizers agree token for token with the reference libraries."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pagelens
from pagelens import _core
from support.corpus import PAGES, ax_bytes, html_bytes

SAMPLE = PAGES[::7]  # 15 pages: news, wiki, forums, CJK, RTL


def corpus_texts() -> list[str]:
    texts = []
    for page in SAMPLE:
        texts.append(pagelens.AXTree.from_cdp(ax_bytes(page)).render().text)
        texts.append(pagelens.Dom.parse(html_bytes(page, "dom")).clean().html())
    texts += ["", " ", "<|endoftext|> is plain text here", "naïve café 中文 العربية 🙂\t\n\n  x"]
    return texts


@pytest.fixture(scope="module")
def tiktoken_offline(tmp_path_factory, monkeypatch_module):
    """PyPI tiktoken, fed the BPE files rebuilt from our embedded ranks via its cache."""
    cache = tmp_path_factory.mktemp("tiktoken-cache")
    urls = {
        "r50k_base": "https://openaipublic.blob.core.windows.net/encodings/r50k_base.tiktoken",
        "cl100k_base": "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
        "o200k_base": "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
    }
    for name, url in urls.items():
        (cache / hashlib.sha1(url.encode()).hexdigest()).write_bytes(_core.tiktoken_bpe_file(name))
    monkeypatch_module.setenv("TIKTOKEN_CACHE_DIR", str(cache))
    import tiktoken

    return tiktoken


@pytest.fixture(scope="module")
def monkeypatch_module():
    mp = pytest.MonkeyPatch()
    yield mp
    mp.undo()


@pytest.mark.parametrize("name", ["r50k_base", "cl100k_base", "o200k_base"])
def test_bpe_files_are_the_published_ones(name):
    # tiktoken's own pinned sha256 of each published file.
    expected = {
        "r50k_base": "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
        "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    }
    assert hashlib.sha256(_core.tiktoken_bpe_file(name)).hexdigest() == expected[name]


@pytest.mark.parametrize("name", ["r50k_base", "cl100k_base", "o200k_base"])
def test_tiktoken_agreement(tiktoken_offline, name):
    ref = tiktoken_offline.get_encoding(name)
    ours = pagelens.Tokenizer(name)
    for text in corpus_texts():
        assert ours.encode(text) == ref.encode_ordinary(text)


def test_gpt2_is_r50k(tiktoken_offline):
    ref = tiktoken_offline.get_encoding("r50k_base")
    assert pagelens.Tokenizer("gpt2").encode("hello world") == ref.encode_ordinary("hello world") == [31373, 995]


def test_observation_token_count_is_gpt2(tiktoken_offline):
    ref = tiktoken_offline.get_encoding("r50k_base")
    obs = pagelens.AXTree.from_cdp(ax_bytes("001")).render()
    assert obs.token_count == len(ref.encode_ordinary(obs.text))


@pytest.fixture(scope="module")
def trained_tokenizer_json(tmp_path_factory) -> str:
    """A byte-level BPE tokenizer.json trained by Hugging Face `tokenizers` on corpus text."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=2000, initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(corpus_texts()[:10], trainer)
    path = tmp_path_factory.mktemp("hf") / "tokenizer.json"
    tok.save(str(path))
    return str(path)


def test_tokenizer_json_agreement(trained_tokenizer_json):
    from tokenizers import Tokenizer

    ref = Tokenizer.from_file(trained_tokenizer_json)
    ours = pagelens.Tokenizer.from_file(trained_tokenizer_json)
    assert ours.name.endswith("tokenizer.json")
    for text in corpus_texts():
        assert ours.encode(text) == ref.encode(text, add_special_tokens=False).ids
    # Usable everywhere a tokenizer name is.
    chunks = pagelens.chunk(corpus_texts()[1], 300, tokenizer=ours)
    assert all(c.token_count <= 300 for c in chunks if not c.oversized)


def test_bad_tokenizers(tmp_path):
    with pytest.raises(ValueError, match="unknown tokenizer"):
        pagelens.Tokenizer("bert")
    bad = tmp_path / "tokenizer.json"
    bad.write_text(json.dumps({"not": "a tokenizer"}))
    with pytest.raises(ValueError, match="cannot load tokenizer"):
        pagelens.Tokenizer.from_file(bad)
    with pytest.raises(OSError):
        pagelens.Tokenizer.from_file(tmp_path / "missing.json")


# -- linear time, no panic: the pre-tokenizers are written out by hand, linear in the text ---------

PIECES = [
    " ",
    "  ",
    "\t",
    "\n",
    "\r\n",
    "\u00a0",
    "\u3000",
    "a",
    "Hello",
    "WORLD",
    "camelCase",
    "x1",
    "12345",
    "'s",
    "'LL",
    "don't",
    ".",
    "!!",
    "/",
    "...\n",
    '<div class="a">',
    "中文",
    "テキスト",
    "🙂",
    "é",
    "\u0301",
    "ǅ",
    "\u0085",
    "\u2028",
    "$",
    "\n\n",
    # o200k's cased words: a modifier letter (in both of its classes) after capitals, marks
    "\u02b0",
    "HELLOworld",
    "\u0915\u093e",
    # contractions in every case, and U+017F (long s), which case-folds to s
    "'S",
    "'\u017f",
    "'Ve",
    "'x",
    "\u216b",
    "\u00bd",
    "/\n",
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(PIECES), st.integers(1, 200)), max_size=30))
def test_generated_text_agrees_with_tiktoken(tiktoken_offline, parts):
    text = "".join(piece * (n if n > 150 else 1) for piece, n in parts)
    for name in ("r50k_base", "cl100k_base", "o200k_base"):
        assert pagelens.Tokenizer(name).encode(text) == tiktoken_offline.get_encoding(name).encode_ordinary(text)


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "o200k_base"])
def test_long_whitespace_runs_count_without_a_panic(name):
    # tiktoken-rs's backtracking pre-tokenizer overflowed its stack here and panicked across
    # the FFI boundary (a BaseException that escaped every `except Exception`).
    for run in (" " * 999_999, "\u3000" * 300_000, " \n" * 300_000):
        tok = pagelens.Tokenizer(name)
        assert tok.count(run) == pagelens.count_tokens(run, name) > 0
    chunks = pagelens.chunk(" " * 999_999, 4096, name, kind="text")
    assert "".join(c.text for c in chunks) == " " * 999_999
    html = "<p>" + " " * 500_000 + "x</p>"
    assert "x" in pagelens.Dom.parse(html).clean(tokenizer=name).html()


_PEAK = r"""
import resource, sys
import pagelens
unit, mb, name = sys.argv[1], int(sys.argv[2]), sys.argv[3]
text = unit * (mb * 1_000_000 // len(unit.encode()))
pagelens.count_tokens("warm up", name)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
count = pagelens.count_tokens(text, name)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(count, max(0, peak - before), len(text.encode()))
"""


@pytest.mark.parametrize("unit", ["a", "中", "xY", "🙂"])
def test_counting_one_long_run_takes_memory_linear_in_its_tokens(unit):
    """A page that is one 40 MB word (no whitespace, one pre-tokenizer piece): counting it
    takes the text's size in memory again at most (its UTF-8 and the ids), not the dozens of
    bytes per character a whole-piece merge takes (hardening class 13). Measured as the
    process's peak growth, not as time."""
    run = subprocess.run([sys.executable, "-c", _PEAK, unit, "40", "gpt2"], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-600:]
    count, grown, size = map(int, run.stdout.split())
    assert count > 0
    assert grown <= 1.5 * size, f"{unit!r}: {grown / size:.1f} bytes of memory per byte of text"
