"""docs/mcp.md's client programs, run as written: each installed as its first line says (in an
environment of its own, as a user's would be: LangChain's adapters need the MCP SDK 1.x), pointed
at a local page in place of example.com, against the real `pagelens mcp` over stdio."""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs" / "mcp.md"
CONSTRAINTS = ROOT / "requirements" / "clients.txt"
VENVS = ROOT / "target" / "client-venvs"


def programs() -> dict[str, tuple[list[str], bool, str]]:
    """Each Python program of the docs that names its install: its client's name -> (what to
    pip install, whether it asks for an environment of its own, the program)."""
    found = {}
    for block in re.findall(r"```python\n(.*?)```", DOCS.read_text(), re.S):
        first = block.split("\n", 1)[0]
        named = re.fullmatch(r"# (\S+)[^(]*\(pip install ([^)]+)\)(:.*)?", first)
        if named:
            found[named.group(1)] = (shlex.split(named.group(2)), "of its own" in first, block)
    return found


def _venv(requirements: list[str]) -> Path:
    """A virtual environment with ``requirements`` (held to requirements/clients.txt), made once
    per set and kept under target/ (a half-made one is made again)."""
    key = hashlib.sha256((" ".join(requirements) + CONSTRAINTS.read_text()).encode()).hexdigest()[:12]
    home = VENVS / key
    done = home / ".installed"
    if not done.exists():
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(home)], check=True, capture_output=True)
        pip = [str(home / "bin" / "python"), "-m", "pip", "--disable-pip-version-check", "install", "--quiet"]
        installed = subprocess.run([*pip, "-c", str(CONSTRAINTS), *requirements], capture_output=True, text=True)
        assert installed.returncode == 0, installed.stderr[-3000:]
        done.write_text(" ".join(requirements))
    return home / "bin" / "python"


@pytest.fixture(scope="module")
def clients() -> dict[str, tuple[Path, str]]:
    """Each program's interpreter: one environment with every client's install but those that
    ask for their own (one install each: a fresh machine pays it once, within ~2 min)."""
    found = programs()
    shared = sorted({r for reqs, apart, _ in found.values() if not apart for r in reqs})
    sets = {name: (reqs if apart else shared) for name, (reqs, apart, _) in found.items()}
    distinct = list({tuple(r): r for r in sets.values()}.values())
    with ThreadPoolExecutor(len(distinct)) as pool:  # pip waits on the network more than on the CPUs
        made = dict(zip([tuple(r) for r in distinct], pool.map(_venv, distinct), strict=True))
    return {name: (made[tuple(sets[name])], program) for name, (_, _, program) in found.items()}


def test_the_docs_show_the_clients_the_issue_names():
    assert set(programs()) == {"fastmcp", "openai-agents", "pydantic-ai", "langchain"}


@pytest.mark.parametrize("client", ["fastmcp", "openai-agents", "pydantic-ai", "langchain"])
def test_a_client_program_of_the_docs_runs_as_written(clients, client, site, tmp_path):
    python, program = clients[client]
    url = site.url("site/second.html")
    assert program.count("https://example.com") == 1
    path = tmp_path / "program.py"  # (named after its client, it would shadow the package)
    path.write_text(program.replace("https://example.com", url))
    # `pagelens` as the program names it: the one beside this interpreter, first on the PATH.
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    env.pop("VIRTUAL_ENV", None)
    ran = subprocess.run([str(python), str(path)], capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)
    assert ran.returncode == 0, (ran.stdout[-2000:], ran.stderr[-3000:])
    assert "Page Title: Second page" in ran.stdout and "link [6] 'Back to the form'" in ran.stdout, ran.stdout
