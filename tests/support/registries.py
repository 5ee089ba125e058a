"""Reading the names a registry's copies spell: the stub's `RenderMode` and the spec's mode
sections (the registry test holds them to the core's list; the recipe test to a new mode's)."""

from __future__ import annotations

import ast
import re


def stub_render_modes(stub: str) -> list[str]:
    """The names of `_core.pyi`'s `RenderMode: TypeAlias = Literal[...]`, in order."""
    module = ast.parse(stub)
    alias = next(n for n in module.body if isinstance(n, ast.AnnAssign) and ast.unparse(n.target) == "RenderMode")
    assert isinstance(alias.value, ast.Subscript) and ast.unparse(alias.value.value) == "Literal"
    names = alias.value.slice
    return [ast.literal_eval(e) for e in (names.elts if isinstance(names, ast.Tuple) else [names])]


def spec_modes(spec: str) -> set[str]:
    """The modes `docs/spec/observation.md` gives a section: headings that say `("NAME" mode`."""
    return set(re.findall(r'^## .*\("([a-z0-9_]+)" mode', spec, flags=re.M))
