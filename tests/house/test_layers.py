"""Layers that hold: with every optional dependency made unimportable (a base install), every
module of the package imports but the extras' adapters, whose error names the extra to
install, and every command's ``--help`` works. CI also checks this on a real base install
(``make smoke``: a fresh venv with the built wheel and no extras)."""

from __future__ import annotations

import json
import subprocess
import sys

from pagelens.extras import EXTRAS, adapters
from support.paths import TESTS

# The modules that may import an optional dependency at import time (the extras registry).
ADAPTERS = adapters()

_PROBE = r"""
import argparse, contextlib, importlib, io, json, pkgutil, sys
blocked = set(sys.argv[1].split(","))

class Blocker:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in blocked:
            raise ImportError(f"No module named {name!r} (blocked by the test)")
        return None

sys.meta_path.insert(0, Blocker())
import pagelens
failed = {}
for m in pkgutil.walk_packages(pagelens.__path__, "pagelens."):
    if m.name.endswith("__main__"):
        continue
    try:
        importlib.import_module(m.name)
    except ImportError as e:
        failed[m.name] = str(e)

from pagelens.cli import command_paths, main

helps = {}
for cmd in command_paths():
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            code = main([*cmd, "--help"])
        except SystemExit as e:
            code = e.code
    helps[" ".join(cmd)] = (code, len(out.getvalue()))
print(json.dumps({"failed": failed, "helps": helps}))
"""


def test_base_install_imports_every_module_and_runs_every_help():
    optional = sorted(
        {m for extra in EXTRAS.values() for m in extra.modules}
        | {"tiktoken", "tokenizers", "html5lib", "hypothesis", "pytest", "mcp", "browsergym"}
    )
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, ",".join(optional)], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout.splitlines()[-1])
    assert set(report["failed"]) == set(ADAPTERS), report["failed"]
    for module, extra in ADAPTERS.items():
        assert f"pip install 'pagelens[{extra}]'" in report["failed"][module]
    assert len(report["helps"]) >= 12  # the top level, every command and the study subcommands
    for cmd, (code, size) in report["helps"].items():
        assert code == 0 and size > 100, (cmd, code)


def test_a_missing_extra_is_named_when_its_feature_is_used(tmp_path):
    """The message comes when the feature is used, naming the extra."""
    probe = r"""
import sys
class Blocker:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("pyarrow", "ray", "miniwob"):
            raise ImportError(name)
sys.meta_path.insert(0, Blocker())
from pagelens.cli import main
sys.exit(main(sys.argv[1:]))
"""
    data = tmp_path / "in.jsonl"
    data.write_text(
        '{"workflow_id": "w", "step": 0, "objective": "o", "url": "http://a.test/", "html": "<p>x</p>", '
        '"action": "mouse_click_action", "target_selector": "p"}\n'
    )
    for args, extra in (
        (["prep", str(data), str(tmp_path / "out")], "datasets"),
        (["prep", str(data), str(tmp_path / "out2"), "--engine", "ray"], "datasets"),
    ):
        proc = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, text=True, timeout=120)
        assert proc.returncode == 2, (args, proc.stderr)
        assert f"pip install 'pagelens[{extra}]'" in proc.stderr, proc.stderr
        assert not any((tmp_path / args[2]).glob("examples/*")), "nothing is written half"


# Pairs of modules that name each other, even only for type annotations: none.
_ANNOTATION_ONLY: set[frozenset[str]] = set()


def _imports() -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """Every module's imports of the package's modules: all of them, and those made at run time
    (outside ``if TYPE_CHECKING:``), from the source."""
    import ast
    from pathlib import Path

    import pagelens

    root = Path(pagelens.__file__).parent.parent
    files = {}
    for f in (root / "pagelens").rglob("*.py"):
        name = ".".join(f.relative_to(root).with_suffix("").parts)
        files[name.removesuffix(".__init__")] = f
    every: dict[str, set[str]] = {}
    runtime: dict[str, set[str]] = {}
    for name, f in files.items():
        tree = ast.parse(f.read_text())
        typing_only = {
            id(n)
            for block in ast.walk(tree)
            if isinstance(block, ast.If) and "TYPE_CHECKING" in ast.unparse(block.test)
            for n in ast.walk(block)
        }
        for node in ast.walk(tree):
            named = set()
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                named = {node.module} | {f"{node.module}.{a.name}" for a in node.names}
            elif isinstance(node, ast.Import):
                named = {a.name for a in node.names}
            named = {m for m in named if m in files and m != name}
            every.setdefault(name, set()).update(named)
            if id(node) not in typing_only:
                runtime.setdefault(name, set()).update(named)
    return every, runtime


def test_no_two_modules_import_each_other():
    every, runtime = _imports()

    def related(a: str, b: str) -> bool:  # a package and its own modules
        return a.startswith(b + ".") or b.startswith(a + ".") or "pagelens" in (a, b)

    pairs = {
        frozenset({a, b}) for a, deps in every.items() for b in deps if a in every.get(b, ()) and not related(a, b)
    }
    assert pairs <= _ANNOTATION_ONLY, sorted(map(sorted, pairs - _ANNOTATION_ONLY))
    for pair in pairs:
        a, b = sorted(pair)
        assert not (b in runtime[a] and a in runtime[b]), f"{a} and {b} import each other at run time"
    # The action path: the environment asks the executor, the executor asks the resolver.
    assert "pagelens.browser.env" not in every["pagelens.browser.execute"]
    assert "pagelens.browser.execute" not in every["pagelens.browser.resolve"]
    assert "pagelens.browser.env" not in every["pagelens.browser.resolve"]


def test_agents_load_no_dataset_module_and_datasets_load_no_engine():
    """ScribeAgent's step format has a room of its own below the agent and the prep pipeline:
    importing the agents loads no `pagelens.datasets` module, and importing `pagelens.datasets`
    loads none of its modules (no engine, no Ray) until a name of it is used."""
    probe = (
        "import sys, pagelens.agents, pagelens.agents.scribe, pagelens.datasets\n"
        "print(sorted(m for m in sys.modules if m.startswith(('pagelens.datasets.', 'ray', 'pyarrow'))))\n"
        "from pagelens.datasets import run_local\n"
        "print('pagelens.datasets.local' in sys.modules)\n"
    )
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    loaded, used = proc.stdout.splitlines()
    assert loaded == "[]" and used == "True"
    _, runtime = _imports()
    assert not any(
        m.startswith("pagelens.datasets")
        for a, deps in runtime.items()
        if a.startswith("pagelens.agents")
        for m in deps
    )


def test_no_test_module_imports_another():
    """Tests share through tests/support (servers, strategies, scripted models, samples) and
    fixtures through conftest; a test module importing another (or conftest) would run that
    module's tests' imports and tie the two together."""
    import ast

    here = TESTS
    modules = {p.stem for p in here.rglob("*.py") if "support" not in p.parts}
    for path in sorted(here.rglob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module.split(".")[0]]
            elif isinstance(node, ast.Import):
                names = [a.name.split(".")[0] for a in node.names]
            for name in names:
                assert name not in modules, f"{path.name} imports {name}: move what it shares to tests/support"
