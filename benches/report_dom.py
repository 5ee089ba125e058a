"""One run, same inputs: pagelens' HTML pipeline against BeautifulSoup and BrowserGym;
tokenizer counting against tiktoken; chunking throughput.

    python benches/report_dom.py

Prints Markdown for benches/README.md. tiktoken is fed our rebuilt BPE files (its cache),
so no download happens."""

from __future__ import annotations

import gzip
import hashlib
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import pagelens  # noqa: E402
from pagelens import _core  # noqa: E402

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "corpus"


def best_of(n, fn):
    best = float("inf")
    for _ in range(n):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def offline_tiktoken():
    cache = tempfile.mkdtemp()
    for name in ("r50k_base", "cl100k_base", "o200k_base"):
        url = f"https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"
        Path(cache, hashlib.sha1(url.encode()).hexdigest()).write_bytes(_core.tiktoken_bpe_file(name))
    os.environ["TIKTOKEN_CACHE_DIR"] = cache
    import tiktoken

    return tiktoken.get_encoding("r50k_base")


def token_counting(texts: list[str], enc) -> str:
    """Counting the same texts with PyPI tiktoken and with pagelens, per encoding."""
    import tiktoken

    tmb = sum(len(t.encode()) for t in texts) / 1e6
    rows = [
        f"\nToken counting over {tmb:.1f} MB of HTML (ids equal tiktoken's, tested):\n",
        "| encoding | tiktoken | pagelens | speed vs tiktoken |",
        "|---|---:|---:|---:|",
    ]
    for name in ("r50k_base", "cl100k_base", "o200k_base"):
        ref = enc if name == "r50k_base" else tiktoken.get_encoding(name)
        tok = pagelens.Tokenizer(name)
        t_tik = best_of(3, lambda ref=ref: [ref.encode_ordinary(t) for t in texts])
        t_tok = best_of(3, lambda tok=tok: [tok.count(t) for t in texts])
        rows.append(
            f"| {name} | {t_tik:.2f} s ({tmb / t_tik:.1f} MB/s) | {t_tok:.2f} s ({tmb / t_tok:.1f} MB/s) | "
            f"{t_tik / t_tok:.2f}x |"
        )
    return "\n".join(rows) + "\n"


def main() -> None:
    from browsergym.utils.obs import prune_html

    from scribe_bs4 import clean as bs4_clean

    pages = {
        p.name: gzip.decompress((p / "dom.html.gz").read_bytes())
        for p in sorted(CORPUS.iterdir())
        if (p / "dom.html.gz").exists()
    }
    mb = sum(map(len, pages.values())) / 1e6
    enc = offline_tiktoken()

    def ours():
        for h in pages.values():
            pagelens.Dom.parse(h).clean().html()

    def bs4():
        for h in pages.values():
            bs4_clean(h, enc)

    def browsergym():
        for h in pages.values():
            prune_html(h.decode("utf-8", "replace"))

    t_ours = best_of(5, ours)
    t_bs4 = best_of(1, bs4)
    t_bg = best_of(1, browsergym)
    print(f"Corpus: {len(pages)} pages (`dom.html.gz`, Chromium's DOM), {mb:.1f} MB of HTML.\n")
    print("| pipeline (whole corpus) | time | MB/s | vs BeautifulSoup |")
    print("| --- | ---: | ---: | ---: |")
    print(
        f"| BeautifulSoup (lxml) + tiktoken per attribute, same `scribe` rules (`benches/scribe_bs4.py`) | {t_bs4:.2f} s | {mb / t_bs4:.1f} | 1.0x |"
    )
    print(f"| BrowserGym `prune_html` (simpler rules, no ids) | {t_bg:.2f} s | {mb / t_bg:.1f} | {t_bs4 / t_bg:.1f}x |")
    print(f"| `Dom.parse(bytes).clean().html()` | {t_ours:.2f} s | {mb / t_ours:.1f} | {t_bs4 / t_ours:.0f}x |")

    cleaned = [pagelens.Dom.parse(h).clean().html() for h in pages.values()]
    texts = cleaned + [pagelens.Dom.parse(h).html() for h in list(pages.values())[:30]]
    print(token_counting(texts, enc))

    cmb = sum(len(t.encode()) for t in cleaned) / 1e6
    t_chunk = best_of(3, lambda: [pagelens.chunk(t, 4000) for t in cleaned])
    print(
        f"Chunking the cleaned corpus ({cmb:.1f} MB) to 4,000 GPT-2 tokens: {t_chunk:.2f} s ({cmb / t_chunk:.1f} MB/s)."
    )


if __name__ == "__main__":
    main()
