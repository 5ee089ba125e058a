"""Checks that the sets `make` installs with `--no-deps` beside pagelens are complete. Run by
`make pins` in a fresh venv holding pagelens' wheel with its test extra and those sets.

`--no-deps` installs (BrowserGym and AgentLab from requirements/agentlab.txt, webarena-verified)
skip pip's resolver, so what their packages import must be listed by hand; a module missing there
stays hidden on any machine that has it from another install. Two checks, on the venv as it is:

1. Every requirement each installed distribution declares (its base one, and those of every extra
   another distribution asks of it) is installed at a version it accepts, but for the ones named in
   ALLOWED, each with why pagelens leaves it out.
2. Every module the project's code, tests, benches and README import from these distributions
   imports, and so does every top-level module of each distribution the requirement files pin
   (an import a pinned package makes at its own import time is caught there).

Usage: python .ci/pins.py REQUIREMENT_FILE... [--also NAME...]
"""

from __future__ import annotations

import argparse
import ast
import importlib
import importlib.metadata as md
import os
import re
import sys
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent

# (distribution that requires, with the extra asked of it; distribution required) -> why pagelens
# installs without it. A pair not here that is unmet makes the check fail.
ALLOWED = {
    # pagelens drives BrowserGym on its own, newer Playwright (one Playwright per environment).
    ("browsergym-core", "playwright"): "BrowserGym runs on pagelens' Playwright",
    # BrowserGym's MCP server's command line, which the bridge does not start.
    ("mcp[cli]", "typer"): "the command line of BrowserGym's MCP server",
    # GenericAgent on an OpenAI-compatible endpoint imports none of AgentLab's studies (Ray, dask),
    # its UI (gradio, matplotlib), its local models (torch) or its bookkeeping (git, slugs, timers);
    # tests/fronts/test_agentlab.py runs it, on the openai of pagelens (AgentLab asks for 1.x).
    **{
        ("agentlab", name): "AgentLab's studies, UI and local models, not GenericAgent's"
        for name in (
            "browsergym contexttimer dask distributed gitpython gradio ipython matplotlib python-slugify torch openai"
        ).split()
    },
    **{
        ("ray[default]", name): "Ray's dashboard and cluster tools, for AgentLab's Ray studies"
        for name in (
            "aiohttp-cors colorful py-spy grpcio opencensus opentelemetry-sdk opentelemetry-exporter-prometheus"
            " opentelemetry-proto prometheus-client smart-open virtualenv"
        ).split()
    },
    # litellm's AWS (Bedrock, SageMaker) providers.
    ("litellm", "boto3"): "litellm's AWS providers",
}


def installed(path: list[str] | None = None) -> dict[str, md.Distribution]:
    """The installed distributions by canonical name (of sys.path, or of `path`)."""
    out: dict[str, md.Distribution] = {}
    for dist in md.distributions(**({"path": path} if path is not None else {})):
        name = dist.metadata["Name"]
        if name:
            out.setdefault(canonicalize_name(name), dist)
    return out


def unmet_requirements(dists: dict[str, md.Distribution]) -> list[str]:
    """Every declared requirement not met, as `requirer requires X (why)`, but the allowed ones."""
    problems: list[str] = []
    # (distribution, extra) pairs to check: every distribution's base requirements, and the
    # extras other distributions ask of it, as they are found.
    todo = [(name, "") for name in dists]
    seen: set[tuple[str, str]] = set()
    while todo:
        name, extra = todo.pop()
        if (name, extra) in seen or name not in dists:
            continue
        seen.add((name, extra))
        for text in dists[name].requires or []:
            try:
                req = Requirement(text)
            except InvalidRequirement:
                problems.append(f"{name}: unreadable requirement {text!r}")
                continue
            if req.marker is not None and not req.marker.evaluate({"extra": extra}):
                continue
            if extra and (req.marker is None or "extra" not in str(req.marker)):
                continue  # a base requirement, checked with the base
            wanted = canonicalize_name(req.name)
            if (f"{name}[{extra}]" if extra else name, wanted) in ALLOWED:
                continue
            have = dists.get(wanted)
            if have is None:
                problems.append(f"{name}{f'[{extra}]' if extra else ''} requires {req}: not installed")
                continue
            version = have.version
            if req.specifier and not req.specifier.contains(version, prereleases=True):
                problems.append(f"{name} requires {req}: {wanted} {version} is installed")
            for wanted_extra in req.extras:
                todo.append((wanted, canonicalize_name(wanted_extra)))
    return problems


def pinned_names(files: list[Path]) -> list[str]:
    names = []
    for file in files:
        for line in file.read_text().splitlines():
            line = line.split("#", 1)[0].strip()
            if line:
                names.append(canonicalize_name(Requirement(line).name))
    return names


def imported_modules(sources: list[Path]) -> set[str]:
    """Every module imported by the given Python files and by the Python blocks of Markdown files."""
    modules: set[str] = set()
    for path in sources:
        text = path.read_text(encoding="utf-8")
        blocks = re.findall(r"```python\n(.*?)```", text, re.S) if path.suffix == ".md" else [text]
        for block in blocks:
            try:
                tree = ast.parse(block)
            except SyntaxError:
                continue
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    modules.update(alias.name for alias in node.names)
                elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                    modules.add(node.module)
    return modules


def main() -> int:
    # litellm fetches a price list at import; no network here (its bundled copy, as the tests do).
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", type=Path, help="requirement files installed with --no-deps")
    parser.add_argument("--also", nargs="*", default=[], help="other distributions installed with --no-deps")
    args = parser.parse_args()
    for file in args.files:
        if not file.is_file():
            parser.error(f"no requirement file {file}")
    dists = installed()
    pinned = pinned_names(args.files) + [canonicalize_name(n) for n in args.also]
    problems = unmet_requirements(dists)
    missing = [n for n in pinned if n not in dists]
    problems += [f"{n} is pinned but not installed" for n in missing]
    # The top-level modules each pinned distribution provides.
    tops = md.packages_distributions()
    provided = {top for top, owners in tops.items() if any(canonicalize_name(o) in pinned for o in owners)}
    sources = [ROOT / "README.md", *ROOT.glob("docs/*.md")]
    for folder in ("python", "tests", "benches"):
        sources += (ROOT / folder).rglob("*.py")
    used = {m for m in imported_modules(sources) if m.split(".")[0] in provided}
    to_import = sorted(used | {t for t in provided if not t.startswith("_") and t.isidentifier()})
    for module in to_import:
        try:
            importlib.import_module(module)
        except Exception as e:  # noqa: BLE001 (any failure to import is the finding)
            problems.append(f"import {module}: {type(e).__name__}: {e}")
    if problems:
        print("pinned sets: INCOMPLETE\n" + "\n".join(problems))
        return 1
    print(f"pinned sets: {len(pinned)} pinned distributions, every requirement met, {len(to_import)} modules imported")
    return 0


if __name__ == "__main__":
    sys.exit(main())
