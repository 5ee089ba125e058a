"""NLTK's ``word_tokenize`` exactly as WebArena's evaluator calls it, offline.

WebArena (and AgentOccam) match a one-character ``must_include`` reference against the
tokens of NLTK's ``word_tokenize``, which first splits sentences with the English Punkt
model. NLTK itself is a dependency; the Punkt tables (``punkt_tab/english``, 238 KB) are not
on PyPI as such, but a pinned wheel on PyPI redistributes them (llama-index-core, MIT). They
are extracted once, checked against their SHA-256, into pagelens' data directory by::

    python -m pagelens.evaluation.punkt        # `make setup` runs it

Nothing is downloaded at run time: without the tables, scoring that needs them stops with a
message saying to run the command above. An NLTK data directory that already holds
``tokenizers/punkt_tab/english`` (``NLTK_DATA``) is used as is.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile
from functools import cache
from pathlib import Path

from pagelens.evaluation.errors import EvaluationSetupError

__all__ = ["data_dir", "install", "word_tokenize"]

WHEEL = "llama-index-core==0.14.25"
WHEEL_PREFIX = "llama_index/core/_static/nltk_cache/tokenizers/punkt_tab/english/"
# The four tables of NLTK's English Punkt model, as NLTK's own data package has them.
FILES = {
    "abbrev_types.txt": "92a3e070f43d9b4c5534758ca40ad7343b04e7e29bfe0c2eb658a39445a4f779",
    "collocations.tab": "8e2da1225e4dd2cc9dba261ee231ccb134859e21b46006e7f472c5ee269af0cf",
    "ortho_context.tab": "4bbcca25ed3d3f06c02402abf8419b9f033b8adc06e7b482eca4e45f81a5dc4c",
    "sent_starters.txt": "f3f8535483e1dba487241b764945168123bca3209a9645e59acd1225dc76edac",
}


def data_dir() -> Path:
    """Where pagelens keeps data it builds at setup: ``$PAGELENS_DATA_DIR``, else
    ``$XDG_DATA_HOME/pagelens`` (``~/.local/share/pagelens``)."""
    explicit = os.environ.get("PAGELENS_DATA_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(base) / "pagelens"


def _tables(root: Path) -> Path:
    return root / "nltk_data" / "tokenizers" / "punkt_tab" / "english"


def _complete(folder: Path) -> bool:
    return all((folder / name).is_file() for name in FILES)


def install(root: Path | None = None) -> Path:
    """Extracts the English Punkt tables into ``root`` (the data directory) unless they are
    there; returns the NLTK data directory to use."""
    root = root or data_dir()
    target = _tables(root)
    if _complete(target):
        return root / "nltk_data"
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--quiet",
                "--disable-pip-version-check",
                "--no-deps",
                "--only-binary",
                ":all:",
                "--dest",
                tmp,
                WHEEL,
            ],
            check=True,
        )
        wheel = next(Path(tmp).glob("*.whl"))
        with zipfile.ZipFile(wheel) as z:
            tables = {name: z.read(WHEEL_PREFIX + name) for name in FILES}
    for name, data in tables.items():
        digest = hashlib.sha256(data).hexdigest()
        if digest != FILES[name]:
            raise EvaluationSetupError(f"{WHEEL}: {name} has SHA-256 {digest}, expected {FILES[name]}")
    target.mkdir(parents=True, exist_ok=True)
    for name, data in tables.items():
        partial = target / (name + ".partial")
        partial.write_bytes(data)
        partial.replace(target / name)
    return root / "nltk_data"


@cache
def _tokenizer():  # type: ignore[no-untyped-def]
    import nltk
    from nltk.tokenize import word_tokenize as nltk_word_tokenize

    ours = data_dir() / "nltk_data"
    if _complete(_tables(data_dir())) and str(ours) not in nltk.data.path:
        nltk.data.path.insert(0, str(ours))
    try:
        nltk.data.find("tokenizers/punkt_tab/english/")
    except LookupError:
        raise EvaluationSetupError(
            "WebArena's must_include needs NLTK's English Punkt tables: run `python -m pagelens.evaluation.punkt` "
            "once (make setup does)"
        ) from None
    return nltk_word_tokenize


def word_tokenize(text: str) -> list[str]:
    """``nltk.tokenize.word_tokenize(text)`` (English, sentences split first)."""
    return list(_tokenizer()(text))


if __name__ == "__main__":
    print(install())
