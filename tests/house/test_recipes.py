"""docs/architecture.md's recipes, run (as ruff's add-rule script and its test): `scripts/add.py`
adds a toy observation mode, a toy MCP tool with its shell command, and a toy benchmark in a
package of its own, each to a copy of the tree; the test counts the files each touched and
shows that what it wrote builds, is offered where the recipe says, and works."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import anyio
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from support.llm_server import LLMServer
from support.paths import ROOT
from support.registries import spec_modes, stub_render_modes
from support.scripted import says_the_word
from support.site_server import SiteServer

ADD = ROOT / "scripts" / "add.py"


def _add(*args: str) -> list[str]:
    done = subprocess.run([sys.executable, str(ADD), *args], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def _touched(before: dict[str, bytes], root: Path) -> set[str]:
    after = _files(root)
    return {name for name in after.keys() | before.keys() if before.get(name) != after.get(name)}


def test_a_mode_is_four_files_that_build_render_and_keep_every_mode_s_invariants(tmp_path):
    tree = tmp_path / "tree"
    for part in ("rust/core/src", "rust/core/tests", "rust/core/examples"):
        shutil.copytree(ROOT / part, tree / part)
    for part in ("rust/core/Cargo.toml", "Cargo.lock", "python/pagelens/_core.pyi", "docs/spec/observation.md"):
        (tree / part).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / part, tree / part)
    # The workspace as it is, less the binding (built by `make`, not by this recipe).
    workspace = (
        (ROOT / "Cargo.toml").read_text().replace('members = ["rust/core", "rust/python"]', 'members = ["rust/core"]')
    )
    (tree / "Cargo.toml").write_text(workspace)
    before = _files(tree)

    written = _add("--root", str(tree), "mode", "toy_lines")

    assert (
        _touched(before, tree)
        == {
            "rust/core/src/render/toy_lines.rs",
            "rust/core/src/render/mod.rs",
            "python/pagelens/_core.pyi",
            "docs/spec/observation.md",
        }
        == {str(Path(w).relative_to(tree)) for w in written}
    )
    from pagelens import RENDER_MODES

    assert stub_render_modes((tree / "python/pagelens/_core.pyi").read_text()) == [*RENDER_MODES, "toy_lines"]
    assert spec_modes((tree / "docs/spec/observation.md").read_text()) >= {*RENDER_MODES, "toy_lines"}
    (tree / "tests").mkdir()
    (tree / "tests" / "corpus").symlink_to(ROOT / "tests" / "corpus")  # the core's tests read it
    # The core's render tests, the new mode's among them: those that hold every mode to the
    # invariants (ids never forged by page text, properties shown) now hold it too.
    built = subprocess.run(
        # The copied crate unoptimised (its dependencies as the suite built them): the
        # check is that the mode builds and keeps the invariants, not how fast it renders.
        [
            "cargo",
            "test",
            "--profile",
            "fast",
            "--config",
            "profile.fast.package.pagelens-core.opt-level=0",
            "--quiet",
            "-p",
            "pagelens-core",
            "--lib",
            "--",
            "render::",
        ],
        cwd=tree,
        # The Rust suite's own target: only the copied crate is compiled again.
        env={**os.environ, "CARGO_TARGET_DIR": str(ROOT / "target")},
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    assert "test result: ok" in built.stdout and " 0 passed" not in built.stdout


def _tool_tree(tmp_path: Path) -> Path:
    tree = tmp_path / "tree"
    shutil.copytree(
        ROOT / "python" / "pagelens", tree / "python" / "pagelens", ignore=shutil.ignore_patterns("__pycache__")
    )
    return tree


def test_a_tool_and_its_shell_command_are_two_files_and_work_from_both_fronts(tmp_path):
    tree = _tool_tree(tmp_path)
    before = _files(tree)
    written = _add("--root", str(tree), "tool", "browser_page_title", "title")
    touched = {"python/pagelens/browser/tools.py", "python/pagelens/browser/operations.py"}
    assert _touched(before, tree) == touched == {str(Path(w).relative_to(tree)) for w in written}

    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    env = {**os.environ, "PYTHONPATH": str(tree / "python"), "XDG_RUNTIME_DIR": str(runtime)}
    env.pop("PAGELENS_SESSION", None)

    def shell(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "pagelens", "browser", *args], capture_output=True, text=True, timeout=180, env=env
        )

    where = subprocess.run(
        [sys.executable, "-c", "import pagelens; print(pagelens.__file__)"], capture_output=True, text=True, env=env
    )
    assert where.stdout.strip() == str(tree / "python" / "pagelens" / "__init__.py")  # the copy, not the repository
    site = SiteServer()
    try:
        helped = shell("--help")
        assert "title" in helped.stdout and "print the page's title and address" in helped.stdout
        assert "`pagelens browser title`: print the page's title and address" in shell("guide").stdout
        url = site.url("site/form.html")
        opened = shell("open", url)
        assert opened.returncode == 0, opened.stderr
        titled = shell("title")
        assert titled.returncode == 0 and f"<{url}>" in titled.stdout, (titled.stdout, titled.stderr)
        title = titled.stdout.split("### Result\n", 1)[1].split(" <", 1)[0]
        assert title and title in opened.stdout

        async def over_mcp() -> tuple[set[str], str]:
            params = StdioServerParameters(command=sys.executable, args=["-m", "pagelens", "mcp"], env=env)
            async with stdio_client(params) as streams, ClientSession(*streams) as session:
                await session.initialize()
                tools = {t.name: t for t in (await session.list_tools()).tools}
                await session.call_tool("browser_navigate", {"url": url})
                result = await session.call_tool("browser_page_title", {})
                assert tools["browser_page_title"].annotations is not None
                assert tools["browser_page_title"].annotations.read_only_hint
                return set(tools), "\n".join(getattr(c, "text", "") for c in result.content)

        tools, said = anyio.run(over_mcp)
        assert "browser_page_title" in tools and said == f"### Result\n{title} <{url}>"
    finally:
        shell("close", "--all")
        site.close()


def test_a_benchmark_in_a_package_of_its_own_reaches_study_run_by_its_entry_point(tmp_path):
    package, site_packages = tmp_path / "pkg", tmp_path / "site"
    _add("benchmark", "toy", "--package", str(package))
    installed = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--no-deps",
            "--no-build-isolation",
            "--target",
            str(site_packages),
            str(package),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert installed.returncode == 0, installed.stderr
    # A second plugin whose entry point names a module that is not there: left out in a line.
    broken = site_packages / "broken_bench-0.1.dist-info"
    broken.mkdir()
    (broken / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-bench\nVersion: 0.1\n")
    (broken / "entry_points.txt").write_text("[pagelens.benchmarks]\nbroken = no_such_module:Bench\n")
    env = {**os.environ, "PYTHONPATH": str(site_packages)}

    helped = subprocess.run(
        [sys.executable, "-m", "pagelens", "study", "run", "--help"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert helped.returncode == 0 and "toy" in helped.stdout and "--page" in helped.stdout
    assert helped.stderr.count("\n") == 1 and "'broken'" in helped.stderr and "no_such_module" in helped.stderr

    site = SiteServer()
    llm = LLMServer(says_the_word)
    try:
        study = tmp_path / "study"
        ran = subprocess.run(
            [
                sys.executable,
                "-m",
                "pagelens",
                "study",
                "run",
                str(study),
                "--benchmark",
                "toy",
                "--model",
                "scripted",
                "--base-url",
                llm.base_url,
                "--seeds",
                "0",
                "--workers",
                "1",
                "--max-steps",
                "2",
                "--page",
                site.url("site/second.html"),
            ],
            capture_output=True,
            text=True,
            timeout=600,
            env=env,
        )
    finally:
        llm.close()
        site.close()
    assert ran.returncode == 0, ran.stdout[-2000:] + ran.stderr[-2000:]
    results = [json.loads(line) for line in (study / "results.jsonl").read_text().splitlines()]
    assert sorted(r["id"] for r in results) == ["toy.alpha.0.occam", "toy.beta.0.occam"]
    assert all(r["success"] for r in results)
