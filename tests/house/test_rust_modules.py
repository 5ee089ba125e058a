"""The core crate's modules import in one direction: no two files of `rust/core/src` reach each
other, directly or around a circle (as tests/house/test_layers.py holds for Python). A path
naming a module file (`super::records::RawNode`, `crate::error::AxError`) is an edge from the
file it is written in to that file; a path that stops at a module's `mod.rs` (its re-exports) is
not, nor is anything in a file's `#[cfg(test)]` part (tests may use any module)."""

from __future__ import annotations

import re
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "rust" / "core" / "src"
PATH = re.compile(r"\b(crate|super|self)((?:::[a-z_][a-z0-9_]*)+)")


def module_of(path: Path) -> tuple[str, ...]:
    parts = path.relative_to(SRC).with_suffix("").parts
    return parts[:-1] if parts[-1] in ("mod", "lib") else parts


def files() -> dict[tuple[str, ...], Path]:
    return {module_of(p): p for p in SRC.rglob("*.rs")}


def edges() -> dict[tuple[str, ...], set[tuple[str, ...]]]:
    modules = files()
    leaves = {m for m, p in modules.items() if p.name not in ("mod.rs", "lib.rs")}
    graph: dict[tuple[str, ...], set[tuple[str, ...]]] = {m: set() for m in modules}
    for module, path in modules.items():
        text = path.read_text().split("#[cfg(test)]", 1)[0]
        # `self` is the file's own module, `super` its parent's (a mod.rs is its folder's module).
        relative = {"crate": (), "self": module, "super": module[:-1]}
        for anchor, rest in PATH.findall(text):
            segments = rest.strip(":").split("::")
            base = relative[anchor]
            target = None
            for n in range(len(segments), 0, -1):  # the longest prefix that is a module file
                candidate = base + tuple(segments[:n])
                if candidate in modules:
                    target = candidate
                    break
            if target is not None and target in leaves and target != module:
                graph[module].add(target)
    return graph


def test_the_paths_resolve_to_files():
    # The reader finds the edges it should (a reader that found none would pass anything).
    graph = edges()
    assert ("error",) in graph[("axtree", "parse")]
    assert ("axtree", "records") in graph[("axtree", "rows")]
    assert ("axtree", "rows") in graph[("axtree", "parse")]


def test_no_two_core_modules_reach_each_other():
    graph = edges()
    circles = []
    for start in graph:
        stack, seen = [(start, (start,))], set()
        while stack:
            node, trail = stack.pop()
            for nxt in graph[node]:
                if nxt == start:
                    circles.append(" -> ".join("::".join(m) for m in (*trail, start)))
                elif nxt not in seen:
                    seen.add(nxt)
                    stack.append((nxt, (*trail, nxt)))
    assert not circles, circles
