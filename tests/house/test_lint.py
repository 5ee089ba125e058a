"""`make lint` catches what it is there for: the project's own mypy and ruff settings, run on
a copy of the package with one mistake put in, fail and name it; on the package as it is they
pass (CI runs the same commands through `make lint`)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from support.paths import ROOT as REPO

ROOT = REPO


@pytest.fixture(scope="module")
def copy(tmp_path_factory):
    root = tmp_path_factory.mktemp("lint")
    shutil.copy(ROOT / "pyproject.toml", root)
    shutil.copytree(
        ROOT / "python" / "pagelens",
        root / "python" / "pagelens",
        ignore=shutil.ignore_patterns("*.so", "*.pyd", "__pycache__"),
    )
    # mypy's cache of the tree as `make lint` left it (same relative paths): what is unchanged
    # in the copy, the libraries first, is read from it, and the one module changed is checked
    # again (a cold run of --strict over the package and its libraries takes a minute here).
    if (ROOT / ".mypy_cache").is_dir():
        shutil.copytree(ROOT / ".mypy_cache", root / ".mypy")
    return root


def run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=root, capture_output=True, text=True, timeout=600)


def test_mypy_fails_on_a_type_error(copy):
    module = copy / "python" / "pagelens" / "evaluation" / "urls.py"
    module.write_text(module.read_text() + "\n\ndef broken() -> int:\n    return 'not an int'\n")
    out = run(copy, "mypy", "--cache-dir", str(copy / ".mypy"))
    # The one error is the one written (`make lint` keeps the tree itself clean): one run, not two.
    assert out.returncode == 1 and "Found 1 error in 1 file" in out.stdout, out.stdout
    assert "urls.py" in out.stdout and "Incompatible return value type" in out.stdout


def test_ruff_fails_on_an_unused_import(copy):
    module = copy / "python" / "pagelens" / "corpus.py"
    module.write_text(module.read_text() + "\nimport itertools  # noqa: E402\n")
    out = run(copy, "ruff", "check", "--no-cache", "python")
    assert out.returncode == 1 and "F401" in out.stdout
