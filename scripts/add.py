#!/usr/bin/env python3
"""Adds a working skeleton of a new part, the recipes of docs/architecture.md ("How to add…") as
a program: each writes every file the part needs and no other, and what it writes builds and
runs (tests/house/test_recipes.py runs each on a copy of the tree and checks that it does).

    python scripts/add.py mode NAME                   # an observation mode: 4 files
    python scripts/add.py tool NAME COMMAND           # an MCP tool and its shell command: 2 files
    python scripts/add.py benchmark NAME --package DIR  # a benchmark in a package of its own

``--root DIR`` works on another copy of the tree (the tests' temporary one).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


class RecipeError(Exception):
    """The tree is not as the recipe expects (said in one line)."""


def _edit(path: Path, old: str, new: str) -> None:
    """Replaces the one place ``old`` is in ``path`` with ``new``."""
    text = path.read_text()
    if text.count(old) != 1:
        raise RecipeError(f"{path}: expected {old!r} exactly once, found it {text.count(old)} times")
    path.write_text(text.replace(old, new))


def _create(path: Path, text: str) -> None:
    if path.exists():
        raise RecipeError(f"{path} exists already")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _check_name(name: str, what: str) -> None:
    if not re.fullmatch(r"[a-z][a-z0-9_]*", name):
        raise RecipeError(f"a {what}'s name is lower-case letters, digits and _, starting with a letter: not {name!r}")


# -- an observation mode ------------------------------------------------------------------------


_MODE_RENDERER = """\
//! The `{name}` mode (`docs/spec/observation.md`, "The {name} form"): one line per node of the
//! tree, one TAB per ancestor: its role, its id, its name and its properties.

use super::{{IdStyle, Rendered, OWN_BRACKET}};
use crate::axtree::AxTree;
use crate::text::push_py_repr;

/// Renders every node (`options.ids`' labels print in place of ids).
pub fn render(tree: &AxTree, options: super::occam::OccamOptions) -> Rendered {{
    let ids = IdStyle {{
        labels: options.ids.labels,
        seen: None,
    }};
    let mut out = Rendered::default();
    let mut stack: Vec<(u32, u32)> = tree.s_roots.iter().rev().map(|&r| (r, 0)).collect();
    while let Some((i, depth)) = stack.pop() {{
        let node = tree.node(i);
        let mut line = node.role.to_string();
        let shown = ids.push(&mut line, node.element_id, true, false);
        if !node.name.is_empty() {{
            line.push(' ');
            push_py_repr(&mut line, &node.name);
        }}
        for p in tree.props(i) {{
            line.push(' ');
            line.push(OWN_BRACKET); // a property: pagelens' own bracket
            line.push_str(&p.name);
            line.push_str(": ");
            line.push_str(&p.value.py_str());
            line.push(']');
        }}
        let at = out.push_line(depth, line);
        if shown {{
            out.ids.push((at, node.element_id));
        }}
        for &c in tree.s_children(i).iter().rev() {{
            stack.push((c, depth + 1));
        }}
    }}
    out.seal();
    out
}}

#[cfg(test)]
mod tests {{
    use crate::render::occam::OccamOptions;
    use crate::{{render, AxTree, Mode}};

    #[test]
    fn {name}_is_a_mode_by_its_name_and_shows_ids() {{
        let mode: Mode = "{name}".parse().unwrap();
        assert_eq!(mode.name(), "{name}");
        assert!(Mode::NAMES.contains(&"{name}"));
        let payload = br#"{{"nodes": [
            {{"nodeId": "1", "role": {{"value": "RootWebArea"}}, "name": {{"value": "Shop"}}, "childIds": ["2"]}},
            {{"nodeId": "2", "role": {{"value": "button"}}, "name": {{"value": "Pay [now]"}},
              "backendDOMNodeId": 7}}]}}"#;
        let tree = AxTree::parse(payload).unwrap();
        let text = render(&tree, mode, OccamOptions::default(), None).text;
        // The button's id, and the page's own brackets escaped: page text is never an id.
        assert!(text.contains("button [2] 'Pay \\\\[now]'"), "{{text}}");
    }}
}}
"""

_MODE_SPEC = """\
## The {name} form ("{name}" mode)

One line per node of the tree, one TAB per ancestor: its role, its element id in brackets, its
name (a Python string literal) and its properties as `[name: value]`. Page text is escaped as in
every mode (section 3, "Page text is never an id").

"""


def add_mode(root: Path, name: str) -> list[Path]:
    """A `Mode` variant, its name, its renderer and its dispatch (rust/core/src/render/mod.rs),
    the renderer (rust/core/src/render/NAME.rs), the stub's `RenderMode` (the binding makes the
    run-time type and `RENDER_MODES` from the core's list) and its spec section."""
    _check_name(name, "mode")
    camel = "".join(part.title() for part in name.split("_"))
    render = root / "rust/core/src/render"
    mod = render / "mod.rs"
    _create(render / f"{name}.rs", _MODE_RENDERER.format(name=name))
    _edit(mod, "pub mod webarena;\n", f"pub mod webarena;\npub mod {name};\n")
    text = mod.read_text()
    all_line = re.search(r"pub const ALL: \[Mode; (\d+)\] = \[(.*)\];", text)
    names_line = re.search(r"pub const NAMES: \[&'static str; \d+\] = \[(.*)\];", text)
    if all_line is None or names_line is None:
        raise RecipeError(f"{mod}: no `Mode::ALL` / `Mode::NAMES` of the expected shape")
    count = int(all_line.group(1))
    _edit(
        mod,
        all_line.group(0),
        f"pub const ALL: [Mode; {count + 1}] = [{all_line.group(2)}, Mode::{camel}];",
    )
    _edit(
        mod,
        names_line.group(0),
        f"pub const NAMES: [&'static str; {count + 1}] = [{names_line.group(1)}, Mode::{camel}.name()];",
    )
    _edit(mod, "    Occam,\n}", f'    Occam,\n    /// The `{name}` form (spec: "The {name} form").\n    {camel},\n}}')
    _edit(mod, 'Mode::Occam => "occam",\n', f'Mode::Occam => "occam",\n            Mode::{camel} => "{name}",\n')
    _edit(
        mod,
        "Mode::Occam => occam::render(tree, occam),\n",
        f"Mode::Occam => occam::render(tree, occam),\n            Mode::{camel} => {name}::render(tree, occam),\n",
    )
    stub = root / "python/pagelens/_core.pyi"
    alias = re.search(r"RenderMode: TypeAlias = Literal\[(.*)\]", stub.read_text())
    if alias is None:
        raise RecipeError(f"{stub}: no `RenderMode: TypeAlias = Literal[...]`")
    _edit(stub, alias.group(0), f'RenderMode: TypeAlias = Literal[{alias.group(1)}, "{name}"]')
    spec = root / "docs/spec/observation.md"
    _edit(spec, "## 4. Pivotal subtree", _MODE_SPEC.format(name=name) + "## 4. Pivotal subtree")
    return [render / f"{name}.rs", mod, stub, spec]


# -- an MCP tool and its shell command ------------------------------------------------------------


_TOOL_OPERATION = '''

async def {name}(s: BrowserSession) -> str:
    """The page's title and address (a skeleton: say here what the tool does, for the model)"""
    env = s.page_env()
    s._refuse_if_modal()
    return f"### Result\\n{{escape_page_text(await env.page.title())}} <{{escape_page_text(env.page.url)}}>"
'''


def add_tool(root: Path, name: str, command: str) -> list[Path]:
    """The tool's entry in the table (python/pagelens/browser/tools.py: its name, its shell
    command) and its coroutine (python/pagelens/browser/operations.py): the MCP server offers
    it, the daemon runs it, `pagelens browser COMMAND` calls it, its help and the guide show it."""
    _check_name(name, "tool")
    _check_name(command, "command")
    if not name.startswith("browser_"):
        raise RecipeError(f"a tool's name starts with browser_ (as Playwright MCP's): not {name!r}")
    tools = root / "python/pagelens/browser/tools.py"
    operations = root / "python/pagelens/browser/operations.py"
    _edit(
        tools,
        '    Tool("browser_evaluate", capability="evaluate"),\n)',
        '    Tool("browser_evaluate", capability="evaluate"),\n'
        f'    Tool("{name}", Command("{command}", "print the page\'s title and address"), readonly=True),\n)',
    )
    _edit(
        operations,
        "\n\nasync def _nothing() -> None:",
        _TOOL_OPERATION.format(name=name) + "\n\nasync def _nothing() -> None:",
    )
    return [tools, operations]


# -- a benchmark in a package of its own ----------------------------------------------------------


_BENCHMARK_PYPROJECT = """\
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "{name}-benchmark"
version = "0.1.0"
dependencies = ["pagelens"]

# How `pagelens study run --benchmark {name}` finds it: an entry point of this group.
[project.entry-points."pagelens.benchmarks"]
{name} = "{name}_benchmark:Benchmark"

[tool.setuptools]
py-modules = ["{name}_benchmark"]
"""

_BENCHMARK_MODULE = '''\
"""The {name} benchmark (a skeleton): each task opens a page and asks the agent to say its
task's word; an episode succeeds when the agent's answer is that word."""

from __future__ import annotations

from dataclasses import dataclass, field

from pagelens.studies.protocol import EpisodeTask, Goal, Score


@dataclass(frozen=True)
class Options:
    page: str = field(default="about:blank", metadata={{"help": "the page every {name} episode opens"}})


class Benchmark:
    name = "{name}"
    summary = "{name}: say the task's word"
    options_type = Options

    def task_names(self, selection, options):
        return ("alpha", "beta")

    def resolve(self, task, options):
        return EpisodeTask(task, config={{"word": task.upper()}})

    def reset(self, task, options):
        pass

    async def setup(self, browser, task, episode):
        return Goal(f"Say {{task.config['word']}}", episode.options.page)

    async def score(self, browser, task, goal, run, episode):
        success = run.answer == task.config["word"]
        return Score(float(success), success, {{"answer": run.answer}})
'''


def add_benchmark(package: Path, name: str) -> list[Path]:
    """A package of its own (``pip install DIR``) whose entry point makes the benchmark one of
    ``pagelens study run --benchmark``'s: its pyproject.toml and its module."""
    _check_name(name, "benchmark")
    files = [package / "pyproject.toml", package / f"{name}_benchmark.py"]
    _create(files[0], _BENCHMARK_PYPROJECT.format(name=name))
    _create(files[1], _BENCHMARK_MODULE.format(name=name))
    return files


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/add.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="the tree to add to (default: this one)")
    sub = parser.add_subparsers(dest="what", required=True)
    p = sub.add_parser("mode", help="an observation mode")
    p.add_argument("name")
    p = sub.add_parser("tool", help="an MCP tool and its shell command")
    p.add_argument("name", help="the tool's name (browser_...)")
    p.add_argument("command", help="the `pagelens browser` command that calls it")
    p = sub.add_parser("benchmark", help="a benchmark in a package of its own")
    p.add_argument("name")
    p.add_argument("--package", type=Path, required=True, help="the package's folder (created)")
    args = parser.parse_args(argv)
    try:
        if args.what == "mode":
            written = add_mode(args.root, args.name)
        elif args.what == "tool":
            written = add_tool(args.root, args.name, args.command)
        else:
            written = add_benchmark(args.package, args.name)
    except (RecipeError, OSError) as e:
        print(f"scripts/add.py: {e}", file=sys.stderr)
        return 2
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
